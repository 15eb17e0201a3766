"""Run every benchmark figure on a fresh SQLite file database and write one JSON report.

    python benchmarks/run_all.py --out var/bench/results.json           # 10k and 100k memories
    python benchmarks/run_all.py --quick --out var/bench/quick.json     # 10k only

One agent's corpus is grown through engine functions to each size in turn (10k, then 100k); at each size the
store figure (a) and the search figure (b) are measured beside their raw sqlite3 baselines. The report is
``{"machine": {...}, "results": [{"name", "n", "value", "unit", "baseline", "ratio", "goal", "met", ...}]}``
with ``ratio = value / baseline`` (engine / raw). The graph figures (``bench_graph``: PPR latency, rebuild, search
graph on vs off at 10k, 100k and 1M triples), the dream run figures (``bench_dream``: a full heuristic dream run
over an agent of 100k rows with 10 % planted conflicts, time per phase, peak memory, the judge's precision and
recall), the discovery figures (``bench_discovery``: edges + Leiden + discovery at 10k, 100k and 1M facts, Leiden
vs Louvain, the inbox page), the MCP figures (``bench_mcp``), the review queue page with 10k pending items
(``bench_review_page``), every main dashboard page at 10k and 100k memories (``bench_pages``: p50/p95 and the
query count per size, in its own database files), the hostile-client figures (``bench_hostile``, issue 15) and the insights figures
(``bench_insights``: search with the query journal and feedback term on vs off, the tiering job over 1M rows) run
last on the same file; the injection-scan figures (``bench_injection``: latency per KB, rules alone as the
baseline, the bad-input budget, and the recorded leave-one-source-out detection) need no database.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_desk_page  # noqa: E402
import bench_discovery  # noqa: E402
import bench_dream  # noqa: E402
import bench_graph  # noqa: E402
import bench_hostile  # noqa: E402
import bench_injection  # noqa: E402
import bench_insights  # noqa: E402
import bench_mcp  # noqa: E402
import bench_pages  # noqa: E402
import bench_review_page  # noqa: E402
import bench_search  # noqa: E402
import bench_store  # noqa: E402
from build import Corpus  # noqa: E402
from common import REPO, cleanup, machine, setup_django  # noqa: E402
from corpus import store_sample  # noqa: E402

# Distinct keys in the timed store sample at each size ("realistic: ~1k–5k keys").
SAMPLE_KEYS = {10_000: 2_000, 100_000: 5_000}


def table(results: list[dict]) -> str:
    """A fixed-width summary: engine value, raw baseline, engine/raw, goal met."""
    lines = [f"{'figure':<24}{'n':>7}  {'engine':>10}  {'raw':>10}  {'unit':<8}{'ratio':>7}  {'met':<6}goal"]
    for r in results:
        base = "-" if r["baseline"] is None else f"{r['baseline']:.2f}"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        lines.append(
            f"{r['name']:<24}{r['n']:>7}  {r['value']:>10.2f}  {base:>10}  {r['unit']:<8}{ratio:>7}  "
            f"{str(r['met']):<6}{r['goal']}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "var" / "bench" / "results.json")
    ap.add_argument("--quick", action="store_true", help="10k memories only")
    ap.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], help="e.g. 10000,100000")
    ap.add_argument("--sample", type=int, default=2_000, help="store_temporal calls timed per size")
    ap.add_argument(
        "--batch-sample", type=int, default=10_000, help="facts timed through store_temporal_many"
    )
    ap.add_argument("--rounds", type=int, default=20, help="search rounds over the query set per size")
    ap.add_argument("--db-dir", help="where to put the temporary databases (default: a new temp dir)")
    ap.add_argument("--keep-db", action="store_true", help="keep the databases afterwards")
    ap.add_argument("--skip-mcp", action="store_true", help="skip the MCP-over-HTTP figures (bench_mcp)")
    ap.add_argument("--skip-graph", action="store_true", help="skip the graph figures (bench_graph)")
    ap.add_argument("--skip-dream", action="store_true", help="skip the dream run figures (bench_dream)")
    ap.add_argument(
        "--skip-review",
        action="store_true",
        help="skip the review queue and desk page figures (bench_review_page, bench_desk_page)",
    )
    ap.add_argument(
        "--skip-discovery", action="store_true", help="skip the discovery figures (bench_discovery)"
    )
    ap.add_argument(
        "--discovery-sizes",
        type=lambda s: [int(x) for x in s.split(",")],
        help="facts of the discovery agents (default 10000,100000,1000000; --quick: 10000)",
    )
    ap.add_argument(
        "--skip-pages", action="store_true", help="skip every main page at 10k and 100k (bench_pages)"
    )
    ap.add_argument("--skip-injection", action="store_true", help="skip the injection-scan figures")
    ap.add_argument(
        "--skip-hostile", action="store_true", help="skip the hostile-client figures (bench_hostile)"
    )
    ap.add_argument("--hostile-seconds", type=float, default=10.0, help="length of each hostile HTTP phase")
    ap.add_argument("--skip-insights", action="store_true", help="skip the insights figures (bench_insights)")
    ap.add_argument(
        "--tier-rows", type=int, help="rows of the tiering agent (default 1000000; --quick: 100000)"
    )
    ap.add_argument(
        "--graph-sizes",
        type=lambda s: [int(x) for x in s.split(",")],
        help="triples of the graph agent (default 10000,100000,1000000; --quick: 10000)",
    )
    args = ap.parse_args(argv)
    sizes = args.sizes or ([10_000] if args.quick else [10_000, 100_000])

    started = time.perf_counter()
    info = machine()
    db = setup_django(args.db_dir)
    print(f"benchmark database: {db}", flush=True)
    results: list[dict] = []
    try:
        corpus = Corpus(db)
        for n in sorted(sizes):
            print(f"\n== {n} memories", flush=True)
            rows = corpus.grow_to(n)
            results.append(
                {
                    "name": "corpus_build_bulk",
                    "n": n,
                    "value": round(corpus.calls / corpus.build_seconds, 1),
                    "unit": "calls/s",
                    "baseline": None,
                    "ratio": None,
                    "goal": "informational: engine calls grouped in outer transactions",
                    "met": None,
                    "rows": rows,
                }
            )
            print("  search ...", flush=True)
            results += bench_search.measure(engine_db=db, n_label=n, n_rows=rows, rounds=args.rounds)
            results += bench_search.measure_session(n_label=n, n_rows=rows)
            print("  search with vectors on vs off, write embedding, backfill ...", flush=True)
            real = bench_search.load_embedder()  # the default memory embedder (static, in the repo)
            results += bench_search.measure_vectors(n_label=n, n_rows=rows, real=real)
            results += bench_search.measure_write(real=real)
            print("  store_temporal, store_temporal_many ...", flush=True)
            keys = SAMPLE_KEYS.get(n, 5_000)
            sample = store_sample(n=args.sample, n_keys=keys, seed=n)
            batch = store_sample(n=args.batch_sample, n_keys=keys, seed=n + 1)
            results += bench_store.measure(
                engine_db=db, n_label=n, n_rows=rows, sample=sample, batch_sample=batch
            )
            print(table([r for r in results if r["n"] == n]), flush=True)
        if not args.skip_dream:
            dream_n = 10_000 if args.quick else 100_000
            print(f"\n== dream run (agent {bench_dream.AGENT}, {dream_n} rows, same database)", flush=True)
            dream = bench_dream.measure(dream_n, seed=11)
            results += dream
            print(table(dream), flush=True)
        if not args.skip_graph:
            graph_sizes = args.graph_sizes or ([10_000] if args.quick else [10_000, 100_000, 1_000_000])
            print(f"\n== graph retrieval (agent {bench_graph.AGENT}, same database)", flush=True)
            graph = bench_graph.measure(sizes=graph_sizes, rounds=3)
            results += graph
            print(table(graph), flush=True)
        if not args.skip_discovery:
            sizes_d = args.discovery_sizes or ([10_000] if args.quick else [10_000, 100_000, 1_000_000])
            print("\n== discovery (agents bench-disc-<n>, same database)", flush=True)
            found = bench_discovery.measure(sizes=sizes_d, db=db)
            results += found
            print(table(found), flush=True)
        if not args.skip_injection:
            print("\n== injection scan (rules alone vs rules + classifier)", flush=True)
            injection = bench_injection.results(quick=args.quick)
            results += injection
            print(table(injection), flush=True)
        if not args.skip_mcp:
            print("\n== MCP over streamable HTTP (agent bench-mcp, same database)", flush=True)
            mcp = bench_mcp.measure(engine_db=db)
            results += mcp
            print(table(mcp), flush=True)
        if not args.skip_review:
            print(f"\n== review queue page (agent {bench_review_page.AGENT}, same database)", flush=True)
            review = bench_review_page.measure()
            results += review
            print(table(review), flush=True)
            print("\n== quarantine desk page (same database)", flush=True)
            desk = bench_desk_page.measure(memories=10_000 if args.quick else 100_000)
            results += desk
            print(table(desk), flush=True)
        if not args.skip_pages:
            page_sizes = [10_000] if args.quick else [10_000, 100_000]
            print(
                f"\n== every main page at {page_sizes} memories (agent {bench_pages.AGENT}, own files)",
                flush=True,
            )
            pages = bench_pages.measure(sizes=page_sizes)
            results += pages
            print(bench_pages.table(pages), flush=True)
        if not args.skip_hostile:
            print(
                "\n== hostile clients (issue 15; same database; PostgreSQL: bench_hostile.py --pg)",
                flush=True,
            )
            hostile = bench_hostile.measure(engine_db=db, seconds=args.hostile_seconds)
            results += hostile
            print(table(hostile), flush=True)
        if not args.skip_insights:
            print(
                f"\n== insights: journal + feedback on vs off at {max(sizes)} memories, tiering", flush=True
            )
            insights = bench_insights.measure_search(n_label=max(sizes), rounds=args.rounds)
            tier_rows = args.tier_rows or (100_000 if args.quick else 1_000_000)
            insights += bench_insights.measure_tiering(db_path=db, n_rows=tier_rows)
            results += insights
            print(table(insights), flush=True)
    finally:
        if args.keep_db:
            print(f"kept {db.parent}")
        else:
            cleanup(db)
    info["seconds"] = round(time.perf_counter() - started, 1)
    report = {"machine": info, "results": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print("\n" + table(results))
    print(f"\nwrote {args.out} in {info['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
