"""Figure (a): ``engine.store_temporal`` facts per second, beside a raw sqlite3 baseline doing the same facts;
and the batch path ``engine.store_temporal_many`` beside the same raw store run in batches.

Run alone: ``python benchmarks/bench_store.py --n 10000`` (prints JSON). ``run_all.py`` calls ``measure``.

Both sides start from the same database (the raw side is a byte copy of the engine's file, FTS triggers
dropped) and get the same facts, interleaved in chunks so both see the same machine load. The raw side is the
least a hand-written store could do: look up the open row of the key, reaffirm (one UPDATE) or close it (one
UPDATE) and insert the new row plus its FTS document (same tokenizer function). ``store_temporal``: one
transaction per fact on both sides. ``store_temporal_many``: a second sample on the same key pool, one call per
1,000 facts, against the raw store writing each 1,000 facts in one transaction.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from common import AGENT, result

GOAL_FACTS_PER_S = 2_000.0
GOAL_VS_RAW = 4.0
GOAL_BATCH_FACTS_PER_S = 10_000.0
CHUNK = 100
BATCH_CHUNK = 1_000


def _dt(value: datetime) -> str:
    """Django's SQLite storage format for an aware UTC datetime."""
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ")


class RawStore:
    """A byte copy of the engine database, written with plain sqlite3 (no Django, no write log)."""

    def __init__(self, engine_db: Path, path: Path) -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        src = sqlite3.connect(engine_db)
        self.db = sqlite3.connect(path, isolation_level=None)
        src.backup(self.db)
        src.close()
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        for trig in ("memories_fts_ai", "memories_fts_ad", "memories_fts_au"):
            self.db.execute(f"DROP TRIGGER IF EXISTS {trig}")
        self.path = path

    def store(self, f: dict[str, Any]) -> str:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            outcome = self._write(f)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return outcome

    def store_many(self, facts: list[dict[str, Any]]) -> list[str]:
        """The same writes, all in one transaction."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            outcomes = [self._write(f) for f in facts]
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return outcomes

    def _write(self, f: dict[str, Any]) -> str:
        from ulid import ULID

        from memory.engine.text import document

        db = self.db
        now = _dt(datetime.now(UTC))
        row = db.execute(
            "SELECT id, object, content FROM memories WHERE agent_id = ? AND subject = ? AND predicate = ?"
            " AND valid_until IS NULL AND NOT quarantined",
            (AGENT, f["subject"], f["predicate"]),
        ).fetchone()
        if row is not None and row[1] == f["object"] and row[2].strip() == f["content"].strip():
            db.execute("UPDATE memories SET access_count = access_count + 1 WHERE id = ?", (row[0],))
            outcome = "reaffirmed"
        else:
            mid = f"m_{ULID()}".lower()
            if row is not None:
                db.execute(
                    "UPDATE memories SET valid_until = ?, superseded_by = ?, invalidated_by_event = ?,"
                    " invalidated_at = ? WHERE id = ?",
                    (now, mid, f["source_event"], now, row[0]),
                )
            db.execute(
                "INSERT INTO memories (id, agent_id, content, timestamp, tags, created_at, layer, importance,"
                " access_count, last_accessed, source_event, valid_from, valid_until, superseded_by,"
                " supersedes, subject, predicate, object, confidence, metadata, origin, origin_trust,"
                " derived_from, ingested_at, invalidated_by_event, invalidated_at, reaffirmed_by,"
                " quarantined, session_id)"
                " VALUES (?, ?, ?, ?, '[]', ?, 'semantic', 5.0, 0, NULL, ?, ?, NULL, NULL, ?, ?, ?, ?, 1.0,"
                " '{}', ?, 1.0, '[]', ?, NULL, NULL, '[]', 0, NULL)",
                (
                    mid,
                    AGENT,
                    f["content"],
                    now,
                    now,
                    f["source_event"],
                    now,
                    row[0] if row else None,
                    f["subject"],
                    f["predicate"],
                    f["object"],
                    f["origin"],
                    now,
                ),
            )
            db.execute(
                "INSERT INTO memories_fts (doc, memory_id) VALUES (?, ?)",
                (document(f["content"], f["subject"], f["predicate"], f["object"]), mid),
            )
            outcome = "stored"
        return outcome

    def close(self) -> None:
        self.db.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)


def measure(
    *,
    engine_db: Path,
    n_label: int,
    n_rows: int,
    sample: list[dict[str, Any]],
    batch_sample: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    raw = RawStore(engine_db, engine_db.parent / f"raw-store-{n_label}.sqlite3")
    try:
        out = _measure_one_by_one(raw, n_label, n_rows, sample)
        if batch_sample:
            out += _measure_batch(raw, n_label, n_rows, batch_sample)
    finally:
        raw.close()
    return out


def _measure_one_by_one(
    raw: RawStore, n_label: int, n_rows: int, sample: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    from memory import engine

    t_engine = t_raw = 0.0
    outcomes: dict[str, int] = {}
    raw_outcomes: dict[str, int] = {}
    for start in range(0, len(sample), CHUNK):
        chunk = sample[start : start + CHUNK]
        t0 = time.perf_counter()
        for f in chunk:
            r = engine.store_temporal(agent_id=AGENT, **f)
            outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
        t1 = time.perf_counter()
        for f in chunk:
            o = raw.store(f)
            raw_outcomes[o] = raw_outcomes.get(o, 0) + 1
        t2 = time.perf_counter()
        t_engine += t1 - t0
        t_raw += t2 - t1
    rate, raw_rate = len(sample) / t_engine, len(sample) / t_raw
    return [
        result(
            "store_temporal",
            n_label,
            rate,
            "facts/s",
            raw_rate,
            f">= {GOAL_FACTS_PER_S:.0f} facts/s and >= 1/{GOAL_VS_RAW:.0f} of raw (ratio >= {1 / GOAL_VS_RAW})",
            rate >= GOAL_FACTS_PER_S and rate * GOAL_VS_RAW >= raw_rate,
            rows_before=n_rows,
            sample=len(sample),
            engine_outcomes=outcomes,
            raw_outcomes=raw_outcomes,
            ms_per_fact=round(1000 * t_engine / len(sample), 3),
            raw_ms_per_fact=round(1000 * t_raw / len(sample), 3),
        )
    ]


def _measure_batch(
    raw: RawStore, n_label: int, n_rows: int, sample: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    from memory import engine

    t_engine = t_raw = 0.0
    outcomes: dict[str, int] = {}
    raw_outcomes: dict[str, int] = {}
    for start in range(0, len(sample), BATCH_CHUNK):
        chunk = sample[start : start + BATCH_CHUNK]
        t0 = time.perf_counter()
        results = engine.store_temporal_many(agent_id=AGENT, facts=chunk)
        t1 = time.perf_counter()
        raw_results = raw.store_many(chunk)
        t2 = time.perf_counter()
        t_engine += t1 - t0
        t_raw += t2 - t1
        for r in results:
            outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
        for o in raw_results:
            raw_outcomes[o] = raw_outcomes.get(o, 0) + 1
    rate, raw_rate = len(sample) / t_engine, len(sample) / t_raw
    return [
        result(
            "store_temporal_many",
            n_label,
            rate,
            "facts/s",
            raw_rate,
            f">= {GOAL_BATCH_FACTS_PER_S:.0f} facts/s (baseline: the raw store, {BATCH_CHUNK} facts per transaction)",
            rate >= GOAL_BATCH_FACTS_PER_S,
            rows_before=n_rows,
            sample=len(sample),
            facts_per_call=BATCH_CHUNK,
            engine_outcomes=outcomes,
            raw_outcomes=raw_outcomes,
            us_per_fact=round(1e6 * t_engine / len(sample), 1),
            raw_us_per_fact=round(1e6 * t_raw / len(sample), 1),
        )
    ]


def main(argv: list[str] | None = None) -> int:
    from build import Corpus
    from common import cleanup, machine, setup_django
    from corpus import store_sample

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="corpus rows before timing")
    ap.add_argument("--sample", type=int, default=2_000, help="facts timed")
    ap.add_argument("--keys", type=int, default=2_000, help="distinct keys in the timed sample")
    ap.add_argument(
        "--batch-sample", type=int, default=10_000, help="facts timed through store_temporal_many"
    )
    args = ap.parse_args(argv)
    db = setup_django()
    try:
        rows = Corpus(db).grow_to(args.n)
        out = measure(
            engine_db=db,
            n_label=args.n,
            n_rows=rows,
            sample=store_sample(n=args.sample, n_keys=args.keys, seed=1),
            batch_sample=store_sample(n=args.batch_sample, n_keys=args.keys, seed=2),
        )
        json.dump({"machine": machine(), "results": out}, sys.stdout, indent=2)
        print()
    finally:
        cleanup(db)
    return 0


if __name__ == "__main__":
    sys.exit(main())
