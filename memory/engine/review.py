"""The review queue (SPEC B7, D2): what the background track must not decide alone, and people's decisions.

An item (``review_items``) is proposed by the dream loop, or by agents for attitudes and skills, through
``review_propose``: never twice for the same fingerprint (kind, rule and rows), so a rerun over unchanged memory
proposes nothing new and a pair judged COEXIST is never proposed again. The policy (``review_policy``) says
whether it is applied at once (``applied``, by ``system:dream``) or waits (``pending``); a dry run stores it as
``dry`` (proposed, never applied, nothing else written).

People decide pending items with ``review_decide`` (approve, reject with a reason, or approve an edited
version): one conditional UPDATE lets exactly one decision win; a live claim of another reviewer refuses it
(``claimed_by_other``); an item whose rows changed since it was proposed is refused (``stale``) and marked so.
What a decision does is the item kind's applier (``review_apply``); it returns a snapshot, so the decider can
undo for ``UNDO_SECS`` (the item is pending again, as it was) and anyone with review rights can revert an
applied item later (a new, audited decision). Items are never decided by time: past their TTL they get one
reminder and stay pending.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Q

from memory.models import Memory, ReviewItem

from . import common as c
from . import review_apply, review_policy
from .claims import (
    AlreadyDecided,
    ClaimedByOther,
    NotDecided,
    UndoExpired,
    UndoNotYours,
    check_reason,
    claim_free_q,
    is_system,
    live_claim,
)
from .guard.outbox import emit
from .snapshots import restore_snapshot
from .types import EngineError, InvalidArgument, MemoryRecord, NotFound
from .verdicts import Stale

KINDS = ReviewItem.KINDS
TTL_DAYS = 7
CLAIM_SECS = 600
MAX_CLAIM_SECS = 3600
UNDO_SECS = 30
MAX_BULK = 500
MAX_PAYLOAD_BYTES = 64 * 1024
DECISIONS = ("approve", "reject")
STALE = ReviewItem.STALE


@dataclass(frozen=True)
class ReviewRecord:
    id: int
    agent_id: str
    kind: str
    status: str
    confidence: float
    impact: int
    payload: dict[str, Any]
    title: str = ""
    reason: str = ""
    judge: str = ""
    memory_ids: list[str] = field(default_factory=list)
    run_id: int | None = None
    created_at: datetime | None = None
    expires_at: datetime | None = None
    claimed_by: str = ""
    claimed_until: datetime | None = None
    decided_at: datetime | None = None
    decided_by: str = ""
    decision_reason: str = ""
    edited: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, item: ReviewItem) -> ReviewRecord:
        return cls(
            id=item.id,
            agent_id=item.agent_id,
            kind=item.kind,
            status=item.status,
            confidence=item.confidence,
            impact=item.impact,
            payload=item.payload,
            title=item.title,
            reason=item.reason,
            judge=item.judge,
            memory_ids=list(item.memory_ids or []),
            run_id=item.run_id,
            created_at=item.created_at,
            expires_at=item.expires_at,
            claimed_by=item.claimed_by,
            claimed_until=item.claimed_until,
            decided_at=item.decided_at,
            decided_by=item.decided_by,
            decision_reason=item.decision_reason,
            edited=item.edited or {},
        )


# --- the sides of a conflict --------------------------------------------------------------------------------

SIDE_FIELDS = (
    "id",
    "content",
    "subject",
    "predicate",
    "object",
    "valid_from",
    "valid_until",
    "origin",
    "origin_trust",
    "ingested_at",
    "session_id",
    "source_event",
)


def side_of(memory: Memory | MemoryRecord) -> dict[str, Any]:
    """One side (``old`` or ``new``) of a conflict item's payload: the row as it was when proposed, JSON-ready
    (times as ISO 8601 strings, empty values as None). The review queue's evidence card reads these keys."""
    out: dict[str, Any] = {}
    for name in SIDE_FIELDS:
        value = getattr(memory, name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif value == "":
            value = None
        out[name] = value
    out["origin_trust"] = float(memory.origin_trust)
    return out


# --- proposing -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Proposal:
    """What the background track (or an agent) proposes; ``review_propose`` stores it."""

    kind: str
    fingerprint: str
    title: str
    payload: dict[str, Any]
    memory_ids: list[str]
    confidence: float
    impact: int = 0
    reason: str = ""
    judge: str = ""
    state: str = ""  # the rows' state fingerprint when proposed (verdicts.state_fingerprint)
    verdict_type: str = ""  # the policy's key, e.g. "conflict:MERGE"


@dataclass(frozen=True)
class Proposed:
    item: ReviewRecord | None  # None: already proposed before (nothing new)
    applied: bool = False


def _check_proposal(agent_id: str, p: Proposal) -> None:
    if p.kind not in KINDS:
        raise InvalidArgument(f"kind must be one of {', '.join(KINDS)}", field="kind")
    if not isinstance(p.fingerprint, str) or not 8 <= len(p.fingerprint) <= 64:
        raise InvalidArgument("a proposal needs a fingerprint of 8 to 64 characters", field="fingerprint")
    if not 0.0 <= float(p.confidence) <= 1.0:
        raise InvalidArgument("confidence must be between 0 and 1", field="confidence")
    import json

    if len(json.dumps(p.payload, default=str)) > MAX_PAYLOAD_BYTES:
        raise InvalidArgument("the proposal's payload is too large", field="payload")


@c.write_transaction
def review_propose(
    *,
    agent_id: str,
    proposal: Proposal,
    run_id: int | None = None,
    dry: bool = False,
    auto_apply: bool = False,
    actor: str = "system:dream",
) -> Proposed:
    """Store a proposal unless the same one was made before. ``dry``: stored as ``dry`` (a dry run's report).
    ``auto_apply``: the caller's policy decided it applies at once; it is applied now and stored ``applied``
    (undoable by a revert). A dry item is upgraded to a real one when the same proposal comes again for real."""
    agent_id = c.check_agent_id(agent_id)
    _check_proposal(agent_id, proposal)
    t = c.now()
    existing = ReviewItem.objects.filter(agent_id=agent_id, fingerprint=proposal.fingerprint)
    if existing.exclude(status=ReviewItem.DRY).exists():
        return Proposed(None)
    dry_item = existing.filter(status=ReviewItem.DRY).first()
    if dry and dry_item is not None:
        return Proposed(None)
    values = dict(
        agent_id=agent_id,
        kind=proposal.kind,
        status=ReviewItem.DRY if dry else ReviewItem.PENDING,
        fingerprint=proposal.fingerprint,
        state=proposal.state,
        title=proposal.title[:300],
        payload={**proposal.payload, "verdict_type": proposal.verdict_type or proposal.kind},
        memory_ids=list(proposal.memory_ids),
        confidence=float(proposal.confidence),
        impact=int(proposal.impact),
        reason=proposal.reason,
        judge=proposal.judge,
        run_id=run_id,
        created_at=t,
        expires_at=t + timedelta(days=TTL_DAYS),
        remind_at=t + timedelta(days=TTL_DAYS),
    )
    if dry_item is not None:
        ReviewItem.objects.filter(id=dry_item.id).update(**values)
        item = ReviewItem.objects.get(id=dry_item.id)
    else:
        item = ReviewItem.objects.create(**values)
    if dry:
        return Proposed(ReviewRecord.of(item))
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="review_proposed",
        reason=item.title,
        at=t,
        item_id=item.id,
        kind=item.kind,
        confidence=item.confidence,
        impact=item.impact,
    )
    if auto_apply:
        try:
            with_undo = review_apply.approve(item, edited=None, actor=actor, t=t)
        except Stale:
            ReviewItem.objects.filter(id=item.id).update(status=STALE)
            return Proposed(ReviewRecord.of(ReviewItem.objects.get(id=item.id)))
        ReviewItem.objects.filter(id=item.id).update(
            status=ReviewItem.APPLIED,
            decided_at=t,
            decided_by=actor,
            decision_reason="auto-applied by policy",
            undo_state=with_undo,
        )
        c.audit(
            agent_id=agent_id,
            actor=actor,
            action="review_applied",
            reason="auto-applied by policy",
            at=t,
            item_id=item.id,
            kind=item.kind,
        )
        return Proposed(ReviewRecord.of(ReviewItem.objects.get(id=item.id)), applied=True)
    emit("review.proposed", agent_id, {"item_id": item.id, "kind": item.kind, "title": item.title})
    return Proposed(ReviewRecord.of(item))


