"""Dream runs and the per-agent dream state (SPEC B1, B10): the gate, starting a run (one per agent at a time),
live progress, the per-phase report, finishing, abandoning runs whose worker died, and the agent's mode.

The loop itself (``memory.dream.loop``) decides what a run does; every row of ``dream_runs`` and ``dream_state``
is written here. A run is started ``running`` with ``phase = "queued"``; the worker that executes it claims it
(``dream_claim``: ``queued`` -> the first phase, exactly once), then reports progress (which is the heartbeat)
and each phase's report in their own small transactions, so a person can watch it while it runs. A running run
whose heartbeat is older than ``HEARTBEAT_STALE_SECS`` belongs to a worker that died: the next start marks it
``abandoned`` (each item the loop applies commits on its own, so nothing of it is half-applied).

Gate (``dream_gate``): more than ``GATE_HOURS`` since the last run AND at least ``GATE_SESSIONS`` distinct sessions
written since; ``force`` overrides it. Dry runs count as runs (they report; the gate must not reopen every hour).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q

from memory.models import Agent, DreamRun, DreamState, Memory

from . import common as c
from .types import EngineError, InvalidArgument, NotFound

GATE_HOURS = 24
GATE_SESSIONS = 5
HEARTBEAT_STALE_SECS = 300
QUEUED = "queued"
# the loop's phases in the order they run (reports are shown in this order; JSON objects keep no order on PostgreSQL)
PHASES = ("orient", "signal", "reflect", "consolidate", "prune")
MODES = (DreamState.DRY_RUN, DreamState.APPLY)
MAX_ERROR = 2000
MAX_RUNS_LISTED = 100


class AlreadyRunning(EngineError):
    """A run of this agent is in progress; one run per agent at a time."""

    code = "already_running"


class GateClosed(EngineError):
    """The dual gate is closed (too soon, or too few sessions since the last run) and ``force`` was not set."""

    code = "gate_closed"


@dataclass(frozen=True)
class DreamRunRecord:
    id: int
    agent_id: str
    status: str
    dry_run: bool
    force: bool
    actor: str
    started_at: datetime
    finished_at: datetime | None
    heartbeat_at: datetime
    phase: str
    done: int
    total: int
    phases: dict[str, Any] = field(default_factory=dict)
    llm_calls: int = 0
    llm_tokens: int = 0
    error: str = ""

    @classmethod
    def of(cls, run: DreamRun) -> DreamRunRecord:
        return cls(
            id=run.id,
            agent_id=run.agent_id,
            status=run.status,
            dry_run=run.dry_run,
            force=run.force,
            actor=run.actor,
            started_at=run.started_at,
            finished_at=run.finished_at,
            heartbeat_at=run.heartbeat_at,
            phase=run.phase,
            done=run.done,
            total=run.total,
            phases=_in_order(run.phases or {}),
            llm_calls=run.llm_calls,
            llm_tokens=run.llm_tokens,
            error=run.error,
        )

    @property
    def running(self) -> bool:
        return self.status == DreamRun.RUNNING

    @property
    def duration_s(self) -> float | None:
        end = self.finished_at or (self.heartbeat_at if self.running else None)
        return round((end - self.started_at).total_seconds(), 1) if end else None

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0


def _in_order(phases: dict[str, Any]) -> dict[str, Any]:
    known = [name for name in PHASES if name in phases]
    return {name: phases[name] for name in [*known, *sorted(set(phases) - set(known))]}


@dataclass(frozen=True)
class DreamGate:
    """``open`` and why (``reason``, a sentence), with what the gate read."""

    open: bool
    reason: str
    mode: str
    last_dream_at: datetime | None
    sessions_since: int
    hours_since: float | None
    running_id: int | None = None


@dataclass(frozen=True)
class DreamStateRecord:
    agent_id: str
    mode: str
    last_dream_at: datetime | None
    last_run_id: int | None
    updated_at: datetime | None
    updated_by: str


# --- reads -----------------------------------------------------------------------------------------------


def dream_state(*, agent_id: str) -> DreamStateRecord:
    """The agent's mode (``dry_run`` until an admin switches it) and last run."""
    agent_id = c.check_agent_id(agent_id)
    state = DreamState.objects.filter(agent_id=agent_id).first()
    if state is None:
        return DreamStateRecord(agent_id, DreamState.DRY_RUN, None, None, None, "")
    return DreamStateRecord(
        agent_id, state.mode, state.last_dream_at, state.last_run_id, state.updated_at, state.updated_by
    )


def sessions_since(agent_id: str, since: datetime | None) -> int:
    """Distinct sessions that wrote memories of the agent since ``since`` (all of them when None)."""
    qs = Memory.objects.filter(agent_id=agent_id, session_id__isnull=False).exclude(session_id="")
    if since is not None:
        qs = qs.filter(ingested_at__gt=since)
    return qs.values("session_id").distinct().count()


