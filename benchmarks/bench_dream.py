"""A full dream run at scale (SPEC B1): one agent with 100k memory rows, 10 % of them planted conflict pairs.

    python benchmarks/bench_dream.py --n 100000           # prints JSON; a fresh SQLite file database

The corpus is ``bench_conflicts.Builder``'s (every row through ``engine.store_temporal`` / ``engine.store``): six
kinds of planted pairs (respelt values, two spellings of a subject, synonym predicates, alias subjects with two
values, near-duplicate notes, notes that negate or change an earlier one) among background facts and notes.

Two measurements, each in a fresh process on its own copy of the database, so the figures are the run's alone:

* ``dream_run``: ``engine.dream_run`` in apply mode with the heuristic judge and the default limits, as the
  hourly job runs it: wall time per phase and in total, and the peak resident memory of the process
  (``ru_maxrss``, Django and the interpreter included). Goal: <= 60 s and <= 1 GB.
* ``judge_precision`` / ``judge_recall``: one dry run with the limits raised so that every candidate is judged
  (the loop's own signal and consolidate phases, heuristic judge). Precision: of the pairs the loop proposes to
  change (MERGE or SUPERSEDE), the share that are planted pairs with that planted verdict. Recall: of the
  planted pairs, the share proposed with the planted verdict. Goal: >= 0.9 / >= 0.8.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_conflicts import AGENT, EXPECTED, Builder  # noqa: E402
from common import REPO, cleanup, machine, result, setup_django  # noqa: E402

GOAL_SECONDS = 60.0
GOAL_MB = 1024.0
WIDE = 50_000  # limits of the precision/recall run: every candidate is judged


def attach(db_path: Path) -> None:
    """Configure Django on an existing, migrated SQLite file (a child process)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    os.environ.pop("DATABASE_URL", None)
    os.environ["MEMDESK_SQLITE_PATH"] = str(db_path)
    os.environ["MEMDESK_VAR_DIR"] = str(db_path.parent)
    os.environ["MEMDESK_CONFIG"] = str(db_path.parent / "absent.toml")  # heuristic judge, shipped registry
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django

    django.setup()


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


# --- children ----------------------------------------------------------------------------------------------


def child_run(db_path: Path) -> dict[str, Any]:
    attach(db_path)
    from memory import engine

    engine.dream_mode_set(agent_id=AGENT, mode="apply", actor="bench")
    before = peak_mb()
    started = time.perf_counter()
    run = engine.dream_run(agent_id=AGENT, force=True, actor="bench")
    seconds = time.perf_counter() - started
    return {
        "status": run.status,
        "seconds": round(seconds, 2),
        "peak_mb": round(peak_mb(), 1),
        "peak_mb_before_run": round(before, 1),
        "phases_ms": {name: phase["duration_ms"] for name, phase in run.phases.items()},
        "counts": {name: phase["counts"] for name, phase in run.phases.items() if name != "reflect"},
        "errors": {name: phase["errors"] for name, phase in run.phases.items() if phase["errors"]},
    }


def child_judge(db_path: Path, planted_path: Path) -> dict[str, Any]:
    attach(db_path)
    from memory import engine
    from memory.dream.loop import Limits, execute
    from memory.models import ReviewItem

    planted = {frozenset(pair): kind for *pair, kind in json.loads(planted_path.read_text())}
    limits = Limits(signal_pairs=WIDE, conflicts=WIDE, merges=WIDE, lint_items=0, prune=0)
    started = time.perf_counter()
    run = engine.dream_start(agent_id=AGENT, force=True, dry_run=True, actor="bench")
    run = execute(run_id=run.id, limits=limits)
    seconds = time.perf_counter() - started
    proposals = ReviewItem.objects.filter(run_id=run.id, kind="conflict").values_list("memory_ids", "payload")
    changing = right = 0
    found: set[frozenset[str]] = set()
    for ids, payload in proposals.iterator(chunk_size=2_000):
        verdict = payload["action"]["verdict"]
        pair = frozenset(ids)
        kind = planted.get(pair)
        ok = kind is not None and EXPECTED[kind][1] == verdict
        if ok:
            found.add(pair)
        if verdict in ("MERGE", "SUPERSEDE"):
            changing += 1
            right += int(ok)
    per_kind = {}
    for kind in EXPECTED:
        pairs = [p for p, k in planted.items() if k == kind]
        per_kind[kind] = round(sum(1 for p in pairs if p in found) / max(1, len(pairs)), 4)
    signal = run.phases["signal"]["counts"]
    return {
        "status": run.status,
        "seconds": round(seconds, 2),
        "candidates": signal.get("candidates"),
        "proposed_changes": changing,
        "precision": round(right / max(1, changing), 4),
        "recall": round(len(found) / max(1, len(planted)), 4),
        "recall_per_kind": per_kind,
        "phases_ms": {name: phase["duration_ms"] for name, phase in run.phases.items()},
    }


