"""Concurrent writers on one agent's keys (SPEC T2, T3–T5, M2; DESIGN "Concurrency").

Real OS processes (multiprocessing, "spawn") write through ``engine.store_temporal`` at the same time on the
same keys; afterwards the stored rows must satisfy every invariant and agree with the reference model
(``timeline.value_at``) at many world-time points. PostgreSQL: 8 writers against the pytest-django test
database (per-key advisory locks). SQLite: 4 writers against a temporary WAL file (IMMEDIATE transactions
and the busy timeout must absorb all contention: no "database is locked" may escape).
"""

from __future__ import annotations

import multiprocessing
import os
import queue as queue_mod
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, connections

from memory.models import FactWrite, Memory
from tests.memory import concurrency_workers as workers
from tests.memory.conftest import A

REPO = Path(__file__).resolve().parents[2]
KEYS = [(f"user:{i}", "favourite_colour" if i % 2 else "lives_in") for i in range(10)]
TIMEOUT = 300


def run_writers(*, db_name: str, processes: int, per_process: int, seed: int) -> list[dict[str, Any]]:
    """Start ``processes`` writers together; return every result, or fail with the children's tracebacks."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(processes)
    results_q = ctx.Queue()
    connections.close_all()  # never hand an open connection to a child
    procs = [
        ctx.Process(
            target=workers.writer,
            args=(db_name, A, w, per_process, KEYS, seed, barrier, results_q),
            name=f"writer-{w}",
        )
        for w in range(processes)
    ]
    for p in procs:
        p.start()
    reports = collect(results_q, procs, processes)
    errors = [f"writer {w}:\n{payload}" for kind, w, payload in reports if kind == "error"]
    assert not errors, "a writer raised:\n" + "\n".join(errors)
    results = [r for _kind, _w, payload in reports for r in payload]
    assert len(results) == processes * per_process
    return results


def collect(results_q: Any, procs: list[Any], expected: int) -> list[tuple[str, int, Any]]:
    """Read one report per child (before joining, so a full pipe cannot deadlock), then reap them."""
    reports: list[tuple[str, int, Any]] = []
    deadline = time.monotonic() + TIMEOUT
    try:
        while len(reports) < expected:
            try:
                reports.append(results_q.get(timeout=1.0))
            except queue_mod.Empty:
                dead = [p for p in procs if p.exitcode not in (None, 0)]
                if dead:
                    pytest.fail(f"{dead[0].name} died with exit code {dead[0].exitcode} before reporting")
                if time.monotonic() > deadline:
                    pytest.fail(f"only {len(reports)} of {expected} children reported within {TIMEOUT}s")
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
                p.join()
    return reports


def assert_consistent(problems: list[str]) -> None:
    assert not problems, f"{len(problems)} problems, first ones:\n" + "\n".join(problems[:25])


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_on_postgres_keep_every_invariant():
    assert connection.vendor == "postgresql"
    db_name = connection.settings_dict["NAME"]
    processes, per_process = 8, 200

    results = run_writers(db_name=db_name, processes=processes, per_process=per_process, seed=11)

    assert FactWrite.objects.filter(agent_id=A).count() == processes * per_process
    outcomes = {r["outcome"] for r in results}
    assert outcomes == {"stored", "reaffirmed"}, outcomes  # both paths really raced
    stored = sum(r["outcome"] == "stored" for r in results)
    assert FactWrite.objects.filter(agent_id=A, is_reaffirm=False).count() == stored
    assert Memory.objects.filter(agent_id=A).count() >= stored
    assert_consistent(workers.verify(agent_id=A, keys=KEYS, results=results))


def test_concurrent_writers_on_sqlite_file_never_leak_database_is_locked(tmp_path, monkeypatch):
    db_path = tmp_path / "concurrency.sqlite3"
    monkeypatch.delenv("DATABASE_URL", raising=False)  # this one is SQLite even in the PostgreSQL run
    monkeypatch.setenv("MEMDESK_SQLITE_PATH", str(db_path))
    monkeypatch.setenv("MEMDESK_VAR_DIR", str(tmp_path))
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "config.settings")
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=REPO,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert migrate.returncode == 0, migrate.stderr
    processes, per_process = 4, 200

    results = run_writers(db_name=str(db_path), processes=processes, per_process=per_process, seed=7)

    assert {r["outcome"] for r in results} == {"stored", "reaffirmed"}
    ctx = multiprocessing.get_context("spawn")
    verdict_q = ctx.Queue()
    proc = ctx.Process(target=workers.verifier, args=(str(db_path), A, KEYS, results, verdict_q))
    proc.start()
    [(kind, _w, payload)] = collect(verdict_q, [proc], 1)
    assert kind == "ok", payload
    assert_consistent(payload)

    # Read-only cross-check of the log and the outcomes straight from the file.
    import sqlite3

    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as raw:
        logged = raw.execute(
            "SELECT count(*), sum(is_reaffirm) FROM memory_fact_writes WHERE agent_id = ?", [A]
        ).fetchone()
    assert logged[0] == processes * per_process
    assert logged[1] == sum(r["outcome"] == "reaffirmed" for r in results)
