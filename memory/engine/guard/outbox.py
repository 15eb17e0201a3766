"""The outbox: an engine event is a row written in the transaction of the change it describes. After that
transaction commits the engine sends ``memory.signals.event_committed``; the job layer (``memory.delivery``)
delivers it (domain signals, the webhook with retries). The engine imports nothing from the job layer."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from memory import signals
from memory.models import OutboundEvent

from .. import common as c

log = logging.getLogger("memdesk.guard")


def emit(name: str, agent_id: str, payload: dict[str, Any]) -> int:
    """Record the event in the outbox; announce it once the surrounding transaction commits."""
    event = OutboundEvent.objects.create(name=name, agent_id=agent_id, payload=payload, created_at=c.now())

    def committed() -> None:
        for receiver, result in signals.event_committed.send_robust(
            sender=OutboundEvent, event_id=event.id, name=name, agent_id=agent_id, payload=payload
        ):
            if isinstance(result, Exception):
                log.error("receiver %r of event %s failed: %s", receiver, event.id, result)

    transaction.on_commit(committed)
    return int(event.id)


def outbox_attempted(*, event_id: int, ok: bool, error: str = "") -> int:
    """Record one delivery attempt of an event (the job layer delivers; the engine keeps the outbox's rows).
    Returns the number of attempts so far."""
    event = OutboundEvent.objects.filter(id=event_id).first()
    if event is None:
        return 0
    attempts = event.attempts + 1
    OutboundEvent.objects.filter(id=event_id).update(
        attempts=attempts, last_error="" if ok else str(error)[:500], delivered_at=c.now() if ok else None
    )
    return attempts
