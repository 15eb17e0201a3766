"""SPEC B3: the predicate registry's cardinality reaches the write path.

A multi-valued predicate (``likes``, ``speaks``, ... in the shipped registry) keys a fact by its normalised
object, so values coexist, each with its own timeline (T2–T5 per value); every other predicate stays
single-valued. A registry change that flips a predicate's cardinality re-derives the stored keys
(``engine.rekey_predicates`` / ``manage.py rekey_predicates``).
"""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
import time_machine
from django.core.management import call_command

from memory import config, engine
from memory import registry as reg
from memory.engine.belief import approval_effects
from memory.engine.cardinality import MAX_KEY_CHARS, is_multi, value_key
from memory.engine.temporal import check_fact, write_fact
from memory.models import AuditEvent, FactWrite, Memory
from tests.conftest import dt
from tests.memory.conftest import A

pytestmark = pytest.mark.django_db

NOW = dt("2026-06-01T12:00:00")


def likes(obj, *, subject="ana", predicate="likes", **kw):
    return engine.store_temporal(
        agent_id=kw.pop("agent_id", A),
        content=kw.pop("content", f"{subject} {predicate} {obj}"),
        subject=subject,
        predicate=predicate,
        object=obj,
        **kw,
    )


def values_at(at, *, subject="ana", predicate="likes", **kw):
    return sorted(
        r.object for r in engine.get_values_at(agent_id=A, subject=subject, predicate=predicate, at=at, **kw)
    )