# --- the parent ---------------------------------------------------------------------------------------------


def spawn(*args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if out.returncode != 0:
        raise RuntimeError(f"bench_dream child failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def copy_db(db_path: Path, name: str) -> Path:
    with sqlite3.connect(db_path) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    target = db_path.parent / name / db_path.name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(db_path, target)
    return target


def measure(n: int, seed: int) -> list[dict[str, Any]]:
    """Build the corpus on the configured database, then measure the two runs in child processes."""
    from django.db import connections

    from memory.models import Memory

    builder = Builder(n, seed)
    build_s = builder.build()
    rows = Memory.objects.filter(agent_id=AGENT).count()
    db_path = Path(connections["default"].settings_dict["NAME"])
    connections.close_all()
    planted_path = db_path.parent / "planted.json"
    planted_path.write_text(json.dumps([[*sorted(p), k] for p, k in builder.planted.items()]))
    wide_db = copy_db(db_path, "wide")
    timed = spawn("--child-run", str(db_path))
    judged = spawn("--child-judge", str(wide_db), str(planted_path))
    shutil.rmtree(wide_db.parent, ignore_errors=True)
    common = {"rows": rows, "planted_pairs": len(builder.planted), "build_s": round(build_s, 1)}
    return [
        result(
            "dream_run",
            n,
            timed["seconds"],
            "s",
            None,
            f"<= {GOAL_SECONDS:g} s (heuristic judge, apply mode, default limits)",
            timed["seconds"] <= GOAL_SECONDS and timed["status"] == "done",
            phases_ms=timed["phases_ms"],
            counts=timed["counts"],
            errors=timed["errors"],
            **common,
        ),
        result(
            "dream_run_peak_memory",
            n,
            timed["peak_mb"],
            "MB",
            None,
            f"<= {GOAL_MB:g} MB peak RSS of the process running it",
            timed["peak_mb"] <= GOAL_MB,
            before_run_mb=timed["peak_mb_before_run"],
        ),
        result(
            "dream_judge_precision",
            n,
            judged["precision"],
            "ratio",
            None,
            ">= 0.9 (proposed changes that are planted pairs with the planted verdict)",
            judged["precision"] >= 0.9,
            proposed_changes=judged["proposed_changes"],
            candidates=judged["candidates"],
            wide_run_s=judged["seconds"],
            wide_phases_ms=judged["phases_ms"],
        ),
        result(
            "dream_judge_recall",
            n,
            judged["recall"],
            "ratio",
            None,
            ">= 0.8 (planted pairs proposed with the planted verdict)",
            judged["recall"] >= 0.8,
            per_kind=judged["recall_per_kind"],
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--keep", action="store_true", help="keep the database directory")
    parser.add_argument("--child-run", help=argparse.SUPPRESS)
    parser.add_argument("--child-judge", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_run:
        print(json.dumps(child_run(Path(args.child_run))))
        return
    if args.child_judge:
        print(json.dumps(child_judge(Path(args.child_judge[0]), Path(args.child_judge[1]))))
        return
    db_path = setup_django()
    try:
        report = {"machine": machine(), "results": measure(args.n, args.seed)}
    finally:
        if not args.keep:
            cleanup(db_path)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
