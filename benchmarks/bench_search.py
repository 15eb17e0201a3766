"""Figure (b): ``engine.search`` latency (p50/p95) beside the same FTS5 query issued with plain sqlite3.

Run alone: ``python benchmarks/bench_search.py --n 10000`` (prints JSON). ``run_all.py`` calls ``measure``.

Both sides read the same database file. The raw side runs the MATCH expression the engine builds for the
query (``text.sqlite_match``: same sanitising, so the junk query is legal FTS5 on both sides) with the join to
``memories``, the agent and current-row filter, ``ORDER BY bm25`` and ``LIMIT 10``, and fetches the rows.
The engine side is the public call with its defaults (limit 10, ranking, ``access_count`` touch included).
Engine and raw calls alternate query by query, round by round, so both see the same machine load.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from common import AGENT, percentile, result

GOAL_P50_MS = 15.0
GOAL_VS_RAW = 4.0
LIMIT = 10

RAW_SQL = (
    "SELECT m.* FROM memories_fts f JOIN memories m ON m.id = f.memory_id"
    " WHERE memories_fts MATCH ? AND m.agent_id = ? AND NOT m.quarantined"
    " AND (m.valid_from IS NULL OR m.valid_from <= ?) AND (m.valid_until IS NULL OR m.valid_until > ?)"
    " ORDER BY bm25(memories_fts) LIMIT ?"
)


FLOOR_SQL = (
    "SELECT memory_id FROM memories_fts WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT ?"
)


def raw_search(db: sqlite3.Connection, match: str | None) -> list[tuple[Any, ...]]:
    if match is None:
        return []
    now = datetime.now(UTC).replace(tzinfo=None).isoformat(sep=" ")
    return db.execute(RAW_SQL, (match, AGENT, now, now, LIMIT)).fetchall()


def measure(*, engine_db: Path, n_label: int, n_rows: int, rounds: int = 20) -> list[dict[str, Any]]:
    from corpus import queries

    from memory import engine
    from memory.engine.text import sqlite_match

    qs = queries()
    raw = sqlite3.connect(engine_db)
    per_query: dict[str, dict[str, list[float]]] = {label: {"engine": [], "raw": []} for label, _ in qs}
    hits: dict[str, int] = {}
    try:
        for label, q in qs:  # warm both paths (page cache, statement caches)
            hits[label] = len(engine.search(agent_id=AGENT, query=q, limit=LIMIT))
            raw_search(raw, sqlite_match(q))
        for _ in range(rounds):
            for label, q in qs:
                t0 = time.perf_counter()
                engine.search(agent_id=AGENT, query=q, limit=LIMIT)
                t1 = time.perf_counter()
                raw_search(raw, sqlite_match(q))
                t2 = time.perf_counter()
                per_query[label]["engine"].append((t1 - t0) * 1000)
                per_query[label]["raw"].append((t2 - t1) * 1000)
        floor: dict[str, float] = {}
        for label, q in qs:  # informational floor: ranking the FTS hits alone, no join, no filter
            m = sqlite_match(q)
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                if m:
                    raw.execute(FLOOR_SQL, (m, LIMIT)).fetchall()
                times.append((time.perf_counter() - t0) * 1000)
            floor[label] = statistics.median(times)
        matches = {}
        for label, q in qs:
            m = sqlite_match(q)
            matches[label] = (
                raw.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (m,)).fetchone()[
                    0
                ]
                if m
                else 0
            )
    finally:
        raw.close()
    eng_all = [v for d in per_query.values() for v in d["engine"]]
    raw_all = [v for d in per_query.values() for v in d["raw"]]
    detail = [
        {
            "query": label,
            "fts_matches": matches[label],
            "hits": hits[label],
            "engine_p50_ms": round(statistics.median(d["engine"]), 3),
            "raw_p50_ms": round(statistics.median(d["raw"]), 3),
            "fts_only_floor_ms": round(floor[label], 3),
        }
        for label, d in per_query.items()
    ]
    p50, raw50 = percentile(eng_all, 50), percentile(raw_all, 50)
    p95, raw95 = percentile(eng_all, 95), percentile(raw_all, 95)
    return [
        result(
            "search_p50",
            n_label,
            p50,
            "ms",
            raw50,
            f"<= {GOAL_P50_MS:.0f} ms (at 100k) and <= {GOAL_VS_RAW:.0f}x raw",
            p50 <= GOAL_P50_MS and p50 <= GOAL_VS_RAW * raw50,
            rows=n_rows,
            calls=len(eng_all),
            queries=detail,
        ),
        result(
            "search_p95",
            n_label,
            p95,
            "ms",
            raw95,
            f"<= {GOAL_VS_RAW:.0f}x raw",
            p95 <= GOAL_VS_RAW * raw95,
            rows=n_rows,
            calls=len(eng_all),
        ),
    ]


SESSION_GOAL_VS_OFF = 1.5


def measure_session(
    *, n_label: int, n_rows: int, w_session: float = 0.5, rounds: int = 10
) -> list[dict[str, Any]]:
    """Search p50/p95 with the session-neighbourhood expansion on (``w_session``) vs off, alternating query by
    query in the same run (issue 17). The corpus's plain memories come in sessions of 16."""
    from corpus import queries

    from memory import engine
    from memory.engine.types import RetrievalWeights

    on, off = RetrievalWeights(w_session=w_session), RetrievalWeights(w_session=0.0)
    qs = queries()
    times: dict[str, list[float]] = {"on": [], "off": []}
    for _, q in qs:
        engine.search(agent_id=AGENT, query=q, limit=LIMIT, weights=on)
    for _ in range(rounds):
        for _, q in qs:
            for name, w in (("on", on), ("off", off)):
                t0 = time.perf_counter()
                engine.search(agent_id=AGENT, query=q, limit=LIMIT, weights=w)
                times[name].append((time.perf_counter() - t0) * 1000)
    p50_on, p50_off = percentile(times["on"], 50), percentile(times["off"], 50)
    p95_on, p95_off = percentile(times["on"], 95), percentile(times["off"], 95)
    goal = f"<= {SESSION_GOAL_VS_OFF}x off"
    return [
        result(
            "search_session_p50",
            n_label,
            p50_on,
            "ms",
            p50_off,
            goal,
            p50_on <= SESSION_GOAL_VS_OFF * p50_off,
            rows=n_rows,
            w_session=w_session,
        ),
        result(
            "search_session_p95",
            n_label,
            p95_on,
            "ms",
            p95_off,
            goal,
            p95_on <= SESSION_GOAL_VS_OFF * p95_off,
            rows=n_rows,
            w_session=w_session,
        ),
    ]


