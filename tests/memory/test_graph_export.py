"""SPEC G7 export_graph, the curator's graph_view / entity_facts (D6) with names NFKC lengthens, and
retract_fact, decided under the key lock (two at once: one wins)."""

from __future__ import annotations

import threading

import pytest
import time_machine
from django.db import connections

from memory import engine
from memory.engine import graph as g
from memory.models import AuditEvent, FactWrite, Memory
from tests.conftest import dt
from tests.memory.conftest import LONG, OTHER, A, fact

pytestmark = pytest.mark.django_db


def quarantine(subject, n=5, origin="channel:burst"):
    facts = [
        {"content": f"{subject} fact {i}", "subject": subject, "predicate": f"p{i}", "object": f"o{i}"}
        for i in range(n)
    ]
    return engine.store_facts_protected(agent_id=A, facts=facts, origin=origin)


def test_export_graph_has_the_exact_shape_newest_first_with_resolved_names():
    with time_machine.travel(dt("2026-03-01T10:00:00"), tick=False):
        first = fact("Alice", "works_at", "Acme")
    with time_machine.travel(dt("2026-03-02T10:00:00"), tick=False):
        second = fact("alice ", "knows", "Bob")
        third = fact("Bob", "likes_tea")  # no object
        engine.alias_add(agent_id=A, canonical="alice", alias="ally")
        fourth = fact("Ally", "lives_in", "Paris", origin="channel:x")
    with time_machine.travel(dt("2026-03-03T10:00:00"), tick=False):
        out = engine.export_graph(agent_id=A, limit=500)
    assert set(out) == {"nodes", "edges", "truncated"}
    assert out["truncated"] is False
    assert [e["memory_id"] for e in out["edges"]] == [fourth, third, second, first]
    assert out["edges"][0] == {
        "subject": "alice",
        "predicate": "lives_in",
        "object": "paris",
        "memory_id": fourth,
        "origin_trust": 0.3,
        "quarantined": False,
    }
    assert out["edges"][1]["object"] is None
    assert out["nodes"] == [
        {"entity": "alice", "degree": 3},
        {"entity": "bob", "degree": 2},
        {"entity": "acme", "degree": 1},
        {"entity": "paris", "degree": 1},
    ]


def test_export_graph_flags_quarantined_edges_skips_history_and_truncates():
    old = fact("svc", "port", "80", valid_from=dt("2026-01-01"))
    new = fact("svc", "port", "8080", valid_from=dt("2026-02-01"))
    results = quarantine("mallory")
    assert {r.outcome for r in results} == {"quarantined"}
    fact("gone", "x", "y", origin="channel:purged")
    engine.invalidate_by_origin(agent_id=A, origin="channel:purged")
    out = engine.export_graph(agent_id=A, limit=500)
    ids = {e["memory_id"]: e for e in out["edges"]}
    assert new in ids and old not in ids
    assert not any(e["subject"] == "gone" for e in out["edges"])
    flagged = [e for e in out["edges"] if e["quarantined"]]
    assert len(flagged) == 5 and {e["subject"] for e in flagged} == {"mallory"}
    short = engine.export_graph(agent_id=A, limit=2)
    assert short["truncated"] is True and len(short["edges"]) == 2
    with pytest.raises(engine.InvalidArgument):
        engine.export_graph(agent_id=A, limit=0)


def test_graph_view_filters_neighbourhood_and_cap():
    fact("alice", "knows", "bob")
    fact("bob", "knows", "carol")
    fact("carol", "knows", "dave")
    fact("alice", "works_at", "acme", origin="channel:x")
    fact("erin", "knows", "frank")
    quarantine("mallory")
    view = engine.graph_view(agent_id=A)
    assert view.total_edges == 10 and view.shown_edges == 10 and not view.truncated
    assert set(view.predicates) == {"knows", "works_at", "p0", "p1", "p2", "p3", "p4"}
    assert sum(e["quarantined"] for e in view.edges) == 5
    assert {"id", "label", "kind", "degree"} <= set(view.nodes[0])
    knows = engine.graph_view(agent_id=A, predicate="knows")
    assert knows.total_edges == 4
    trusted = engine.graph_view(agent_id=A, min_trust=0.5)
    assert all(e["origin_trust"] >= 0.5 for e in trusted.edges) and trusted.total_edges == 4
    near = engine.graph_view(agent_id=A, entity=" Bob ")
    assert near.entity == "bob"
    assert sorted((e["subject"], e["object"]) for e in near.edges) == [("alice", "bob"), ("bob", "carol")]
    far = engine.graph_view(agent_id=A, entity="bob", depth=2)
    assert sorted((e["subject"], e["object"]) for e in far.edges) == [
        ("alice", "acme"),
        ("alice", "bob"),
        ("bob", "carol"),
        ("carol", "dave"),
    ]
    capped = engine.graph_view(agent_id=A, limit=3)
    assert (capped.total_edges, capped.shown_edges, capped.truncated) == (10, 3, True)
    engine.alias_add(agent_id=A, canonical="bob", alias="erin")
    merged = engine.graph_view(agent_id=A, entity="bob")
    assert ("bob", "frank") in {(e["subject"], e["object"]) for e in merged.edges}
    assert "erin" not in {n["id"] for n in merged.nodes}
    with pytest.raises(engine.InvalidArgument):
        engine.graph_view(agent_id=A, depth=3)


