"""Graph retrieval figures (SPEC G3–G5, issue 5 part 7): PPR query latency with a warm cache, cache rebuild
time, and search with the graph on vs off.

Run alone: ``python benchmarks/bench_graph.py --sizes 10000,100000,1000000`` (prints JSON). ``run_all.py``
calls ``measure``.

Data: one agent (``bench-graph``) whose triples link ``n / 5`` entities (one-word names such as ``ent42``, so a
query naming one is also a selective full-text query); subjects are Zipf-distributed (a few
hubs such as "user" carry many facts, most entities a handful), objects uniform; every triple is its own key
(so all ``n`` are current). Up to 100k triples are written through ``engine.store_temporal`` (grouped in outer
transactions, like the main corpus); at 1M (or with ``--bulk``) by one bulk SQL insert of the same kind of rows
(``bulk_db``: writing 1M facts through the engine takes most of an hour here). Either way the rebuild is the
product's: ``agent_graph`` with a cold cache (generation read, one scan of the agent's fact rows, build); the DB
read alone (``scan_facts``: ``graph_db_scan``) and the build alone from its columns (``build_columns``:
``graph_build_only``) are reported beside.

Latency: ``graph_scores`` end to end (generation check, seeds, PPR, top 5) over a fixed query set naming one or
two entities (mostly ordinary ones, some hubs), with the query path's forward push, beside the exact scipy
power iteration (the reference) on the same warm graph, queries alternating between the two.

First search after a write: one ``store_temporal`` (a new triple, or a supersede of an existing key), then the
first ``graph_scores`` naming its subject: the cache follows the write by its delta. Beside it, alternating, the
same after the cache is dropped: the full rebuild every write used to cost.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import percentile, result  # noqa: E402

AGENT = "bench-graph"
CHUNK = 2_000
GOAL_P50 = {100_000: 10.0, 1_000_000: 50.0}
GOAL_REBUILD_1M_S = 3.0
GOAL_SEARCH_RATIO = 2.0
GOAL_AFTER_WRITE_MS = {100_000: 20.0}


def triple(i: int, n_entities: int, rng: random.Random, weights: list[float]) -> tuple[str, str, str, float]:
    s = rng.choices(range(n_entities), cum_weights=weights)[0]
    o = rng.randrange(n_entities)
    trust = (1.0, 1.0, 0.7, 0.6, 0.3)[i % 5]
    return f"ent{s}", f"rel_{i}", f"ent{o}", trust


def zipf_weights(n: int) -> list[float]:
    total, out = 0.0, []
    for k in range(1, n + 1):
        total += 1.0 / k
        out.append(total)
    return out


ORIGIN_OF_TRUST = {1.0: "user_direct", 0.7: "import", 0.6: "agent_derived", 0.3: "channel:bench"}


def grow_db(start: int, stop: int, n_entities: int, seed: int) -> float:
    """Write triples ``start..stop`` through the engine; return the seconds spent."""
    from django.db import transaction

    from memory import engine

    weights = zipf_weights(n_entities)
    spent = 0.0
    for lo in range(start, stop, CHUNK):
        t0 = time.perf_counter()
        with transaction.atomic():
            for i in range(lo, min(stop, lo + CHUNK)):
                rng = random.Random(seed * 1_000_003 + i)
                s, p, o, trust = triple(i, n_entities, rng, weights)
                engine.store_temporal(
                    agent_id=AGENT,
                    content=f"{s} {p.replace('_', ' ')} {o}",
                    subject=s,
                    predicate=p,
                    object=o,
                    origin=ORIGIN_OF_TRUST[trust],
                )
        spent += time.perf_counter() - t0
    return spent


def bulk_db(start: int, stop: int, n_entities: int, seed: int) -> float:
    """Insert triples ``start..stop`` as current fact rows with one bulk SQL insert (a fixture: writing 1M
    facts through the engine takes most of an hour here). Same kind of data as ``grow_db`` (Zipf subjects,
    uniform objects, the same trust mix; the full-text trigger still indexes every row), then one generation
    bump through the engine. The graph is then read back by the product's ``load_graph``, as a query does."""
    import numpy as np
    from django.db import connection, transaction
    from django.utils import timezone

    from memory.engine import common as c

    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    cum = np.asarray(zipf_weights(n_entities))
    count = stop - start
    subj = np.searchsorted(cum, rng.random(count) * cum[-1], side="right").clip(0, n_entities - 1)
    obj = rng.integers(0, n_entities, count)
    stamp = connection.ops.adapt_datetimefield_value(timezone.now() - timezone.timedelta(days=1))
    trusts = (1.0, 1.0, 0.7, 0.6, 0.3)

    def rows() -> Any:
        for k in range(count):
            i = start + k
            s, o, t = f"ent{subj[k]}", f"ent{obj[k]}", trusts[i % 5]
            yield (
                f"bulk{seed:04d}{i:022d}", AGENT, f"{s} rel {i} {o}", stamp, "[]", stamp, "semantic", 5.0, 0,
                stamp, f"rel_{i}", s, o, 1.0, "{}", ORIGIN_OF_TRUST[t], t, "[]", "[]", False,
            )  # fmt: skip

    with transaction.atomic(), connection.cursor() as cur:
        cur.executemany(
            "INSERT INTO memories (id, agent_id, content, timestamp, tags, created_at, layer, importance,"
            " access_count, valid_from, predicate, subject, object, confidence, metadata, origin, origin_trust,"
            " derived_from, reaffirmed_by, quarantined, source_event)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'bench')",
            rows(),
        )
        c.bump_generation(AGENT)
    return time.perf_counter() - t0


