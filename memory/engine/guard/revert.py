"""Revert a quarantine decision after its undo window (UX "a later revert is a new decision, never an erased
one"; issue 19 item 3).

An approved batch is reverted by retracting the facts it released (as a rejection would have); a rejected or
expired one by releasing the facts it retracted (as an approval would have, trust restored from the decision's
snapshot or, for the system's TTL rejection, the origin's ceiling). The batch then reads as decided the other
way by the reverter, with the reason ``revert: …``; the audit log keeps both decisions
(``quarantine_reverted`` names the one it took back). A revert never brings back facts an origin purge
retracted after the decision (``undo_conflict``).
"""

from __future__ import annotations

from typing import Any

from memory.models import ApprovalRequest, FactWrite, Memory

from .. import common as c
from ..claims import NotDecided, UndoConflict, check_reason
from ..provenance import ceiling
from ..temporal import rederive_key
from .approvals import REJECT_TRUST, locked_request, request_id_of
from .outbox import emit
from .undo import _purge_after


@c.write_transaction
def quarantine_revert(*, request_id: Any, actor: str, reason: str) -> ApprovalRequest:
    """Take a decided batch's decision back by the opposite one, audited as ``quarantine_reverted``."""
    actor = c.check_actor(actor)
    reason = check_reason(reason)
    rid = request_id_of(request_id)
    t = c.now()
    request = locked_request(rid)
    if request.status == ApprovalRequest.PENDING:
        raise NotDecided("this batch is pending: there is no decision to revert", field="request_id")
    previous, previous_by, decided_at = request.status, request.decided_by, request.decided_at
    approving = previous != ApprovalRequest.APPROVED  # a rejection (or expiry) is reverted by releasing
    write_ids = [int(i) for i in request.payload.get("write_ids", []) if isinstance(i, int)]
    plain_ids = [i for i in request.payload.get("plain_ids", []) if isinstance(i, str)]
    snapshot = request.undo_state or {}
    if approving and decided_at is not None:
        for origin in sorted({request.origin}):
            c.lock_origin(request.agent_id, origin)
        probe = {"writes": {str(i): None for i in write_ids}, "plain": plain_ids}
        purge = _purge_after(request.agent_id, probe, decided_at)
        if purge is not None:
            raise UndoConflict(
                f"{purge.actor} purged the origin {purge.details.get('origin')} at "
                f"{purge.created_at:%H:%M:%S} UTC, after this decision: reverting would bring purged facts "
                "back, so the decision stands",
                field="request_id",
            )
    source = FactWrite.STATE_RETRACTED if approving else FactWrite.STATE_BELIEVED
    writes = list(
        FactWrite.objects.filter(agent_id=request.agent_id, id__in=write_ids, state=source).order_by("id")
    )
    keys = sorted({(w.subject, w.predicate) for w in writes})
    for subject, predicate in keys:
        c.lock_key(request.agent_id, subject, predicate)
    saved = snapshot.get("writes") or {}
    rows_saved = snapshot.get("rows") or {}
    if approving:
        for w in writes:
            trust = (saved.get(str(w.id)) or [None, None, None])[2]
            FactWrite.objects.filter(id=w.id).update(
                state=FactWrite.STATE_BELIEVED,
                believed_from=t,
                believed_until=None,
                origin_trust=trust if isinstance(trust, int | float) else ceiling(w.origin),
            )
        for memory_id in Memory.objects.filter(
            id__in=plain_ids, subject__isnull=True, invalidated_by_event="quarantine_reject"
        ).values_list("id", flat=True):
            trust = (rows_saved.get(memory_id) or {}).get("origin_trust")
            Memory.objects.filter(id=memory_id).update(
                invalidated_by_event=None,
                invalidated_at=None,
                **({"origin_trust": trust} if trust is not None else {}),
            )
    else:
        FactWrite.objects.filter(id__in=[w.id for w in writes]).update(
            state=FactWrite.STATE_RETRACTED, origin_trust=REJECT_TRUST
        )
        Memory.objects.filter(
            id__in=plain_ids, subject__isnull=True, quarantined=False, invalidated_at__isnull=True
        ).update(invalidated_by_event="quarantine_reject", invalidated_at=t, origin_trust=REJECT_TRUST)
    for subject, predicate in keys:
        rederive_key(
            request.agent_id,
            subject,
            predicate,
            at=t,
            retract_event=None if approving else "quarantine_reject",
        )
    rows = [w.memory_id for w in writes if not w.is_reaffirm]
    if rows and not approving:
        Memory.objects.filter(id__in=rows).update(origin_trust=REJECT_TRUST)
    elif rows:  # released rows carry their write's trust again
        trust_of = dict(
            FactWrite.objects.filter(id__in=[w.id for w in writes]).values_list("id", "origin_trust")
        )
        for w in writes:
            if not w.is_reaffirm:
                Memory.objects.filter(id=w.memory_id).update(origin_trust=trust_of.get(w.id, REJECT_TRUST))
    if keys:
        c.bump_generation(request.agent_id)
    status = ApprovalRequest.APPROVED if approving else ApprovalRequest.DENIED
    ApprovalRequest.objects.filter(id=rid).update(
        status=status,
        decided_at=t,
        decided_by=actor,
        decision_reason=f"revert: {reason}",
        undo_until=None,
        undo_state={},
        claimed_by="",
        claimed_until=None,
    )
    request.refresh_from_db()
    c.audit(
        agent_id=request.agent_id,
        actor=actor,
        action="quarantine_reverted",
        subject=request.subject,
        reason=reason,
        at=t,
        request_id=request.id,
        origin=request.origin,
        reverted=previous,
        reverted_by=previous_by,
        reverted_decided_at=decided_at.isoformat() if decided_at else None,
        status=status,
        ids=request.payload.get("ids", []),
        writes=len(writes),
    )
    emit(
        "knowledge.decided",
        request.agent_id,
        {"request_id": request.id, "status": status, "reverted": previous, "actor": actor, "reason": reason},
    )
    return request