def dream_gate(*, agent_id: str, at: datetime | None = None) -> DreamGate:
    """Whether a scheduled run may start now (SPEC B1 dual gate)."""
    agent_id = c.check_agent_id(agent_id)
    t = at or c.now()
    state = dream_state(agent_id=agent_id)
    last = state.last_dream_at
    sessions = sessions_since(agent_id, last)
    hours = None if last is None else round((t - last).total_seconds() / 3600, 2)
    running = (
        DreamRun.objects.filter(agent_id=agent_id, status=DreamRun.RUNNING)
        .values_list("id", flat=True)
        .first()
    )

    def gate(is_open: bool, reason: str) -> DreamGate:
        return DreamGate(is_open, reason, state.mode, last, sessions, hours, running)

    if running is not None:
        return gate(False, f"run #{running} is in progress")
    if hours is not None and hours <= GATE_HOURS:
        return gate(False, f"the last run was {hours:.1f} h ago (the gate opens after {GATE_HOURS} h)")
    if sessions < GATE_SESSIONS:
        return gate(False, f"{sessions} session(s) since the last run (the gate needs {GATE_SESSIONS})")
    since = "no run yet" if hours is None else f"{hours:.1f} h since the last run"
    return gate(True, f"{since} and {sessions} sessions since")


def dream_run_get(*, agent_id: str, run_id: Any) -> DreamRunRecord:
    """One run of the agent; another agent's run is ``not_found`` like a missing one."""
    agent_id = c.check_agent_id(agent_id)
    run = DreamRun.objects.filter(id=_run_id(run_id), agent_id=agent_id).first()
    if run is None:
        raise NotFound("no such dream run", field="run_id")
    return DreamRunRecord.of(run)


def dream_runs(*, agent_id: str, limit: int = 10) -> list[DreamRunRecord]:
    """The agent's latest runs, newest first."""
    agent_id = c.check_agent_id(agent_id)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RUNS_LISTED:
        raise InvalidArgument(f"limit must be an integer from 1 to {MAX_RUNS_LISTED}", field="limit")
    runs = DreamRun.objects.filter(agent_id=agent_id).order_by("-started_at", "-id")[:limit]
    return [DreamRunRecord.of(r) for r in runs]


def _run_id(run_id: Any) -> int:
    if isinstance(run_id, bool):
        raise NotFound("no such dream run", field="run_id")
    try:
        return int(run_id)
    except (TypeError, ValueError):
        raise NotFound("no such dream run", field="run_id") from None


# --- the mode --------------------------------------------------------------------------------------------


@c.write_transaction
def dream_mode_set(*, agent_id: str, mode: str, actor: str) -> DreamStateRecord:
    """Switch the agent's dream loop between ``dry_run`` (propose only) and ``apply``; audited."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    if mode not in MODES:
        raise InvalidArgument(f"mode must be one of {', '.join(MODES)}", field="mode")
    t = c.now()
    state, _ = DreamState.objects.get_or_create(agent_id=agent_id)
    before = state.mode
    DreamState.objects.filter(agent_id=agent_id).update(mode=mode, updated_at=t, updated_by=actor)
    if before != mode:
        c.audit(
            agent_id=agent_id,
            actor=actor,
            action="dream_mode_set",
            reason=f"dream mode {before} -> {mode}",
            at=t,
            before=before,
            after=mode,
        )
    return dream_state(agent_id=agent_id)


# --- starting, claiming, progress, finishing -------------------------------------------------------------


def _stale_q(t: datetime) -> Q:
    return Q(status=DreamRun.RUNNING, heartbeat_at__lt=t - timedelta(seconds=HEARTBEAT_STALE_SECS))


@c.write_transaction
def dream_abandon_stale(*, agent_id: str | None = None) -> int:
    """Mark running runs whose heartbeat stopped (their worker died) ``abandoned``; returns how many."""
    t = c.now()
    qs = DreamRun.objects.filter(_stale_q(t))
    if agent_id is not None:
        qs = qs.filter(agent_id=c.check_agent_id(agent_id))
    return qs.update(
        status=DreamRun.ABANDONED,
        finished_at=t,
        error="abandoned: no heartbeat for more than "
        f"{HEARTBEAT_STALE_SECS} s (the worker stopped); items it applied are complete, the rest were not started",
    )


@c.write_transaction
def dream_start(
    *, agent_id: str, force: bool = False, dry_run: bool | None = None, actor: str = "system"
) -> DreamRunRecord:
    """Start a run (``running``, ``phase = "queued"``): refused ``gate_closed`` unless the gate is open or
    ``force``; refused ``already_running`` while another run of the agent is in progress. ``dry_run=None`` takes
    the agent's mode."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    if not isinstance(force, bool):
        raise InvalidArgument("force must be true or false", field="force")
    if dry_run is not None and not isinstance(dry_run, bool):
        raise InvalidArgument("dry_run must be true, false or null", field="dry_run")
    t = c.now()
    DreamRun.objects.filter(_stale_q(t), agent_id=agent_id).update(
        status=DreamRun.ABANDONED, finished_at=t, error="abandoned: the worker stopped sending heartbeats"
    )
    running = DreamRun.objects.filter(agent_id=agent_id, status=DreamRun.RUNNING).values_list("id", flat=True)
    if running.exists():
        raise _already(running.first())
    if not force:
        gate = dream_gate(agent_id=agent_id, at=t)
        if not gate.open:
            raise GateClosed(f"the dream gate is closed: {gate.reason}", field="force")
    dry = (dream_state(agent_id=agent_id).mode == DreamState.DRY_RUN) if dry_run is None else dry_run
    try:
        with transaction.atomic():
            run = DreamRun.objects.create(
                agent_id=agent_id,
                status=DreamRun.RUNNING,
                dry_run=dry,
                force=force,
                actor=actor,
                started_at=t,
                heartbeat_at=t,
                phase=QUEUED,
            )
    except IntegrityError:  # a concurrent start won the one running slot (uniq_dream_running)
        raise _already(None) from None
    return DreamRunRecord.of(run)


