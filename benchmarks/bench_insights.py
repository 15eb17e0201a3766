"""Issue 18's figures: the cost of the query journal and the feedback term on search, and the tiering job at 1M rows.

    python benchmarks/bench_insights.py                       # search at 100k memories, tiering over 1M rows
    python benchmarks/bench_insights.py --n 10000 --tier-rows 100000     # smaller
    python benchmarks/bench_insights.py --skip-search --tier-rows 1000000

``run_all.py`` calls ``measure_search`` (on the shared bench agent, after the search figures) and
``measure_tiering`` (its own agent in the same file).

* **search, journal + feedback on vs off** (goal ≤ 1.2×, same run): *on* is ``engine.agent_search`` (what
  ``memory_search`` calls: the ranked search with the feedback term, access reinforcement, the journal row written
  in the transaction that counts the read, and the open-gap lookup); *off* is ``engine.search`` with
  ``w_feedback = 0`` (no weight lookup, no journal; the read is counted, as before this issue). 2,000 of the
  agent's memories first get verdicts through ``engine.feedback`` so the term has weights to read. The two calls
  alternate query by query, round by round, over the search benchmark's query set.
* **tiering job over 1M rows** (goal ≤ 60 s, ≤ 1 GB): one agent's rows written by one bulk SQL insert (a fixture:
  1M rows through the engine take most of an hour here; the full-text trigger still indexes every row) with ages
  spread over two years, a fifth read back at some point, importance 1–9, 8 % long texts (0.6–1.8 KB) that need a
  digest, and feedback weights on 1 % of them. ``engine.retier`` then runs in a child process (so its peak RSS
  is the job's own, Django included) twice: the first pass moves and digests, the second finds nothing to do.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from common import AGENT, REPO, percentile, result

GOAL_RATIO = 1.2
GOAL_TIER_SECONDS = 60.0
GOAL_TIER_MB = 1024.0
LIMIT = 10
FEEDBACK_MEMORIES = 2_000
TIER_AGENT = "bench-tiers"
LONG_SHARE = 0.08


def measure_search(*, n_label: int, rounds: int = 20, seed: int = 18) -> list[dict[str, Any]]:
    from corpus import queries

    from memory import engine
    from memory.models import Memory

    rng = random.Random(seed)
    ids = list(Memory.objects.filter(agent_id=AGENT).values_list("id", flat=True)[:200_000])
    for mid in rng.sample(ids, min(FEEDBACK_MEMORIES, len(ids))):
        engine.feedback(
            agent_id=AGENT, verdict=rng.choice(["CORRECT", "INCORRECT", "AMBIGUOUS"]), memory_id=mid
        )
    off = engine.RetrievalWeights(w_feedback=0)
    qs = queries()
    times: dict[str, list[float]] = {"on": [], "off": []}
    for _, q in qs:  # warm both paths
        engine.agent_search(agent_id=AGENT, query=q, limit=LIMIT)
        engine.search(agent_id=AGENT, query=q, limit=LIMIT, weights=off)
    for r in range(rounds):
        for _, q in qs:
            order = ("on", "off") if r % 2 == 0 else ("off", "on")
            for side in order:
                t0 = time.perf_counter()
                if side == "on":
                    engine.agent_search(agent_id=AGENT, query=q, limit=LIMIT)
                else:
                    engine.search(agent_id=AGENT, query=q, limit=LIMIT, weights=off)
                times[side].append((time.perf_counter() - t0) * 1000)
    on50, off50 = percentile(times["on"], 50), percentile(times["off"], 50)
    on95, off95 = percentile(times["on"], 95), percentile(times["off"], 95)
    return [
        result(
            "search_journal_feedback_p50",
            n_label,
            on50,
            "ms",
            off50,
            f"<= {GOAL_RATIO}x the search without journal and feedback term (same run)",
            on50 <= GOAL_RATIO * off50,
            calls=len(times["on"]),
            p95_on=round(on95, 3),
            p95_off=round(off95, 3),
            mean_on=round(statistics.fmean(times["on"]), 3),
            mean_off=round(statistics.fmean(times["off"]), 3),
            feedback_memories=FEEDBACK_MEMORIES,
        )
    ]


# --- the tiering job -----------------------------------------------------------------------------------------


def _long_text(rng: random.Random) -> str:
    from corpus import sentence

    parts, size = [], rng.randint(600, 1800)
    while sum(len(p) + 1 for p in parts) < size:
        parts.append(sentence(rng, 10, 24))
    return " ".join(parts)


def tier_fixture(n_rows: int, *, seed: int = 18) -> dict[str, Any]:
    """``n_rows`` rows of ``TIER_AGENT`` by bulk insert (see the module docstring); returns what it made."""
    from corpus import sentence
    from django.db import connection, transaction
    from django.utils import timezone

    rng = random.Random(seed)
    now = timezone.now()
    adapt = connection.ops.adapt_datetimefield_value
    t0 = time.perf_counter()
    made = {"rows": 0, "long": 0, "weights": 0}
    chunk = 20_000
    with connection.cursor() as cur:
        for start in range(0, n_rows, chunk):
            rows, weights = [], []
            for i in range(start, min(n_rows, start + chunk)):
                age = rng.random() ** 1.6 * 730  # more young rows than old ones
                stamp = now - timedelta(days=age, seconds=rng.randint(0, 86_399))
                accessed = None
                count = 0
                if rng.random() < 0.2:
                    accessed = stamp + timedelta(days=rng.random() * age)
                    count = rng.randint(1, 40)
                long = rng.random() < LONG_SHARE
                content = _long_text(rng) if long else sentence(rng)
                made["long"] += long
                mid = f"m_tier{seed:04d}{i:018d}"
                rows.append(
                    (mid, TIER_AGENT, content, adapt(stamp), "[]", adapt(stamp), "episodic", float(rng.randint(1, 9)),
                     count, adapt(accessed) if accessed else None, "{}", "import", 0.7, "[]", "[]", False, "bench",
                     1.0)
                )  # fmt: skip
                if rng.random() < 0.01:
                    weights.append((mid, TIER_AGENT, rng.uniform(-1, 1), 1, adapt(now)))
            with transaction.atomic():
                cur.executemany(
                    "INSERT INTO memories (id, agent_id, content, timestamp, tags, created_at, layer, importance,"
                    " access_count, last_accessed, metadata, origin, origin_trust, derived_from, reaffirmed_by,"
                    " quarantined, source_event, confidence) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
                    " %s, %s, %s, %s, %s, %s)",
                    rows,
                )
                cur.executemany(
                    "INSERT INTO memory_feedback_weights (memory_id, agent_id, weight, verdicts, updated_at)"
                    " VALUES (%s, %s, %s, %s, %s)",
                    weights,
                )
            made["rows"] += len(rows)
            made["weights"] += len(weights)
            if (start // chunk) % 10 == 9:
                print(f"  tier fixture: {made['rows']} rows", flush=True)
    made["seconds"] = round(time.perf_counter() - t0, 1)
    return made


def _child(db: str) -> int:
    """In a child process: run the tiering job twice on ``db`` and print its figures as JSON."""
    import os

    sys.path.insert(0, str(REPO))
    os.environ["MEMDESK_SQLITE_PATH"] = db
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    from memory import engine

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    first = engine.retier(agent_id=TIER_AGENT)
    first_s = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t1 = time.perf_counter()
    second = engine.retier(agent_id=TIER_AGENT)
    second_s = time.perf_counter() - t1
    print(
        json.dumps(
            {
                "seconds": first_s,
                "second_run_seconds": second_s,
                "peak_mb": peak,
                "peak_mb_after_second": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "rss_before_mb": base,
                "first": first.to_dict(),
                "second_moved": second.moved,
            }
        )
    )
    return 0


def measure_tiering(*, db_path: Path, n_rows: int) -> list[dict[str, Any]]:
    made = tier_fixture(n_rows)
    print(
        f"  tier fixture: {made['rows']} rows in {made['seconds']} s; tiering in a child process ...",
        flush=True,
    )
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--tiering-child", str(db_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-4000:])
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    first = out["first"]
    return [
        result(
            "tiering_job",
            n_rows,
            out["seconds"],
            "s",
            None,
            f"<= {GOAL_TIER_SECONDS:.0f} s and <= {GOAL_TIER_MB:.0f} MB peak RSS",
            out["seconds"] <= GOAL_TIER_SECONDS and out["peak_mb"] <= GOAL_TIER_MB,
            peak_rss_mb=round(out["peak_mb"], 1),
            rss_before_mb=round(out["rss_before_mb"], 1),
            rows_per_s=round(first["rows"] / out["seconds"], 1) if out["seconds"] else None,
            moved=first["moved"],
            counts=first["counts"],
            digested=first["digested"],
            long_rows=made["long"],
            second_run_s=round(out["second_run_seconds"], 3),
            second_run_moved=out["second_moved"],
            fixture_seconds=made["seconds"],
        )
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="memories of the search agent")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--tier-rows", type=int, default=1_000_000)
    ap.add_argument("--skip-search", action="store_true")
    ap.add_argument("--skip-tiering", action="store_true")
    ap.add_argument("--tiering-child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.tiering_child:
        return _child(args.tiering_child)
    from build import Corpus
    from common import cleanup, machine, setup_django

    db = setup_django()
    results: list[dict[str, Any]] = []
    try:
        if not args.skip_search:
            rows = Corpus(db).grow_to(args.n)
            results += measure_search(n_label=args.n, rounds=args.rounds)
            results[-1]["rows"] = rows
        if not args.skip_tiering:
            results += measure_tiering(db_path=db, n_rows=args.tier_rows)
        json.dump({"machine": machine(), "results": results}, sys.stdout, indent=2)
        print()
    finally:
        cleanup(db)
    return 0


if __name__ == "__main__":
    sys.exit(main())
