"""The queue component's generic parts (review/queue.py), on plain items: what a card says about claims, the
undo window and time limits, and what a bulk decision over a filter leaves out. The quarantine desk's tests
(test_quarantine*.py) drive the same code through real pages."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from review.quarantine import DESK, QuarantineDesk
from review.queue import QueueCard, QueueKind, bulk_params, bulk_selection

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@dataclass
class Item:
    """What a queue item carries (a review item has no time limit: no ``expires_at``)."""

    id: int
    status: str = "pending"
    claimed_by: str = ""
    claimed_until: datetime | None = None
    decided_by: str = ""
    undo_until: datetime | None = None


@dataclass
class DueItem(Item):
    expires_at: datetime | None = None


def test_a_card_without_a_time_limit_never_warns_or_expires():
    card = QueueCard(Item(1), NOW, actor="user:rex")
    assert card.pending and card.due is None
    assert (card.expired, card.warn, card.seconds_left) == (False, False, 0)


def test_a_card_flags_the_end_of_its_time_limit():
    soon = QueueCard(DueItem(1, expires_at=NOW + timedelta(hours=1)), NOW)
    later = QueueCard(DueItem(2, expires_at=NOW + timedelta(hours=5)), NOW)
    over = QueueCard(DueItem(3, expires_at=NOW - timedelta(seconds=1)), NOW)
    assert soon.warn and not soon.expired and soon.seconds_left == 3600
    assert not later.warn and not later.expired
    assert over.expired and not over.warn


def test_claims_show_whose_they_are_and_end_by_themselves():
    live = Item(1, claimed_by="user:ria", claimed_until=NOW + timedelta(minutes=5))
    assert QueueCard(live, NOW, actor="user:rex").held_by_other
    mine = QueueCard(live, NOW, actor="user:ria")
    assert mine.claimed_by_me and not mine.held_by_other and mine.claim_seconds_left == 300
    ended = QueueCard(live, NOW + timedelta(minutes=6), actor="user:rex")
    assert not ended.claimed and not ended.held_by_other


def test_only_the_decider_may_undo_inside_the_window():
    decided = Item(1, status="approved", decided_by="user:rex", undo_until=NOW + timedelta(seconds=30))
    assert QueueCard(decided, NOW, actor="user:rex").undoable
    assert not QueueCard(decided, NOW, actor="user:ria").undoable
    assert not QueueCard(decided, NOW + timedelta(seconds=31), actor="user:rex").undoable


class Listed(QuarantineDesk):
    """The desk's kind over a fixed list of items, some of high impact for an approval."""

    def __init__(self, items: list[Item], high: set[int]) -> None:
        self._items, self._high = items, high

    def bulk_items(self, agent_id: str, filters: dict[str, Any], *, now: datetime) -> list[Any]:
        return self._items

    def high_impact(
        self, agent_id: str, items: list[Any], *, decision: str, now: datetime
    ) -> list[tuple[int, int]]:
        return [(i.id, 1) for i in items if i.id in self._high and decision == "approve"]


def test_bulk_leaves_out_other_reviewers_claims_and_high_impact_items():
    items = [
        Item(1),
        Item(2, claimed_by="user:ria", claimed_until=NOW + timedelta(minutes=5)),
        Item(3, claimed_by="user:rex", claimed_until=NOW + timedelta(minutes=5)),  # the reviewer's own claim
        Item(4, claimed_by="user:ria", claimed_until=NOW - timedelta(minutes=1)),  # an ended claim
        Item(5),
    ]
    kind = Listed(items, high={5})
    approve = bulk_selection(kind, "a", {}, actor="user:rex", now=NOW, decision="approve")
    assert approve.ids == [1, 3, 4] and approve.held == [(2, "user:ria")] and approve.high == [(5, 1)]
    assert [i.id for i in approve.sample] == [1, 3, 4]
    reject = bulk_selection(kind, "a", {}, actor="user:rex", now=NOW, decision="reject")
    assert reject.ids == [1, 3, 4, 5] and reject.high == []


def test_a_kind_must_say_how_it_reads_and_decides():
    with pytest.raises(TypeError):
        QueueKind()  # type: ignore[abstract]


def test_bulk_links_carry_only_the_kinds_bulk_filters_in_its_order():
    params = bulk_params(DESK, {"status": "decided", "batch": 7, "q": "acme", "origin": "", "expiring": None})
    assert params.urlencode() == "q=acme&batch=7"
