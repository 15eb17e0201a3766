"""Job entry points: take ids, call the engine, nothing else; safe to run twice (DESIGN: Jobs).

``enqueue`` sends a job to django-q2 (default, database broker), Celery (Redis broker) or runs it inline
(``MEMDESK_TASK_BACKEND=sync``, for tests and one-off commands).
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings

log = logging.getLogger("memdesk.tasks")


def enqueue(name: str, *args: Any) -> Any:
    """Run ``memory.tasks.<name>(*args)`` in the background according to MEMDESK_TASK_BACKEND; returns the
    backend's handle (a Celery AsyncResult, a django-q2 task id, or the result when run inline)."""
    if name not in JOBS:
        raise ValueError(f"unknown job {name!r}")
    backend = getattr(settings, "TASK_BACKEND", "q2")
    if backend == "sync":
        return globals()[name](*args)
    if backend == "celery":
        from config.celery import app

        return app.send_task(f"memory.tasks.{name}", args=list(args))
    from django_q.tasks import async_task

    return async_task(f"memory.tasks.{name}", *args)


def deliver_event(event_id: int) -> bool:
    """POST one outbound event to the webhook URL; retried with backoff until delivered or out of attempts."""
    from memory import delivery

    return delivery.deliver_event(event_id=event_id)


def quarantine_sweep() -> dict[str, int]:
    """Expire quarantine approvals past their TTL (rejected by system:ttl), send due reminders, and retry
    undelivered webhook events."""
    from memory import delivery, engine

    out = engine.quarantine_sweep(actor="system:ttl")
    delivery.redeliver()
    return out


JOBS = {"deliver_event", "quarantine_sweep"}
