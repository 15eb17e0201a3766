"""Protected writes: the burst guard and the trust gate around a write, and the distill path (SPEC P5, P5a,
P9).

A fact is counted under its guard key (``keys.guard_subject``) per origin and, for low-trust classes, per
class (``burst``). A burst quarantines the window's writes together. A write can also be held alone: when it
is ``override_margin`` or more less trusted than the value it would supersede (``low_trust_override``, SPEC
P5a), or when its injection scan could not finish (``scan_incomplete``). Plain memories from low-trust origins
are counted per origin (``max_plain_per_origin``) and held the same way. Every held write waits on one
approval request per (origin, subject key).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memory.config import guard_settings
from memory.models import ApprovalRequest, FactWrite, Memory

from .. import common as c
from .. import rawsql
from ..archive import holds
from ..belief import BELIEVED, current_q
from ..graph.links import link_memory
from ..temporal import FactInput, apply_fact, check_fact, rederive_key
from ..types import EngineError, InvalidArgument, StoreResult
from .approvals import open_request
from .burst import GuardDecision, check_burst, record_hits
from .keys import PLAIN_SUBJECT, class_counter, guard_subject
from .scan import record_drop, scan_write

MAX_PROTECTED_FACTS = 20


MAX_PROTECTED_CONTENT = 600


MAX_PROTECTED_PART = 120


PROTECTED_CONFIDENCE = 0.6


def _quarantine_earlier(agent_id: str, write_ids: list[Any], t: datetime) -> list[FactWrite]:
    """Pull still-believed earlier writes of a burst back into quarantine and re-derive their keys."""
    ids = [int(i) for i in write_ids if isinstance(i, int)]
    writes = list(FactWrite.objects.filter(agent_id=agent_id, id__in=ids, state=FactWrite.STATE_BELIEVED))
    if not writes:
        return []
    keys = sorted({(w.subject, w.predicate) for w in writes})
    for subject, predicate in keys:
        c.lock_key(agent_id, subject, predicate)
    FactWrite.objects.filter(id__in=[w.id for w in writes]).update(
        state=FactWrite.STATE_QUARANTINED, believed_until=t
    )
    changed: set[str] = set()
    for subject, predicate in keys:
        changed |= rederive_key(agent_id, subject, predicate, at=t)
    c.bump_generation(agent_id, changed)
    return writes


def _quarantine_batch(
    *,
    agent_id: str,
    origin: str,
    subject: str,
    key: str,
    decision: GuardDecision,
    results: list[StoreResult],
    t: datetime,
    extra: dict[str, Any] | None = None,
) -> ApprovalRequest:
    earlier = _quarantine_earlier(agent_id, decision.earlier_ids, t)
    memory_ids = [w.memory_id for w in earlier if not w.is_reaffirm] + [r.id for r in results if r.id]
    write_ids = [w.id for w in earlier] + [r.write_id for r in results if r.write_id]
    snippets = [w.content for w in earlier] + [
        m.content for m in Memory.objects.filter(id__in=[r.id for r in results if r.id])
    ]
    return open_request(
        agent_id=agent_id,
        origin=origin,
        subject=subject,
        key=key,
        memory_ids=memory_ids,
        write_ids=[w for w in write_ids if w is not None],
        snippet=(snippets[0] if snippets else "")[:200],
        reason=decision.reason,
        t=t,
        extra=extra,
    )


def low_trust_override(fact: FactInput, t: datetime) -> str:
    """SPEC P5a: why ``fact`` must not supersede the value it would replace ("" when it may). Call it under
    the key's lock."""
    margin = guard_settings().override_margin
    if fact.origin_trust > 1.0 - margin or fact.value_key:  # a multi-valued key (SPEC B3) supersedes nothing
        return ""
    row = (
        Memory.objects.filter(
            agent_id=fact.agent_id, subject=fact.subject, predicate=fact.predicate, value_key=fact.value_key
        )
        .filter(current_q(fact.valid_from or t))
        .only("id", "object", "content", "origin_trust", "origin")
        .first()
    )
    if row is None or row.origin_trust - fact.origin_trust < margin - 1e-9:
        return ""
    if (row.object or None) == (fact.object or None) and holds(row, fact.content):
        return ""  # the same value: a reaffirmation, which supersedes nothing
    return (
        f"low_trust_override: a write at trust {fact.origin_trust:g} would supersede {row.id} "
        f"({row.origin}, trust {row.origin_trust:g}); the margin is {margin:g}"
    )


