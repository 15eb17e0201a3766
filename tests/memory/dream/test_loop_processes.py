"""SPEC B1/B10 across processes: two starts at once (exactly one runs), and a worker killed with SIGKILL in the
middle of applying an item: its progress was readable meanwhile, the item it was applying left nothing behind,
and the next run abandons the dead one and completes."""

from __future__ import annotations

import multiprocessing
import os
import queue as queue_mod
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, connections

from memory import engine
from memory.models import DreamRun
from tests.memory.dream import dream_workers as workers
from tests.memory.dream.world import A

REPO = Path(__file__).resolve().parents[3]
TIMEOUT = 120


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_starts_one_is_refused_already_running():
    assert connection.vendor == "postgresql"
    barrier = threading.Barrier(2)
    results: list[tuple[str, Any]] = []
    lock = threading.Lock()

    def start(actor: str) -> None:
        try:
            barrier.wait(timeout=30)
            run = engine.dream_start(agent_id=A, force=True, actor=actor)
            outcome: tuple[str, Any] = ("started", run.id)
        except engine.EngineError as exc:
            outcome = (exc.code, None)
        finally:
            connections.close_all()
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=start, args=(f"user:{n}",)) for n in ("ada", "bea")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(code for code, _ in results) == ["already_running", "started"]
    assert DreamRun.objects.filter(agent_id=A, status="running").count() == 1


@pytest.fixture
def process_db(tmp_path, monkeypatch) -> str:
    """A database the spawned children share: PostgreSQL's test database, or a migrated SQLite file."""
    if connection.vendor == "postgresql":
        return connection.settings_dict["NAME"]
    db_path = tmp_path / "dream.sqlite3"
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("MEMDESK_SQLITE_PATH", str(db_path))
    monkeypatch.setenv("MEMDESK_VAR_DIR", str(tmp_path))
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=REPO,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert migrate.returncode == 0, migrate.stderr
    return str(db_path)


def spawn(target: Any, *args: Any) -> tuple[Any, Any]:
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, results), name=target.__name__)
    proc.start()
    return proc, results


def receive(proc: Any, results: Any) -> tuple[str, Any]:
    """The child's next report; fails with its traceback, or when it dies or hangs without one."""
    for _ in range(TIMEOUT):
        try:
            kind, payload = results.get(timeout=1.0)
        except queue_mod.Empty:
            if proc.exitcode not in (None, 0):
                pytest.fail(f"{proc.name} died with exit code {proc.exitcode} before reporting")
            continue
        assert kind != "error", f"{proc.name} raised:\n{payload}"
        return kind, payload
    pytest.fail(f"{proc.name} did not report within {TIMEOUT}s")


def run_child(target: Any, *args: Any) -> Any:
    proc, results = spawn(target, *args)
    try:
        return receive(proc, results)[1]
    finally:
        proc.join(timeout=30)


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_item_leaves_nothing_half_applied_and_the_next_run_completes(
    process_db, monkeypatch
):
    monkeypatch.setenv("MEMDESK_CONFIG", str(Path(process_db).parent / "absent.toml"))
    connections.close_all()  # never hand an open connection to a child
    ids = run_child(workers.seed, process_db)

    worker, reports = spawn(workers.hang_mid_apply, process_db)
    try:
        kind, hung = receive(worker, reports)
        assert kind == "hung"
        # while the worker sits inside the item's transaction, another process reads the run's progress
        seen = run_child(workers.probe, process_db)
    finally:
        worker.kill()  # SIGKILL: no cleanup, no rollback by the worker itself
        worker.join(timeout=30)
    assert worker.exitcode == -9
    assert (seen["status"], seen["phase"]) == ("running", "consolidate")
    assert seen["phases"] == ["orient", "reflect", "signal"]
    assert seen["total"] == 5 and 1 <= seen["done"] < seen["total"]
    assert seen["gate"] == f"run #{seen['id']} is in progress"
    assert {hung["old_id"], hung["new_id"]} == {ids["ana_old"], ids["ana_new"]}

    after = run_child(workers.resume, process_db, ids, hung)
    # the item being applied when the worker died left nothing: no item, the rows as they were
    assert after["left"]["hung_items"] == 0 and after["left"]["ana_now"] == ids["ana_old"]
    # the dead run is abandoned, the next one completes and applies the item exactly once
    assert after["runs"] == ["abandoned", "done"] and after["next_status"] == "done"
    assert all(errors == [] for errors in after["next_errors"].values()), after["next_errors"]
    assert after["hung_items_after"] == ["applied"]
    assert all(n == 1 for _, n in after["items_per_pair"])
    assert after["ana_now"] == ids["ana_new"] and after["cf_now"] == ids["cf_old"]