def test_entity_facts_resolve_aliases_and_hide_quarantine_unless_asked():
    a = fact("Li Laoban", "owns", "tea shop")
    b = fact("customer", "visits", "李老闆")
    fact("unrelated", "is", "here", agent_id=OTHER)
    engine.alias_add(agent_id=A, canonical="li laoban", alias="李老闆")
    quarantine("li laoban", origin="channel:burst")
    assert {f.id for f in engine.entity_facts(agent_id=A, entity="LI LAOBAN")} == {a, b}
    assert {f.id for f in engine.entity_facts(agent_id=A, entity="李老闆")} == {a, b}
    with_q = engine.entity_facts(agent_id=A, entity="li laoban", include_quarantined=True)
    assert len(with_q) == 7 and sum(f.quarantined for f in with_q) == 5
    assert engine.entity_facts(agent_id=OTHER, entity="li laoban") == []


def test_retract_fact_restores_the_superseded_value_audits_and_bumps():
    old = fact("deploy", "target", "vercel", valid_from=dt("2026-01-01"))
    bad = fact("deploy", "target", "evilhost", valid_from=dt("2026-02-01"))
    assert engine.get_at(agent_id=A, subject="deploy", predicate="target", at=engine_now()).id == bad
    g0 = engine.graph_generation(agent_id=A)
    record = engine.retract_fact(agent_id=A, memory_id=bad, reason="wrong host", actor="user:cora")
    assert record.id == bad and record.invalidated_by_event == "curator_retract" and record.retracted
    now_row = engine.get_at(agent_id=A, subject="deploy", predicate="target", at=engine_now())
    assert now_row is not None and now_row.id == old and now_row.valid_until is None
    assert engine.graph_generation(agent_id=A) == g0 + 1
    event = AuditEvent.objects.get(agent_id=A, action="curator_retract")
    assert event.reason == "wrong host" and event.actor == "user:cora" and event.memory_id == bad
    assert old in event.details["restored"]
    assert set(FactWrite.objects.filter(memory_id=bad).values_list("state", flat=True)) == {"retracted"}
    history = engine.get_history(agent_id=A, subject="deploy", predicate="target")
    assert {h.id for h in history} >= {old, bad}
    assert bad not in {e["memory_id"] for e in engine.export_graph(agent_id=A)["edges"]}
    with pytest.raises(engine.EngineError) as again:
        engine.retract_fact(agent_id=A, memory_id=bad, reason="twice", actor="user:cora")
    assert again.value.code == "already_retracted"


def test_retract_fact_retracts_reaffirmed_support_too():
    first = fact("cat", "name", "tom", origin="user")
    again = engine.store_temporal(
        agent_id=A, content="cat name tom", subject="cat", predicate="name", object="tom", origin="channel:x"
    )
    assert again.outcome == "reaffirmed" and again.id == first
    engine.retract_fact(agent_id=A, memory_id=first, reason="not our cat", actor="user:cora")
    assert engine.get_at(agent_id=A, subject="cat", predicate="name", at=engine_now()) is None
    assert Memory.objects.get(id=first).invalidated_by_event == "curator_retract"


