"""Per-fact decisions inside a quarantined batch (issue 19 item 1: "approve 4 of 6"): the chosen facts are
released, the others rejected, in one audited decision that one undo takes back whole."""

from __future__ import annotations

import pytest

from memory import engine
from memory.models import ApprovalRequest, AuditEvent, FactWrite, Memory
from tests.memory.conftest import A
from tests.memory.test_guard import BAD, default_guard, snapshot  # noqa: F401
from tests.memory.test_guard_desk import at, held_batch, rows_state

pytestmark = pytest.mark.django_db


def believed_objects() -> set[str]:
    return {
        m.object
        for m in Memory.objects.filter(agent_id=A, origin=BAD, quarantined=False, invalidated_at__isnull=True)
    }


def test_approving_four_of_six_releases_those_and_rejects_the_rest_in_one_decision():
    request, _ = held_batch()
    ids = request.payload["ids"]
    assert len(ids) == 6
    chosen = ids[:4]
    with at(0):
        decided = engine.quarantine_approve(
            request.id, actor="user:ann", reason="verified", memory_ids=chosen
        )
    assert decided.status == "approved"
    rows = {m.id: m for m in Memory.objects.filter(id__in=ids)}
    for i in chosen:
        assert not rows[i].quarantined and rows[i].invalidated_at is None, i
    for i in ids[4:]:
        assert rows[i].invalidated_by_event == "quarantine_reject" and rows[i].origin_trust <= 0.1, i
    states = dict(FactWrite.objects.filter(memory_id__in=ids).values_list("memory_id", "state"))
    assert {states[i] for i in chosen} == {"believed"} and {states[i] for i in ids[4:]} == {"retracted"}
    (event,) = AuditEvent.objects.filter(action="quarantine_approved", details__request_id=request.id)
    assert event.details["approved_ids"] == chosen and event.details["rejected_ids"] == ids[4:]
    assert believed_objects() == {rows[i].object for i in chosen}


def test_one_undo_takes_a_per_fact_decision_back_whole():
    request, _ = held_batch()
    before, rows_before = snapshot(), rows_state()
    with at(0):
        engine.quarantine_approve(
            request.id, actor="user:ann", reason="verified", memory_ids=request.payload["ids"][1:3]
        )
    assert snapshot() != before
    with at(5):
        undone = engine.quarantine_undo(request_id=request.id, actor="user:ann")
    assert undone.status == "pending"
    assert snapshot() == before and rows_state() == rows_before
    assert set(FactWrite.objects.filter(origin=BAD).values_list("state", flat=True)) == {"quarantined"}


def test_naming_every_fact_is_a_whole_approval():
    request, _ = held_batch()
    with at(0):
        engine.quarantine_approve(
            request.id, actor="user:ann", reason="verified", memory_ids=request.payload["ids"]
        )
    (event,) = AuditEvent.objects.filter(action="quarantine_approved")
    assert "rejected_ids" not in event.details
    assert set(FactWrite.objects.filter(origin=BAD).values_list("state", flat=True)) == {"believed"}


@pytest.mark.parametrize("bad", [[], "x", ["not-in-batch"], [1], "ALL"])
def test_a_per_fact_approval_names_facts_of_the_batch_or_nothing_is_written(bad):
    request, _ = held_batch()
    before = rows_state()
    with at(0), pytest.raises(engine.InvalidArgument) as err:
        engine.quarantine_approve(request.id, actor="user:ann", reason="verified", memory_ids=bad)
    assert err.value.field == "memory_ids"
    assert rows_state() == before
    assert ApprovalRequest.objects.get().status == "pending"


# --- revert after the undo window (issue 19 item 3) ----------------------------------------------------------


def test_an_approval_is_reverted_after_its_window_by_a_new_decision(db):
    request, _ = held_batch()
    with at(0), pytest.raises(engine.NotDecided):  # a pending batch has nothing to revert
        engine.quarantine_revert(request_id=request.id, actor="user:bob", reason="mistake")
    with at(0):
        engine.quarantine_approve(request.id, actor="user:ann", reason="verified")
    assert believed_objects()
    with at(engine.UNDO_SECS + 60):
        with pytest.raises(engine.UndoExpired):
            engine.quarantine_undo(request_id=request.id, actor="user:ann")
        reverted = engine.quarantine_revert(request_id=request.id, actor="user:bob", reason="poisoning")
    assert reverted.status == "denied" and reverted.decided_by == "user:bob"
    assert reverted.decision_reason == "revert: poisoning"
    assert believed_objects() == set()
    assert set(FactWrite.objects.filter(origin=BAD).values_list("state", flat=True)) == {"retracted"}
    actions = list(
        AuditEvent.objects.filter(details__request_id=request.id)
        .order_by("id")
        .values_list("action", flat=True)
    )
    assert actions == [
        "knowledge_quarantined",
        "quarantine_approved",
        "quarantine_reverted",
    ]  # both on record
    event = AuditEvent.objects.get(action="quarantine_reverted")
    assert event.details["reverted"] == "approved" and event.details["reverted_by"] == "user:ann"


def test_a_rejection_is_reverted_by_releasing_its_facts_with_their_trust(db):
    request, _ = held_batch()
    trust = dict(FactWrite.objects.filter(origin=BAD).values_list("id", "origin_trust"))
    with at(0):
        engine.quarantine_reject(request.id, actor="user:ann", reason="wrong")
    assert believed_objects() == set()
    with at(engine.UNDO_SECS + 60):
        reverted = engine.quarantine_revert(request_id=request.id, actor="user:bob", reason="mistake")
    assert reverted.status == "approved"
    assert len(believed_objects()) == 6
    assert dict(FactWrite.objects.filter(origin=BAD).values_list("id", "origin_trust")) == trust
