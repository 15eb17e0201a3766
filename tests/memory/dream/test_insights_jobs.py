"""The reflect phase's attitude proposals from consolidated mistake rules, and the daily insights job."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from memory import engine
from memory.dream.attitudes import reflect_attitudes
from memory.dream.insights import daily, sweep
from memory.models import InterestSnapshot, MemoryTier, ReviewItem
from tests.conftest import dt

pytestmark = pytest.mark.django_db
A = "agent-reflect"
T0 = dt("2030-01-01T09:00:00Z")


def mistakes(category: str, n: int) -> None:
    for k in range(n):
        engine.record_mistake(
            agent_id=A,
            category=category,
            input_summary=f"question {k}",
            what_went_wrong=f"ran the migration without a backup ({k})",
        )
    engine.maybe_consolidate(agent_id=A)


def test_consolidated_rules_become_attitude_proposals_once() -> None:
    mistakes("safety", 3)
    mistakes("capability", 3)
    mistakes("factual", 1)  # not consolidated: nothing to propose
    out = reflect_attitudes(agent_id=A, run_id=None)
    assert sorted((p.outcome, p.category) for p in out) == [
        ("proposed", "safety"),
        ("proposed", "tool_behavior"),
    ]
    item = ReviewItem.objects.get(kind="attitude", payload__category="safety")
    assert item.status == "pending" and item.payload["proposed_by"] == "system:dream"
    assert item.payload["new"]["statement"].startswith(
        "Take extra care with safety issues; they recur: ran the"
    )
    assert item.payload["new"]["confidence"] == pytest.approx(0.8)
    assert len(item.payload["new"]["evidence"]) == 1  # the rule's memory id
    again = reflect_attitudes(agent_id=A)  # a rerun over unchanged memory proposes nothing new
    assert [p.outcome for p in again] == ["already_proposed", "already_proposed"]
    assert ReviewItem.objects.filter(kind="attitude").count() == 2


def test_a_dry_run_stores_dry_items_only() -> None:
    mistakes("hallucination", 3)
    (p,) = reflect_attitudes(agent_id=A, dry=True)
    assert p.outcome == "dry" and ReviewItem.objects.get().status == "dry"
    assert engine.attitudes(agent_id=A) == []


def test_the_daily_job_snapshots_checks_skills_and_retiers() -> None:
    with time_machine.travel(T0, tick=False):
        mid = engine.store(agent_id=A, content="A long note. " * 60).id
        for _ in range(6):
            engine.skill_use(agent_id=A, skill="bash")
    (up,) = engine.review_list(agent_id=A, kind="skill")
    engine.review_decide(item_id=up.id, decision="approve", actor="user:rex", reason="ok")  # L1 -> L2
    with time_machine.travel(T0 + timedelta(days=100), tick=False):
        engine.agent_search(agent_id=A, query="nothing")
        out = daily(agent_id=A, use_llm=False)
        again = daily(agent_id=A, use_llm=False, day="2030-04-10")  # safe to run twice; a past day too
        assert again["tiers"]["moved"] == {} and again["snapshot"] == "2030-04-10"
    assert out["snapshot"] == "2030-04-11"
    assert InterestSnapshot.objects.get(day="2030-04-11").profile["queries"] == 1
    assert MemoryTier.objects.get(memory_id=mid).tier == "cold"
    assert out["tiers"]["digested"] == 1
    (down,) = out["skill_proposals"]  # 100 days unused: decay calls for L1 again, proposed for review
    assert ReviewItem.objects.get(id=down).payload["to_level"] == 1
    with time_machine.travel(T0 + timedelta(days=200), tick=False):
        assert sweep() == {"deleted": 1, "agents": 1}