def test_retract_fact_errors_look_the_same_for_other_agents_and_unknown_ids():
    mine = fact("x", "y", "z")
    theirs = fact("x", "y", "z", agent_id=OTHER)
    plain = engine.store(agent_id=A, content="not a fact").id
    errors = []
    for mid in (theirs, "m_doesnotexist", plain):
        with pytest.raises(engine.NotFound) as err:
            engine.retract_fact(agent_id=A, memory_id=mid, reason="r", actor="user:cora")
        errors.append(err.value.as_dict())
    assert errors[0] == errors[1] == errors[2]
    with pytest.raises(engine.InvalidArgument):
        engine.retract_fact(agent_id=A, memory_id=mine, reason="   ", actor="user:cora")
    assert Memory.objects.get(id=theirs).invalidated_by_event is None
    assert Memory.objects.get(id=mine).invalidated_by_event is None


def test_a_second_retract_is_refused_and_changes_nothing():
    mid = fact("dana", "role", "lead")
    g0 = engine.graph_generation(agent_id=A)
    engine.retract_fact(agent_id=A, memory_id=mid, reason="wrong", actor="user:cora")
    g1 = engine.graph_generation(agent_id=A)
    with pytest.raises(engine.EngineError) as again:
        engine.retract_fact(agent_id=A, memory_id=mid, reason="wrong", actor="user:rex")
    assert again.value.code == "already_retracted"
    assert g1 == g0 + 1 == engine.graph_generation(agent_id=A)
    assert AuditEvent.objects.filter(agent_id=A, action="curator_retract").count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_retracts_of_one_fact_one_wins(on_postgres):
    assert on_postgres, "this race is only meaningful on PostgreSQL"
    for round_ in range(6):
        agent = f"race-retract-{round_}"
        mid = fact("dana", "role", "lead", agent_id=agent)
        g0 = engine.graph_generation(agent_id=agent)
        barrier = threading.Barrier(2)
        results: list[object] = [None, None]

        def curator(i, mid=mid, agent=agent, barrier=barrier, results=results):
            try:
                barrier.wait()
                results[i] = engine.retract_fact(
                    agent_id=agent, memory_id=mid, reason="wrong", actor=f"user:c{i}"
                )
            except BaseException as exc:  # noqa: BLE001 - the loser's error is the result
                results[i] = exc
            finally:
                connections.close_all()

        threads = [threading.Thread(target=curator, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        lost = [r for r in results if isinstance(r, BaseException)]
        assert len(lost) == 1 and getattr(lost[0], "code", None) == "already_retracted", (round_, results)
        assert AuditEvent.objects.filter(agent_id=agent, action="curator_retract").count() == 1
        assert engine.graph_generation(agent_id=agent) == g0 + 1
        assert Memory.objects.get(id=mid).invalidated_by_event == "curator_retract"


# --- names NFKC lengthens (SPEC G1, D6) ------------------------------------------------------------------


def test_an_entity_whose_name_nfkc_lengthens_is_addressable_by_its_node_name():
    short = fact(LONG * 28, "blesses", "o")  # 28 characters stored, 504 once normalised
    other = fact("Plain Name", "blesses", LONG * 40, origin="operator")
    nodes = {n["entity"] for n in engine.export_graph(agent_id=A)["nodes"]}
    for raw, mid in ((LONG * 28, short), (LONG * 40, other)):
        node = engine.normalize_entity(raw)
        assert node in nodes and len(node) == 18 * len(raw) > len(raw)
        assert [m.id for m in engine.entity_facts(agent_id=A, entity=node)] == [mid]  # the node's name
        assert [m.id for m in engine.entity_facts(agent_id=A, entity=raw)] == [mid]  # the stored text
    assert [m.id for m in engine.entity_facts(agent_id=A, entity="o")] == [short]
    # a lookup accepts the longest name 512 typed characters can normalise to (no such fact: an empty answer;
    # a stored subject has at most 512 characters once normalised)
    widest = engine.normalize_entity(LONG * 512)
    assert len(widest) == g.MAX_ENTITY_CHARS and engine.entity_facts(agent_id=A, entity=widest) == []


def test_a_lookup_name_is_measured_before_it_is_normalised():
    with pytest.raises(engine.InvalidArgument) as too_long:
        engine.entity_facts(agent_id=A, entity="x" * (g.MAX_ENTITY_CHARS + 1))
    assert too_long.value.field == "entity"
    # the longest accepted input may normalise to far more (18x): it is still a plain, empty answer
    assert engine.entity_facts(agent_id=A, entity=LONG * g.MAX_ENTITY_CHARS) == []
    for bad in ("", "   ", "a\x00b", None):
        with pytest.raises(engine.InvalidArgument):
            engine.entity_facts(agent_id=A, entity=bad)


def engine_now():
    from django.utils import timezone

    return timezone.now()