@pytest.fixture
def registry_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``use(text)``: a deployment registry override in force from now on (a fresh config file each time, so
    no cache sees the old one); ``use(None)``: the shipped registry alone."""
    count = [0]

    def use(text: str | None) -> None:
        count[0] += 1
        cfg = tmp_path / f"memdesk-{count[0]}.toml"
        if text is None:
            cfg.write_text("")
        else:
            (tmp_path / f"site-{count[0]}.toml").write_text(text)
            cfg.write_text(f'[registry]\npath = "site-{count[0]}.toml"\n')
        monkeypatch.setenv("MEMDESK_CONFIG", str(cfg))
        config._warned.clear()
        reg._reported.clear()

    return use


SINGLE_LIKES = "[predicates.likes]\ntype = 'text'\ncardinality = 'single'\n"
MULTI_LIVES = "[predicates.lives_in]\ntype = 'place'\ncardinality = 'multi'\n"


# --- the one lookup --------------------------------------------------------------------------------------


def test_the_engine_asks_the_registry_once_per_fact_and_keys_by_the_normalised_object():
    assert is_multi("likes") and is_multi("Enjoys") and is_multi("speaks")  # synonyms and case too
    assert not is_multi("lives_in") and not is_multi("some_unknown_predicate") and not is_multi(None)
    assert value_key("lives_in", "Paris") == ""
    assert value_key("likes", "  Green\u3000TEA ") == "green tea"  # NFKC, case-folded, spaces folded
    long = value_key("likes", "x" * 4000)
    assert long.startswith("sha256:") and len(long) <= MAX_KEY_CHARS
    assert long == value_key("likes", "X" * 4000) and long != value_key("likes", "x" * 3999)


# --- write path ------------------------------------------------------------------------------------------


def test_likes_tea_then_coffee_leaves_both_current_while_lives_in_still_supersedes():
    tea = likes("tea", valid_from=dt("2026-01-01"))
    coffee = likes("coffee", valid_from=dt("2026-02-01"))
    assert tea.outcome == coffee.outcome == "stored"
    t, c = Memory.objects.get(id=tea.id), Memory.objects.get(id=coffee.id)
    assert (t.value_key, c.value_key) == ("tea", "coffee")
    assert t.valid_until is None and t.superseded_by is None and t.invalidated_by_event is None
    assert c.valid_until is None and c.supersedes is None
    assert values_at(NOW) == ["coffee", "tea"] and values_at(dt("2026-01-15")) == ["tea"]

    paris = likes("Paris", predicate="lives_in", valid_from=dt("2026-01-01"))
    london = likes("London", predicate="lives_in", valid_from=dt("2026-02-01"))
    p = Memory.objects.get(id=paris.id)
    assert p.value_key == "" and p.valid_until == dt("2026-02-01") and p.superseded_by == london.id
    assert values_at(NOW, predicate="lives_in") == ["London"]
    assert engine.get_at(agent_id=A, subject="ana", predicate="lives_in", at=NOW).object == "London"


def test_each_value_has_its_own_timeline_reaffirm_and_case():
    first = likes("tea", valid_from=dt("2026-01-01"), origin="user_direct")
    likes("coffee", valid_from=dt("2026-02-01"))
    again = likes("tea", valid_from=dt("2026-03-01"), origin="operator")
    assert again.outcome == "reaffirmed" and again.id == first.id  # coffee in between does not matter
    assert Memory.objects.get(id=first.id).reaffirmed_by[-1]["origin"] == "operator"
    capital = likes(
        "Tea", valid_from=dt("2026-04-01")
    )  # the same value key, another spelling: supersedes tea
    assert capital.outcome == "stored"
    assert Memory.objects.get(id=first.id).superseded_by == capital.id
    assert values_at(NOW) == ["Tea", "coffee"] and values_at(dt("2026-03-15")) == ["coffee", "tea"]
    # one open believed row per key, several per (subject, predicate)
    open_rows = Memory.objects.filter(agent_id=A, subject="ana", predicate="likes", valid_until__isnull=True)
    assert sorted(open_rows.values_list("value_key", flat=True)) == ["coffee", "tea"]


def test_a_write_that_ends_one_value_ends_only_that_value():
    # "Ana liked tea until March" next to an open coffee: the bounded write ends tea alone
    likes("coffee", valid_from=dt("2026-01-01"))
    likes("tea", valid_from=dt("2026-01-01"), valid_until=dt("2026-03-01"))
    assert values_at(dt("2026-02-01")) == ["coffee", "tea"]
    assert values_at(dt("2026-03-02")) == ["coffee"]
    # a value written again later starts its own new segment; coffee is untouched throughout
    likes("tea", valid_from=dt("2026-05-01"))
    assert values_at(dt("2026-04-01")) == ["coffee"] and values_at(NOW) == ["coffee", "tea"]
    # a historical value arriving late is inserted in its own key only
    likes("jazz", valid_from=dt("2025-01-01"), valid_until=dt("2025-06-01"))
    assert values_at(dt("2025-03-01")) == ["jazz"] and values_at(NOW) == ["coffee", "tea"]
    coffee = Memory.objects.get(object="coffee")
    assert coffee.valid_from == dt("2026-01-01") and coffee.valid_until is None and coffee.supersedes is None


def test_get_at_with_an_object_and_history_of_every_value():
    likes("tea", valid_from=dt("2026-01-01"))
    likes("coffee", valid_from=dt("2026-02-01"))
    key = {"agent_id": A, "subject": "ana", "predicate": "likes"}
    assert engine.get_at(at=NOW, object="TEA", **key).object == "tea"
    assert engine.get_at(at=dt("2026-01-15"), object="coffee", **key) is None
    assert engine.get_at(at=NOW, **key).object == "coffee"  # the value that started latest
    history = engine.get_history(**key)
    assert [h.object for h in history] == ["tea", "coffee"]
    # as_of: what was believed before coffee was written
    first_write = FactWrite.objects.filter(agent_id=A, object="tea").get()
    as_of = first_write.ingested_at + timedelta(microseconds=1)
    assert [r.object for r in engine.get_values_at(at=NOW, as_of=as_of, **key)] == ["tea"]
    later = FactWrite.objects.filter(agent_id=A, object="coffee").get().ingested_at
    assert sorted(r.object for r in engine.get_values_at(at=NOW, as_of=later, **key)) == ["coffee", "tea"]


def test_retract_and_purge_act_per_value():
    tea = likes("tea", valid_from=dt("2026-01-01"), origin="channel:tg-1")
    coffee = likes("coffee", valid_from=dt("2026-02-01"), origin="user_direct")
    water = likes("water", valid_from=dt("2026-03-01"), origin="user_direct")
    engine.retract_fact(agent_id=A, memory_id=water.id, reason="wrong", actor="user:rex")
    assert values_at(NOW) == ["coffee", "tea"]
    engine.invalidate_by_origin(agent_id=A, origin="channel:tg-1")
    assert values_at(NOW) == ["coffee"]
    assert Memory.objects.get(id=tea.id).invalidated_by_event == "origin_purge"
    assert Memory.objects.get(id=coffee.id).valid_until is None


def test_prune_ends_one_value_and_keeps_the_others():
    tea = likes("tea", valid_from=dt("2026-01-01"))
    likes("coffee", valid_from=dt("2026-01-01"))
    with time_machine.travel(NOW, tick=False):
        assert engine.prune_end(agent_id=A, memory_id=tea.id, why="stale", source_event="dream:1", actor="x")
    assert values_at(NOW + timedelta(days=1)) == ["coffee"]


def test_the_batch_path_keys_multi_valued_facts_per_value():
    facts = [
        {"content": "ana likes tea", "subject": "ana", "predicate": "likes", "object": "tea"},
        {"content": "ana likes coffee", "subject": "ana", "predicate": "likes", "object": "coffee"},
        {"content": "ana likes tea", "subject": "ana", "predicate": "likes", "object": "tea"},
        {"content": "ana lives in Paris", "subject": "ana", "predicate": "lives_in", "object": "Paris"},
        {"content": "ana lives in Rome", "subject": "ana", "predicate": "lives_in", "object": "Rome"},
    ]
    out = engine.store_temporal_many(agent_id=A, facts=facts)
    assert [r.outcome for r in out] == ["stored", "stored", "reaffirmed", "stored", "stored"]
    assert values_at(NOW + timedelta(days=400)) == ["coffee", "tea"]
    assert values_at(NOW + timedelta(days=400), predicate="lives_in") == ["Rome"]
    assert set(
        FactWrite.objects.filter(agent_id=A, predicate="likes").values_list("value_key", flat=True)
    ) == {
        "tea",
        "coffee",
    }


def held(obj, predicate):
    fact = check_fact(
        agent_id=A, content=f"ana {predicate} {obj}", subject="ana", predicate=predicate, object=obj
    )
    return Memory.objects.get(id=write_fact(fact, quarantine=True).id)


def test_releasing_a_held_value_of_a_multi_valued_key_adds_it_rather_than_superseding():
    likes("tea", valid_from=dt("2026-01-01"))
    likes("Rome", predicate="lives_in", valid_from=dt("2026-01-01"))
    coffee, oslo, tea = held("coffee", "likes"), held("Oslo", "lives_in"), held("tea", "likes")
    effects = approval_effects(A, [coffee, oslo, tea])
    assert coffee.value_key == "coffee" and coffee.quarantined
    assert effects[coffee.id].effect == "new"
    assert effects[oslo.id].effect == "supersede"
    assert effects[tea.id].effect == "reaffirm"


def test_a_low_trust_write_may_add_a_value_but_not_override_a_single_valued_one():
    likes("tea", origin="user_direct")
    added = engine.store_temporal(
        agent_id=A,
        content="ana likes coffee",
        subject="ana",
        predicate="likes",
        object="coffee",
        origin="channel:x",
        protect=True,
    )
    assert added.outcome == "stored"
    likes("Rome", predicate="lives_in", origin="user_direct")
    held = engine.store_temporal(
        agent_id=A,
        content="ana lives in Oslo",
        subject="ana",
        predicate="lives_in",
        object="Oslo",
        origin="channel:x",
        protect=True,
    )
    assert held.outcome == "quarantined"


# --- a registry change re-keys ---------------------------------------------------------------------------


def test_flipping_a_predicate_to_multi_rekeys_and_brings_superseded_values_back(registry_file):
    registry_file(SINGLE_LIKES)
    tea = likes("tea", valid_from=dt("2026-01-01"))
    coffee = likes("coffee", valid_from=dt("2026-02-01"))
    assert values_at(NOW) == ["coffee"]  # single-valued under this registry
    assert Memory.objects.get(id=tea.id).superseded_by == coffee.id

    registry_file(None)  # the shipped registry: likes is multi
    before = engine.graph_generation(agent_id=A)
    report = engine.rekey_predicates(actor="operator:test", dry_run=True)
    assert (report.keys, report.writes, report.rows, report.changed) == (1, 2, 2, 0)
    assert values_at(NOW) == ["coffee"]  # a dry run writes nothing
    assert not AuditEvent.objects.filter(action="rekey_predicates").exists()

    report = engine.rekey_predicates(actor="operator:test")
    assert report.keys == 1 and report.predicates == {A: ["likes"]} and report.changed >= 1
    assert values_at(NOW) == ["coffee", "tea"]
    t = Memory.objects.get(id=tea.id)
    assert t.value_key == "tea" and t.valid_until is None and t.superseded_by is None
    assert engine.graph_generation(agent_id=A) > before
    event = AuditEvent.objects.get(action="rekey_predicates")
    assert event.agent_id == A and event.details["keys"] == 1 and event.details["predicates"] == ["likes"]
    assert engine.rekey_predicates(actor="operator:test").keys == 0  # idempotent
    # the write path now keys likes per value
    assert likes("water").outcome == "stored" and len(values_at(NOW + timedelta(days=400))) == 3


def test_flipping_a_predicate_to_single_lets_the_latest_value_supersede(registry_file):
    likes("Paris", predicate="lives_in", valid_from=dt("2026-01-01"))
    likes("Rome", predicate="lives_in", valid_from=dt("2026-02-01"))
    registry_file(MULTI_LIVES)
    engine.rekey_predicates(actor="operator:test")
    assert values_at(NOW, predicate="lives_in") == ["Paris", "Rome"]
    registry_file(None)
    report = engine.rekey_predicates(actor="operator:test", agent_id=A)
    assert report.keys == 1
    assert values_at(NOW, predicate="lives_in") == ["Rome"]
    assert values_at(dt("2026-01-15"), predicate="lives_in") == ["Paris"]
    assert set(Memory.objects.filter(predicate="lives_in").values_list("value_key", flat=True)) == {""}
    paris = Memory.objects.get(object="Paris")
    assert paris.valid_until == dt("2026-02-01") and paris.superseded_by is not None


def test_the_rekey_command_reports_json_and_refuses_a_bad_agent(registry_file):
    registry_file(SINGLE_LIKES)
    likes("tea", valid_from=dt("2026-01-01"))
    likes("coffee", valid_from=dt("2026-02-01"))
    registry_file(None)
    out = StringIO()
    call_command("rekey_predicates", "--dry-run", stdout=out)
    assert json.loads(out.getvalue())["keys"] == 1 and values_at(NOW) == ["coffee"]
    out = StringIO()
    call_command("rekey_predicates", stdout=out)
    assert json.loads(out.getvalue())["predicates"] == {A: ["likes"]} and values_at(NOW) == ["coffee", "tea"]
    err = StringIO()
    with pytest.raises(SystemExit):
        call_command("rekey_predicates", "--agent", "", stderr=err)
    assert "invalid" in err.getvalue()


# --- verdicts --------------------------------------------------------------------------------------------


def test_the_judge_lets_values_coexist_and_an_explicit_retraction_ends_only_that_value():
    tea = likes("tea", valid_from=dt("2026-01-01"))
    coffee = likes("coffee", valid_from=dt("2026-02-01"))
    rows = [Memory.objects.get(id=i) for i in (tea.id, coffee.id)]
    verdict = engine.judge(rows[0], rows[1])
    assert verdict.verdict == "COEXIST" and verdict.rule == "multi_valued"
    # "no longer likes tea, switched to coffee": the judge's multi_retract SUPERSEDE ends the tea value alone
    switched = likes(
        "water", valid_from=dt("2026-03-01"), content="Ana no longer likes tea, she switched to water"
    )
    retract = engine.judge(Memory.objects.get(id=tea.id), Memory.objects.get(id=switched.id))
    assert retract.verdict == "SUPERSEDE" and retract.rule == "multi_retract"
    applied = engine.verdict_apply(
        agent_id=A,
        verdict="SUPERSEDE",
        old_id=tea.id,
        new_id=switched.id,
        source_event="dream:1:1",
        actor="x",
    )
    assert values_at(dt("2026-02-15")) == ["coffee", "tea"]
    assert values_at(NOW) == ["coffee", "water"]
    assert Memory.objects.get(id=tea.id).valid_until == dt("2026-03-01")
    engine.verdict_undo(agent_id=A, undo=applied.undo, actor="x", reason="undo")
    assert values_at(NOW) == ["coffee", "tea", "water"]