VECTOR_GOAL_P50_MS = 25.0
VECTOR_GOAL_VS_OFF = 2.0


class BenchEmbedder:
    """The real embedder's query side, with stand-in passage vectors: hashed pseudo-random unit vectors of the
    real dimension. The search cost (query embedding, matrix product, fusion, row reads) is the real one; only
    the stored vectors' content differs, so 100k rows need no hour of embedding. The real embedder's
    passage throughput is measured on its own (``backfill_rate``)."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.model_name = f"{real.model_name}#bench"
        self.dim = int(getattr(real, "dim", 384))

    def embed(self, texts: list[str]) -> Any:
        import hashlib

        import numpy as np

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(t.encode("utf-8"), digest_size=8).digest(), "little")
            out[i] = np.random.default_rng(seed).standard_normal(self.dim)
        return out

    def embed_query(self, texts: list[str]) -> Any:
        fn = getattr(self.real, "embed_query", None) or self.real.embed
        return fn(texts)


def load_embedder(path: str | None = None) -> Any:
    from memory.engine import embeddings

    embedder = embeddings._load(path or embeddings.DEFAULT_MEMORY_EMBEDDER)
    if callable(getattr(embedder, "load", None)):
        embedder.load()
    return embedder


def measure_vectors(
    *, n_label: int, n_rows: int, real: Any, rounds: int = 10, backfill_rows: int = 1024
) -> list[dict[str, Any]]:
    """Search p50/p95 with vectors on (default weights, the agent's matrix cached) vs off (w_vec = w_vec_rank
    = 0), alternating query by query; the stand-in backfill of every row first; then the real embedder's
    backfill rate on ``backfill_rows`` rows (issue 17)."""
    from corpus import queries

    from memory import engine
    from memory.engine import embeddings, vectors
    from memory.engine.types import RetrievalWeights

    bench = BenchEmbedder(real)
    t0 = time.perf_counter()
    filled = vectors.backfill(agent_id=AGENT, embedder=bench, batch_size=2_000)
    stand_in_seconds = time.perf_counter() - t0
    embeddings.set_memory_embedder(bench)
    on, off = RetrievalWeights(), RetrievalWeights(w_vec=0.0, w_vec_rank=0.0)
    qs = queries()
    t0 = time.perf_counter()
    engine.search(agent_id=AGENT, query=qs[0][1], limit=LIMIT, weights=on)
    cold_ms = (time.perf_counter() - t0) * 1000
    for _, q in qs:
        engine.search(agent_id=AGENT, query=q, limit=LIMIT, weights=on)
    times: dict[str, list[float]] = {"on": [], "off": []}
    embed_ms: list[float] = []
    for _ in range(rounds):
        for _, q in qs:
            for name, w in (("on", on), ("off", off)):
                t0 = time.perf_counter()
                engine.search(agent_id=AGENT, query=q, limit=LIMIT, weights=w)
                times[name].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            vectors.embed_query(real, q)
            embed_ms.append((time.perf_counter() - t0) * 1000)
    embeddings.set_memory_embedder(None)
    t0 = time.perf_counter()
    rate = vectors.backfill(
        agent_id=AGENT, embedder=real, batch_size=256, max_batches=max(1, backfill_rows // 256)
    )
    rate_s = time.perf_counter() - t0
    p50_on, p50_off = percentile(times["on"], 50), percentile(times["off"], 50)
    p95_on, p95_off = percentile(times["on"], 95), percentile(times["off"], 95)
    goal = f"<= {VECTOR_GOAL_P50_MS:.0f} ms and <= {VECTOR_GOAL_VS_OFF:.0f}x off"
    common = {"rows": n_rows, "vectors": filled.embedded, "model": str(real.model_name)}
    return [
        result(
            "search_vectors_p50",
            n_label,
            p50_on,
            "ms",
            p50_off,
            goal,
            p50_on <= VECTOR_GOAL_P50_MS and p50_on <= VECTOR_GOAL_VS_OFF * p50_off,
            query_embed_p50_ms=round(percentile(embed_ms, 50), 3),
            first_search_ms=round(cold_ms, 1),
            **common,
        ),
        result(
            "search_vectors_p95",
            n_label,
            p95_on,
            "ms",
            p95_off,
            f"<= {VECTOR_GOAL_VS_OFF:.0f}x off",
            p95_on <= VECTOR_GOAL_VS_OFF * p95_off,
            **common,
        ),
        result(
            "backfill_rate",
            n_label,
            rate.embedded / rate_s if rate_s else 0.0,
            "rows/s",
            filled.embedded / stand_in_seconds if stand_in_seconds else None,
            "informational (baseline: the stand-in embedder, i.e. the database side alone)",
            None,
            embedded=rate.embedded,
            **common,
        ),
    ]


def measure_write(*, real: Any, n: int = 200) -> list[dict[str, Any]]:
    """Plain-memory write throughput with embedding at write time on vs off, alternating write by write."""
    from corpus import corpus_items

    from memory import engine
    from memory.engine import embeddings

    items = [
        i for i in corpus_items(start=900_000, stop=900_000 + 4 * n, n_keys=50, seed=7) if i.kind != "fact"
    ]
    times: dict[str, list[float]] = {"on": [], "off": []}
    for k, item in enumerate(items[: 2 * n]):
        name = "on" if k % 2 else "off"
        embeddings.set_memory_embedder(real if name == "on" else None)
        t0 = time.perf_counter()
        engine.store(agent_id="bench-writes", **item.args)
        times[name].append(time.perf_counter() - t0)
    embeddings.set_memory_embedder(None)
    on = len(times["on"]) / sum(times["on"]) if times["on"] else 0.0
    off = len(times["off"]) / sum(times["off"]) if times["off"] else 0.0
    return [
        result(
            "write_embedding_throughput",
            len(times["on"]),
            on,
            "writes/s",
            off,
            "informational (baseline: the same writes without embedding)",
            None,
            model=str(real.model_name),
        )
    ]


def main(argv: list[str] | None = None) -> int:
    from build import Corpus
    from common import cleanup, machine, setup_django

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="corpus rows")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument(
        "--vectors",
        default="",
        metavar="EMBEDDER",
        help="also measure search with vectors on vs off, write throughput and backfill rate with this"
        " embedder (module:factory, or 'default')",
    )
    ap.add_argument("--only-vectors", action="store_true", help="skip the lexical and session figures")
    args = ap.parse_args(argv)
    db = setup_django()
    try:
        rows = Corpus(db).grow_to(args.n)
        out = []
        if not args.only_vectors:
            out += measure(engine_db=db, n_label=args.n, n_rows=rows, rounds=args.rounds)
            out += measure_session(n_label=args.n, n_rows=rows)
        if args.vectors:
            real = load_embedder(None if args.vectors == "default" else args.vectors)
            out += measure_vectors(n_label=args.n, n_rows=rows, real=real)
            out += measure_write(real=real)
        json.dump({"machine": machine(), "results": out}, sys.stdout, indent=2)
        print()
    finally:
        cleanup(db)
    return 0


if __name__ == "__main__":
    sys.exit(main())
