"""Queue semantics of the quarantine desk in the engine (UX "Every queue"): claims that expire by themselves,
a short undo that is a new audit decision, and bulk decisions with one audit entry per batch."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.forms.models import model_to_dict

from memory import engine
from memory.models import ApprovalRequest, AuditEvent, FactWrite, Memory
from tests.memory.conftest import A
from tests.memory.test_guard import BAD, T0, burst, clean_world, default_guard, snapshot, write  # noqa: F401

pytestmark = pytest.mark.django_db
DECIDE = T0 + timedelta(hours=1)


def rows_state():
    """Every stored row of the agent and every write, field by field (what any read can be derived from)."""
    memories = {m.id: model_to_dict(m) for m in Memory.objects.filter(agent_id=A)}
    writes = {w.id: model_to_dict(w) for w in FactWrite.objects.filter(agent_id=A)}
    return memories, writes


def held_batch():
    clean_world()
    results = burst(6)
    return ApprovalRequest.objects.get(), results


def at(seconds: float):
    return time_machine.travel(DECIDE + timedelta(seconds=seconds), tick=False)


# --- claims ---------------------------------------------------------------------------------------------


def test_a_claim_shows_the_holder_and_refuses_everyone_else_until_it_expires():
    request, results = held_batch()
    with at(0):
        claimed = engine.quarantine_claim(request_id=request.id, actor="user:ann")
    assert claimed.claimed_by == "user:ann"
    assert claimed.claimed_until == DECIDE + timedelta(seconds=engine.CLAIM_SECS)
    with at(60), pytest.raises(engine.ClaimedByOther) as err:
        engine.quarantine_reject(request.id, actor="user:bob", reason="poisoning")
    assert err.value.code == "claimed_by_other" and err.value.details["holder"] == "user:ann"
    with at(61), pytest.raises(engine.ClaimedByOther):
        engine.quarantine_claim(request_id=request.id, actor="user:bob")
    assert ApprovalRequest.objects.get().status == "pending"
    assert set(FactWrite.objects.filter(origin=BAD).values_list("state", flat=True)) == {"quarantined"}
    # the claim runs out by itself: no job, the times are compared
    with at(engine.CLAIM_SECS + 1):
        engine.quarantine_reject(request.id, actor="user:bob", reason="poisoning")
    assert ApprovalRequest.objects.get().status == "denied"


def test_the_holder_decides_and_the_decision_releases_the_claim():
    request, _ = held_batch()
    with at(0):
        engine.quarantine_claim(request_id=request.id, actor="user:ann")
    with at(10):
        engine.quarantine_claim(request_id=request.id, actor="user:ann")  # renewing one's own claim
    assert ApprovalRequest.objects.get().claimed_until == DECIDE + timedelta(seconds=10 + engine.CLAIM_SECS)
    with at(20):
        decided = engine.quarantine_approve(request.id, actor="user:ann", reason="verified")
    decided.refresh_from_db()
    assert decided.status == "approved" and decided.claimed_by == "" and decided.claimed_until is None
    assert list(
        AuditEvent.objects.filter(details__request_id=request.id)
        .order_by("id")
        .values_list("action", "actor")
    ) == [
        ("knowledge_quarantined", "system:guard"),
        ("quarantine_claimed", "user:ann"),
        ("quarantine_claimed", "user:ann"),
        ("quarantine_approved", "user:ann"),
    ]
    with at(30), pytest.raises(engine.AlreadyDecided):
        engine.quarantine_claim(request_id=request.id, actor="user:bob")


def test_release_frees_the_batch_and_only_the_holder_can_release():
    request, _ = held_batch()
    with at(0):
        engine.quarantine_claim(request_id=request.id, actor="user:ann")
    with at(1):
        engine.quarantine_release(request_id=request.id, actor="user:bob")  # not the holder: nothing happens
    assert ApprovalRequest.objects.get().claimed_by == "user:ann"
    with at(2):
        engine.quarantine_release(request_id=request.id, actor="user:ann")
    assert ApprovalRequest.objects.get().claimed_by == ""
    assert AuditEvent.objects.filter(action="quarantine_released", actor="user:ann").count() == 1
    with at(3):
        engine.quarantine_reject(request.id, actor="user:bob", reason="poisoning")


def test_the_ttl_job_rejects_a_claimed_batch_all_the_same():
    request, _ = held_batch()
    with at(0):
        engine.quarantine_claim(request_id=request.id, actor="user:ann")
    with time_machine.travel(request.expires_at - timedelta(seconds=30), tick=False):
        engine.quarantine_claim(request_id=request.id, actor="user:ann")
    with time_machine.travel(request.expires_at + timedelta(seconds=1), tick=False):
        assert engine.quarantine_sweep()["expired"] == 1
    request.refresh_from_db()
    assert request.status == "expired" and request.decided_by == "system:ttl" and request.undo_until is None


@pytest.mark.parametrize("bad", [None, "x", True, 0, 3601])
def test_claim_validates_its_input(bad):
    request, _ = held_batch()
    if bad in (None, "x"):
        with pytest.raises(engine.NotFound):
            engine.quarantine_claim(request_id=bad, actor="user:ann")
    else:
        with pytest.raises(engine.InvalidArgument):
            engine.quarantine_claim(request_id=request.id, actor="user:ann", secs=bad)
    with pytest.raises(engine.InvalidArgument):
        engine.quarantine_claim(request_id=request.id, actor=" ")


# --- undo -----------------------------------------------------------------------------------------------


def test_approve_undo_returns_reads_and_rows_to_what_they_were_before_the_approve():
    request, results = held_batch()
    before, rows_before = snapshot(), rows_state()
    with at(0):
        engine.quarantine_approve(request.id, actor="user:ann", reason="verified")
    assert snapshot() != before  # the approve changed what agents read
    gen = engine.graph_generation(agent_id=A)
    with at(10):
        undone = engine.quarantine_undo(request_id=request.id, actor="user:ann")
    assert snapshot() == before
    assert rows_state() == rows_before
    assert engine.graph_generation(agent_id=A) > gen
    assert undone.status == "pending" and undone.decided_by == "" and undone.decision_reason == ""
    # the batch is the undoer's to decide again, and the time spent decided does not count against its TTL
    assert undone.claimed_by == "user:ann"
    assert undone.expires_at == request.expires_at + timedelta(seconds=10)
    assert undone.remind_at == request.remind_at + timedelta(seconds=10)
    assert engine.search(agent_id=A, query="evil", limit=50, touch=False) == []


def test_reject_undo_puts_the_rows_back_into_quarantine_with_their_trust():
    request, results = held_batch()
    before, rows_before = snapshot(), rows_state()
    trust = {m.id: m.origin_trust for m in Memory.objects.filter(id__in=[r.id for r in results])}
    with at(0):
        engine.quarantine_reject(request.id, actor="user:ann", reason="poisoning")
    assert all(
        m.origin_trust <= 0.1 and m.invalidated_by_event == "quarantine_reject"
        for m in Memory.objects.filter(id__in=trust)
    )
    with at(29):
        engine.quarantine_undo(request_id=request.id, actor="user:ann", reason="wrong batch")
    assert rows_state() == rows_before and snapshot() == before
    rows = Memory.objects.filter(id__in=trust)
    assert {m.id: m.origin_trust for m in rows} == trust
    assert all(m.quarantined and m.invalidated_by_event is None for m in rows)
    # and it can be decided again, the other way, with the usual effect
    with at(40):
        engine.quarantine_approve(request.id, actor="user:ann", reason="verified")
    assert (
        engine.get_at(
            agent_id=A, subject="alice", predicate="lives_in", at=DECIDE + timedelta(days=400)
        ).object
        == "evil-0"
    )


def test_undo_is_a_new_audit_decision_and_the_first_one_stays_on_record():
    request, _ = held_batch()
    with at(0):
        engine.quarantine_approve(request.id, actor="user:ann", reason="verified")
    with at(5):
        engine.quarantine_undo(request_id=request.id, actor="user:ann", reason="misclick")
    with at(8):
        engine.quarantine_reject(request.id, actor="user:ann", reason="poisoning")
    log = list(
        AuditEvent.objects.filter(details__request_id=request.id)
        .exclude(action="knowledge_quarantined")
        .order_by("id")
        .values_list("action", "actor", "reason")
    )
    assert log == [
        ("quarantine_approved", "user:ann", "verified"),
        ("quarantine_undo", "user:ann", "misclick"),
        ("quarantine_denied", "user:ann", "poisoning"),
    ]
    undo = AuditEvent.objects.get(action="quarantine_undo")
    assert undo.details["undone"] == "approved" and undo.details["writes"] == 6
    assert set(FactWrite.objects.filter(origin=BAD).values_list("state", flat=True)) == {"retracted"}


def test_only_the_decider_may_undo_and_only_inside_the_window():
    request, _ = held_batch()
    with at(0):
        engine.quarantine_approve(request.id, actor="user:ann", reason="verified")
    with at(5), pytest.raises(engine.UndoNotYours) as err:
        engine.quarantine_undo(request_id=request.id, actor="user:bob")
    assert err.value.code == "undo_not_yours"
    with at(engine.UNDO_SECS), pytest.raises(engine.UndoExpired) as err:
        engine.quarantine_undo(request_id=request.id, actor="user:ann")
    assert err.value.code == "undo_expired"
    assert ApprovalRequest.objects.get().status == "approved"
    assert set(FactWrite.objects.filter(origin=BAD).values_list("state", flat=True)) == {"believed"}
    assert not AuditEvent.objects.filter(action="quarantine_undo").exists()


def test_a_pending_batch_and_a_system_decision_have_nothing_to_undo():
    request, _ = held_batch()
    with pytest.raises(engine.NotDecided):
        engine.quarantine_undo(request_id=request.id, actor="user:ann")
    with time_machine.travel(request.expires_at + timedelta(seconds=1), tick=False):
        engine.quarantine_sweep()
        with pytest.raises(engine.UndoNotYours):
            engine.quarantine_undo(request_id=request.id, actor="user:ann")
        with pytest.raises(engine.UndoExpired):
            engine.quarantine_undo(request_id=request.id, actor="system:ttl")


def test_a_decision_in_the_last_seconds_keeps_its_time_left_after_undo_so_the_sweep_leaves_it():
    request, _ = held_batch()
    last = request.expires_at - timedelta(seconds=5)
    with time_machine.travel(last, tick=False):
        engine.quarantine_reject(request.id, actor="user:ann", reason="poisoning")
    # the sweep runs while the batch is decided, past its original expiry: it has nothing to do
    with time_machine.travel(request.expires_at + timedelta(seconds=10), tick=False):
        assert engine.quarantine_sweep()["expired"] == 0
    with time_machine.travel(last + timedelta(seconds=20), tick=False):
        undone = engine.quarantine_undo(request_id=request.id, actor="user:ann")
        assert undone.expires_at == request.expires_at + timedelta(seconds=20)
        assert engine.quarantine_sweep()["expired"] == 0
    assert ApprovalRequest.objects.get().status == "pending"
    with time_machine.travel(undone.expires_at + timedelta(seconds=1), tick=False):
        assert engine.quarantine_sweep()["expired"] == 1  # its remaining 5 s did run out in the end


def test_undo_is_refused_while_a_newer_batch_of_the_same_burst_is_pending():
    request, _ = held_batch()
    with at(0):
        engine.quarantine_approve(request.id, actor="user:ann", reason="verified")
    with at(1):
        assert write("phone", "evil-7", valid_from=T0).outcome == "quarantined"  # the window still counts
    newer = ApprovalRequest.objects.get(status="pending")
    assert newer.id != request.id
    with at(2), pytest.raises(engine.UndoConflict) as err:
        engine.quarantine_undo(request_id=request.id, actor="user:ann")
    assert err.value.code == "undo_conflict"
    assert ApprovalRequest.objects.get(id=request.id).status == "approved"


@pytest.mark.parametrize("decide", ["approve", "reject"])
def test_an_undo_never_brings_back_what_an_origin_purge_retracted_after_the_decision(decide):
    request, results = held_batch()
    with at(0):
        if decide == "approve":
            engine.quarantine_approve(request.id, actor="user:ann", reason="verified")
        else:
            engine.quarantine_reject(request.id, actor="user:ann", reason="wrong")
    decided = ApprovalRequest.objects.get()
    with at(3):
        engine.invalidate_by_origin(agent_id=A, origin=BAD, actor="user:ada")
    purged = rows_state()
    with at(6), pytest.raises(engine.UndoConflict) as err:
        engine.quarantine_undo(request_id=request.id, actor="user:ann")
    assert err.value.code == "undo_conflict" and "user:ada purged the origin channel:telegram-666" in str(
        err.value
    )
    # the decision stands and nothing moved: the purged writes stay retracted
    after = ApprovalRequest.objects.get()
    assert (after.status, after.decided_at, after.undo_until) == (
        decided.status,
        decided.decided_at,
        decided.undo_until,
    )
    assert rows_state() == purged
    assert set(FactWrite.objects.filter(origin=BAD).values_list("state", flat=True)) == {"retracted"}
    assert not AuditEvent.objects.filter(action="quarantine_undo").exists()
    # so no later decision can make them searchable again
    with at(8), pytest.raises(engine.AlreadyDecided):
        engine.quarantine_approve(request.id, actor="user:ann", reason="verified")
    assert engine.search(agent_id=A, query="evil", limit=50, touch=False) == []


def test_a_purge_that_did_not_cover_the_batch_leaves_the_undo_alone():
    request, results = held_batch()
    with at(0):
        engine.quarantine_reject(request.id, actor="user:ann", reason="wrong")
    with at(2):
        write("mood", "fine", origin="channel:other", subject="bob")
    with at(3):
        # another origin, and this origin but only what it wrote after the batch
        engine.invalidate_by_origin(agent_id=A, origin="channel:other", actor="user:ada")
        engine.invalidate_by_origin(agent_id=A, origin=BAD, since=DECIDE, actor="user:ada")
    with at(6):
        undone = engine.quarantine_undo(request_id=request.id, actor="user:ann")
    assert undone.status == "pending"
    assert set(FactWrite.objects.filter(origin=BAD).values_list("state", flat=True)) == {"quarantined"}
    # and a purge before the decision is no reason to refuse either
    with at(10):
        engine.quarantine_reject(request.id, actor="user:ann", reason="wrong")
    with at(12):
        assert engine.quarantine_undo(request_id=request.id, actor="user:ann").status == "pending"


# --- bulk -----------------------------------------------------------------------------------------------


def many_batches(n: int) -> list[int]:
    for s in range(n):
        for k in range(5):
            with time_machine.travel(T0 + timedelta(seconds=10 * s + k), tick=False):
                write(f"p{k}", f"v{s}-{k}", subject=f"subject-{s}")
    return list(ApprovalRequest.objects.order_by("id").values_list("id", flat=True))


def test_bulk_reject_decides_each_batch_with_its_own_audit_entry_and_skips_others_claims():
    ids = many_batches(4)
    with at(0):
        engine.quarantine_claim(request_id=ids[1], actor="user:bob")
    with at(1):
        engine.quarantine_approve(ids[3], actor="user:bob", reason="verified")
    with at(2):
        out = engine.quarantine_bulk(
            agent_id=A, request_ids=ids + [ids[0]], decision="reject", actor="user:ann", reason="poisoning"
        )
    assert [(o.request_id, o.outcome, o.code) for o in out] == [
        (ids[0], "denied", ""),
        (ids[1], "skipped", "claimed_by_other"),
        (ids[2], "denied", ""),
        (ids[3], "skipped", "already_decided"),
    ]
    assert out[1].holder == "user:bob"
    assert AuditEvent.objects.filter(action="quarantine_denied", actor="user:ann").count() == 2
    assert dict(ApprovalRequest.objects.values_list("id", "status")) == {
        ids[0]: "denied",
        ids[1]: "pending",
        ids[2]: "denied",
        ids[3]: "approved",
    }


def test_bulk_never_touches_another_agents_batch():
    ids = many_batches(1)
    out = engine.quarantine_bulk(
        agent_id="someone-else", request_ids=ids, decision="approve", actor="user:ann", reason="verified"
    )
    assert [(o.outcome, o.code) for o in out] == [("skipped", "not_found")]
    assert ApprovalRequest.objects.get().status == "pending"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"decision": "maybe"},
        {"request_ids": "1,2"},
        {"request_ids": list(range(1, 502))},
        {"reason": "  "},
    ],
)
def test_bulk_validates_its_input(kwargs):
    args = {"agent_id": A, "request_ids": [1], "decision": "reject", "actor": "user:ann", "reason": "wrong"}
    with pytest.raises(engine.InvalidArgument):
        engine.quarantine_bulk(**{**args, **kwargs})
