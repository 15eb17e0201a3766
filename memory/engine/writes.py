"""The public write entry points (SPEC T1, P4, P5): validate, run the guard when the write is agent-facing
(``protect``), then hand the write to the timeline (``temporal``) or, for a plain memory, insert its row.

This module sits above ``temporal`` and ``guard``: the guard builds on the timeline, and neither imports this
module, so the engine's write path has no import cycle."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memory.models import Memory

from . import common as c
from . import rawsql
from .guard import guarded_write, hold_fact, scan_write
from .provenance import check_origin, effective_trust
from .temporal import check_fact, write_fact
from .types import InvalidArgument, InvalidTime, StoreResult


@c.write_transaction
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
    actor: str = "system",
) -> StoreResult:
    """A plain timestamped memory (no subject/predicate, so no supersession). ``valid_until`` (optional, in
    the future) is when it stops being current, e.g. a TTL."""
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
    if protect:  # agent-facing: the injection scan may drop it or hold it for a person (SPEC P4)
        scan = scan_write(
            agent_id=agent_id,
            actor=actor,
            content=content,
            subject=None,
            predicate=None,
            obj=None,
            origin=origin,
        )
        if scan.dropped is not None:
            return scan.dropped
    t = c.now()
    until = c.parse_time(valid_until, field="valid_until")
    if until is not None and until <= t:
        raise InvalidTime("valid_until must be in the future", field="valid_until")
    mid = c.new_memory_id()
    rawsql.insert(
        Memory,
        dict(
            id=mid,
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
        ),
    )
    c.ensure_agent(agent_id, bump_generation=False)
    return StoreResult(mid, "stored")


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
    actor: str = "system",
) -> StoreResult:
    """Write a fact: supersede, insert a historical segment, or reaffirm (SPEC T1–T5).

    ``protect`` (agent-facing writes): the injection scan may drop it and the burst guard may quarantine it
    (SPEC P4, P5)."""
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
    if protect:
        scan = scan_write(
            agent_id=fact.agent_id,
            actor=actor,
            content=fact.content,
            subject=fact.subject,
            predicate=fact.predicate,
            obj=fact.object,
            origin=fact.origin,
        )
        if scan.dropped is not None:
            return scan.dropped
        if scan.hold is not None:
            return hold_fact(fact, injection=scan.hold)
    return guarded_write(fact) if protect else write_fact(fact)
