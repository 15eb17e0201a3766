"""Poisoning defence (SPEC P4–P9): injection scan on protected writes, the burst guard, quarantine, approvals.

A *burst* is ``max_per_subject`` or more writes from one origin about one subject inside ``window_secs``
(``memdesk.toml`` ``[knowledge_guard]``). The write that trips the guard, every earlier write of the window and
every later one until the window drains are quarantined together: their rows become inert, the timelines they
had changed are re-derived (so reads return what they returned before the burst), and one approval request per
(agent, origin, subject) waits for a reviewer. Approve applies the writes as if written then; reject (or the TTL
running out) retracts them and crushes their trust.

Reviewers work the desk as a queue. A *claim* (``quarantine_claim``) holds a batch for one reviewer for a while;
a person's decision on a batch someone else holds is refused (``claimed_by_other``) until the claim is
released, decided or past its time (claims are compared with the clock, never swept). Every decision is one
conditional UPDATE on the pending row, so exactly one of two racing claims/decisions wins. A person's decision
keeps a snapshot of what it changed and can be undone by its decider for ``UNDO_SECS`` (``quarantine_undo``):
the writes go back to quarantine as they were, their keys are re-derived, and the batch is pending again with
the TTL it had left (so the sweep cannot expire it because of the time it spent decided). The undo is a new
audit decision. ``quarantine_bulk`` decides many batches, each in its own transaction and audit entry.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import Q

from memory.config import guard_settings
from memory.models import (
    ApprovalRequest,
    AuditEvent,
    FactWrite,
    GuardCounter,
    Memory,
    OutboundEvent,
)

from . import common as c
from .belief import approval_effects, current_q
from .temporal import _DERIVED_FIELDS, FactInput, _write_fact, check_fact, rederive_key
from .types import EngineError, InvalidArgument, NotFound, StoreResult

log = logging.getLogger("memdesk.guard")

APPROVAL_TTL_SECS = 86_400
REMIND_FRACTION = 2 / 3
MAX_PROTECTED_FACTS = 20
MAX_PROTECTED_CONTENT = 600
MAX_PROTECTED_PART = 120
PROTECTED_CONFIDENCE = 0.6
REJECT_TRUST = 0.1
WEBHOOK_MAX_ATTEMPTS = 5
REJECT_REASONS = ("wrong", "duplicate", "outdated", "poisoning", "out_of_scope", "ttl_expired", "other")
CLAIM_SECS = 600  # a reviewer's claim on a batch lasts this long unless renewed or released
MAX_CLAIM_SECS = 3600
UNDO_SECS = 30  # the decider may undo a decision this long after making it
MAX_BULK = 500
SYSTEM_ACTORS = ("system",)  # actors "system" and "system:…" decide by rule: their decisions have no undo


class AlreadyDecided(EngineError):
    code = "already_decided"


class ClaimedByOther(EngineError):
    """Another reviewer holds a live claim on the batch."""

    code = "claimed_by_other"


class NotDecided(EngineError):
    code = "not_decided"


class UndoExpired(EngineError):
    """The undo window has passed: a later revert is a new decision by other means."""

    code = "undo_expired"


class UndoNotYours(EngineError):
    """Only the reviewer who decided may undo the decision."""

    code = "undo_not_yours"


class UndoConflict(EngineError):
    """Undoing would clash with something newer: a pending batch from the same origin about the same subject
    (decide that one first), or an origin purge that covered the batch's writes after the decision (the
    decision stands, so purged facts stay purged)."""

    code = "undo_conflict"


# --- injection scan ---------------------------------------------------------------------------------------


def scan_or_drop(
    *,
    agent_id: str,
    actor: str,
    content: str,
    subject: str | None,
    predicate: str | None,
    obj: str | None,
    origin: str,
) -> StoreResult | None:
    """Run the shared rule engine; a blocked write is dropped (never stored) and audited (SPEC P4)."""
    from .injection import scan_fact

    result = scan_fact(content, subject or "", predicate or "", obj or "")
    if not result.blocked:
        return None
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="prompt_injection",
        subject=subject,
        reason="dropped: " + ", ".join(result.rules),
        rules=list(result.rules),
        score=result.score,
        origin=origin,
        snippet=content[:200],
    )
    return StoreResult(None, "dropped", reason="prompt_injection: " + ", ".join(result.rules))


# --- burst guard ------------------------------------------------------------------------------------------


@dataclass
class GuardDecision:
    quarantine: bool
    reason: str = ""
    earlier_write_ids: list[int] = field(default_factory=list)
    counter_id: int | None = None
    hits: list[list[Any]] = field(default_factory=list)


def _us(t: datetime) -> int:
    return int(t.timestamp() * 1_000_000)


def _lock_counter(agent_id: str, origin: str, subject: str, t: datetime) -> GuardCounter:
    GuardCounter.objects.get_or_create(
        agent_id=agent_id, origin=origin, subject=subject, defaults={"updated_at": t}
    )
    qs = GuardCounter.objects.filter(agent_id=agent_id, origin=origin, subject=subject)
    if connection.vendor == "postgresql":
        qs = qs.select_for_update()  # parallel writers of one (agent, origin, subject) count one at a time
    return qs.get()


def check_burst(*, agent_id: str, origin: str, subject: str, n: int, t: datetime) -> GuardDecision:
    """Count ``n`` new writes; quarantine if the window then holds ``max_per_subject`` or more (fail closed)."""
    cfg = guard_settings()
    if not cfg.enabled:
        return GuardDecision(False)
    try:
        with transaction.atomic():  # a savepoint: a failure to read or lock the counter quarantines
            counter = _lock_counter(agent_id, origin, subject, t)
            cutoff = _us(t) - cfg.window_secs * 1_000_000
            hits = [h for h in (counter.hits or []) if isinstance(h, list) and len(h) == 2 and h[0] > cutoff]
    except DatabaseError as exc:
        log.warning("burst guard unavailable for %s/%s/%s: %s; quarantining", agent_id, origin, subject, exc)
        return GuardDecision(True, "guard_unavailable")
    if len(hits) + n < cfg.max_per_subject:
        return GuardDecision(False, counter_id=counter.id, hits=hits)
    reason = (
        f"burst: {len(hits) + n} facts about {subject!r} from {origin} within {cfg.window_secs} s "
        f"(limit {cfg.max_per_subject})"
    )
    return GuardDecision(True, reason, [int(h[1]) for h in hits], counter.id, hits)


def _record_hits(decision: GuardDecision, t: datetime, write_ids: list[int]) -> None:
    if decision.counter_id is None:
        return
    hits = decision.hits + [[_us(t), wid] for wid in write_ids]
    GuardCounter.objects.filter(id=decision.counter_id).update(hits=hits, updated_at=t)


def _quarantine_earlier(agent_id: str, write_ids: list[int], t: datetime) -> list[FactWrite]:
    """Pull still-believed earlier writes of a burst back into quarantine and re-derive their keys."""
    writes = list(
        FactWrite.objects.filter(agent_id=agent_id, id__in=write_ids, state=FactWrite.STATE_BELIEVED)
    )
    if not writes:
        return []
    keys = sorted({(w.subject, w.predicate) for w in writes})
    for subject, predicate in keys:
        c.lock_key(agent_id, subject, predicate)
    FactWrite.objects.filter(id__in=[w.id for w in writes]).update(
        state=FactWrite.STATE_QUARANTINED, believed_until=t
    )
    for subject, predicate in keys:
        rederive_key(agent_id, subject, predicate, at=t)
    c.bump_generation(agent_id)
    return writes


def _quarantine_batch(
    *,
    agent_id: str,
    origin: str,
    subject: str,
    decision: GuardDecision,
    results: list[StoreResult],
    t: datetime,
) -> ApprovalRequest:
    earlier = _quarantine_earlier(agent_id, decision.earlier_write_ids, t)
    memory_ids = [w.memory_id for w in earlier if not w.is_reaffirm] + [r.id for r in results if r.id]
    write_ids = [w.id for w in earlier] + [r.write_id for r in results if r.write_id]
    snippets = [w.content for w in earlier] + [
        m.content for m in Memory.objects.filter(id__in=[r.id for r in results if r.id])
    ]
    return _open_request(
        agent_id=agent_id,
        origin=origin,
        subject=subject,
        memory_ids=memory_ids,
        write_ids=[w for w in write_ids if w is not None],
        snippet=(snippets[0] if snippets else "")[:200],
        reason=decision.reason,
        t=t,
    )


def guarded_write(fact: FactInput) -> StoreResult:
    """``write_fact(fact, guard=True)``: count the write, then store it normally or quarantine its burst."""
    t = c.now()
    decision = check_burst(agent_id=fact.agent_id, origin=fact.origin, subject=fact.subject, n=1, t=t)
    result = _write_fact(fact, quarantine=decision.quarantine, t=t)
    _record_hits(decision, t, [result.write_id] if result.write_id else [])
    if not decision.quarantine:
        return result
    request = _quarantine_batch(
        agent_id=fact.agent_id,
        origin=fact.origin,
        subject=fact.subject,
        decision=decision,
        results=[result],
        t=t,
    )
    return StoreResult(
        result.id, "quarantined", reason=f"approval {request.id}: {decision.reason}", write_id=result.write_id
    )


# --- protected writes (SPEC P9) ---------------------------------------------------------------------------


def _protected_fact(agent_id: str, raw: Any, origin: str, session_id: str | None) -> FactInput | StoreResult:
    if not isinstance(raw, dict):
        return StoreResult(None, "dropped", reason="invalid_argument: each fact must be an object")
    content, subject, predicate = raw.get("content"), raw.get("subject"), raw.get("predicate")
    obj = raw.get("object")
    if isinstance(content, str) and len(content) > MAX_PROTECTED_CONTENT:
        return StoreResult(
            None, "dropped", reason=f"content_too_large: over {MAX_PROTECTED_CONTENT} characters"
        )
    for name, part in (("subject", subject), ("predicate", predicate), ("object", obj)):
        if isinstance(part, str) and len(part.strip()) > MAX_PROTECTED_PART:
            return StoreResult(
                None, "dropped", reason=f"invalid_argument: {name} over {MAX_PROTECTED_PART} characters"
            )
    try:
        return check_fact(
            agent_id=agent_id,
            content=content,
            subject=subject,
            predicate=predicate,
            object=obj,
            valid_from=raw.get("valid_from"),
            confidence=raw.get("confidence", PROTECTED_CONFIDENCE),
            origin=origin,
            session_id=session_id,
            layer="semantic",
            importance=5.0,
        )
    except EngineError as exc:
        return StoreResult(None, "dropped", reason=f"{exc.code}: {exc.message}")


def _is_current(fact: FactInput) -> bool:
    at = fact.valid_from or c.now()
    row = (
        Memory.objects.filter(agent_id=fact.agent_id, subject=fact.subject, predicate=fact.predicate)
        .filter(current_q(at))
        .only("object", "content")
        .first()
    )
    return (
        row is not None
        and (row.object or None) == (fact.object or None)
        and row.content.strip() == fact.content.strip()
    )


@c.write_transaction
def store_facts_protected(
    *, agent_id: str, facts: Any, origin: str, session_id: str | None = None, actor: str = "system"
) -> list[StoreResult]:
    """Distilled facts: capped, de-duplicated, scanned, guarded once per subject, then stored (SPEC P9)."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    if isinstance(facts, dict | str) or not isinstance(facts, list | tuple):
        raise InvalidArgument("facts must be a list of fact objects", field="facts")
    if not facts:
        raise InvalidArgument("facts must not be empty", field="facts")
    if len(facts) > MAX_PROTECTED_FACTS:
        raise InvalidArgument(
            f"at most {MAX_PROTECTED_FACTS} facts per call; got {len(facts)}", field="facts"
        )
    session_id = c.check_session(session_id)
    results: list[StoreResult | None] = [None] * len(facts)
    accepted: dict[str, list[tuple[int, FactInput]]] = {}
    seen: set[tuple[str, str, str | None, str]] = set()
    for i, raw in enumerate(facts):
        parsed = _protected_fact(agent_id, raw, origin, session_id)
        if isinstance(parsed, StoreResult):
            results[i] = parsed
            continue
        dedup = (parsed.subject, parsed.predicate, parsed.object, parsed.content.strip())
        if dedup in seen:
            results[i] = StoreResult(None, "dropped", reason="duplicate: repeated in this call")
            continue
        seen.add(dedup)
        if _is_current(parsed):  # already believed as is: a reaffirmation, not news for the burst guard
            results[i] = _write_fact(parsed)
            continue
        dropped = scan_or_drop(
            agent_id=agent_id,
            actor=actor,
            content=parsed.content,
            subject=parsed.subject,
            predicate=parsed.predicate,
            obj=parsed.object,
            origin=parsed.origin,
        )
        if dropped is not None:
            results[i] = dropped
            continue
        accepted.setdefault(parsed.subject, []).append((i, parsed))
    t = c.now()
    for subject in sorted(accepted):
        group = accepted[subject]
        decision = check_burst(agent_id=agent_id, origin=origin, subject=subject, n=len(group), t=t)
        written = [(i, _write_fact(fact, quarantine=decision.quarantine, t=t)) for i, fact in group]
        _record_hits(decision, t, [r.write_id for _, r in written if r.write_id])
        if decision.quarantine:
            request = _quarantine_batch(
                agent_id=agent_id,
                origin=origin,
                subject=subject,
                decision=decision,
                results=[r for _, r in written],
                t=t,
            )
            written = [
                (
                    i,
                    StoreResult(
                        r.id,
                        "quarantined",
                        reason=f"approval {request.id}: {decision.reason}",
                        write_id=r.write_id,
                    ),
                )
                for i, r in written
            ]
        for i, r in written:
            results[i] = r
    return [r if r is not None else StoreResult(None, "dropped", reason="internal") for r in results]


