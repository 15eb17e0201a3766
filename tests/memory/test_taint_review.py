"""Issue 19 item 9: facts derived from a purged source enter the review queue as ``low_confidence`` items, once,
with the reason in words; deciding them confirms (trust back) or retracts; they resolve themselves when the
fact is retracted elsewhere."""

from __future__ import annotations

import pytest

from memory import engine
from memory.engine.taint import settled
from memory.models import AuditEvent, FactWrite, Memory, ReviewItem
from tests.memory.conftest import A

pytestmark = pytest.mark.django_db


def derived_fact(source_origin: str = "channel:x", *, subject: str = "acme", origin: str = "agent_derived"):
    src = engine.store(agent_id=A, content=f"said on {source_origin}", origin=source_origin).id
    fact = engine.store_temporal(agent_id=A, content=f"{subject} ships on Fridays", subject=subject,
                                 predicate="ships_on", object="Friday", origin=origin,
                                 derived_from=[src]).id  # fmt: skip
    return src, fact


def tainted_items() -> list[ReviewItem]:
    return list(ReviewItem.objects.filter(agent_id=A, kind="low_confidence", payload__rule="tainted"))


def test_a_purge_that_taints_a_fact_puts_it_in_the_review_queue_with_its_reason():
    src, fact = derived_fact()
    untouched = engine.store_temporal(agent_id=A, content="fine", subject="b", predicate="p", object="o").id
    engine.invalidate_by_origin(agent_id=A, origin="channel:x", actor="user:ada")
    [item] = tainted_items()
    assert item.status == "pending" and item.memory_ids == [fact]
    assert item.payload["why"] == "derived from a purged source: channel:x"
    assert item.payload["sources"] == [src] and item.payload["fact"]["id"] == fact
    assert item.payload["trust_before"] == 0.3  # the lowest of its sources (channel)
    listed = engine.review_list(agent_id=A, kind="low_confidence")
    assert [r.id for r in listed] == [item.id] and untouched not in listed[0].memory_ids


def test_no_duplicate_items_for_the_same_fact():
    src, fact = derived_fact()
    other = engine.store(agent_id=A, content="also said", origin="channel:y").id
    Memory.objects.filter(id=fact).update(derived_from=[src, other])  # a fact citing two sources
    engine.invalidate_by_origin(agent_id=A, origin="channel:x")
    engine.invalidate_by_origin(agent_id=A, origin="channel:x")  # again: nothing new
    engine.invalidate_by_origin(agent_id=A, origin="channel:y")  # another source of the same fact
    assert len(tainted_items()) == 1


def test_a_fact_the_same_purge_retracts_gets_no_item():
    derived_fact(origin="channel:x")  # written by the purged origin itself: retracted, not tainted
    engine.invalidate_by_origin(agent_id=A, origin="channel:x")
    assert tainted_items() == []


def test_approving_confirms_the_fact_and_lifts_the_taint():
    _, fact = derived_fact()
    engine.invalidate_by_origin(agent_id=A, origin="channel:x")
    assert engine.is_tainted(Memory.objects.get(id=fact))
    [item] = tainted_items()
    engine.review_decide(item_id=item.id, decision="approve", actor="user:rev", agent_id=A)
    row = Memory.objects.get(id=fact)
    assert not engine.is_tainted(row) and row.origin_trust == 0.3 and row.invalidated_by_event is None
    first_write = FactWrite.objects.filter(memory_id=fact).order_by("id").first()
    assert first_write.origin_trust == 0.3  # the fact's own write too (a continuation row is made from it)
    engine.review_undo(item_id=item.id, actor="user:rev", agent_id=A)  # the undo crushes it again
    assert engine.is_tainted(Memory.objects.get(id=fact))
    first_write.refresh_from_db()
    assert first_write.origin_trust == 0.1
    assert ReviewItem.objects.get(id=item.id).status == "pending"


def test_the_graph_view_shows_the_lifted_trust_and_the_undone_lift():
    _, fact = derived_fact()
    engine.invalidate_by_origin(agent_id=A, origin="channel:x")

    def trust_on_graph() -> float:
        return {e["memory_id"]: e["origin_trust"] for e in engine.graph_view(agent_id=A).edges}[fact]

    assert trust_on_graph() == pytest.approx(0.1)  # read once: the view is now kept for this generation
    [item] = tainted_items()
    engine.review_decide(item_id=item.id, decision="approve", actor="user:rev", agent_id=A)
    assert trust_on_graph() == pytest.approx(0.3)
    engine.review_undo(item_id=item.id, actor="user:rev", agent_id=A)
    assert trust_on_graph() == pytest.approx(0.1)


def test_rejecting_retracts_the_fact():
    _, fact = derived_fact()
    engine.invalidate_by_origin(agent_id=A, origin="channel:x")
    [item] = tainted_items()
    engine.review_decide(item_id=item.id, decision="reject", reason="wrong", actor="user:rev", agent_id=A)
    assert engine.is_retracted(Memory.objects.get(id=fact).invalidated_by_event)


def test_retracting_the_fact_elsewhere_resolves_its_item():
    _, fact = derived_fact()
    engine.invalidate_by_origin(agent_id=A, origin="channel:x")
    [item] = tainted_items()
    engine.retract_fact(agent_id=A, memory_id=fact, reason="wrong", actor="user:cur")
    item.refresh_from_db()
    assert item.status == "stale" and item.decided_by == "system:taint"
    assert item.decision_reason == "resolved: the fact was retracted"
    assert AuditEvent.objects.filter(action="review_resolved", details__item_id=item.id).exists()


def test_purging_the_facts_own_origin_resolves_its_item():
    _, fact = derived_fact(origin="channel:z")
    engine.invalidate_by_origin(agent_id=A, origin="channel:x")
    [item] = tainted_items()
    engine.invalidate_by_origin(agent_id=A, origin="channel:z")
    item.refresh_from_db()
    assert item.status == "stale" and item.decision_reason == "resolved: the fact was retracted"


def test_a_fact_tainted_again_after_its_item_was_decided_gets_a_new_item():
    src, fact = derived_fact()
    engine.invalidate_by_origin(agent_id=A, origin="channel:x")
    [first] = tainted_items()
    engine.review_decide(item_id=first.id, decision="approve", actor="user:rev", agent_id=A)
    other = engine.store(agent_id=A, content="another source", origin="channel:w").id
    Memory.objects.filter(id=fact).update(derived_from=[src, other])
    engine.invalidate_by_origin(agent_id=A, origin="channel:w")
    items = tainted_items()
    assert len(items) == 2 and {i.status for i in items} == {"approved", "pending"}


@pytest.mark.parametrize(
    "rows,why",
    [
        ({"f": (None, 0.1), "s": ("origin_purge", 0.3)}, ""),
        ({"f": ("curator_retract", 0.1), "s": ("origin_purge", 0.3)}, "the fact was retracted"),
        ({"f": (None, 0.6), "s": ("origin_purge", 0.3)}, "the fact was re-confirmed"),
        ({"f": (None, 0.1), "s": (None, 0.3)}, "its source was restored"),
        ({"s": (None, 0.3)}, "the fact is gone"),
    ],
)
def test_when_an_item_is_settled(rows, why):
    item = ReviewItem(memory_ids=["f"], payload={"rule": "tainted", "sources": ["s"]})
    assert settled(item, rows) == why
