"""Knowledge gaps (SPEC B8): ≥ 2 INCORRECT verdicts on one query signature within 7 days; surfaced, never filled,
resolved by a later CORRECT verdict on that signature."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from memory import engine
from memory.models import AuditEvent, KnowledgeGap, Memory
from tests.conftest import dt
from tests.memory.conftest import OTHER, A

pytestmark = pytest.mark.django_db

T0 = dt("2030-01-01T09:00:00Z")


def fail(query: str, when, agent_id: str = A):  # noqa: ANN001
    with time_machine.travel(when, tick=False):
        found = engine.agent_search(agent_id=agent_id, query=query)
        return engine.feedback(agent_id=agent_id, verdict="INCORRECT", query_id=found.query_id)


def test_two_incorrect_verdicts_in_seven_days_record_a_gap() -> None:
    engine.store(agent_id=A, content="the office closes at six")
    first = fail("when does the office open?", T0)
    assert first.gap is None and KnowledgeGap.objects.count() == 0
    second = fail("Office open when", T0 + timedelta(days=6, hours=23))  # same signature, other wording
    gap = KnowledgeGap.objects.get()
    assert (gap.signature, gap.fail_count, gap.status) == ("office open", 2, "open")
    assert (gap.first_failure_at, gap.last_failure_at) == (T0, T0 + timedelta(days=6, hours=23))
    assert gap.query == "Office open when"
    assert second.gap is not None and second.to_dict()["gap"]["signature"] == "office open"
    assert AuditEvent.objects.filter(action="knowledge_gap_recorded").count() == 1


def test_failures_further_apart_than_seven_days_do_not() -> None:
    fail("office opening hours", T0)
    fail("office opening hours", T0 + timedelta(days=7, seconds=1))
    assert KnowledgeGap.objects.count() == 0
    fail("office opening hours", T0 + timedelta(days=8))
    assert KnowledgeGap.objects.get().fail_count == 2


def test_other_verdicts_and_other_signatures_do_not_count() -> None:
    with time_machine.travel(T0, tick=False):
        for verdict in ("AMBIGUOUS", "CORRECT"):
            found = engine.agent_search(agent_id=A, query="parking rules")
            engine.feedback(agent_id=A, verdict=verdict, query_id=found.query_id)
    fail("parking rules", T0 + timedelta(hours=1))
    fail("parking fees", T0 + timedelta(hours=2))
    fail("parking rules", T0 + timedelta(hours=3), agent_id=OTHER)
    assert KnowledgeGap.objects.count() == 0
    mid = engine.store(agent_id=A, content="parking is free on sundays").id
    for _ in range(3):  # verdicts on a memory say nothing about a signature
        engine.feedback(agent_id=A, verdict="-", memory_id=mid)
    assert KnowledgeGap.objects.count() == 0


def test_the_next_matching_search_surfaces_the_gap_and_nothing_fills_it() -> None:
    engine.store(agent_id=A, content="the office closes at six")
    fail("office open", T0)
    fail("office open", T0 + timedelta(hours=1))
    rows = Memory.objects.count()
    with time_machine.travel(T0 + timedelta(hours=2), tick=False):
        found = engine.agent_search(agent_id=A, query="When does the office OPEN")
        other = engine.agent_search(agent_id=A, query="office closes")
    assert [g.signature for g in found.gaps] == ["office open"]
    reply = found.to_dict()["gaps"][0]
    assert reply["fail_count"] == 2 and reply["status"] == "open" and reply["query"] == "office open"
    assert other.gaps == []
    assert Memory.objects.count() == rows  # never auto-filled
    assert (
        engine.agent_search(agent_id=OTHER, query="office open").gaps == []
    )  # another agent's gaps stay its


def test_a_later_correct_verdict_resolves_it_and_new_failures_start_a_new_count() -> None:
    fail("vpn setup", T0)
    fail("vpn setup", T0 + timedelta(hours=1))
    fail("vpn setup", T0 + timedelta(hours=2))
    assert KnowledgeGap.objects.get().fail_count == 3
    with time_machine.travel(T0 + timedelta(days=1), tick=False):
        found = engine.agent_search(agent_id=A, query="setup vpn")
        ok = engine.feedback(agent_id=A, verdict="CORRECT", query_id=found.query_id)
    gap = KnowledgeGap.objects.get()
    assert (gap.status, gap.resolved_at, gap.resolved_by_query) == (
        "resolved",
        T0 + timedelta(days=1),
        found.query_id,
    )
    assert ok.gap is not None and ok.gap.status == "resolved"
    with time_machine.travel(T0 + timedelta(days=1, hours=1), tick=False):
        assert engine.agent_search(agent_id=A, query="vpn setup").gaps == []
    fail("vpn setup", T0 + timedelta(days=1, hours=2))  # the failures before the resolution do not count
    assert KnowledgeGap.objects.filter(status="open").count() == 0
    fail("vpn setup", T0 + timedelta(days=1, hours=3))
    assert KnowledgeGap.objects.filter(status="open").get().fail_count == 2
    assert [g.status for g in engine.knowledge_gaps(agent_id=A, status=None)] == ["open", "resolved"]
    assert [g.signature for g in engine.knowledge_gaps(agent_id=A)] == ["setup vpn"]


def test_listing_for_people_validates_its_filters() -> None:
    with pytest.raises(engine.EngineError) as caught:
        engine.knowledge_gaps(agent_id=A, status="closed")
    assert caught.value.field == "status"
    assert engine.knowledge_gaps(agent_id=A) == []


def test_an_empty_signature_never_makes_a_gap() -> None:
    fail("the of and", T0)
    fail("what is it", T0 + timedelta(hours=1))
    assert KnowledgeGap.objects.count() == 0
