"""Approval requests for quarantined batches (SPEC P8): open, decide (exactly one decision wins), claim."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import connection

from memory.models import ApprovalRequest, FactWrite, Memory

from .. import common as c
from ..belief import NOT_RETRACTED, approval_effects
from ..claims import (
    AlreadyDecided,
    ClaimedByOther,
    check_reason,
    claim_free_q,
    is_system,
    live_claim,
)
from ..temporal import DERIVED_FIELDS, rederive_key
from ..types import InvalidArgument, NotFound
from .outbox import emit

APPROVAL_TTL_SECS = 86_400


REMIND_FRACTION = 2 / 3


REJECT_TRUST = 0.1


REJECT_REASONS = ("wrong", "duplicate", "outdated", "poisoning", "out_of_scope", "ttl_expired", "other")


CLAIM_SECS = 600  # a reviewer's claim on a batch lasts this long unless renewed or released


MAX_CLAIM_SECS = 3600


UNDO_SECS = 30  # the decider may undo a decision this long after making it


MIXED = "mixed"  # an undo snapshot's verdict after a per-fact decision: each write's own is in "verdicts"


def open_request(
    *,
    agent_id: str,
    origin: str,
    subject: str,
    memory_ids: list[str],
    write_ids: list[int],
    snippet: str,
    reason: str,
    t: datetime,
    key: str = "",
    plain_ids: list[str] | None = None,
    extra: dict[str, Any] | None = None,
) -> ApprovalRequest:
    """Open the approval request of a held batch, or add to the one pending for this origin and subject (or
    subject key: a respelled subject joins the batch of its entity). ``plain_ids``: held plain memories;
    ``extra`` goes into the payload (e.g. the injection scan's record of a suspicious write)."""
    pending_q = ApprovalRequest.objects.filter(
        agent_id=agent_id,
        action_kind=ApprovalRequest.KNOWLEDGE_QUARANTINE,
        origin=origin,
        status=ApprovalRequest.PENDING,
    )
    pending = pending_q.filter(subject=subject).order_by("id").first()
    if pending is None and key:
        pending = pending_q.filter(payload__key=key).order_by("id").first()
    if pending is not None:  # the burst goes on: later writes join the open batch
        joined = dict(pending.payload)
        joined["ids"] = list(dict.fromkeys([*joined.get("ids", []), *memory_ids]))
        joined["write_ids"] = sorted(set(joined.get("write_ids", [])) | set(write_ids))
        if plain_ids:
            joined["plain_ids"] = list(dict.fromkeys([*joined.get("plain_ids", []), *plain_ids]))
        joined["reason"] = reason or joined.get("reason", "")
        joined.update(extra or {})
        ApprovalRequest.objects.filter(id=pending.id).update(payload=joined)
        pending.payload = joined
        return pending
    ttl = timedelta(seconds=APPROVAL_TTL_SECS)
    payload: dict[str, Any] = {
        "origin": origin,
        "subject": subject,
        "ids": list(dict.fromkeys(memory_ids)),
        "write_ids": sorted(set(write_ids)),
        "snippet": snippet,
        "reason": reason,
    }
    if key:
        payload["key"] = key
    if plain_ids:
        payload["plain_ids"] = list(dict.fromkeys(plain_ids))
    payload.update(extra or {})
    request = ApprovalRequest.objects.create(
        agent_id=agent_id,
        action_kind=ApprovalRequest.KNOWLEDGE_QUARANTINE,
        origin=origin,
        subject=subject[:512],
        payload=payload,
        created_at=t,
        expires_at=t + ttl,
        remind_at=t + ttl * REMIND_FRACTION,
    )
    c.audit(
        agent_id=agent_id,
        actor="system:guard",
        action="knowledge_quarantined",
        subject=subject,
        reason=reason,
        at=t,
        request_id=request.id,
        origin=origin,
        ids=request.payload["ids"],
    )
    emit("knowledge.quarantined", agent_id, {"request_id": request.id, **request.payload})
    return request


def request_id_of(request_id: Any) -> int:
    if isinstance(request_id, bool):
        raise NotFound("no such approval request", field="request_id")
    try:
        return int(request_id)
    except (TypeError, ValueError):
        raise NotFound("no such approval request", field="request_id") from None


def _claimed_by_other(request: ApprovalRequest) -> ClaimedByOther:
    until = request.claimed_until.isoformat() if request.claimed_until else None
    return ClaimedByOther(
        f"batch #{request.id} is claimed by {request.claimed_by} until "
        f"{request.claimed_until:%H:%M:%S} UTC; wait for the claim to end or ask them",
        field="request_id",
        holder=request.claimed_by,
        claimed_until=until,
    )


def _win(request_id: Any, status: str, actor: str, reason: str, t: datetime) -> ApprovalRequest:
    """Move a pending request to ``status``: the conditional UPDATE lets exactly one decision win.

    A person decides before the TTL runs out and only if nobody else holds a live claim; the system decides
    after the TTL, claims or not. The decision releases the claim and, for a person, opens the undo window.
    """
    rid = request_id_of(request_id)
    pending = ApprovalRequest.objects.filter(id=rid, status=ApprovalRequest.PENDING)
    if status == ApprovalRequest.EXPIRED:
        pending = pending.filter(expires_at__lte=t)
    else:
        pending = pending.filter(expires_at__gt=t).filter(claim_free_q(actor, t))
    undo_until = None if is_system(actor) else t + timedelta(seconds=UNDO_SECS)
    won = pending.update(
        status=status,
        decided_at=t,
        decided_by=actor,
        decision_reason=reason,
        claimed_by="",
        claimed_until=None,
        undo_until=undo_until,
        undo_state={},
    )
    request = ApprovalRequest.objects.filter(id=rid).first()
    if request is None:
        raise NotFound("no such approval request", field="request_id")
    if not won and request.status == ApprovalRequest.PENDING:
        if status == ApprovalRequest.EXPIRED:
            raise AlreadyDecided("this request has not expired yet", field="request_id")
        if request.expires_at <= t:
            raise AlreadyDecided(
                "this request's time ran out; it is being rejected automatically (ttl_expired)",
                field="request_id",
            )
        raise _claimed_by_other(request)
    if not won:
        raise AlreadyDecided(
            f"this request was already decided ({request.status} by {request.decided_by})", field="request_id"
        )
    return request


def _request_writes(request: ApprovalRequest) -> list[FactWrite]:
    ids = [int(i) for i in request.payload.get("write_ids", [])]
    return list(
        FactWrite.objects.filter(agent_id=request.agent_id, id__in=ids, state=FactWrite.STATE_QUARANTINED)
    )


def iso_or_none(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def from_iso(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


ROW_FIELDS = (*DERIVED_FIELDS, "origin_trust")


def _snapshot(writes: list[FactWrite], rows: list[str]) -> dict[str, Any]:
    """What an undo restores: the batch's writes (record time, trust) and its own rows as they were."""
    stored = Memory.objects.filter(id__in=rows).values("id", *ROW_FIELDS)
    return {
        "writes": {
            str(w.id): [iso_or_none(w.believed_from), iso_or_none(w.believed_until), w.origin_trust]
            for w in writes
        },
        "rows": {
            r["id"]: {k: iso_or_none(v) if isinstance(v, datetime) else v for k, v in r.items() if k != "id"}
            for r in stored
        },
    }


def held_plain(request: ApprovalRequest) -> list[str]:
    """The batch's plain memories still held (quarantined, not retracted)."""
    ids = request.payload.get("plain_ids") or []
    if not ids:
        return []
    return list(
        Memory.objects.filter(agent_id=request.agent_id, id__in=ids, quarantined=True, subject__isnull=True)
        .filter(NOT_RETRACTED)
        .values_list("id", flat=True)
    )


def _apply_verdict(
    request: ApprovalRequest,
    *,
    approve: bool,
    t: datetime,
    event: str,
    undoable: bool = False,
    only: set[str] | None = None,
) -> dict[str, int]:
    """Apply the decision to the batch's writes and plain memories. ``only`` (a per-fact decision): approve
    the facts whose memory ids it names and reject every other one of the batch (a write the reviewer was not
    shown, such as a reaffirmation of another row, is rejected too: only what was ticked is released)."""
    writes = _request_writes(request)
    plain = held_plain(request)
    keys = sorted({(w.subject, w.predicate) for w in writes})
    for subject, predicate in keys:
        c.lock_key(request.agent_id, subject, predicate)
    if only is None:
        yes_writes, no_writes = (writes, []) if approve else ([], writes)
        yes_plain, no_plain = (plain, []) if approve else ([], plain)
    else:
        yes_writes = [w for w in writes if w.memory_id in only]
        no_writes = [w for w in writes if w.memory_id not in only]
        yes_plain = [i for i in plain if i in only]
        no_plain = [i for i in plain if i not in only]
    if undoable:
        snapshot = _snapshot(writes, [w.memory_id for w in writes if not w.is_reaffirm] + plain)
        snapshot["plain"] = plain
        if only is None:
            snapshot["verdict"] = FactWrite.STATE_BELIEVED if approve else FactWrite.STATE_RETRACTED
        else:  # per fact: what each write and plain memory became, so an undo restores exactly those
            snapshot["verdict"] = MIXED
            snapshot["verdicts"] = {
                **{str(w.id): FactWrite.STATE_BELIEVED for w in yes_writes},
                **{str(w.id): FactWrite.STATE_RETRACTED for w in no_writes},
            }
            snapshot["plain_approved"] = yes_plain
        ApprovalRequest.objects.filter(id=request.id).update(undo_state=snapshot)
        request.undo_state = snapshot
    if yes_plain:
        Memory.objects.filter(id__in=yes_plain).update(quarantined=False)
    if no_plain:
        Memory.objects.filter(id__in=no_plain).update(
            quarantined=False,
            invalidated_by_event=event or "quarantine_reject",
            invalidated_at=t,
            origin_trust=REJECT_TRUST,
        )
    if yes_writes:
        FactWrite.objects.filter(id__in=[w.id for w in yes_writes]).update(
            state=FactWrite.STATE_BELIEVED, believed_from=t, believed_until=None
        )
    if no_writes:
        FactWrite.objects.filter(id__in=[w.id for w in no_writes]).update(
            state=FactWrite.STATE_RETRACTED, origin_trust=REJECT_TRUST
        )
    for subject, predicate in keys:
        rederive_key(request.agent_id, subject, predicate, at=t, retract_event=event or None)
    rejected_rows = [w.memory_id for w in no_writes if not w.is_reaffirm]
    if rejected_rows:
        Memory.objects.filter(id__in=rejected_rows).update(origin_trust=REJECT_TRUST)
    if keys:
        c.bump_generation(request.agent_id)
    rows = [w.memory_id for w in writes if not w.is_reaffirm]
    return {"writes": len(writes), "rows": len(rows) + len(plain)}


def _chosen_facts(request_id: Any, memory_ids: Any) -> set[str] | None:
    """The facts a per-fact approval releases, checked against the batch: a non-empty list of the batch's own
    memory ids (None when it names every fact: a whole approval)."""
    if memory_ids is None:
        return None
    if isinstance(memory_ids, str | bytes) or not isinstance(memory_ids, list | tuple):
        raise InvalidArgument("memory_ids must be a list of the batch's memory ids", field="memory_ids")
    if not memory_ids:
        raise InvalidArgument(
            "approve at least one fact of the batch, or reject the whole batch", field="memory_ids"
        )
    request = (
        ApprovalRequest.objects.filter(
            id=request_id_of(request_id), action_kind=ApprovalRequest.KNOWLEDGE_QUARANTINE
        )
        .only("payload")
        .first()
    )
    if request is None:
        raise NotFound("no such approval request", field="request_id")
    payload = request.payload or {}
    batch = {i for i in [*payload.get("ids", []), *payload.get("plain_ids", [])] if isinstance(i, str)}
    if len(memory_ids) > len(batch) or not all(isinstance(i, str) and i in batch for i in memory_ids):
        raise InvalidArgument("memory_ids names a fact that is not in this batch", field="memory_ids")
    chosen = set(memory_ids)
    return None if chosen == batch else chosen


def _decide(
    request_id: Any,
    *,
    status: str,
    actor: str,
    reason: str,
    approve: bool,
    event: str,
    only: set[str] | None = None,
) -> ApprovalRequest:
    actor = c.check_actor(actor)
    t = c.now()
    request = _win(request_id, status, actor, reason, t)
    counts = _apply_verdict(
        request, approve=approve, t=t, event=event, undoable=request.undo_until is not None, only=only
    )
    split: dict[str, Any] = {}
    if only is not None:
        batch = list(dict.fromkeys([*request.payload.get("ids", []), *request.payload.get("plain_ids", [])]))
        split = {
            "approved_ids": [i for i in batch if i in only],
            "rejected_ids": [i for i in batch if i not in only],
        }
    c.audit(
        agent_id=request.agent_id,
        actor=actor,
        action=f"quarantine_{status}",
        subject=request.subject,
        reason=reason,
        at=t,
        request_id=request.id,
        origin=request.origin,
        ids=request.payload.get("ids", []),
        writes=counts["writes"],
        rows=counts["rows"],
        **split,
    )
    emit(
        "knowledge.decided",
        request.agent_id,
        {"request_id": request.id, "status": status, "actor": actor, "reason": reason, **split},
    )
    return request


@c.write_transaction
def quarantine_approve(
    request_id: Any, actor: str, reason: str, memory_ids: list[str] | None = None
) -> ApprovalRequest:
    """Release the batch: its writes are applied through the timeline rules as if written then.

    ``memory_ids`` (a per-fact decision, "approve 4 of 6"): only those facts of the batch are released and
    the others rejected as by ``quarantine_reject``, in the same decision: one audit entry
    (``approved_ids``/``rejected_ids``), one undo that restores both."""
    reason = check_reason(reason)
    only = _chosen_facts(request_id, memory_ids)
    return _decide(
        request_id,
        status=ApprovalRequest.APPROVED,
        actor=actor,
        reason=reason,
        approve=True,
        event="quarantine_reject" if only is not None else "",
        only=only,
    )


@c.write_transaction
def quarantine_reject(request_id: Any, actor: str, reason: str) -> ApprovalRequest:
    """Retract the batch (``quarantine_reject``) and crush its trust to at most 0.1."""
    return _decide(
        request_id,
        status=ApprovalRequest.DENIED,
        actor=actor,
        reason=check_reason(reason),
        approve=False,
        event="quarantine_reject",
    )


@c.write_transaction
def quarantine_expire(request_id: Any, actor: str = "system:ttl") -> ApprovalRequest:
    """TTL ran out: reject, decided by the system (fail closed)."""
    return _decide(
        request_id,
        status=ApprovalRequest.EXPIRED,
        actor=actor,
        reason="ttl_expired",
        approve=False,
        event="quarantine_reject",
    )


def locked_request(rid: int) -> ApprovalRequest:
    qs = ApprovalRequest.objects.filter(id=rid, action_kind=ApprovalRequest.KNOWLEDGE_QUARANTINE)
    if connection.vendor == "postgresql":
        qs = qs.select_for_update()  # SQLite: the IMMEDIATE write transaction already serialises writers
    request = qs.first()
    if request is None:
        raise NotFound("no such approval request", field="request_id")
    return request


@c.write_transaction
def quarantine_claim(
    *, request_id: Any, actor: str, secs: int = CLAIM_SECS, take_over: bool = False
) -> ApprovalRequest:
    """Claim a pending batch while working on it (or renew one's own claim) for ``secs`` seconds.

    Others see who holds it and until when; their decisions are refused (``claimed_by_other``) until the claim
    ends: released, decided, or simply expired (times are compared; no job is needed). ``take_over`` (an
    admin's, checked by the caller) claims it even from another holder: audited as
    ``quarantine_taken_over`` with the holder it was taken from.
    """
    actor = c.check_actor(actor)
    if isinstance(secs, bool) or not isinstance(secs, int) or not 1 <= secs <= MAX_CLAIM_SECS:
        raise InvalidArgument(f"secs must be an integer from 1 to {MAX_CLAIM_SECS}", field="secs")
    rid = request_id_of(request_id)
    t = c.now()
    before = locked_request(rid) if take_over else None
    pending = ApprovalRequest.objects.filter(id=rid, status=ApprovalRequest.PENDING, expires_at__gt=t)
    if not take_over:
        pending = pending.filter(claim_free_q(actor, t))
    won = pending.update(claimed_by=actor, claimed_until=t + timedelta(seconds=secs))
    request = ApprovalRequest.objects.filter(id=rid).first()
    if request is None:
        raise NotFound("no such approval request", field="request_id")
    if not won:
        if request.status != ApprovalRequest.PENDING:
            raise AlreadyDecided(
                f"this request was already decided ({request.status} by {request.decided_by})",
                field="request_id",
            )
        if request.expires_at <= t:
            raise AlreadyDecided(
                "this request's time ran out; it is being rejected automatically (ttl_expired)",
                field="request_id",
            )
        raise _claimed_by_other(request)
    taken_from = ""
    if (
        before is not None
        and before.claimed_by != actor
        and live_claim(before.claimed_by, before.claimed_until, t)
    ):
        taken_from = before.claimed_by
    c.audit(
        agent_id=request.agent_id,
        actor=actor,
        action="quarantine_taken_over" if taken_from else "quarantine_claimed",
        subject=request.subject,
        reason=(f"taken over from {taken_from}; " if taken_from else "")
        + f"claimed until {request.claimed_until:%H:%M:%S} UTC",
        at=t,
        request_id=request.id,
        origin=request.origin,
        claimed_until=iso_or_none(request.claimed_until),
        **({"taken_from": taken_from} if taken_from else {}),
    )
    return request


@c.write_transaction
def quarantine_release(*, request_id: Any, actor: str) -> ApprovalRequest:
    """Give up one's own claim (a no-op if ``actor`` holds none)."""
    actor = c.check_actor(actor)
    rid = request_id_of(request_id)
    t = c.now()
    won = ApprovalRequest.objects.filter(id=rid, claimed_by=actor, claimed_until__gt=t).update(
        claimed_by="", claimed_until=None
    )
    request = ApprovalRequest.objects.filter(id=rid).first()
    if request is None:
        raise NotFound("no such approval request", field="request_id")
    if won:
        c.audit(
            agent_id=request.agent_id,
            actor=actor,
            action="quarantine_released",
            subject=request.subject,
            reason="claim released",
            at=t,
            request_id=request.id,
            origin=request.origin,
        )
    return request


def approval_preview(request: ApprovalRequest) -> list[dict[str, Any]]:
    """What approving would change: for each quarantined row, the believed row it would supersede or
    reaffirm (``belief.approval_effects``, oldest fact first)."""
    rows = sorted(
        Memory.objects.filter(agent_id=request.agent_id, id__in=request.payload.get("ids", [])),
        key=lambda r: (r.valid_from or r.created_at, r.id),
    )
    effects = approval_effects(request.agent_id, rows)
    out = []
    for m in rows:
        e = effects[m.id]
        out.append(
            {
                "row": m,
                "supersedes": e.other if e.effect == "supersede" else None,
                "reaffirms": e.other if e.effect == "reaffirm" else None,
            }
        )
    return out
