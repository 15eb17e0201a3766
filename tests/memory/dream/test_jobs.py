"""SPEC B10: the dream jobs and schedules - the hourly gate check, one run's execution (inline, and through a real
Celery worker over Redis), review reminders, the schedule registered with django-q2 and Celery beat."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
import time_machine
from django.core.management import call_command
from django_q.models import Schedule

from memory import engine, tasks
from memory.models import DreamRun, ReviewItem
from tests.memory.dream import world as w
from tests.memory.dream.world import NOW, A

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _inline(settings, tmp_path, monkeypatch):
    settings.TASK_BACKEND = "sync"
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))


def sessions(agent_id: str, n: int) -> None:
    with time_machine.travel(NOW - timedelta(days=1), tick=False):
        for k in range(n):
            w.note(f"question {k} about invoices", agent_id=agent_id, session_id=f"{agent_id}-{k}")


def test_the_schedule_is_one_list_for_django_q2_and_celery_beat():
    out = io.StringIO()
    call_command("setup_schedules", stdout=out)
    call_command("setup_schedules", stdout=out)  # idempotent
    rows = {s.name: (s.func, s.minutes, s.repeats) for s in Schedule.objects.all()}
    assert rows == {
        "memdesk: quarantine TTL sweep": ("memory.tasks.quarantine_sweep", 1, -1),
        "memdesk: dream gate check": ("memory.tasks.dream_gate_check", 60, -1),
        "memdesk: review reminders": ("memory.tasks.review_sweep", 60, -1),
        "memdesk: daily insights": ("memory.tasks.insights_daily_all", 1440, -1),
        "memdesk: query journal sweep": ("memory.tasks.insights_sweep", 1440, -1),
    }
    from config.celery import app

    beat = {entry["task"]: entry["schedule"] for entry in app.conf.beat_schedule.values()}
    assert beat == {
        "memory.tasks.quarantine_sweep": 60.0,
        "memory.tasks.dream_gate_check": 3600.0,
        "memory.tasks.review_sweep": 3600.0,
        "memory.tasks.insights_daily_all": 86400.0,
        "memory.tasks.insights_sweep": 86400.0,
    }
    assert {s.job for s in tasks.SCHEDULES} <= tasks.JOBS


def test_the_gate_check_starts_a_run_for_each_agent_whose_gate_is_open():
    sessions(A, 5)
    sessions("dream-quiet", 2)
    with time_machine.travel(NOW, tick=False):
        started = tasks.dream_gate_check()["started"]
        [run] = DreamRun.objects.all()
        assert started == [run.id] and run.agent_id == A
        assert (run.status, run.actor, run.force, run.dry_run) == ("done", "system:dream-gate", False, True)
        assert tasks.dream_gate_check() == {"started": []}  # the run closed the gate
    with time_machine.travel(NOW + timedelta(hours=25), tick=False):
        assert tasks.dream_gate_check() == {"started": []}  # a day later, but no new sessions


def test_the_gate_check_abandons_a_dead_run_first():
    sessions(A, 5)
    with time_machine.travel(NOW, tick=False):
        dead = engine.dream_start(agent_id=A, force=True)
    with time_machine.travel(NOW + timedelta(seconds=engine.HEARTBEAT_STALE_SECS + 1), tick=False):
        [started] = tasks.dream_gate_check()["started"]
    assert DreamRun.objects.get(id=dead.id).status == "abandoned"
    assert DreamRun.objects.get(id=started).status == "done"


def test_executing_a_run_is_safe_twice():
    w.build()
    with time_machine.travel(NOW, tick=False):
        run = engine.dream_start(agent_id=A, force=True)
        first = tasks.dream_execute(run.id)
        items = ReviewItem.objects.count()
        assert tasks.dream_execute(run.id) == first == {"run_id": run.id, "status": "done"}
    assert ReviewItem.objects.count() == items


def test_a_run_whose_job_cannot_be_queued_fails_and_the_gate_stays_open(monkeypatch):
    sessions(A, 5)

    def broken(name, *args):
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks, "enqueue", broken)
    with time_machine.travel(NOW, tick=False), pytest.raises(ConnectionError):
        tasks.dream_gate_check()
    run = DreamRun.objects.get()
    assert run.status == "failed" and "broker down" in run.error
    assert engine.dream_gate(agent_id=A, at=NOW).open


def test_review_reminders_are_a_job():
    w.build()
    engine.dream_mode_set(agent_id=A, mode="apply", actor="user:ada")
    with time_machine.travel(NOW, tick=False):
        engine.dream_run(agent_id=A, force=True)
    pending = ReviewItem.objects.filter(status="pending").count()
    assert pending >= 2
    with time_machine.travel(NOW + timedelta(days=engine.TTL_DAYS, minutes=1), tick=False):
        assert tasks.review_sweep() == {"reminded": pending}
        assert tasks.review_sweep() == {"reminded": 0}
    assert ReviewItem.objects.filter(status="pending").count() == pending  # reminded, never decided


def test_the_daily_insights_job_runs_every_agent_and_one_failure_stops_none(db, monkeypatch):
    from memory import tasks
    from memory.dream import insights
    from memory.models import Agent

    Agent.objects.create(agent_id="daily-a")
    Agent.objects.create(agent_id="daily-b")
    seen = []

    def fake_daily(*, agent_id, **kw):
        seen.append(agent_id)
        if agent_id == "daily-a":
            raise RuntimeError("boom")
        return {}

    monkeypatch.setattr(insights, "daily", fake_daily)
    out = tasks.insights_daily_all()
    assert seen == ["daily-a", "daily-b"] and out == {"done": ["daily-b"], "failed": ["daily-a"]}
