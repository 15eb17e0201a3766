"""SPEC D2 under real concurrency (PostgreSQL): two reviewers deciding one review item at once - exactly one
wins, and the verdict is applied once."""

from __future__ import annotations

import pytest

from memory import engine
from memory.models import AuditEvent, FactWrite, ReviewItem
from tests.memory.test_guard_race import defaults, run_parallel  # noqa: F401
from tests.memory.test_review import conflict, now_value, pair

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_two_reviewers_deciding_one_item_at_once_exactly_one_wins():
    for round_ in range(3):
        agent = f"race-review-{round_}"
        old, new = pair(agent)
        item = engine.review_propose(agent_id=agent, proposal=conflict(old, new, agent=agent)).item
        results, _ = run_parallel(
            [
                lambda rid=item.id: engine.review_decide(item_id=rid, decision="approve", actor="user:a"),
                lambda rid=item.id: engine.review_decide(
                    item_id=rid, decision="reject", actor="user:b", reason="no"
                ),
            ]
        )
        won = [r for r in results if isinstance(r, engine.ReviewRecord)]
        lost = [r for r in results if isinstance(r, engine.EngineError)]
        assert len(won) == 1 and len(lost) == 1, results
        assert lost[0].code == "already_decided"
        assert ReviewItem.objects.get(id=item.id).status == won[0].status
        decisions = AuditEvent.objects.filter(
            agent_id=agent, action__in=["review_approved", "review_rejected"]
        )
        assert decisions.count() == 1
        expected = old if won[0].status == "approved" else new
        assert now_value(agent) == expected
        assert FactWrite.objects.filter(agent_id=agent, is_reaffirm=True).count() == (
            won[0].status == "approved"
        )
