"""Protected writes: the burst guard around a fact write, and the distill path (SPEC P5, P9)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memory.models import ApprovalRequest, FactWrite, Memory

from .. import common as c
from ..archive import holds
from ..belief import current_q
from ..temporal import FactInput, apply_fact, check_fact, rederive_key
from ..types import EngineError, InvalidArgument, StoreResult
from .approvals import open_request
from .burst import GuardDecision, check_burst, record_hits
from .scan import scan_or_drop

MAX_PROTECTED_FACTS = 20


MAX_PROTECTED_CONTENT = 600


MAX_PROTECTED_PART = 120


PROTECTED_CONFIDENCE = 0.6


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
    return open_request(
        agent_id=agent_id,
        origin=origin,
        subject=subject,
        memory_ids=memory_ids,
        write_ids=[w for w in write_ids if w is not None],
        snippet=(snippets[0] if snippets else "")[:200],
        reason=decision.reason,
        t=t,
    )


@c.write_transaction
def guarded_write(fact: FactInput) -> StoreResult:
    """Count the write in the burst guard, then store it normally or quarantine its burst (SPEC P5)."""
    t = c.now()
    decision = check_burst(agent_id=fact.agent_id, origin=fact.origin, subject=fact.subject, n=1, t=t)
    result = apply_fact(fact, quarantine=decision.quarantine, t=t)
    record_hits(decision, t, [result.write_id] if result.write_id else [])
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
        .only("object", "content", "metadata")
        .first()
    )
    return row is not None and (row.object or None) == (fact.object or None) and holds(row, fact.content)


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
            results[i] = apply_fact(parsed)
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
        written = [(i, apply_fact(fact, quarantine=decision.quarantine, t=t)) for i, fact in group]
        record_hits(decision, t, [r.write_id for _, r in written if r.write_id])
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
