"""Grow the benchmark agent's corpus through engine functions only (``engine.store`` / ``engine.store_temporal``).

To keep 100k rows affordable, calls are grouped: many engine calls inside one outer ``transaction.atomic()``
(each call still runs its own nested atomic block, validation and timeline re-derivation).
"""

from __future__ import annotations

import time
from pathlib import Path

from common import AGENT, memory_count
from corpus import corpus_items

CORPUS_KEYS = 5_000
CHUNK = 1_000


class Corpus:
    def __init__(self, db_path: Path, *, seed: int = 42) -> None:
        self.db_path = db_path
        self.seed = seed
        self.next_item = 0
        self.build_seconds = 0.0
        self.calls = 0

    def grow_to(self, n_rows: int, *, log: bool = True) -> int:
        """Add items until the agent has at least ``n_rows`` memory rows; return the row count."""
        from django.db import transaction

        from memory import engine

        rows = memory_count(self.db_path)
        logged = rows // 10_000
        while rows < n_rows:
            want = min(CHUNK, max(50, int((n_rows - rows) * 1.15)))
            items = corpus_items(
                start=self.next_item, stop=self.next_item + want, n_keys=CORPUS_KEYS, seed=self.seed
            )
            t0 = time.perf_counter()
            with transaction.atomic():
                for item in items:
                    if item.kind == "fact":
                        engine.store_temporal(agent_id=AGENT, **item.args)
                    else:
                        engine.store(agent_id=AGENT, **item.args)
            self.build_seconds += time.perf_counter() - t0
            self.next_item += want
            self.calls += want
            rows = memory_count(self.db_path)
            if log and (rows // 10_000 != logged or rows >= n_rows):
                logged = rows // 10_000
                print(
                    f"  corpus: {rows:>7} rows after {self.calls} engine calls "
                    f"({self.calls / self.build_seconds:.0f} calls/s in bulk)",
                    flush=True,
                )
        return rows
