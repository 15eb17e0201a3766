"""Job entry points: take ids, call the engine, nothing else; safe to run twice (DESIGN: Jobs).

``enqueue`` sends a job to django-q2 (default, database broker), Celery (Redis broker) or runs it inline
(``MEMDESK_TASK_BACKEND=sync``, for tests and one-off commands). ``SCHEDULES`` is the one list of periodic
jobs: ``manage.py setup_schedules`` registers it with django-q2, ``config/celery.py`` with Celery beat, and the
operations page shows it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings

log = logging.getLogger("memdesk.tasks")


@dataclass(frozen=True)
class Scheduled:
    name: str  # the django-q2 schedule's name
    job: str  # a function of this module
    minutes: int
    what: str  # for people (the operations page)


SCHEDULES = (
    Scheduled(
        "memdesk: quarantine TTL sweep",
        "quarantine_sweep",
        1,
        "expires quarantine batches past their TTL, sends due reminders, retries webhook deliveries",
    ),
    Scheduled(
        "memdesk: dream gate check",
        "dream_gate_check",
        60,
        "starts a dream run for every agent whose gate is open (24 h and 5 sessions since its last run)",
    ),
    Scheduled(
        "memdesk: review reminders",
        "review_sweep",
        60,
        "reminds once about review items past their TTL (they stay pending)",
    ),
    Scheduled(
        "memdesk: daily insights",
        "insights_daily_all",
        24 * 60,
        "for every agent: the interest snapshot with its delta, skill decay, and tiering (digests, archive)",
    ),
    Scheduled(
        "memdesk: query journal sweep",
        "insights_sweep",
        24 * 60,
        "deletes query journal rows past their retention (snapshots, gaps and feedback stay)",
    ),
)


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


def vectors_backfill(agent_id: str | None = None) -> dict[str, Any]:
    """Embed the memories that have no vector of the active embedder (idempotent, resumable; issue 17)."""
    from memory import engine

    return engine.vectors_backfill(agent_id=agent_id).as_dict()


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


def dream_execute(run_id: int) -> dict[str, Any]:
    """Execute one started dream run to the end (a run already taken, finished or abandoned is left alone)."""
    from memory import engine

    run = engine.dream_execute(run_id=int(run_id))
    return {"run_id": run.id, "status": run.status}


def dream_gate_check() -> dict[str, list[int]]:
    """Hourly: abandon runs whose worker died, then start and queue a run for every agent whose gate is open."""
    from memory import engine

    engine.dream_abandon_stale()
    started: list[int] = []
    for agent_id in engine.dream_due():
        try:
            run = engine.dream_start(agent_id=agent_id, force=False, actor="system:dream-gate")
        except (engine.GateClosed, engine.AlreadyRunning):
            continue  # the gate closed or a run began since dream_due looked
        start_run(run.id)
        started.append(run.id)
    return {"started": started}


def start_run(run_id: int) -> Any:
    """Queue ``dream_execute`` for a started run; a run whose job cannot be queued is failed (its gate stays
    open) and the error raised."""
    from memory import engine

    try:
        return enqueue("dream_execute", run_id)
    except Exception as exc:
        log.exception("could not queue dream run %s", run_id)
        engine.dream_cancel(run_id=run_id, error=f"could not queue the run: {exc}")
        raise


def review_sweep() -> dict[str, int]:
    """Remind once about review items past their TTL; they stay pending (nothing lands silently)."""
    from memory import engine

    return engine.review_sweep()


def insights_daily(agent_id: str) -> dict[str, Any]:
    """One agent's daily snapshot, skill check and tiering (SPEC B8, B6, B9)."""
    from memory.dream import insights

    return insights.daily(agent_id=agent_id)


def insights_daily_all() -> dict[str, Any]:
    """The daily insights job of every agent, each on its own (one failing does not stop the others)."""
    from memory.models import Agent

    done, failed = [], []
    for agent_id in Agent.objects.order_by("agent_id").values_list("agent_id", flat=True):
        try:
            insights_daily(agent_id)
            done.append(agent_id)
        except Exception:
            log.exception("daily insights failed for %s", agent_id)
            failed.append(agent_id)
    return {"done": done, "failed": failed}


def insights_sweep() -> dict[str, int]:
    """Delete query journal rows past retention."""
    from memory.dream import insights

    return insights.sweep()


JOBS = {
    "vectors_backfill",
    "deliver_event",
    "quarantine_sweep",
    "dream_execute",
    "dream_gate_check",
    "review_sweep",
    "insights_daily",
    "insights_daily_all",
    "insights_sweep",
}