def _already(run_id: int | None) -> AlreadyRunning:
    which = f"run #{run_id}" if run_id else "another run"
    return AlreadyRunning(
        f"{which} of this agent is in progress; wait for it to finish", field="agent_id", run_id=run_id
    )


@c.write_transaction
def dream_cancel(*, run_id: int, error: str) -> bool:
    """Fail a run that never started (still queued: its job could not be queued); the gate clock stays."""
    return bool(
        DreamRun.objects.filter(id=_run_id(run_id), status=DreamRun.RUNNING, phase=QUEUED).update(
            status=DreamRun.FAILED, finished_at=c.now(), phase="", error=(error or "cancelled")[:MAX_ERROR]
        )
    )


def dream_due(*, at: datetime | None = None) -> list[str]:
    """Agents whose gate is open now (the hourly gate check starts a run for each)."""
    t = at or c.now()
    agents = sorted(set(Agent.objects.values_list("agent_id", flat=True)))
    return [a for a in agents if dream_gate(agent_id=a, at=t).open]


@c.write_transaction
def dream_claim(*, run_id: int, first_phase: str) -> DreamRunRecord | None:
    """The executing worker takes a queued run (exactly once); None when it is not queued any more (taken by
    another worker, finished, or abandoned)."""
    t = c.now()
    won = DreamRun.objects.filter(id=_run_id(run_id), status=DreamRun.RUNNING, phase=QUEUED).update(
        phase=first_phase, heartbeat_at=t
    )
    return DreamRunRecord.of(DreamRun.objects.get(id=run_id)) if won else None


@c.write_transaction
def dream_progress(
    *, run_id: int, phase: str | None = None, done: int | None = None, total: int | None = None
) -> bool:
    """Record live progress (and the heartbeat); False when the run is no longer running."""
    values: dict[str, Any] = {"heartbeat_at": c.now()}
    if phase is not None:
        values["phase"] = phase[:32]
    if done is not None:
        values["done"] = max(0, int(done))
    if total is not None:
        values["total"] = max(0, int(total))
    return bool(DreamRun.objects.filter(id=run_id, status=DreamRun.RUNNING).update(**values))


@c.write_transaction
def dream_phase_report(
    *, run_id: int, phase: str, report: dict[str, Any], llm_calls: int, llm_tokens: int
) -> bool:
    """Store one phase's report and the run's LLM totals so far; False when the run is no longer running."""
    run = DreamRun.objects.filter(id=run_id, status=DreamRun.RUNNING).first()
    if run is None:
        return False
    phases = dict(run.phases or {})
    phases[phase] = report
    DreamRun.objects.filter(id=run_id, status=DreamRun.RUNNING).update(
        phases=phases, llm_calls=llm_calls, llm_tokens=llm_tokens, heartbeat_at=c.now()
    )
    return True


@c.write_transaction
def dream_finish(*, run_id: int, error: str = "") -> DreamRunRecord:
    """Close a running run (``done``, or ``failed`` with ``error``) and move the agent's gate clock. An apply
    run is audited; a dry run writes nothing but its report."""
    t = c.now()
    run = DreamRun.objects.get(id=run_id)
    status = DreamRun.FAILED if error else DreamRun.DONE
    if not DreamRun.objects.filter(id=run_id, status=DreamRun.RUNNING).update(
        status=status, finished_at=t, heartbeat_at=t, phase="", error=error[:MAX_ERROR]
    ):
        return DreamRunRecord.of(DreamRun.objects.get(id=run_id))
    DreamState.objects.get_or_create(agent_id=run.agent_id)
    DreamState.objects.filter(agent_id=run.agent_id).update(last_dream_at=t, last_run_id=run.id)
    run.refresh_from_db()
    if not run.dry_run:
        counts = {name: (p or {}).get("counts", {}) for name, p in (run.phases or {}).items()}
        c.audit(
            agent_id=run.agent_id,
            actor=run.actor,
            action="dream_run",
            reason=f"dream run #{run.id} {status}",
            at=t,
            run_id=run.id,
            counts=counts,
            error=error[:MAX_ERROR] or None,
        )
    return DreamRunRecord.of(run)
