"""The public write entry points (SPEC T1, P4, P5): validate, run the guard when the write is agent-facing
(``protect``), then hand the write to the timeline (``temporal``) or, for a plain memory, insert its row.

This module sits above ``temporal`` and ``guard``: the guard builds on the timeline, and neither imports this
module, so the engine's write path has no import cycle."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memory.models import Memory

from . import common as c
from . import rawsql, vectors
from .graph.links import link_memory
from .guard.protected import guarded_plain, guarded_write
from .guard.scan import ScanVerdict, record_drop, scan_write
from .provenance import check_origin, effective_trust
from .temporal import FactInput, check_fact, write_fact
from .tokens import check_quota, consume_quota
from .types import InvalidArgument, InvalidTime, StoreResult


def store(
    *,
    agent_id: str,
    content: str,
    layer: str = "episodic",
    tags: Any = (),
    importance: float = 5.0,
    source_event: str = "",
    session_id: str | None = None,
    origin: str | None = None,
    origin_trust: float | None = None,
    metadata: dict[str, Any] | None = None,
    valid_until: datetime | str | None = None,
    protect: bool = False,
    quota: tuple[str, int] | None = None,
    actor: str = "system",
) -> StoreResult:
    """A plain timestamped memory (no subject/predicate, so no supersession). ``valid_until`` (optional, in
    the future) is when it stops being current, e.g. a TTL.

    ``protect`` (agent-facing writes): the injection scan may drop it or hold it (an unfinished scan), and
    low-trust origins are counted by the guard (SPEC P4, P5). ``quota`` (kind, limit): one use of this daily
    quota is counted in the write's transaction (``rate_limited`` past it; checked before the scan too)."""
    agent_id = c.check_agent_id(agent_id)
    content = c.check_content(content)
    layer = c.check_layer(layer)
    tag_list = c.check_tags(tags)
    importance = c.check_number(importance, field="importance", low=0, high=10)
    source_event = c.check_source_event(source_event)
    session_id = c.check_session(session_id)
    origin = check_origin(origin)
    actor = c.check_actor(actor)
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidArgument("metadata must be an object", field="metadata")
    trust, _ = effective_trust(agent_id=agent_id, origin=origin, requested=origin_trust)
    until = c.parse_time(valid_until, field="valid_until")
    if until is not None and until <= c.now():
        raise InvalidTime("valid_until must be in the future", field="valid_until")
    if quota is not None:
        check_quota(agent_id=agent_id, kind=quota[0], limit=quota[1])
    verdict = scan_write(content) if protect else None  # outside the write lock: no database work
    t = c.now()
    values = dict(
        id=c.new_memory_id(),
        agent_id=agent_id,
        content=content,
        timestamp=t,
        tags=tag_list,
        created_at=t,
        layer=layer,
        importance=importance,
        source_event=source_event,
        valid_from=t,
        valid_until=until,
        metadata=metadata or {},
        origin=origin,
        origin_trust=trust,
        ingested_at=t,
        session_id=session_id,
    )
    # embedded outside the write lock, inserted in the write's transaction (one commit for row and vector)
    pending = vectors.embed_for_write(content) if not (verdict and verdict.blocked) else None
    return _store_plain(values, verdict=verdict, protect=protect, quota=quota, actor=actor, vector=pending)


def _with_vector(result: StoreResult, agent_id: str, content: str) -> StoreResult:
    """After the write committed: embed the stored row (SPEC R2 vectors); a failure leaves it to the backfill."""
    if result.id and result.outcome in ("stored", "quarantined"):
        vectors.write_vectors(agent_id=agent_id, items=[(result.id, content)])
    return result


@c.write_transaction
def _store_plain(
    values: dict[str, Any],
    *,
    verdict: ScanVerdict | None,
    protect: bool,
    quota: tuple[str, int] | None,
    actor: str,
    vector: vectors.Pending | None = None,
) -> StoreResult:
    if verdict is not None and verdict.blocked:
        if quota is not None:
            consume_quota(agent_id=values["agent_id"], kind=quota[0], limit=quota[1])
        return record_drop(
            verdict,
            agent_id=values["agent_id"],
            actor=actor,
            content=values["content"],
            subject=None,
            origin=values["origin"],
        )
    if protect:
        result = guarded_plain(
            values,
            hold=verdict.hold_reason if verdict else "",
            hold_extra=verdict.hold_extra if verdict else None,
            quota=quota,
        )
        if result.id == values["id"] and result.outcome in ("stored", "quarantined"):
            vectors.insert_pending(values["agent_id"], values["id"], vector)
        return result
    if quota is not None:
        consume_quota(agent_id=values["agent_id"], kind=quota[0], limit=quota[1])
    rawsql.insert(Memory, values)
    c.ensure_agent(values["agent_id"], bump_generation=False)
    link_memory(agent_id=values["agent_id"], memory_id=values["id"], content=values["content"])
    vectors.insert_pending(values["agent_id"], values["id"], vector)
    return StoreResult(values["id"], "stored")


def store_temporal(
    *,
    agent_id: str,
    content: str,
    subject: str,
    predicate: str,
    object: str | None = None,
    valid_from: datetime | str | None = None,
    valid_until: datetime | str | None = None,
    confidence: float = 1.0,
    origin: str | None = None,
    origin_trust: float | None = None,
    derived_from: Any = (),
    source_event: str = "",
    session_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    layer: str = "semantic",
    importance: float = 5.0,
    tags: Any = (),
    protect: bool = False,
    quota: tuple[str, int] | None = None,
    actor: str = "system",
) -> StoreResult:
    """Write a fact: supersede, insert a historical segment, or reaffirm (SPEC T1–T5).

    ``protect`` (agent-facing writes): the injection scan may drop it or hold it, the burst guard may
    quarantine it and the trust gate may hold it (SPEC P4, P5, P5a). ``quota`` as for ``store``."""
    actor = c.check_actor(actor)
    fact = check_fact(
        agent_id=agent_id,
        content=content,
        subject=subject,
        predicate=predicate,
        object=object,
        valid_from=valid_from,
        valid_until=valid_until,
        confidence=confidence,
        origin=origin,
        origin_trust=origin_trust,
        derived_from=derived_from,
        source_event=source_event,
        session_id=session_id,
        metadata=metadata,
        layer=layer,
        importance=importance,
        tags=tags,
    )
    if quota is not None:
        check_quota(agent_id=fact.agent_id, kind=quota[0], limit=quota[1])
    if not protect:
        result = _counted(fact, quota) if quota is not None else write_fact(fact)
        return _with_vector(result, fact.agent_id, fact.content)
    verdict = scan_write(fact.content, fact.subject, fact.predicate, fact.object)
    if verdict.blocked:
        return _drop(fact, verdict, quota=quota, actor=actor)
    result = guarded_write(fact, hold=verdict.hold_reason, hold_extra=verdict.hold_extra, quota=quota)
    return _with_vector(result, fact.agent_id, fact.content)


@c.write_transaction
def _counted(fact: FactInput, quota: tuple[str, int]) -> StoreResult:
    consume_quota(agent_id=fact.agent_id, kind=quota[0], limit=quota[1])
    return write_fact(fact)


@c.write_transaction
def _drop(fact: FactInput, verdict: ScanVerdict, *, quota: tuple[str, int] | None, actor: str) -> StoreResult:
    if quota is not None:
        consume_quota(agent_id=fact.agent_id, kind=quota[0], limit=quota[1])
    return record_drop(
        verdict,
        agent_id=fact.agent_id,
        actor=actor,
        content=fact.content,
        subject=fact.subject,
        origin=fact.origin,
    )
