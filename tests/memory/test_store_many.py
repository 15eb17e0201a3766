"""``engine.store_temporal_many``: the batch write path (SPEC T1–T5, T9). Equality with one-by-one writes and
with the reference model is the property test in ``test_timeline_property``; here: validation, results,
chunks and generation bumps, origins and trust, and what it deliberately skips (the guard)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from memory import engine
from memory.engine import batch
from memory.engine import common as c
from memory.engine.graph import delta
from memory.models import Agent, AuditEvent, FactWrite, GraphGeneration, Memory
from tests.conftest import dt
from tests.memory.conftest import A

pytestmark = pytest.mark.django_db


def f(subject, obj, predicate="drinks", **kw):  # single-valued (unknown to the registry)
    return {
        "content": f"{subject} {predicate} {obj}",
        "subject": subject,
        "predicate": predicate,
        "object": obj,
        **kw,
    }


def test_results_follow_the_facts_in_order():
    out = engine.store_temporal_many(
        agent_id=A, facts=[f("ann", "tea"), f("bob", "tea"), f("ann", "coffee"), f("ann", "coffee")]
    )
    assert [r.outcome for r in out] == ["stored", "stored", "stored", "reaffirmed"]
    assert out[3].id == out[2].id and len({r.id for r in out[:3]}) == 3
    assert all(isinstance(r.write_id, int) for r in out)
    ann = [out[0].write_id, out[2].write_id, out[3].write_id]
    assert ann == sorted(ann)  # one key's writes in call order
    old = Memory.objects.get(id=out[0].id)
    assert old.superseded_by == out[2].id and old.valid_until is not None
    now = engine.get_at(agent_id=A, subject="ann", predicate="drinks", at=c.now())
    assert now.id == out[2].id and now.access_count == 1 and len(now.reaffirmed_by) == 1
    assert FactWrite.objects.filter(agent_id=A).count() == 4
    assert Agent.objects.filter(agent_id=A).exists()  # a new agent is registered, as store_temporal does


def test_a_chunk_moves_the_generation_once_and_logs_its_rows(monkeypatch):
    monkeypatch.setattr(batch, "CHUNK", 3)
    out = engine.store_temporal_many(agent_id=A, facts=[f(f"s{i}", "x") for i in range(7)])
    assert engine.graph_generation(agent_id=A) == 3  # 7 facts in chunks of 3
    log = delta.parse_changes(GraphGeneration.objects.get(agent_id=A).changes)
    assert [set(log[g][1]) for g in (1, 2, 3)] == [
        {r.id for r in out[0:3]},
        {r.id for r in out[3:6]},
        {out[6].id},
    ]


def test_only_reaffirms_do_not_move_the_generation():
    engine.store_temporal_many(agent_id=A, facts=[f("ann", "tea")])
    gen = engine.graph_generation(agent_id=A)
    out = engine.store_temporal_many(agent_id=A, facts=[f("ann", "tea"), f("ann", "tea", origin="operator")])
    assert [r.outcome for r in out] == ["reaffirmed", "reaffirmed"]
    assert engine.graph_generation(agent_id=A) == gen


def test_historical_and_bounded_facts_take_the_full_path_with_the_others():
    t0 = dt("2026-01-01")
    out = engine.store_temporal_many(
        agent_id=A,
        facts=[
            f("ann", "paris", "lives_in", valid_from=t0),
            f(
                "ann", "rome", "lives_in", valid_from=t0 - timedelta(days=300)
            ),  # learned later, happened before
            f(
                "ann",
                "oslo",
                "lives_in",
                valid_from=t0 + timedelta(days=10),
                valid_until=t0 + timedelta(days=20),
            ),
            f("bob", "tea"),
        ],
    )
    assert [r.outcome for r in out] == ["stored"] * 4

    def at(d):
        return engine.get_at(
            agent_id=A, subject="ann", predicate="lives_in", at=t0 + timedelta(days=d)
        ).object  # noqa: E731

    assert (at(-100), at(5), at(15), at(25)) == ("rome", "paris", "oslo", "paris")
    assert engine.get_at(agent_id=A, subject="bob", predicate="drinks", at=c.now()).object == "tea"


def test_origin_default_per_fact_override_and_trust_ceilings():
    out = engine.store_temporal_many(
        agent_id=A,
        facts=[f("ann", "tea"), f("bob", "tea", origin="user_direct"), f("cy", "tea", origin=None)],
        origin="channel:import-job",
    )
    rows = {m.id: m for m in Memory.objects.filter(id__in=[r.id for r in out])}
    assert [rows[r.id].origin for r in out] == ["channel:import-job", "user_direct", "channel:import-job"]
    assert [rows[r.id].origin_trust for r in out] == [0.3, 1.0, 0.3]


def test_no_guard_a_burst_is_stored_not_held():
    """Trusted importers only: ten facts about one subject from a channel would be a burst for the guard."""
    out = engine.store_temporal_many(
        agent_id=A, facts=[f("mal", "tea", f"p{i}") for i in range(10)], origin="channel:burst"
    )
    assert {r.outcome for r in out} == {"stored"}
    assert not Memory.objects.filter(agent_id=A, quarantined=True).exists()


def test_one_audit_event_per_call():
    engine.store_temporal_many(agent_id=A, facts=[f("ann", "tea"), f("ann", "tea")], actor="import:crm")
    event = AuditEvent.objects.get(agent_id=A, action="store_temporal_many")
    assert event.actor == "import:crm" and event.details == {"stored": 1, "reaffirmed": 1}


@pytest.mark.parametrize(
    ("bad", "code", "field"),
    [
        ({"content": "x", "subject": "ann"}, "invalid_argument", "facts[1].predicate"),
        ({"content": "", "subject": "a", "predicate": "b"}, "invalid_argument", "facts[1].content"),
        ({**f("a", "b"), "valid_from": "2026-01-01T00:00:00"}, "invalid_time", "facts[1].valid_from"),
        (
            {**f("a", "b"), "valid_from": "2026-02-01T00:00:00Z", "valid_until": "2026-01-01T00:00:00Z"},
            "invalid_time",
            "facts[1].valid_until",
        ),
        ({**f("a", "b"), "valid_until": "2000-01-01T00:00:00Z"}, "invalid_time", "facts[1].valid_until"),
        ({**f("a", "b"), "content": "x" * (64 * 1024 + 1)}, "content_too_large", "facts[1].content"),
        ({**f("a", "b"), "source_event": "origin_purge"}, "invalid_argument", "facts[1].source_event"),
        ({**f("a", "b"), "colour": "red"}, "invalid_argument", "facts[1].colour"),
        ("ann likes tea", "invalid_argument", "facts[1]"),
    ],
)
def test_one_bad_fact_rejects_the_call_before_anything_is_written(bad, code, field):
    with pytest.raises(engine.EngineError) as err:
        engine.store_temporal_many(agent_id=A, facts=[f("ann", "tea"), bad, f("bob", "tea")])
    assert (err.value.code, err.value.field, err.value.details["index"]) == (code, field, 1)
    assert err.value.message.startswith("fact 1")
    assert (
        not Memory.objects.filter(agent_id=A).exists() and not FactWrite.objects.filter(agent_id=A).exists()
    )


@pytest.mark.parametrize("facts", [None, "facts", {"content": "x"}, 3])
def test_facts_must_be_a_list(facts):
    with pytest.raises(engine.EngineError) as err:
        engine.store_temporal_many(agent_id=A, facts=facts)
    assert (err.value.code, err.value.field) == ("invalid_argument", "facts")


def test_at_most_max_facts(monkeypatch):
    monkeypatch.setattr(batch, "MAX_FACTS", 2)
    with pytest.raises(engine.EngineError) as err:
        engine.store_temporal_many(agent_id=A, facts=[f("a", "b")] * 3)
    assert err.value.code == "invalid_argument" and err.value.details["limit"] == 2


def test_agent_and_actor_are_checked():
    with pytest.raises(engine.EngineError):
        engine.store_temporal_many(agent_id=" ", facts=[f("a", "b")])
    with pytest.raises(engine.EngineError):
        engine.store_temporal_many(agent_id=A, facts=[f("a", "b")], actor="")


def test_all_facts_of_a_call_are_ingested_at_one_moment():
    t = dt("2026-03-01T12:00:00Z")
    with time_machine.travel(t, tick=True):
        out = engine.store_temporal_many(agent_id=A, facts=[f(f"s{i}", "x") for i in range(5)])
    rows = Memory.objects.filter(id__in=[r.id for r in out])
    assert len({(m.ingested_at, m.valid_from) for m in rows}) == 1


def test_the_common_cases_are_a_few_statements_per_chunk(monkeypatch):
    """Supersedes, reaffirms and repeated keys (ties at the call's one moment) of many keys: a few statements
    for the whole chunk, not a few per fact (``executemany`` counts once)."""
    from memory.engine import rawsql

    engine.store_temporal_many(agent_id=A, facts=[f(f"s{i}", "x") for i in range(200)])
    calls: list[str] = []
    for name in ("run", "run_many"):
        real = getattr(rawsql, name)
        monkeypatch.setattr(
            rawsql,
            name,
            lambda sql, params, _real=real: (calls.append(sql.split()[0]), _real(sql, params))[1],
        )
    out = engine.store_temporal_many(
        agent_id=A, facts=[f(f"s{i % 150}", "x" if i % 3 else "y") for i in range(300)]
    )
    assert {r.outcome for r in out} == {"stored", "reaffirmed"}
    assert len(calls) <= 8, calls