# --- reading ---------------------------------------------------------------------------------------------


def review_list(
    *, agent_id: str, status: str | None = "pending", kind: str | None = None, limit: int = 500
) -> list[ReviewRecord]:
    """The agent's items, soonest expiry first for pending ones (lowest confidence breaks ties)."""
    agent_id = c.check_agent_id(agent_id)
    qs = ReviewItem.objects.filter(agent_id=agent_id)
    if status is not None:
        qs = qs.filter(status=status)
    if kind is not None:
        if kind not in KINDS:
            raise InvalidArgument(f"kind must be one of {', '.join(KINDS)}", field="kind")
        qs = qs.filter(kind=kind)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 5000:
        raise InvalidArgument("limit must be an integer from 1 to 5000", field="limit")
    return [ReviewRecord.of(i) for i in qs.order_by("expires_at", "confidence", "id")[:limit]]


def review_get(*, agent_id: str, item_id: Any) -> ReviewRecord:
    return ReviewRecord.of(_item(agent_id, item_id))


def _item_id(item_id: Any) -> int:
    if isinstance(item_id, bool):
        raise NotFound("no such review item", field="item_id")
    try:
        return int(item_id)
    except (TypeError, ValueError):
        raise NotFound("no such review item", field="item_id") from None


def _item(agent_id: str | None, item_id: Any, *, lock: bool = False) -> ReviewItem:
    qs = ReviewItem.objects.filter(id=_item_id(item_id))
    if agent_id is not None:
        qs = qs.filter(agent_id=agent_id)
    if lock and connection.vendor == "postgresql":
        qs = qs.select_for_update()
    item = qs.first()
    if item is None or item.status == ReviewItem.DRY:
        raise NotFound("no such review item", field="item_id")
    return item


