"""Undo of a decision inside its window, and bulk decisions (SPEC D3; UX "Every queue")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction

from memory.models import ApprovalRequest, AuditEvent, FactWrite, Memory

from .. import common as c
from ..claims import (
    ClaimedByOther,
    NotDecided,
    UndoConflict,
    UndoExpired,
    UndoNotYours,
    check_reason,
)
from ..temporal import rederive_key
from ..types import EngineError, InvalidArgument, NotFound
from .approvals import (
    CLAIM_SECS,
    MIXED,
    ROW_FIELDS,
    from_iso,
    iso_or_none,
    locked_request,
    quarantine_approve,
    quarantine_reject,
    request_id_of,
)
from .outbox import emit

MAX_BULK = 500


def _snapshot_origins(snapshot: dict[str, Any]) -> list[str]:
    """The origins of a decision snapshot's writes and plain memories, sorted (the order their locks are taken
    in)."""
    ids = [int(i) for i in (snapshot.get("writes") or {})]
    origins = set(FactWrite.objects.filter(id__in=ids).values_list("origin", flat=True)) if ids else set()
    plain = snapshot.get("plain") or []
    if plain:
        origins |= set(Memory.objects.filter(id__in=plain).values_list("origin", flat=True))
    return sorted(origins)


def _purge_after(agent_id: str, snapshot: dict[str, Any], since: datetime) -> AuditEvent | None:
    """The first origin purge (``invalidate_by_origin``) at or after ``since`` that covered one of the
    snapshot's writes: same origin, and ingested at or after the purge's own ``since`` (if it had one). A purge
    skips writes a reject had already retracted, so the audit record is what says the purge meant them too."""
    ids = [int(i) for i in (snapshot.get("writes") or {})]
    plain = snapshot.get("plain") or []
    if not ids and not plain:
        return None
    purges = list(
        AuditEvent.objects.filter(agent_id=agent_id, action="origin_purge", created_at__gte=since).order_by(
            "created_at", "id"
        )
    )
    if not purges:
        return None
    writes: list[tuple[str, datetime | None]] = list(
        FactWrite.objects.filter(agent_id=agent_id, id__in=ids).values_list("origin", "ingested_at")
    )
    writes += list(
        Memory.objects.filter(agent_id=agent_id, id__in=plain).values_list("origin", "ingested_at")
    )
    for purge in purges:
        origin = (purge.details or {}).get("origin")
        purge_since = from_iso((purge.details or {}).get("since"))
        if any(
            o == origin and (purge_since is None or (at is not None and at >= purge_since))
            for o, at in writes
        ):
            return purge
    return None


def _restore_writes(agent_id: str, snapshot: dict[str, Any], verdict: str) -> list[FactWrite]:
    """Put the batch's writes back into quarantine as they were before the verdict. Writes something else has
    changed since (a purge retracting approved writes, say) are left alone."""
    saved = snapshot.get("writes") or {}
    verdicts = snapshot.get("verdicts") or {}  # a per-fact decision: each write's own verdict
    writes = [
        w
        for w in FactWrite.objects.filter(
            agent_id=agent_id,
            id__in=[int(i) for i in saved],
            state__in=(FactWrite.STATE_BELIEVED, FactWrite.STATE_RETRACTED),
        ).order_by("id")
        if w.state == verdicts.get(str(w.id), verdict)
    ]
    groups: dict[tuple[Any, ...], list[int]] = {}
    for w in writes:
        believed_from, believed_until, trust = saved[str(w.id)]
        groups.setdefault((believed_from, believed_until, trust), []).append(w.id)
    for (believed_from, believed_until, trust), ids in groups.items():
        FactWrite.objects.filter(id__in=ids).update(
            state=FactWrite.STATE_QUARANTINED,
            believed_from=from_iso(believed_from),
            believed_until=from_iso(believed_until),
            origin_trust=trust,
        )
    return writes


def _restore_rows(snapshot: dict[str, Any], writes: list[FactWrite]) -> None:
    """The batch's own rows as they were while held (re-derivation has already re-opened what they had
    superseded and marked them quarantined again)."""
    saved = snapshot.get("rows") or {}
    for memory_id in sorted({w.memory_id for w in writes if not w.is_reaffirm}):
        fields = saved.get(memory_id)
        if not fields:
            continue
        values = {
            k: from_iso(v) if k in {"valid_from", "valid_until", "invalidated_at"} else v
            for k, v in fields.items()
            if k in ROW_FIELDS
        }
        values["quarantined"] = True
        Memory.objects.filter(id=memory_id).update(**values)


def _restore_plain(snapshot: dict[str, Any], verdict: str) -> int:
    """The batch's plain memories held again as they were, if the verdict's change to them still stands."""
    saved = snapshot.get("rows") or {}
    plain = snapshot.get("plain") or []
    if not plain:
        return 0
    if verdict == MIXED:  # a per-fact decision: the approved ones, then the rejected ones
        approved = set(snapshot.get("plain_approved") or [])
        return _restore_plain(
            {**snapshot, "plain": [i for i in plain if i in approved]}, FactWrite.STATE_BELIEVED
        ) + _restore_plain(
            {**snapshot, "plain": [i for i in plain if i not in approved]}, FactWrite.STATE_RETRACTED
        )
    rows = Memory.objects.filter(id__in=plain, subject__isnull=True)
    if verdict == FactWrite.STATE_BELIEVED:
        return rows.filter(quarantined=False, invalidated_by_event__isnull=True).update(quarantined=True)
    restored = 0
    for memory_id in plain:
        trust = (saved.get(memory_id) or {}).get("origin_trust")
        restored += rows.filter(id=memory_id, invalidated_by_event="quarantine_reject").update(
            quarantined=True,
            invalidated_by_event=None,
            invalidated_at=None,
            **({"origin_trust": trust} if trust is not None else {}),
        )
    return restored


@c.write_transaction
def quarantine_undo(*, request_id: Any, actor: str, reason: str = "undone by the decider") -> ApprovalRequest:
    """Revert a decision inside its undo window: the batch is pending again, as it was before the decision.

    An approve undo re-quarantines the writes and re-derives their keys, so reads return what they returned
    before the approve; a reject undo puts the retracted rows back into quarantine with their trust restored.
    The batch keeps the time it had left (the TTL clock does not run while it is decided) and is claimed by
    the undoer, who usually decides again. The undo is a new audit decision (``quarantine_undo``). Only the
    decider may undo (``undo_not_yours``); after the window it is refused (``undo_expired``). It is refused
    (``undo_conflict``) while a newer batch from the origin about the subject is pending, and for good once an
    origin purge has covered the batch's writes after the decision: an undo never brings purged facts back.
    """
    actor = c.check_actor(actor)
    reason = check_reason(reason)
    rid = request_id_of(request_id)
    t = c.now()
    request = locked_request(rid)
    if request.status == ApprovalRequest.PENDING:
        raise NotDecided("this batch is pending: there is no decision to undo", field="request_id")
    if request.decided_by != actor:
        raise UndoNotYours(
            f"only the reviewer who decided may undo it ({request.status} by {request.decided_by})",
            field="request_id",
        )
    if request.undo_until is None or request.undo_until <= t or request.decided_at is None:
        raise UndoExpired(
            "the undo window has passed; a later revert is a new decision by other means", field="request_id"
        )
    verdict = (request.undo_state or {}).get("verdict")
    if verdict not in (FactWrite.STATE_BELIEVED, FactWrite.STATE_RETRACTED, MIXED):
        raise UndoExpired("this decision cannot be undone", field="request_id")
    previous, decided_at = request.status, request.decided_at
    paused = t - decided_at  # the TTL clock stops while the batch is decided
    conflict = UndoConflict(
        "a newer batch from this origin about this subject is pending; decide that one instead",
        field="request_id",
    )
    if (
        ApprovalRequest.objects.filter(
            agent_id=request.agent_id,
            action_kind=request.action_kind,
            origin=request.origin,
            subject=request.subject,
            status=ApprovalRequest.PENDING,
        )
        .exclude(id=rid)
        .exists()
    ):
        raise conflict
    for origin in _snapshot_origins(request.undo_state or {}):  # no purge between this check and the restore
        c.lock_origin(request.agent_id, origin)
    purge = _purge_after(request.agent_id, request.undo_state or {}, decided_at)
    if purge is not None:
        raise UndoConflict(
            f"{purge.actor} purged the origin {purge.details.get('origin')} at {purge.created_at:%H:%M:%S} UTC, "
            "after this decision: undoing would bring purged facts back, so the decision stands",
            field="request_id",
        )
    try:
        with transaction.atomic():  # the partial unique index: one pending batch per (agent, origin, subject)
            won = ApprovalRequest.objects.filter(
                id=rid, status=previous, decided_at=decided_at, undo_until__gt=t
            ).update(
                status=ApprovalRequest.PENDING,
                decided_at=None,
                decided_by="",
                decision_reason="",
                undo_until=None,
                undo_state={},
                expires_at=request.expires_at + paused,
                remind_at=request.remind_at + paused,
                claimed_by=actor,
                claimed_until=t + timedelta(seconds=CLAIM_SECS),
            )
    except IntegrityError:
        raise conflict from None
    if not won:
        raise UndoExpired("the decision changed meanwhile; reload the batch", field="request_id")
    snapshot = request.undo_state or {}
    writes = _restore_writes(request.agent_id, snapshot, verdict)
    keys = sorted({(w.subject, w.predicate) for w in writes})
    for subject, predicate in keys:
        c.lock_key(request.agent_id, subject, predicate)
    for subject, predicate in keys:
        rederive_key(request.agent_id, subject, predicate, at=t)
    _restore_rows(snapshot, writes)
    _restore_plain(snapshot, verdict)
    if keys:
        c.bump_generation(request.agent_id)
    request.refresh_from_db()
    c.audit(
        agent_id=request.agent_id,
        actor=actor,
        action="quarantine_undo",
        subject=request.subject,
        reason=reason,
        at=t,
        request_id=request.id,
        origin=request.origin,
        undone=previous,
        undone_decided_at=iso_or_none(decided_at),
        ids=request.payload.get("ids", []),
        writes=len(writes),
    )
    emit(
        "knowledge.decided",
        request.agent_id,
        {"request_id": request.id, "status": ApprovalRequest.PENDING, "undone": previous, "actor": actor},
    )
    return request


@dataclass(frozen=True)
class BulkOutcome:
    """One batch of a bulk decision: ``approved``/``denied``, or ``skipped`` with the error ``code``."""

    request_id: int
    outcome: str
    code: str = ""
    message: str = ""
    holder: str = ""


def quarantine_bulk(
    *, agent_id: str, request_ids: Any, decision: str, actor: str, reason: str
) -> list[BulkOutcome]:
    """Approve or reject many batches of one agent, each in its own transaction with its own audit entry.

    Batches held by another reviewer's live claim, already decided or past their TTL are skipped and reported
    (with the same stable codes a single decision gives); an id of another agent is ``not_found``.
    """
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    reason = check_reason(reason)
    if decision not in ("approve", "reject"):
        raise InvalidArgument("decision must be approve or reject", field="decision")
    if isinstance(request_ids, str | bytes) or not isinstance(request_ids, list | tuple):
        raise InvalidArgument("request_ids must be a list of ids", field="request_ids")
    if len(request_ids) > MAX_BULK:
        raise InvalidArgument(f"at most {MAX_BULK} batches per bulk decision", field="request_ids")
    ids = list(dict.fromkeys(request_id_of(i) for i in request_ids))
    mine = set(
        ApprovalRequest.objects.filter(
            agent_id=agent_id, id__in=ids, action_kind=ApprovalRequest.KNOWLEDGE_QUARANTINE
        ).values_list("id", flat=True)
    )
    decide = quarantine_approve if decision == "approve" else quarantine_reject
    out: list[BulkOutcome] = []
    for rid in ids:
        if rid not in mine:
            out.append(BulkOutcome(rid, "skipped", NotFound.code, "no such approval request"))
            continue
        try:
            request = decide(rid, actor=actor, reason=reason)
        except EngineError as exc:
            holder = str(exc.details.get("holder", "")) if isinstance(exc, ClaimedByOther) else ""
            out.append(BulkOutcome(rid, "skipped", exc.code, exc.message, holder))
        else:
            out.append(BulkOutcome(rid, request.status))
    return out