@c.write_transaction
def guarded_write(
    fact: FactInput,
    *,
    hold: str = "",
    hold_extra: dict[str, Any] | None = None,
    quota: tuple[str, int] | None = None,
) -> StoreResult:
    """Count the write in the burst guard, then store it, hold it alone (``hold`` or SPEC P5a) or quarantine
    its burst (SPEC P5). ``hold_extra`` goes into a held write's approval (the injection scan's record).
    ``quota``: count one use of this daily quota first (``rate_limited`` past it)."""
    if quota is not None:
        _consume(fact.agent_id, quota)
    t = c.now()
    key = guard_subject(fact.agent_id, fact.subject)
    decision = check_burst(agent_id=fact.agent_id, origin=fact.origin, subject=key, n=1, t=t)
    if not decision.quarantine:
        c.lock_key(fact.agent_id, fact.subject, fact.predicate)
        if not hold:
            hold, hold_extra = low_trust_override(fact, t), None
        if hold:
            decision = decision.held(hold)
    result = apply_fact(fact, quarantine=decision.quarantine, t=t)
    record_hits(decision, t, [result.write_id] if result.write_id else [])
    if not decision.quarantine:
        return result
    request = _quarantine_batch(
        agent_id=fact.agent_id,
        origin=fact.origin,
        subject=fact.subject,
        key=key,
        decision=decision,
        results=[result],
        t=t,
        extra=hold_extra if decision.reason == hold else None,
    )
    return StoreResult(
        result.id, "quarantined", reason=f"approval {request.id}: {decision.reason}", write_id=result.write_id
    )


def _consume(agent_id: str, quota: tuple[str, int]) -> None:
    from ..tokens import consume_quota

    kind, limit = quota
    consume_quota(agent_id=agent_id, kind=kind, limit=limit)


@c.write_transaction
def guarded_plain(
    values: dict[str, Any],
    *,
    hold: str = "",
    hold_extra: dict[str, Any] | None = None,
    quota: tuple[str, int] | None = None,
) -> StoreResult:
    """Insert a plain memory row (``values``), counting it per origin when its class is trusted at most 0.6
    (issue 15 item 9): a burst holds the window's plain memories from that origin together; ``hold`` holds
    this one alone."""
    if quota is not None:
        _consume(values["agent_id"], quota)
    agent_id, origin, t = values["agent_id"], values["origin"], values["created_at"]
    decision = GuardDecision(False)
    if class_counter(origin) is not None:
        decision = check_burst(agent_id=agent_id, origin=origin, subject=PLAIN_SUBJECT, n=1, t=t, plain=True)
    if hold and not decision.quarantine:
        decision = decision.held(hold)
    rawsql.insert(Memory, {**values, "quarantined": decision.quarantine})
    c.ensure_agent(agent_id, bump_generation=False)
    mid = values["id"]
    link_memory(agent_id=agent_id, memory_id=mid, content=values["content"])
    record_hits(decision, t, [mid])
    if not decision.quarantine:
        return StoreResult(mid, "stored")
    earlier = [i for i in decision.earlier_ids if isinstance(i, str)]
    pulled = list(
        Memory.objects.filter(agent_id=agent_id, id__in=earlier, quarantined=False, subject__isnull=True)
        .filter(BELIEVED)
        .values_list("id", "content")
    )
    Memory.objects.filter(id__in=[i for i, _ in pulled]).update(quarantined=True)
    request = open_request(
        agent_id=agent_id,
        origin=origin,
        subject=PLAIN_SUBJECT,
        key=PLAIN_SUBJECT,
        memory_ids=[i for i, _ in pulled] + [mid],
        write_ids=[],
        plain_ids=[i for i, _ in pulled] + [mid],
        snippet=(pulled[0][1] if pulled else values["content"])[:200],
        reason=decision.reason,
        t=t,
        extra=hold_extra if hold and decision.reason == hold else None,
    )
    return StoreResult(mid, "quarantined", reason=f"approval {request.id}: {decision.reason}")


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
        Memory.objects.filter(
            agent_id=fact.agent_id, subject=fact.subject, predicate=fact.predicate, value_key=fact.value_key
        )
        .filter(current_q(at))
        .only("object", "content", "metadata")
        .first()
    )
    return row is not None and (row.object or None) == (fact.object or None) and holds(row, fact.content)