def _claimed_by_other(item: ReviewItem) -> ClaimedByOther:
    return ClaimedByOther(
        f"item #{item.id} is claimed by {item.claimed_by} until {item.claimed_until:%H:%M:%S} UTC; "
        "wait for the claim to end or ask them",
        field="item_id",
        holder=item.claimed_by,
        claimed_until=item.claimed_until.isoformat() if item.claimed_until else None,
    )


# --- deciding --------------------------------------------------------------------------------------------


def review_decide(
    *,
    item_id: Any,
    decision: str,
    actor: str,
    reason: str = "",
    edited: dict[str, Any] | None = None,
    agent_id: str | None = None,
) -> ReviewRecord:
    """Approve (optionally an ``edited`` version) or reject (a reason is required) a pending item. ``agent_id``,
    when given, scopes the lookup (another agent's item is ``not_found``). An item whose rows changed since it
    was proposed is refused (``stale``) and marked stale, with nothing applied."""
    try:
        return _decide(
            item_id=item_id, decision=decision, actor=actor, reason=reason, edited=edited, agent_id=agent_id
        )
    except Stale:
        _mark_stale(_item_id(item_id))
        raise


@c.write_transaction
def _mark_stale(item_id: int) -> None:
    ReviewItem.objects.filter(id=item_id, status=ReviewItem.PENDING).update(status=STALE)


@c.write_transaction
def _decide(
    *,
    item_id: Any,
    decision: str,
    actor: str,
    reason: str,
    edited: dict[str, Any] | None,
    agent_id: str | None,
) -> ReviewRecord:
    actor = c.check_actor(actor)
    if decision not in DECISIONS:
        raise InvalidArgument("decision must be approve or reject", field="decision")
    if decision == "reject":
        reason = check_reason(reason)
    elif reason:
        reason = check_reason(reason)
    else:
        reason = "approved"
    if edited is not None and (decision != "approve" or not isinstance(edited, dict)):
        raise InvalidArgument("an edit goes with an approval, as an object", field="edited")
    edited = review_apply.check_edit(edited) or None
    t = c.now()
    item = _item(agent_id, item_id, lock=True)
    status = ReviewItem.APPROVED if decision == "approve" else ReviewItem.REJECTED
    undo_until = None if is_system(actor) else t + timedelta(seconds=UNDO_SECS)
    won = (
        ReviewItem.objects.filter(id=item.id, status=ReviewItem.PENDING)
        .filter(claim_free_q(actor, t))
        .update(
            status=status,
            decided_at=t,
            decided_by=actor,
            decision_reason=reason,
            claimed_by="",
            claimed_until=None,
            undo_until=undo_until,
            edited=edited or {},
        )
    )
    if not won:
        item.refresh_from_db()
        if item.status == ReviewItem.PENDING:
            raise _claimed_by_other(item)
        if item.status == STALE:
            raise Stale(
                "this item's memories changed since it was proposed; it is marked stale", field="item_id"
            )
        raise AlreadyDecided(
            f"this item was already decided ({item.status} by {item.decided_by})", field="item_id"
        )
    item.refresh_from_db()
    apply = review_apply.approve if decision == "approve" else review_apply.reject
    undo = apply(item, edited=edited, actor=actor, t=t)
    ReviewItem.objects.filter(id=item.id).update(undo_state=undo)
    c.audit(
        agent_id=item.agent_id,
        actor=actor,
        action=f"review_{status}",
        reason=reason,
        at=t,
        item_id=item.id,
        kind=item.kind,
        title=item.title,
        edited=edited or None,
        before=item.payload.get("old"),
        after=(edited or item.payload.get("new")),
    )
    if not is_system(actor):
        review_policy.record_decision(
            agent_id=item.agent_id,
            verdict_type=str(item.payload.get("verdict_type") or item.kind),
            approved=decision == "approve",
            t=t,
        )
    emit("review.decided", item.agent_id, {"item_id": item.id, "status": status, "actor": actor})
    item.refresh_from_db()
    return ReviewRecord.of(item)