# --- approvals (SPEC P8) ----------------------------------------------------------------------------------


def _open_request(
    *,
    agent_id: str,
    origin: str,
    subject: str,
    memory_ids: list[str],
    write_ids: list[int],
    snippet: str,
    reason: str,
    t: datetime,
) -> ApprovalRequest:
    pending = (
        ApprovalRequest.objects.filter(
            agent_id=agent_id,
            action_kind=ApprovalRequest.KNOWLEDGE_QUARANTINE,
            origin=origin,
            subject=subject,
            status=ApprovalRequest.PENDING,
        )
        .order_by("id")
        .first()
    )
    if pending is not None:  # the burst goes on: later writes join the open batch
        payload = dict(pending.payload)
        payload["ids"] = list(dict.fromkeys([*payload.get("ids", []), *memory_ids]))
        payload["write_ids"] = sorted(set(payload.get("write_ids", [])) | set(write_ids))
        payload["reason"] = reason or payload.get("reason", "")
        ApprovalRequest.objects.filter(id=pending.id).update(payload=payload)
        pending.payload = payload
        return pending
    ttl = timedelta(seconds=APPROVAL_TTL_SECS)
    request = ApprovalRequest.objects.create(
        agent_id=agent_id,
        action_kind=ApprovalRequest.KNOWLEDGE_QUARANTINE,
        origin=origin,
        subject=subject,
        payload={
            "origin": origin,
            "subject": subject,
            "ids": list(dict.fromkeys(memory_ids)),
            "write_ids": sorted(set(write_ids)),
            "snippet": snippet,
            "reason": reason,
        },
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
    _emit("knowledge.quarantined", agent_id, {"request_id": request.id, **request.payload})
    return request


def _request_id(request_id: Any) -> int:
    if isinstance(request_id, bool):
        raise NotFound("no such approval request", field="request_id")
    try:
        return int(request_id)
    except (TypeError, ValueError):
        raise NotFound("no such approval request", field="request_id") from None


def _is_system(actor: str) -> bool:
    return actor in SYSTEM_ACTORS or actor.startswith("system:")


def _claim_free_for(actor: str, t: datetime) -> Q:
    """No live claim by anyone but ``actor`` (claims expire by comparing times: no job releases them)."""
    return Q(claimed_by="") | Q(claimed_by=actor) | Q(claimed_until__isnull=True) | Q(claimed_until__lte=t)


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
    rid = _request_id(request_id)
    pending = ApprovalRequest.objects.filter(id=rid, status=ApprovalRequest.PENDING)
    if status == ApprovalRequest.EXPIRED:
        pending = pending.filter(expires_at__lte=t)
    else:
        pending = pending.filter(expires_at__gt=t).filter(_claim_free_for(actor, t))
    undo_until = None if _is_system(actor) else t + timedelta(seconds=UNDO_SECS)
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


def _check_reason(reason: Any) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidArgument("a reason is required", field="reason")
    if len(reason) > 2000:
        raise InvalidArgument("the reason is longer than 2000 characters", field="reason")
    return reason.strip()


def _request_writes(request: ApprovalRequest) -> list[FactWrite]:
    ids = [int(i) for i in request.payload.get("write_ids", [])]
    return list(
        FactWrite.objects.filter(agent_id=request.agent_id, id__in=ids, state=FactWrite.STATE_QUARANTINED)
    )


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _from_iso(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


_ROW_FIELDS = (*_DERIVED_FIELDS, "origin_trust")


def _snapshot(writes: list[FactWrite], rows: list[str]) -> dict[str, Any]:
    """What an undo restores: the batch's writes (record time, trust) and its own rows as they were."""
    stored = Memory.objects.filter(id__in=rows).values("id", *_ROW_FIELDS)
    return {
        "writes": {
            str(w.id): [_iso(w.believed_from), _iso(w.believed_until), w.origin_trust] for w in writes
        },
        "rows": {
            r["id"]: {k: _iso(v) if isinstance(v, datetime) else v for k, v in r.items() if k != "id"}
            for r in stored
        },
    }


def _apply_verdict(
    request: ApprovalRequest, *, approve: bool, t: datetime, event: str, undoable: bool = False
) -> dict[str, int]:
    writes = _request_writes(request)
    keys = sorted({(w.subject, w.predicate) for w in writes})
    for subject, predicate in keys:
        c.lock_key(request.agent_id, subject, predicate)
    if undoable:
        snapshot = _snapshot(writes, [w.memory_id for w in writes if not w.is_reaffirm])
        snapshot["verdict"] = FactWrite.STATE_BELIEVED if approve else FactWrite.STATE_RETRACTED
        ApprovalRequest.objects.filter(id=request.id).update(undo_state=snapshot)
        request.undo_state = snapshot
    ids = [w.id for w in writes]
    if approve:
        FactWrite.objects.filter(id__in=ids).update(
            state=FactWrite.STATE_BELIEVED, believed_from=t, believed_until=None
        )
    else:
        FactWrite.objects.filter(id__in=ids).update(
            state=FactWrite.STATE_RETRACTED, origin_trust=REJECT_TRUST
        )
    for subject, predicate in keys:
        rederive_key(request.agent_id, subject, predicate, at=t, retract_event=event or None)
    rows = [w.memory_id for w in writes if not w.is_reaffirm]
    if not approve and rows:
        Memory.objects.filter(id__in=rows).update(origin_trust=REJECT_TRUST)
    if keys:
        c.bump_generation(request.agent_id)
    return {"writes": len(ids), "rows": len(rows)}


def _decide(
    request_id: Any, *, status: str, actor: str, reason: str, approve: bool, event: str
) -> ApprovalRequest:
    actor = c.check_actor(actor)
    t = c.now()
    request = _win(request_id, status, actor, reason, t)
    counts = _apply_verdict(
        request, approve=approve, t=t, event=event, undoable=request.undo_until is not None
    )
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
    )
    _emit(
        "knowledge.decided",
        request.agent_id,
        {"request_id": request.id, "status": status, "actor": actor, "reason": reason},
    )
    return request


@c.write_transaction
def quarantine_approve(request_id: Any, actor: str, reason: str) -> ApprovalRequest:
    """Release the batch: its writes are applied through the timeline rules as if written then."""
    return _decide(
        request_id,
        status=ApprovalRequest.APPROVED,
        actor=actor,
        reason=_check_reason(reason),
        approve=True,
        event="",
    )


@c.write_transaction
def quarantine_reject(request_id: Any, actor: str, reason: str) -> ApprovalRequest:
    """Retract the batch (``quarantine_reject``) and crush its trust to at most 0.1."""
    return _decide(
        request_id,
        status=ApprovalRequest.DENIED,
        actor=actor,
        reason=_check_reason(reason),
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


# --- claims, undo and bulk decisions (SPEC D3; UX "Every queue") -----------------------------------------


def _locked(rid: int) -> ApprovalRequest:
    qs = ApprovalRequest.objects.filter(id=rid, action_kind=ApprovalRequest.KNOWLEDGE_QUARANTINE)
    if connection.vendor == "postgresql":
        qs = qs.select_for_update()  # SQLite: the IMMEDIATE write transaction already serialises writers
    request = qs.first()
    if request is None:
        raise NotFound("no such approval request", field="request_id")
    return request


@c.write_transaction
def quarantine_claim(*, request_id: Any, actor: str, secs: int = CLAIM_SECS) -> ApprovalRequest:
    """Claim a pending batch while working on it (or renew one's own claim) for ``secs`` seconds.

    Others see who holds it and until when; their decisions are refused (``claimed_by_other``) until the claim
    ends: released, decided, or simply expired (times are compared; no job is needed).
    """
    actor = c.check_actor(actor)
    if isinstance(secs, bool) or not isinstance(secs, int) or not 1 <= secs <= MAX_CLAIM_SECS:
        raise InvalidArgument(f"secs must be an integer from 1 to {MAX_CLAIM_SECS}", field="secs")
    rid = _request_id(request_id)
    t = c.now()
    won = (
        ApprovalRequest.objects.filter(id=rid, status=ApprovalRequest.PENDING, expires_at__gt=t)
        .filter(_claim_free_for(actor, t))
        .update(claimed_by=actor, claimed_until=t + timedelta(seconds=secs))
    )
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
    c.audit(
        agent_id=request.agent_id,
        actor=actor,
        action="quarantine_claimed",
        subject=request.subject,
        reason=f"claimed until {request.claimed_until:%H:%M:%S} UTC",
        at=t,
        request_id=request.id,
        origin=request.origin,
        claimed_until=_iso(request.claimed_until),
    )
    return request


@c.write_transaction
def quarantine_release(*, request_id: Any, actor: str) -> ApprovalRequest:
    """Give up one's own claim (a no-op if ``actor`` holds none)."""
    actor = c.check_actor(actor)
    rid = _request_id(request_id)
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


def _snapshot_origins(snapshot: dict[str, Any]) -> list[str]:
    """The origins of a decision snapshot's writes, sorted (the order their locks are taken in)."""
    ids = [int(i) for i in (snapshot.get("writes") or {})]
    return sorted(set(FactWrite.objects.filter(id__in=ids).values_list("origin", flat=True))) if ids else []


def _purge_after(agent_id: str, snapshot: dict[str, Any], since: datetime) -> AuditEvent | None:
    """The first origin purge (``invalidate_by_origin``) at or after ``since`` that covered one of the
    snapshot's writes: same origin, and ingested at or after the purge's own ``since`` (if it had one). A purge
    skips writes a reject had already retracted, so the audit record is what says the purge meant them too."""
    ids = [int(i) for i in (snapshot.get("writes") or {})]
    if not ids:
        return None
    purges = list(
        AuditEvent.objects.filter(agent_id=agent_id, action="origin_purge", created_at__gte=since).order_by(
            "created_at", "id"
        )
    )
    if not purges:
        return None
    writes = list(
        FactWrite.objects.filter(agent_id=agent_id, id__in=ids).values_list("origin", "ingested_at")
    )
    for purge in purges:
        origin = (purge.details or {}).get("origin")
        purge_since = _from_iso((purge.details or {}).get("since"))
        if any(o == origin and (purge_since is None or at >= purge_since) for o, at in writes):
            return purge
    return None


def _restore_writes(agent_id: str, snapshot: dict[str, Any], verdict: str) -> list[FactWrite]:
    """Put the batch's writes back into quarantine as they were before the verdict. Writes something else has
    changed since (a purge retracting approved writes, say) are left alone."""
    saved = snapshot.get("writes") or {}
    writes = list(
        FactWrite.objects.filter(agent_id=agent_id, id__in=[int(i) for i in saved], state=verdict).order_by(
            "id"
        )
    )
    groups: dict[tuple[Any, ...], list[int]] = {}
    for w in writes:
        believed_from, believed_until, trust = saved[str(w.id)]
        groups.setdefault((believed_from, believed_until, trust), []).append(w.id)
    for (believed_from, believed_until, trust), ids in groups.items():
        FactWrite.objects.filter(id__in=ids).update(
            state=FactWrite.STATE_QUARANTINED,
            believed_from=_from_iso(believed_from),
            believed_until=_from_iso(believed_until),
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
            k: _from_iso(v) if k in {"valid_from", "valid_until", "invalidated_at"} else v
            for k, v in fields.items()
            if k in _ROW_FIELDS
        }
        values["quarantined"] = True
        Memory.objects.filter(id=memory_id).update(**values)


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
    reason = _check_reason(reason)
    rid = _request_id(request_id)
    t = c.now()
    request = _locked(rid)
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
    if verdict not in (FactWrite.STATE_BELIEVED, FactWrite.STATE_RETRACTED):
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
        undone_decided_at=_iso(decided_at),
        ids=request.payload.get("ids", []),
        writes=len(writes),
    )
    _emit(
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
    reason = _check_reason(reason)
    if decision not in ("approve", "reject"):
        raise InvalidArgument("decision must be approve or reject", field="decision")
    if isinstance(request_ids, str | bytes) or not isinstance(request_ids, list | tuple):
        raise InvalidArgument("request_ids must be a list of ids", field="request_ids")
    if len(request_ids) > MAX_BULK:
        raise InvalidArgument(f"at most {MAX_BULK} batches per bulk decision", field="request_ids")
    ids = list(dict.fromkeys(_request_id(i) for i in request_ids))
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


def sweep(*, actor: str = "system:ttl") -> dict[str, int]:
    """Expire due requests and send due reminders; safe to run any number of times, from any process."""
    t = c.now()
    expired = 0
    for rid in ApprovalRequest.objects.filter(status=ApprovalRequest.PENDING, expires_at__lte=t).values_list(
        "id", flat=True
    ):
        try:
            quarantine_expire(rid, actor=actor)
            expired += 1
        except AlreadyDecided:
            continue
    redelivered = 0
    if getattr(settings, "MEMDESK_WEBHOOK_URL", ""):
        retry = OutboundEvent.objects.filter(
            delivered_at__isnull=True, attempts__gte=1, attempts__lt=WEBHOOK_MAX_ATTEMPTS
        ).values_list("id", flat=True)
        for eid in list(retry[:100]):
            try:
                redelivered += deliver_event(event_id=eid)
            except RuntimeError as exc:
                log.warning("%s", exc)
    reminded = 0
    due = ApprovalRequest.objects.filter(
        status=ApprovalRequest.PENDING, remind_at__lte=t, reminded_at__isnull=True
    ).values_list("id", flat=True)
    for rid in due:
        reminded += _remind(rid, t)
    return {"expired": expired, "reminded": reminded}


@c.write_transaction
def _remind(request_id: int, t: datetime) -> int:
    if not ApprovalRequest.objects.filter(id=request_id, reminded_at__isnull=True, status="pending").update(
        reminded_at=t
    ):
        return 0
    request = ApprovalRequest.objects.get(id=request_id)
    _emit(
        "knowledge.quarantine_reminder",
        request.agent_id,
        {"request_id": request.id, "expires_at": request.expires_at.isoformat(), **request.payload},
    )
    return 1


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


# --- events -----------------------------------------------------------------------------------------------


def _emit(name: str, agent_id: str, payload: dict[str, Any]) -> None:
    """Record the event, then (after commit) send the Django signal and queue the webhook delivery."""
    from memory import signals

    event = OutboundEvent.objects.create(name=name, agent_id=agent_id, payload=payload, created_at=c.now())
    signal = {
        "knowledge.quarantined": signals.knowledge_quarantined,
        "knowledge.quarantine_reminder": signals.knowledge_quarantine_reminder,
        "knowledge.decided": signals.knowledge_decided,
    }[name]

    def after_commit() -> None:
        try:
            signal.send(
                sender=OutboundEvent,
                agent_id=agent_id,
                request_id=payload.get("request_id"),
                payload=payload,
                event_id=event.id,
            )
        except Exception:  # a receiver's bug must not break the write that already committed
            log.exception("receiver of %s failed", name)
        if getattr(settings, "MEMDESK_WEBHOOK_URL", ""):
            from memory.tasks import enqueue

            try:
                enqueue("deliver_event", event.id)
            except Exception:
                log.exception("could not queue webhook delivery of event %s", event.id)

    transaction.on_commit(after_commit)


def deliver_event(*, event_id: int) -> bool:
    """POST the event as JSON to MEMDESK_WEBHOOK_URL. Raises on failure so the job queue retries it."""
    url = getattr(settings, "MEMDESK_WEBHOOK_URL", "")
    event = OutboundEvent.objects.filter(id=event_id).first()
    if event is None or event.delivered_at is not None or not url:
        return True
    body = json.dumps(
        {
            "event": event.name,
            "id": event.id,
            "agent_id": event.agent_id,
            "created_at": event.created_at.isoformat(),
            "payload": event.payload,
        },
        default=str,
    ).encode()
    req = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": "memdesk-webhook/1"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 - operator-configured URL
            ok = 200 <= resp.status < 300
            error = "" if ok else f"HTTP {resp.status}"
    except (urllib.error.URLError, OSError) as exc:
        ok, error = False, str(exc)[:500]
    attempts = event.attempts + 1
    if ok:
        OutboundEvent.objects.filter(id=event.id).update(
            delivered_at=c.now(), attempts=attempts, last_error=""
        )
        return True
    OutboundEvent.objects.filter(id=event.id).update(attempts=attempts, last_error=error)
    if attempts >= WEBHOOK_MAX_ATTEMPTS:
        log.error("webhook delivery of event %s gave up after %s attempts: %s", event.id, attempts, error)
        return False
    raise RuntimeError(f"webhook delivery failed (attempt {attempts}): {error}")
