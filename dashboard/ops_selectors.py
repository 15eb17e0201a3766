"""Reads of the operations page (SPEC D8): scheduled jobs and their last runs, review items by status, the
LLM endpoint and the predicate registry in force. Each is a fixed number of queries."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Count

from memory.models import ReviewItem
from memory.tasks import SCHEDULES

LAST_RUNS = 3


@dataclass(frozen=True)
class LastRun:
    started: datetime | None
    stopped: datetime | None
    success: bool


@dataclass(frozen=True)
class JobRow:
    name: str
    job: str
    minutes: int
    what: str
    registered: bool = False
    next_run: datetime | None = None
    last_runs: list[LastRun] = field(default_factory=list)


def task_backend() -> str:
    return getattr(settings, "TASK_BACKEND", "q2")


def scheduled_jobs() -> list[JobRow]:
    """Every periodic job with, on django-q2, its schedule row and its last runs (one query for the schedules,
    one per job)."""
    if task_backend() != "q2":
        return [JobRow(s.name, s.job, s.minutes, s.what) for s in SCHEDULES]
    from django_q.models import Schedule, Task

    funcs = [f"memory.tasks.{s.job}" for s in SCHEDULES]
    schedules = {row.name: row for row in Schedule.objects.filter(name__in=[s.name for s in SCHEDULES])}
    runs = {
        func: [
            LastRun(started, stopped, bool(success))
            for started, stopped, success in Task.objects.filter(func=func)
            .order_by("-started")
            .values_list("started", "stopped", "success")[:LAST_RUNS]
        ]
        for func in funcs
    }
    out = []
    for s in SCHEDULES:
        row = schedules.get(s.name)
        out.append(
            JobRow(
                s.name,
                s.job,
                s.minutes,
                s.what,
                registered=row is not None,
                next_run=row.next_run if row is not None else None,
                last_runs=runs[f"memory.tasks.{s.job}"],
            )
        )
    return out


def review_counts(agent_id: str) -> dict[str, Any]:
    """The agent's review items: how many per status, and the pending ones per kind (one query)."""
    by_status: dict[str, int] = {}
    pending: dict[str, int] = {}
    rows = ReviewItem.objects.filter(agent_id=agent_id).values_list("status", "kind").annotate(n=Count("id"))
    for status, kind, n in rows.order_by():
        by_status[status] = by_status.get(status, 0) + n
        if status == ReviewItem.PENDING:
            pending[kind] = pending.get(kind, 0) + n
    return {"by_status": dict(sorted(by_status.items())), "pending": dict(sorted(pending.items()))}


def registry_status() -> dict[str, Any]:
    from memory.dream.registry import active_registry

    load = active_registry()
    return {"predicates": len(load.registry), "override": load.override, "error": load.error}


@dataclass(frozen=True)
class ReassignPreview:
    rows: int
    keys: int
    subject: str
    to_agent: str


def reassign_preview(agent_id: str, subject: str, to_agent: str) -> ReassignPreview:
    """How many rows and keys a reassignment would move (two queries)."""
    from memory.models import Memory

    rows = Memory.objects.filter(agent_id=agent_id)
    if subject:
        rows = rows.filter(subject=subject)
    keys = rows.filter(subject__isnull=False).values("subject", "predicate").distinct().count()
    return ReassignPreview(rows.count(), keys, subject, to_agent)


def admin_targets(user: Any, agent_id: str) -> list[Any]:
    """The other agents ``user`` administers: where a reassignment may send rows (one or two queries)."""
    from memory.models import Membership, Role
    from web.access import visible_agents

    agents = visible_agents(user).exclude(agent_id=agent_id)
    if not user.is_superuser:
        teams = Membership.objects.filter(user=user, role=Role.ADMIN).values("team_id")
        agents = agents.filter(team_id__in=teams)
    return list(agents)


def protection_settings() -> dict[str, Any]:
    """The burst guard and the injection scan as configured now (``memdesk.toml``; no query)."""
    from memory.config import guard_settings, injection_settings

    return {"guard": guard_settings(), "injection": injection_settings()}
