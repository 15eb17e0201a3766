"""Claims and undo under real concurrency (PostgreSQL): two reviewers claiming at once, a decision against a
claim, an undo against the TTL job, another reviewer's decision and an origin purge. One outcome wins,
consistently."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import time_machine
from django.db import connection

from memory import engine
from memory.models import ApprovalRequest, AuditEvent, FactWrite
from tests.memory.test_guard_race import defaults, make_batch, run_parallel  # noqa: F401

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_two_reviewers_claiming_at_once_exactly_one_holds_the_batch():
    for round_ in range(4):
        request = make_batch(f"race-claim-{round_}")
        results, _ = run_parallel(
            [
                lambda rid=request.id: engine.quarantine_claim(request_id=rid, actor="user:a"),
                lambda rid=request.id: engine.quarantine_claim(request_id=rid, actor="user:b"),
            ]
        )
        won = [r for r in results if isinstance(r, ApprovalRequest)]
        lost = [r for r in results if isinstance(r, BaseException)]
        assert len(won) == 1 and len(lost) == 1, results
        assert getattr(lost[0], "code", None) == "claimed_by_other"
        request.refresh_from_db()
        assert request.claimed_by == won[0].claimed_by
        assert lost[0].details["holder"] == request.claimed_by
        assert (
            AuditEvent.objects.filter(action="quarantine_claimed", details__request_id=request.id).count()
            == 1
        )


def test_a_decision_against_another_reviewers_claim_one_wins_and_the_state_agrees():
    for round_ in range(6):
        request = make_batch(f"race-decide-claim-{round_}")
        results, _ = run_parallel(
            [
                lambda rid=request.id: engine.quarantine_claim(request_id=rid, actor="user:a"),
                lambda rid=request.id: engine.quarantine_reject(rid, actor="user:b", reason="poisoning"),
            ]
        )
        claim, decision = results
        request.refresh_from_db()
        states = set(FactWrite.objects.filter(agent_id=request.agent_id).values_list("state", flat=True))
        if isinstance(claim, ApprovalRequest):  # the claim came first: the decision is refused
            assert getattr(decision, "code", None) == "claimed_by_other", results
            assert request.status == "pending" and request.claimed_by == "user:a"
            assert states == {"quarantined"}
        else:  # the decision came first: the claim is refused, the decision released nothing it did not hold
            assert getattr(claim, "code", None) == "already_decided", results
            assert request.status == "denied" and request.claimed_by == ""
            assert states == {"retracted"}


def test_undo_against_the_ttl_job_the_undone_batch_is_not_expired():
    request = make_batch("race-undo-ttl")
    last = request.expires_at - timedelta(seconds=2)
    with time_machine.travel(last, tick=False):
        engine.quarantine_approve(request.id, actor="user:a", reason="verified")
    with time_machine.travel(request.expires_at + timedelta(seconds=1), tick=False):
        # past the original expiry, inside the undo window: the job must not take the undone batch
        results, _ = run_parallel(
            [
                lambda: engine.quarantine_undo(request_id=request.id, actor="user:a"),
                lambda: engine.quarantine_sweep(),
            ]
        )
    assert isinstance(results[0], ApprovalRequest), results
    assert results[1]["expired"] == 0, results
    original = request.expires_at
    request.refresh_from_db()
    # undone 3 s after the decision: the 2 s it had left are still left
    assert request.status == "pending" and request.expires_at == original + timedelta(seconds=3)
    assert set(FactWrite.objects.filter(agent_id="race-undo-ttl").values_list("state", flat=True)) == {
        "quarantined"
    }


def test_undo_against_another_reviewers_decision_never_loses_a_decision():
    for round_ in range(4):
        request = make_batch(f"race-undo-decide-{round_}")
        engine.quarantine_reject(request.id, actor="user:a", reason="poisoning")
        results, _ = run_parallel(
            [
                lambda rid=request.id: engine.quarantine_undo(request_id=rid, actor="user:a"),
                lambda rid=request.id: engine.quarantine_approve(rid, actor="user:b", reason="verified"),
            ]
        )
        undo, approve = results
        request.refresh_from_db()
        states = set(FactWrite.objects.filter(agent_id=request.agent_id).values_list("state", flat=True))
        assert isinstance(undo, ApprovalRequest), results
        # the undo hands the batch to its undoer (a claim), so the other reviewer is refused either way
        assert getattr(approve, "code", None) in {"already_decided", "claimed_by_other"}, results
        assert request.status == "pending" and request.claimed_by == "user:a"
        assert states == {"quarantined"}


def test_an_origin_purge_during_a_reject_undo_never_leaves_the_purged_writes_pending():
    """The undo checks for a purge after the decision, then restores the rejected writes to quarantine. A purge
    landing between the two would skip those writes (still retracted when it read them) and the undo would then
    bring them back. The undo holds the origin's lock across check and restore, so the purge waits for it and
    retracts what the undo restored: nothing from the purged origin is left pending.

    The interleaving is forced, not hoped for: the undo stops before its first write (its check is done), the
    purge starts only then, and the undo goes on once the purge has finished or is waiting for the origin lock.
    Without the lock on either side the purge finishes inside that window and the restored writes stay."""
    agent = "race-undo-purge"
    request = make_batch(agent)
    engine.quarantine_reject(request.id, actor="user:a", reason="poisoning")
    checked = threading.Event()  # the undo has checked for a purge and is about to write
    purge_moved = threading.Event()  # the purge is waiting for the origin lock, or has finished

    def stop_before_first_write(execute, sql, params, many, context):
        if not checked.is_set() and sql.lstrip().upper().startswith("UPDATE"):
            checked.set()
            assert purge_moved.wait(60), "the purge neither waited for the origin lock nor finished"
        return execute(sql, params, many, context)

    def report_waiting_for_the_origin_lock(execute, sql, params, many, context):
        if "pg_advisory_xact_lock(" in sql and str((params or [""])[0]).startswith("origin\x1f"):
            raw = context["cursor"].cursor  # psycopg's own cursor: no wrapper, same transaction
            raw.execute(sql.replace("pg_advisory_xact_lock(", "pg_try_advisory_xact_lock("), params)
            if not raw.fetchone()[0]:  # held by the undo: the purge now blocks until the undo commits
                purge_moved.set()
        return execute(sql, params, many, context)

    def undo():
        try:
            with connection.execute_wrapper(stop_before_first_write):
                return engine.quarantine_undo(request_id=request.id, actor="user:a")
        finally:
            checked.set()

    def purge():
        try:
            assert checked.wait(60), "the undo never reached its first write"
            with connection.execute_wrapper(report_waiting_for_the_origin_lock):
                return engine.invalidate_by_origin(agent_id=agent, origin="channel:x", actor="user:b")
        finally:
            purge_moved.set()

    (undo_result, purged), _ = run_parallel([undo, purge])
    assert isinstance(undo_result, ApprovalRequest), undo_result  # it checked before the purge existed
    assert not isinstance(purged, BaseException), purged
    states = set(FactWrite.objects.filter(agent_id=agent).values_list("state", flat=True))
    assert states == {"retracted"}, states  # the purge ran after the restore and covered it
    assert purged.retracted > 0, purged  # it found the restored rows