def _guard_group(
    agent_id: str, origin: str, key: str, group: list[tuple[int, FactInput]], t: datetime
) -> list[tuple[int, StoreResult]]:
    """One subject key's facts of a distill call: counted together, each held alone if SPEC P5a says so."""
    decision = check_burst(agent_id=agent_id, origin=origin, subject=key, n=len(group), t=t)
    written: list[tuple[int, StoreResult, str]] = []
    for i, fact in group:
        reason = decision.reason if decision.quarantine else ""
        if not reason:
            c.lock_key(agent_id, fact.subject, fact.predicate)
            reason = low_trust_override(fact, t)
        written.append((i, apply_fact(fact, quarantine=bool(reason), t=t), reason))
    record_hits(decision, t, [r.write_id for _, r, _ in written if r.write_id])
    out: list[tuple[int, StoreResult]] = []
    held = [(i, r, why) for i, r, why in written if why]
    for i, r, why in written:
        if not why:
            out.append((i, r))
    if held:
        first = held[0][2]
        request = _quarantine_batch(
            agent_id=agent_id,
            origin=origin,
            subject=group[0][1].subject,
            key=key,
            decision=decision if decision.quarantine else decision.held(first),
            results=[r for _, r, _ in held],
            t=t,
        )
        out += [
            (i, StoreResult(r.id, "quarantined", reason=f"approval {request.id}: {why}", write_id=r.write_id))
            for i, r, why in held
        ]
    return out


@c.write_transaction
def store_facts_protected(
    *, agent_id: str, facts: Any, origin: str, session_id: str | None = None, actor: str = "system"
) -> list[StoreResult]:
    """Distilled facts: capped, de-duplicated, scanned, guarded once per subject key, then stored (SPEC P9)."""
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
    parsed_all = [_protected_fact(agent_id, raw, origin, session_id) for raw in facts]
    # Every key the call may write is locked at once, in sorted order, before its first write (as batch writes
    # do): a write holds the agent's generation and state-stamp rows until commit, so a key lock taken after one
    # could close a cycle with a one-key writer of that key (a deadlock on PostgreSQL).
    c.lock_keys(agent_id, [(p.subject, p.predicate) for p in parsed_all if isinstance(p, FactInput)])
    for i, parsed in enumerate(parsed_all):
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
        verdict = scan_write(parsed.content, parsed.subject, parsed.predicate, parsed.object)
        if verdict.blocked:
            results[i] = record_drop(
                verdict,
                agent_id=agent_id,
                actor=actor,
                content=parsed.content,
                subject=parsed.subject,
                origin=parsed.origin,
            )
            continue
        if verdict.hold_reason:  # suspicious: held alone for a person, counted by the guard like the rest
            results[i] = guarded_write(parsed, hold=verdict.hold_reason, hold_extra=verdict.hold_extra)
            continue
        accepted.setdefault(guard_subject(agent_id, parsed.subject), []).append((i, parsed))
    t = c.now()
    for key in sorted(accepted):
        for i, r in _guard_group(agent_id, origin, key, accepted[key], t):
            results[i] = r
    return [r if r is not None else StoreResult(None, "dropped", reason="internal") for r in results]