# --- claims, undo, revert, bulk --------------------------------------------------------------------------


@c.write_transaction
def review_claim(
    *, item_id: Any, actor: str, secs: int = CLAIM_SECS, agent_id: str | None = None
) -> ReviewRecord:
    """Hold a pending item while working on it (or renew one's own claim) for ``secs`` seconds."""
    actor = c.check_actor(actor)
    if isinstance(secs, bool) or not isinstance(secs, int) or not 1 <= secs <= MAX_CLAIM_SECS:
        raise InvalidArgument(f"secs must be an integer from 1 to {MAX_CLAIM_SECS}", field="secs")
    t = c.now()
    item = _item(agent_id, item_id)
    won = (
        ReviewItem.objects.filter(id=item.id, status=ReviewItem.PENDING)
        .filter(claim_free_q(actor, t))
        .update(claimed_by=actor, claimed_until=t + timedelta(seconds=secs))
    )
    item.refresh_from_db()
    if not won:
        if item.status != ReviewItem.PENDING:
            raise AlreadyDecided(f"this item was already decided ({item.status})", field="item_id")
        raise _claimed_by_other(item)
    c.audit(
        agent_id=item.agent_id, actor=actor, action="review_claimed", reason="claimed", at=t, item_id=item.id
    )
    return ReviewRecord.of(item)


@c.write_transaction
def review_release(*, item_id: Any, actor: str, agent_id: str | None = None) -> ReviewRecord:
    actor = c.check_actor(actor)
    t = c.now()
    item = _item(agent_id, item_id)
    if ReviewItem.objects.filter(id=item.id, claimed_by=actor, claimed_until__gt=t).update(
        claimed_by="", claimed_until=None
    ):
        c.audit(
            agent_id=item.agent_id,
            actor=actor,
            action="review_released",
            reason="released",
            at=t,
            item_id=item.id,
        )
    item.refresh_from_db()
    return ReviewRecord.of(item)


@c.write_transaction
def review_undo(
    *, item_id: Any, actor: str, reason: str = "undone by the decider", agent_id: str | None = None
) -> ReviewRecord:
    """The decider takes a decision back inside its window: what it changed is restored exactly and the item is
    pending again, claimed by the undoer."""
    actor = c.check_actor(actor)
    reason = check_reason(reason)
    t = c.now()
    item = _item(agent_id, item_id, lock=True)
    if item.status in (ReviewItem.PENDING, STALE):
        raise NotDecided("this item is pending: there is no decision to undo", field="item_id")
    if item.decided_by != actor:
        raise UndoNotYours(f"only the reviewer who decided may undo it ({item.decided_by})", field="item_id")
    if item.undo_until is None or item.undo_until <= t:
        raise UndoExpired("the undo window has passed; revert the item instead", field="item_id")
    previous = item.status
    _restore(item, actor, reason)
    ReviewItem.objects.filter(id=item.id).update(
        status=ReviewItem.PENDING,
        decided_at=None,
        decided_by="",
        decision_reason="",
        undo_until=None,
        undo_state={},
        edited={},
        claimed_by=actor,
        claimed_until=t + timedelta(seconds=CLAIM_SECS),
    )
    c.audit(
        agent_id=item.agent_id,
        actor=actor,
        action="review_undo",
        reason=reason,
        at=t,
        item_id=item.id,
        undone=previous,
    )
    item.refresh_from_db()
    return ReviewRecord.of(item)