def query_set(n_entities: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    ordinary = [f"what do we know about ent{rng.randrange(10, n_entities)}?" for _ in range(24)]
    pairs = [f"ent{rng.randrange(n_entities)} and ent{rng.randrange(n_entities)}" for _ in range(4)]
    hubs = [f"ent{k} lately" for k in (0, 3)]
    return ordinary + pairs + hubs


def latency(graph: Any, queries: list[str], rounds: int) -> dict[str, list[float]]:
    """Per-call ms of the query path on a warm graph: push (used by search) and exact, alternating."""
    from memory.engine import graph as g

    times: dict[str, list[float]] = {"push": [], "exact": []}
    for _ in range(rounds):
        for q in queries:
            for method in ("push", "exact"):
                t0 = time.perf_counter()
                g.rank(graph, graph.seeds(q), method=method)
                times[method].append((time.perf_counter() - t0) * 1000)
    return times


def agreement(graph: Any, queries: list[str]) -> tuple[float, float]:
    """Share of queries whose push top 10 equals the exact top 10: as lists, and up to near-ties (the i-th
    push memory has the exact i-th score within 1e-4, normalised)."""
    from memory.engine import graph as g

    same = tolerant = 0
    for q in queries:
        seeds = graph.seeds(q)
        a = g.rank(graph, seeds, method="exact", top=10)
        b = g.rank(graph, seeds, top=10)
        ta, tb = (a.top if a else []), (b.top if b else [])
        same += ta == tb
        tolerant += len(ta) == len(tb) and all(
            abs(a.get(x) - a.get(y)) <= 1e-4 for x, y in zip(tb, ta, strict=True)
        )
    return same / len(queries), tolerant / len(queries)


def measure_size(n: int, *, rounds: int, seed: int = 7, bulk: bool = False) -> list[dict[str, Any]]:
    from django.utils import timezone

    from memory.engine import graph as g
    from memory.engine.graph import build

    n_entities = max(50, n // 5)
    out: list[dict[str, Any]] = []
    queries = query_set(n_entities, seed)
    have = g.load_graph(agent_id=AGENT, at=timezone.now()).triples
    if have < n:
        how = "bulk SQL insert" if bulk or n > 100_000 else "engine.store_temporal"
        print(f"  graph: writing {n - have} triples ({how}) ...", flush=True)
        grow = bulk_db if bulk or n > 100_000 else grow_db
        spent = grow(have, n, n_entities, seed)
        print(f"  graph: {n - have} writes in {spent:.0f} s", flush=True)
        fixture = how
    else:
        fixture = "existing database"
    builds = []
    for _ in range(2 if n >= 1_000_000 else 3):
        g.clear_cache()
        gc.collect()
        t0 = time.perf_counter()
        graph = g.agent_graph(agent_id=AGENT)
        builds.append(time.perf_counter() - t0)
    assert graph.triples == n, (graph.triples, n)
    rebuild = min(builds)
    with build._no_gc():
        t0 = time.perf_counter()
        facts = g.scan_facts(agent_id=AGENT, at=timezone.now())
        scan_s = time.perf_counter() - t0
        aliases = {a.alias: a.canonical for a in g.alias_list(agent_id=AGENT)}
        gc.collect()
        t0 = time.perf_counter()
        g.build_columns(facts, aliases)
        build_s = time.perf_counter() - t0
    del facts
    out.append(
        result("graph_db_scan", n, scan_s * 1000, "ms", None, "informational: the DB read alone (scan_facts)",
               None, fixture=fixture)
    )  # fmt: skip
    out.append(
        result("graph_build_only", n, build_s * 1000, "ms", None,
               "informational: build_columns on the scanned columns", None)
    )  # fmt: skip
    source = f"database, {fixture} (agent_graph: generation read, scan, build)"
    goal_rebuild = f"<= {GOAL_REBUILD_1M_S} s at 1M" if n == 1_000_000 else "informational"
    out.append(
        result("graph_rebuild", n, rebuild * 1000, "ms", None, goal_rebuild,
               rebuild <= GOAL_REBUILD_1M_S if n == 1_000_000 else None,
               source=source, nodes=graph.size, edges=int(graph.rows.nnz // 2))
    )  # fmt: skip
    times = latency(graph, queries, rounds)
    push50, exact50 = percentile(times["push"], 50), percentile(times["exact"], 50)
    goal = GOAL_P50.get(n)
    out.append(
        result("ppr_query_p50", n, push50, "ms", exact50,
               f"<= {goal} ms warm (baseline: exact power iteration)" if goal else "informational",
               push50 <= goal if goal else None,
               p95=round(percentile(times["push"], 95), 3), exact_p95=round(percentile(times["exact"], 95), 3),
               top10_agreement=dict(zip(("identical", "up_to_near_ties"), agreement(graph, queries[:12]), strict=True)),
               queries=len(queries), rounds=rounds,
               source=source)
    )  # fmt: skip
    out.append(first_search_after_write(n, n_entities, rounds=max(8, 3 * rounds)))
    if n <= 100_000:
        out += search_on_off(n, queries, rounds, label="seeded")
        out += search_on_off(n, unseeded_queries(seed), rounds, label="unseeded")
    del graph
    return out


def first_search_after_write(n: int, n_entities: int, *, rounds: int) -> dict[str, Any]:
    """Per round, twice: one write, then the first ``graph_scores`` naming its subject; the first time the cache
    follows the write by its delta, the second time the cache was dropped before the search (a full rebuild)."""
    from memory import engine
    from memory.engine import graph as g

    rng = random.Random(n)
    times: dict[str, list[float]] = {"delta": [], "rebuild": []}
    g.graph_scores(agent_id=AGENT, query="ent1")  # warm
    deltas = g.stats.get("deltas", 0)
    for i in range(rounds):
        for mode in ("delta", "rebuild"):
            s, o = f"ent{rng.randrange(n_entities)}", f"ent{rng.randrange(n_entities)}"
            predicate = f"after_{i % 4}"  # keys repeat: some writes supersede
            engine.store_temporal(
                agent_id=AGENT, content=f"{s} {predicate} {o}", subject=s, predicate=predicate, object=o
            )
            if mode == "rebuild":
                g.clear_cache()
                gc.collect()
            t0 = time.perf_counter()
            g.graph_scores(agent_id=AGENT, query=f"what about {s}")
            times[mode].append((time.perf_counter() - t0) * 1000)
    p50, rebuild50 = percentile(times["delta"], 50), percentile(times["rebuild"], 50)
    goal = GOAL_AFTER_WRITE_MS.get(n)
    return result(
        "first_search_after_write", n, p50, "ms", rebuild50,
        f"<= {goal} ms at {n // 1000}k (baseline: the same search after a full rebuild)" if goal else
        "informational (baseline: the same search after a full rebuild)",
        p50 <= goal if goal else None,
        p95=round(percentile(times["delta"], 95), 3), rebuild_p95=round(percentile(times["rebuild"], 95), 3),
        rounds=rounds, deltas=g.stats.get("deltas", 0) - deltas,
    )  # fmt: skip


def unseeded_queries(seed: int) -> list[str]:
    """Queries that name no entity but hit facts by full text (a fact's number, as in "rel 4242")."""
    rng = random.Random(seed + 1)
    return [f"{rng.randrange(10_000)}" for _ in range(20)] + [
        f"number {rng.randrange(10_000)}" for _ in range(10)
    ]


def search_on_off(n: int, queries: list[str], rounds: int, *, label: str) -> list[dict[str, Any]]:
    """``engine.search`` with the default weights (graph on, cache warm) vs ``w_graph = 0``, alternating.
    ``seeded``: the PPR query set (every query names an entity); ``unseeded``: queries naming none."""
    from memory import engine
    from memory.engine.types import RetrievalWeights

    off = RetrievalWeights(w_graph=0.0)
    engine.search(agent_id=AGENT, query=queries[0])  # warm the cache
    on_ms: list[float] = []
    off_ms: list[float] = []
    graph_only = 0
    for _ in range(max(1, rounds // 2)):
        for q in queries:
            t0 = time.perf_counter()
            hits_on = engine.search(agent_id=AGENT, query=q)
            on_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            engine.search(agent_id=AGENT, query=q, weights=off)
            off_ms.append((time.perf_counter() - t0) * 1000)
            graph_only += sum(h.fts_position is None for h in hits_on)
    on50, off50 = percentile(on_ms, 50), percentile(off_ms, 50)
    ok = on50 <= GOAL_SEARCH_RATIO * off50 if n == 100_000 else None
    return [
        result(f"search_graph_on_p50_{label}", n, on50, "ms", off50,
               f"<= {GOAL_SEARCH_RATIO}x graph off at 100k (baseline: w_graph = 0)", ok,
               p95=round(percentile(on_ms, 95), 3), off_p95=round(percentile(off_ms, 95), 3),
               graph_only_hits=graph_only)
    ]  # fmt: skip


def measure(*, sizes: list[int], rounds: int = 5, bulk: bool = False) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in sorted(sizes):
        print(f"  graph: {n} triples ...", flush=True)
        out += measure_size(n, rounds=rounds, bulk=bulk)
    return out


def _open_existing(db_dir: str) -> Path:
    """Configure Django on an existing bench database (``--reuse-db``: keep a 1M fixture between runs)."""
    import os

    import django

    base = Path(db_dir)
    os.environ.pop("DATABASE_URL", None)
    os.environ["MEMDESK_SQLITE_PATH"] = str(base / "engine.sqlite3")
    os.environ["MEMDESK_VAR_DIR"] = str(base)
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    django.setup()
    return base / "engine.sqlite3"


def main(argv: list[str] | None = None) -> int:
    from common import cleanup, machine, setup_django

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[10_000, 100_000])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--db-dir")
    ap.add_argument("--bulk", action="store_true", help="write every size's triples by bulk SQL insert")
    ap.add_argument("--reuse-db", help="an existing bench database directory: kept, grown if needed")
    args = ap.parse_args(argv)
    info = machine()
    db = _open_existing(args.reuse_db) if args.reuse_db else setup_django(args.db_dir)
    try:
        results = measure(sizes=args.sizes, rounds=args.rounds, bulk=args.bulk)
    finally:
        if not args.reuse_db:
            cleanup(db)
    print(json.dumps({"machine": info, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
