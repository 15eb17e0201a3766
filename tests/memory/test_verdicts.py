"""SPEC B2: applying the judge's verdicts through the timeline, on real chains, and undoing them exactly."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from memory import engine
from memory.engine import verdicts
from memory.models import FactWrite, Memory
from tests.conftest import dt
from tests.memory.conftest import OTHER, A, fact

pytestmark = pytest.mark.django_db

T1, T2, T3 = dt("2026-01-10"), dt("2026-03-01"), dt("2026-06-01")
EVENT = "dream:1:1"
PROBES = [
    T1 - timedelta(days=1),
    T1,
    T1 + timedelta(days=5),
    T2,
    T2 + timedelta(days=5),
    T3,
    T3 + timedelta(days=300),
]


def reads(agent: str, keys: list[tuple[str, str]], query: str) -> dict:
    """Everything an agent could read about ``keys``: values at each probe, the history, a search."""
    out: dict = {}
    for s, p in keys:
        for t in PROBES:
            r = engine.get_at(agent_id=agent, subject=s, predicate=p, at=t)
            out[(s, p, t)] = (r.id, r.object, r.valid_from, r.valid_until) if r else None
        out[(s, p, "history")] = [
            (
                h.id,
                h.object,
                h.valid_from,
                h.valid_until,
                h.superseded_by,
                h.invalidated_by_event,
                h.quarantined,
            )
            for h in engine.get_history(agent_id=agent, subject=s, predicate=p)
        ]
    out["search"] = sorted(h.id for h in engine.search(agent_id=agent, query=query, limit=50))
    return out


def current(agent: str, s: str, p: str) -> list[Memory]:
    return list(
        Memory.objects.filter(agent_id=agent, subject=s, predicate=p).filter(engine.current_q(timezone.now()))
    )


def test_merge_keeps_the_earlier_row_as_the_one_current_value_with_a_reaffirm():
    with time_machine.travel(T3, tick=False):
        old = fact("proj", "deploy_target", "Cloudflare Workers", valid_from=T1, origin="user_direct")
        new = fact("proj", "deploy_target", "cloudflare workers (CF)", valid_from=T2, origin="channel:tg")
    keys = [("proj", "deploy_target")]
    before = reads(A, keys, "cloudflare")
    with time_machine.travel(T3 + timedelta(hours=1), tick=False):
        applied = verdicts.verdict_apply(
            agent_id=A, verdict="MERGE", old_id=new, new_id=old, source_event=EVENT, actor="system:dream"
        )
    assert (applied.kept, applied.ended) == (old, new)  # the earlier row is kept, whatever the argument order
    rows = current(A, "proj", "deploy_target")
    assert [r.id for r in rows] == [old]
    kept = Memory.objects.get(id=old)
    assert kept.valid_until is None and kept.reaffirmed_by[-1]["origin"] == "channel:tg"
    assert kept.confidence == 1.0
    merged = Memory.objects.get(id=new)
    assert merged.valid_from == merged.valid_until == T2 and merged.superseded_by == old
    assert merged.invalidated_by_event == EVENT
    writes = FactWrite.objects.filter(agent_id=A).order_by("id")
    assert [(w.memory_id, w.is_reaffirm) for w in writes] == [(old, False), (old, True)]  # both kept
    for t in (T1, T2 + timedelta(days=1), T3):
        assert engine.get_at(agent_id=A, subject="proj", predicate="deploy_target", at=t).id == old
    with time_machine.travel(T3 + timedelta(hours=2), tick=False):
        verdicts.verdict_undo(agent_id=A, undo=applied.undo, actor="user:rex", reason="wrong merge")
    assert reads(A, keys, "cloudflare") == before


def test_supersede_across_aliased_subjects_ends_the_old_value_at_the_new_start():
    with time_machine.travel(T3, tick=False):
        old = fact("Ana", "lives_in", "Paris", valid_from=T1, origin="channel:tg")
        new = fact("Ana Maria", "lives_in", "London", valid_from=T2, origin="user_direct")
    keys = [("Ana", "lives_in"), ("Ana Maria", "lives_in")]
    before = reads(A, keys, "Paris London")
    applied_at = T3 + timedelta(hours=1)
    with time_machine.travel(applied_at, tick=False):
        applied = verdicts.verdict_apply(
            agent_id=A, verdict="SUPERSEDE", old_id=old, new_id=new, source_event=EVENT, actor="system:dream"
        )
    assert (applied.kept, applied.ended) == (new, old)
    assert engine.get_at(agent_id=A, subject="Ana", predicate="lives_in", at=T1 + timedelta(days=1)).id == old
    assert engine.get_at(agent_id=A, subject="Ana", predicate="lives_in", at=T2 + timedelta(days=1)) is None
    ended = Memory.objects.get(id=old)
    assert ended.valid_until == T2 and ended.invalidated_by_event == EVENT
    # what was believed before the verdict is still answerable
    was = engine.get_at(
        agent_id=A,
        subject="Ana",
        predicate="lives_in",
        at=T2 + timedelta(days=1),
        as_of=applied_at - timedelta(minutes=1),
    )
    assert was is not None and was.object == "Paris"
    assert engine.get_at(agent_id=A, subject="Ana Maria", predicate="lives_in", at=T3).id == new
    with time_machine.travel(T3 + timedelta(hours=2), tick=False):
        verdicts.verdict_undo(agent_id=A, undo=applied.undo, actor="user:rex", reason="not the same person")
    assert reads(A, keys, "Paris London") == before


def test_a_purge_of_the_old_origin_still_covers_the_bounded_copy():
    with time_machine.travel(T3, tick=False):
        old = fact("Ana", "lives_in", "Paris", valid_from=T1, origin="channel:tg")
        new = fact("Ana Maria", "lives_in", "London", valid_from=T2, origin="user_direct")
        verdicts.verdict_apply(
            agent_id=A, verdict="SUPERSEDE", old_id=old, new_id=new, source_event=EVENT, actor="system:dream"
        )
        engine.invalidate_by_origin(agent_id=A, origin="channel:tg", actor="user:ada")
    assert engine.get_at(agent_id=A, subject="Ana", predicate="lives_in", at=T1 + timedelta(days=1)) is None
    assert engine.get_history(agent_id=A, subject="Ana", predicate="lives_in")[0].retracted


def test_coexist_changes_nothing():
    with time_machine.travel(T3, tick=False):
        a = fact("Ana", "likes", "tea", valid_from=T1)
        b = fact("Ana", "enjoys", "coffee", valid_from=T2)
    before = reads(A, [("Ana", "likes"), ("Ana", "enjoys")], "tea coffee")
    applied = verdicts.verdict_apply(
        agent_id=A, verdict="COEXIST", old_id=a, new_id=b, source_event=EVENT, actor="system:dream"
    )
    assert not applied.changed
    assert reads(A, [("Ana", "likes"), ("Ana", "enjoys")], "tea coffee") == before


def test_plain_memories_merge_and_supersede_and_undo():
    with time_machine.travel(T1, tick=False):
        a = engine.store(agent_id=A, content="The team standup is at 9:00 every day").id
    with time_machine.travel(T2, tick=False):
        b = engine.store(agent_id=A, content="The team standup is at 9:00 every day.").id
        c = engine.store(
            agent_id=A, content="The team standup no longer happens at 9:00; it moved to 10:00"
        ).id
    before = engine.search(agent_id=A, query="standup", limit=10)
    with time_machine.travel(T3, tick=False):
        merged = verdicts.verdict_apply(
            agent_id=A, verdict="MERGE", old_id=a, new_id=b, source_event=EVENT, actor="system:dream"
        )
        superseded = verdicts.verdict_apply(
            agent_id=A,
            verdict="SUPERSEDE",
            old_id=a,
            new_id=c,
            source_event="dream:1:2",
            actor="system:dream",
        )
        assert [h.id for h in engine.search(agent_id=A, query="standup", limit=10)] == [c]
        assert Memory.objects.get(id=a).superseded_by == c and Memory.objects.get(id=c).supersedes == a
        verdicts.verdict_undo(agent_id=A, undo=superseded.undo, actor="user:rex", reason="undo")
        verdicts.verdict_undo(agent_id=A, undo=merged.undo, actor="user:rex", reason="undo")
        assert sorted(h.id for h in engine.search(agent_id=A, query="standup", limit=10)) == sorted(
            h.id for h in before
        )


def test_a_stale_pair_is_refused_and_nothing_is_written():
    with time_machine.travel(T3, tick=False):
        old = fact("proj", "deploy_target", "fly", valid_from=T1)
        new = fact("proj2", "deploy_target", "fly", valid_from=T2)
    fp = verdicts.state_fingerprint(list(Memory.objects.filter(id__in=[old, new])))
    with time_machine.travel(T3 + timedelta(hours=1), tick=False):
        fact("proj2", "deploy_target", "vercel")  # the new side changed meanwhile
    writes = FactWrite.objects.count()
    with pytest.raises(engine.EngineError) as err:
        verdicts.verdict_apply(
            agent_id=A, verdict="MERGE", old_id=old, new_id=new, source_event=EVENT, actor="x", expected=fp
        )
    assert err.value.code == "stale" and FactWrite.objects.count() == writes


def test_another_agents_row_is_not_found_and_an_undo_after_a_newer_write_is_refused():
    with time_machine.travel(T3, tick=False):
        mine = fact("proj", "deploy_target", "fly", valid_from=T1)
        theirs = fact("proj", "deploy_target", "fly.io", valid_from=T2, agent_id=OTHER)
        other = fact("proj", "deploy_target", "fly.io", valid_from=T2)
    with pytest.raises(engine.EngineError) as err:
        verdicts.verdict_apply(
            agent_id=A, verdict="MERGE", old_id=mine, new_id=theirs, source_event=EVENT, actor="x"
        )
    assert err.value.code == "not_found"
    with time_machine.travel(T3 + timedelta(hours=1), tick=False):
        applied = verdicts.verdict_apply(
            agent_id=A, verdict="MERGE", old_id=mine, new_id=other, source_event=EVENT, actor="x"
        )
        fact("proj", "deploy_target", "render")
        with pytest.raises(engine.EngineError) as err:
            verdicts.verdict_undo(agent_id=A, undo=applied.undo, actor="x", reason="late")
    assert err.value.code == "undo_conflict"


def test_supersede_of_a_value_that_started_at_the_same_moment_ends_it_without_calling_it_retracted():
    with time_machine.travel(T3, tick=False):
        old = fact("carl", "lives_in", "Paris", valid_from=T1)
        new = fact("carl m.", "lives_in", "London", valid_from=T1)
    with time_machine.travel(T3 + timedelta(hours=1), tick=False):
        applied = verdicts.verdict_apply(
            agent_id=A, verdict="SUPERSEDE", old_id=old, new_id=new, source_event=EVENT, actor="system:dream"
        )
        for t in PROBES:
            assert engine.get_at(agent_id=A, subject="carl", predicate="lives_in", at=t) is None
        row = Memory.objects.get(id=old)
        assert row.valid_from == row.valid_until == T1 and not engine.is_retracted(row.invalidated_by_event)
        assert row.invalidated_by_event == EVENT
        fact("carl", "lives_in", "Rome", valid_from=T2)  # a later write re-derives the key
    row.refresh_from_db()
    assert not engine.is_retracted(row.invalidated_by_event) and row.valid_until == T1
    assert engine.get_at(agent_id=A, subject="carl", predicate="lives_in", at=T3).object == "Rome"
    with pytest.raises(engine.EngineError):  # the key was written since: undo is refused
        verdicts.verdict_undo(agent_id=A, undo=applied.undo, actor="user:rex", reason="undo")