@c.write_transaction
def review_revert(*, item_id: Any, actor: str, reason: str, agent_id: str | None = None) -> ReviewRecord:
    """Take back an applied or approved item after its undo window: a new decision (``rejected`` by
    ``actor``), audited, with what the item changed restored (``undo_conflict`` if the keys were written
    since)."""
    actor = c.check_actor(actor)
    reason = check_reason(reason)
    t = c.now()
    item = _item(agent_id, item_id, lock=True)
    if item.status not in (ReviewItem.APPLIED, ReviewItem.APPROVED):
        raise NotDecided("only an applied or approved item can be reverted", field="item_id")
    previous = item.status
    _restore(item, actor, reason)
    ReviewItem.objects.filter(id=item.id, status=previous).update(
        status=ReviewItem.REJECTED,
        decided_at=t,
        decided_by=actor,
        decision_reason=reason,
        undo_until=None,
        undo_state={},
    )
    c.audit(
        agent_id=item.agent_id,
        actor=actor,
        action="review_reverted",
        reason=reason,
        at=t,
        item_id=item.id,
        was=previous,
    )
    item.refresh_from_db()
    return ReviewRecord.of(item)


def _restore(item: ReviewItem, actor: str, reason: str) -> None:
    undo = item.undo_state or {}
    if undo.get("rows") is not None:
        restore_snapshot(
            agent_id=item.agent_id, undo=undo, actor=actor, reason=reason, action="review_restore"
        )
    for hook in undo.get("hooks", []):
        review_apply.undo_hook(item, hook, actor)


@dataclass(frozen=True)
class ReviewBulkOutcome:
    item_id: int
    outcome: str  # approved | rejected | skipped
    code: str = ""
    message: str = ""
    holder: str = ""


def review_bulk(
    *, agent_id: str, item_ids: Any, decision: str, actor: str, reason: str
) -> list[ReviewBulkOutcome]:
    """Decide many items of one agent, each in its own transaction with its own audit entry; items held by
    another reviewer, already decided or stale are skipped with their stable code."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    reason = check_reason(reason)
    if decision not in DECISIONS:
        raise InvalidArgument("decision must be approve or reject", field="decision")
    if isinstance(item_ids, str | bytes) or not isinstance(item_ids, list | tuple):
        raise InvalidArgument("item_ids must be a list of ids", field="item_ids")
    if len(item_ids) > MAX_BULK:
        raise InvalidArgument(f"at most {MAX_BULK} items per bulk decision", field="item_ids")
    out: list[ReviewBulkOutcome] = []
    for raw in dict.fromkeys(item_ids):
        try:
            rec = review_decide(item_id=raw, decision=decision, actor=actor, reason=reason, agent_id=agent_id)
        except EngineError as exc:
            holder = str(exc.details.get("holder", "")) if isinstance(exc, ClaimedByOther) else ""
            out.append(ReviewBulkOutcome(_item_id_or_zero(raw), "skipped", exc.code, exc.message, holder))
        else:
            out.append(ReviewBulkOutcome(rec.id, rec.status))
    return out


def _item_id_or_zero(raw: Any) -> int:
    try:
        return _item_id(raw)
    except NotFound:
        return 0


# --- reminders -------------------------------------------------------------------------------------------


def review_sweep() -> dict[str, int]:
    """Remind once about items past their TTL (they stay pending: nothing lands silently)."""
    t = c.now()
    reminded = 0
    for item_id in ReviewItem.objects.filter(
        status=ReviewItem.PENDING, remind_at__lte=t, reminded_at__isnull=True
    ).values_list("id", flat=True):
        reminded += _remind(item_id, t)
    return {"reminded": reminded}


@c.write_transaction
def _remind(item_id: int, t: datetime) -> int:
    if not ReviewItem.objects.filter(id=item_id, reminded_at__isnull=True, status=ReviewItem.PENDING).update(
        reminded_at=t
    ):
        return 0
    item = ReviewItem.objects.get(id=item_id)
    emit("review.reminder", item.agent_id, {"item_id": item.id, "kind": item.kind, "title": item.title})
    c.audit(
        agent_id=item.agent_id,
        actor="system:review",
        action="review_reminded",
        reason=item.title,
        at=t,
        item_id=item.id,
    )
    return 1


def pending_q() -> Q:
    return Q(status=ReviewItem.PENDING)


def is_claimed(item: ReviewRecord, t: datetime) -> bool:
    return live_claim(item.claimed_by, item.claimed_until, t)
