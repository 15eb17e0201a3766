"""Shared plumbing for the benchmark scripts: a fresh SQLite file database, machine facts, statistics.

Django is configured exactly as the project configures it (config.settings), pointed at a temporary file with
``MEMDESK_SQLITE_PATH`` (WAL, IMMEDIATE transactions, 30 s busy timeout come from the settings themselves).
Every memory row is written by engine functions; raw SQL is used only by the sqlite3 baselines.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
AGENT = "bench-agent"


def setup_django(db_dir: str | None = None, *, keep: bool = False) -> Path:
    """Configure Django on a new, migrated SQLite file under ``db_dir`` (a new temp dir by default); with
    ``keep``, on the file a previous run left there."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    base = Path(db_dir) if db_dir else Path(tempfile.mkdtemp(prefix="memdesk-bench-"))
    base.mkdir(parents=True, exist_ok=True)
    db_path = base / "engine.sqlite3"
    for suffix in ("", "-wal", "-shm") if not keep else ():
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    os.environ.pop("DATABASE_URL", None)
    os.environ["MEMDESK_SQLITE_PATH"] = str(db_path)
    os.environ["MEMDESK_VAR_DIR"] = str(base)
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    # Memory vectors off while corpora are built (embedding 100k writes would dominate every figure); the
    # vector benchmarks attach their embedder explicitly (``embeddings.set_memory_embedder``).
    os.environ.setdefault("MEMDESK_EMBEDDER", "off")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    assert connection.vendor == "sqlite", connection.vendor
    call_command("migrate", verbosity=0, interactive=False)
    mode = connection.cursor().execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal", mode
    return db_path


def cleanup(db_path: Path) -> None:
    shutil.rmtree(db_path.parent, ignore_errors=True)


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    try:
        import django

        info["django"] = django.get_version()
    except ImportError:
        pass
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        info["commit"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank-interpolated percentile (p in 0..100)."""
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(sorted(values), n=100, method="inclusive")[max(0, min(98, round(p) - 1))]


def result(
    name: str,
    n: int,
    value: float,
    unit: str,
    baseline: float | None,
    goal: str,
    met: bool | None,
    **extra: Any,
) -> dict[str, Any]:
    ratio = round(value / baseline, 3) if baseline else None
    return {
        "name": name,
        "n": n,
        "value": round(value, 3),
        "unit": unit,
        "baseline": round(baseline, 3) if baseline is not None else None,
        "ratio": ratio,
        "goal": goal,
        "met": met,
        **extra,
    }


def memory_count(db_path: Path) -> int:
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as raw:
        return int(raw.execute("SELECT count(*) FROM memories WHERE agent_id = ?", [AGENT]).fetchone()[0])


def write_report(
    info: dict[str, Any], started: float, results: list[dict[str, Any]], out: Path | None
) -> int:
    """Print a benchmark's JSON report (the machine, the run's duration since ``started``, the results) and also
    write it to ``out`` when given. Returns the exit status."""
    info["seconds"] = round(time.perf_counter() - started, 1)
    report = json.dumps({"machine": info, "results": results}, indent=2, ensure_ascii=False)
    print(report)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report + "\n", encoding="utf-8")
    return 0
