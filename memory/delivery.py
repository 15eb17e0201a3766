"""Outbox delivery, in the job layer (DESIGN: the engine imports nothing from jobs; events leave through the
outbox).

The engine writes an ``OutboundEvent`` row inside the transaction of the change it describes and, once that
transaction commits, sends ``memory.signals.event_committed``. This module, connected by the app's ``ready()``,
turns that into the domain signal subscribers listen to (``knowledge_quarantined`` ...) and queues the webhook
delivery when ``MEMDESK_WEBHOOK_URL`` is set. ``deliver_event`` POSTs one event (retried by the job queue and by
``redeliver``, which the periodic sweep job runs)."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from typing import Any

from django.conf import settings

from memory import engine, signals
from memory.models import OutboundEvent

log = logging.getLogger("memdesk.delivery")

WEBHOOK_MAX_ATTEMPTS = 5
REDELIVER_BATCH = 100

DOMAIN_SIGNALS = {
    "knowledge.quarantined": signals.knowledge_quarantined,
    "knowledge.quarantine_reminder": signals.knowledge_quarantine_reminder,
    "knowledge.decided": signals.knowledge_decided,
}


def on_event_committed(
    sender: Any, *, event_id: int, name: str, agent_id: str, payload: dict[str, Any], **_: Any
) -> None:
    """The engine's event committed: notify in-process subscribers, then queue the webhook delivery."""
    signal = DOMAIN_SIGNALS.get(name)
    if signal is not None:
        try:
            signal.send(
                sender=OutboundEvent,
                agent_id=agent_id,
                request_id=payload.get("request_id"),
                payload=payload,
                event_id=event_id,
            )
        except Exception:  # a receiver's bug must not break the write that already committed
            log.exception("receiver of %s failed", name)
    if getattr(settings, "MEMDESK_WEBHOOK_URL", ""):
        from memory.tasks import enqueue

        try:
            enqueue("deliver_event", event_id)
        except Exception:
            log.exception("could not queue webhook delivery of event %s", event_id)


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
    attempts = engine.outbox_attempted(event_id=event.id, ok=ok, error=error)
    if ok:
        return True
    if attempts >= WEBHOOK_MAX_ATTEMPTS:
        log.error("webhook delivery of event %s gave up after %s attempts: %s", event.id, attempts, error)
        return False
    raise RuntimeError(f"webhook delivery failed (attempt {attempts}): {error}")


def redeliver() -> int:
    """Retry undelivered events that have failed before and still have attempts left; returns how many went."""
    if not getattr(settings, "MEMDESK_WEBHOOK_URL", ""):
        return 0
    retry = OutboundEvent.objects.filter(
        delivered_at__isnull=True, attempts__gte=1, attempts__lt=WEBHOOK_MAX_ATTEMPTS
    ).values_list("id", flat=True)
    sent = 0
    for eid in list(retry[:REDELIVER_BATCH]):
        try:
            sent += deliver_event(event_id=eid)
        except RuntimeError as exc:
            log.warning("%s", exc)
    return sent
