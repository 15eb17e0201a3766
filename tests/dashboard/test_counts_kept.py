"""The agents list's and agent home's kept counts (issue 19: ``engine.state_memo``): after every kind of engine
write, and as world time passes a row's start or end, they equal a fresh count; with nothing changed they cost
one query."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from dashboard import selectors
from memory import engine
from memory.engine import state_stamp
from memory.engine.belief import NOT_RETRACTED, RETRACTED, current_q
from memory.models import LAYERS, Agent, Memory
from tests.conftest import make_burst
from tests.dashboard.conftest import make_memories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("guard_defaults")]


def fresh_summary(aid: str) -> dict:
    rows = Memory.objects.filter(agent_id=aid)
    current = rows.filter(current_q(timezone.now()))
    return {
        "agent_id": aid,
        "current": current.count(),
        "by_layer": {layer: current.filter(layer=layer).count() for layer in LAYERS},
        "current_facts": current.filter(subject__isnull=False).count(),
        "quarantined": rows.filter(Q(quarantined=True) & NOT_RETRACTED).count(),
        "retracted": rows.filter(RETRACTED).count(),
        "total": rows.count(),
    }


def fresh_counts(aid: str) -> selectors.AgentCounts:
    s = fresh_summary(aid)
    return selectors.AgentCounts(
        current=s["current"],
        facts=s["current_facts"],
        quarantined=s["quarantined"],
        retracted=s["retracted"],
        total=s["total"],
    )


def assert_kept_equal_fresh(*aids: str) -> None:
    """Both kept reads, read twice (the second from the memo), equal a fresh count of each agent."""
    for _ in range(2):
        for aid in aids:
            assert engine.summarize(agent_id=aid) == fresh_summary(aid)
        summaries = selectors.agents_with_counts(Agent.objects.filter(agent_id__in=aids).order_by("agent_id"))
        assert {s.agent.agent_id: s.counts for s in summaries} == {aid: fresh_counts(aid) for aid in aids}


def fact(aid: str, subject: str, obj: str, **kw) -> str:
    return engine.store_temporal(
        agent_id=aid,
        content=f"{subject} lives in {obj}",
        subject=subject,
        predicate="lives_in",
        object=obj,
        **kw,
    ).id


def test_kept_counts_follow_every_kind_of_write(agent, other_agent):
    a, b = agent.agent_id, other_agent.agent_id
    engine.clear_state_memo()
    make_memories(a, 3)
    assert_kept_equal_fresh(a, b)
    engine.store(agent_id=a, content="a procedure", layer="procedural")  # a plain memory
    assert_kept_equal_fresh(a, b)
    fact(a, "ann", "Lisbon")
    berlin = fact(a, "ann", "Berlin")  # supersedes Lisbon
    assert_kept_equal_fresh(a)
    held = make_burst(a, "held")  # quarantined rows
    assert held is not None
    assert_kept_equal_fresh(a)
    engine.quarantine_approve(request_id=held.id, actor="user:rex", reason="fine")
    assert_kept_equal_fresh(a)
    engine.quarantine_reject(
        request_id=make_burst(a, "spam", origin="channel:x").id, actor="user:rex", reason="wrong"
    )
    assert_kept_equal_fresh(a)
    late = make_burst(a, "late", origin="channel:y")
    assert_kept_equal_fresh(a)
    with time_machine.travel(late.expires_at + timedelta(seconds=1), tick=False):
        engine.quarantine_expire(late.id)  # the TTL ran out
        assert_kept_equal_fresh(a)
    engine.retract_fact(agent_id=a, memory_id=berlin, reason="wrong", actor="user:rex")
    assert_kept_equal_fresh(a)
    fact(a, "bob", "Oslo", origin="channel:bad")
    engine.invalidate_by_origin(agent_id=a, origin="channel:bad", actor="user:rex")
    assert_kept_equal_fresh(a)
    fact(a, "cat", "Rome")
    engine.expire_by_subject(agent_id=a, subject="cat", reason="left")
    assert_kept_equal_fresh(a)
    fact(a, "dan", "Riga")
    engine.erase(agent_id=a, subject="dan", reason="asked", actor="user:rex")
    assert_kept_equal_fresh(a)
    fact(a, "eve", "Kyiv")
    engine.reassign(from_agent=a, to_agent=b, subject="eve", actor="user:rex")
    assert_kept_equal_fresh(a, b)
    engine.retier(agent_id=a)
    assert_kept_equal_fresh(a, b)
    assert fresh_summary(a)["retracted"] > 0 and fresh_summary(b)["current_facts"] == 1


def test_kept_counts_follow_world_time(agent):
    a = agent.agent_id
    engine.clear_state_memo()
    now = timezone.now()
    make_memories(a, 2)
    fact(a, "fay", "Paris", valid_from=now + timedelta(hours=1))  # starts later
    fact(
        a, "gus", "Bern", valid_from=now - timedelta(days=1), valid_until=now + timedelta(hours=2)
    )  # ends later
    assert_kept_equal_fresh(a)
    for hours in (0.5, 1, 1.5, 2, 3):  # before, at and after each moment a row starts or stops holding
        with time_machine.travel(now + timedelta(hours=hours), tick=False):
            assert_kept_equal_fresh(a)
    with time_machine.travel(now + timedelta(hours=1.5), tick=False):
        assert engine.summarize(agent_id=a)["current_facts"] == fresh_summary(a)["current_facts"]
    with time_machine.travel(now, tick=False):  # back in time: computed again, not taken from later
        assert_kept_equal_fresh(a)


def test_nothing_changed_costs_one_query_and_a_write_by_sql_is_seen(agent, other_agent):
    a, b = agent.agent_id, other_agent.agent_id
    make_memories(a, 3)
    make_memories(b, 2)
    engine.clear_state_memo()
    engine.summarize(agent_id=a)
    selectors.agents_with_counts(Agent.objects.filter(agent_id__in=[a, b]))
    hits = state_stamp.stats["hits"]
    with CaptureQueriesContext(connection) as summary_queries:
        engine.summarize(agent_id=a)
    with CaptureQueriesContext(connection) as list_queries:
        selectors.agents_with_counts(Agent.objects.filter(agent_id__in=[a, b]))
    assert len(summary_queries.captured_queries) == 1
    assert len(list_queries.captured_queries) == 2  # the agents, their stamps
    assert state_stamp.stats["hits"] == hits + 3
    # the triggers move the stamp whoever writes: an UPDATE of a counted column outside the engine's code
    held = Memory.objects.filter(agent_id=a, subject__isnull=False).update(quarantined=True)
    assert held > 0
    assert engine.summarize(agent_id=a) == fresh_summary(a)
    assert engine.summarize(agent_id=a)["quarantined"] == held
    Memory.objects.filter(agent_id=a).delete()
    assert engine.summarize(agent_id=a)["total"] == 0


def test_a_column_the_counts_do_not_read_keeps_the_stamp(agent):
    a = agent.agent_id
    make_memories(a, 2)
    before = state_stamp.state_stamps([a])[a]
    Memory.objects.filter(agent_id=a).update(access_count=7)  # a search's touch
    assert state_stamp.state_stamps([a])[a] == before
    Memory.objects.filter(agent_id=a).update(layer="semantic")
    assert state_stamp.state_stamps([a])[a] != before


def test_the_migration_stamps_the_agents_that_already_have_rows(agent, other_agent):
    import importlib

    migration = importlib.import_module("memory.migrations.0023_memory_state_stamp")
    make_memories(agent.agent_id, 2)
    make_memories(other_agent.agent_id, 1)
    vendor = {"sqlite": "SQLITE", "postgresql": "PG"}[connection.vendor]
    with connection.cursor() as cur:
        for statement in getattr(migration, f"{vendor}_BACKWARD") + getattr(migration, f"{vendor}_FORWARD"):
            cur.execute(statement)
    stamps = state_stamp.state_stamps([agent.agent_id, other_agent.agent_id, "nobody"])
    assert set(stamps) == {agent.agent_id, other_agent.agent_id}
    engine.clear_state_memo()
    assert_kept_equal_fresh(agent.agent_id, other_agent.agent_id)
    make_memories(agent.agent_id, 1)  # the triggers are back
    assert_kept_equal_fresh(agent.agent_id, other_agent.agent_id)
