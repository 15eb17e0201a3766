"""Where does the time go? Profile one workload of the benchmark under cProfile, or hand it to py-spy.

    python benchmarks/profile_hotspots.py store  --n 10000 --calls 2000          # cProfile summary
    python benchmarks/profile_hotspots.py search --n 100000 --calls 300 --db-dir /tmp/b --keep-db
    py-spy record -r 250 -f raw -o /tmp/store.txt -- \\
        python benchmarks/profile_hotspots.py store --n 10000 --calls 4000 --no-cprofile

``--db-dir`` with ``--keep-db`` reuses a corpus already grown there (growing 100k rows takes minutes).
The summary groups cumulative time by engine function and by layer (Django ORM, sqlite3, engine Python).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import AGENT, REPO, cleanup, memory_count  # noqa: E402


def open_db(db_dir: str | None, n: int) -> Path:
    from common import setup_django

    if db_dir and (Path(db_dir) / "engine.sqlite3").exists():
        # Reuse: configure Django on the existing file (migrate is a no-op).
        import os

        db = Path(db_dir) / "engine.sqlite3"
        os.environ.pop("DATABASE_URL", None)
        os.environ["MEMDESK_SQLITE_PATH"] = str(db)
        os.environ["MEMDESK_VAR_DIR"] = str(db.parent)
        os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
        sys.path.insert(0, str(REPO))
        import django

        django.setup()
        from build import Corpus

        corpus = Corpus(db)
        corpus.next_item = 10 * n  # beyond anything grown before: new items only
        if memory_count(db) < n:
            corpus.grow_to(n)
        return db
    db = setup_django(db_dir)
    from build import Corpus

    Corpus(db).grow_to(n)
    return db


def workload(kind: str, calls: int) -> None:
    from corpus import queries, store_sample

    from memory import engine

    if kind == "store":
        for f in store_sample(n=calls, n_keys=2_000, seed=int(time.time())):
            engine.store_temporal(agent_id=AGENT, **f)
    else:
        qs = [q for _, q in queries()]
        for i in range(calls):
            engine.search(agent_id=AGENT, query=qs[i % len(qs)], limit=10)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=("store", "search"))
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--calls", type=int, default=2_000)
    ap.add_argument("--db-dir")
    ap.add_argument("--keep-db", action="store_true")
    ap.add_argument("--no-cprofile", action="store_true", help="just run (for py-spy)")
    ap.add_argument("--top", type=int, default=35)
    args = ap.parse_args(argv)
    db = open_db(args.db_dir, args.n)
    try:
        workload(args.kind, 50)  # warm up
        t0 = time.perf_counter()
        if args.no_cprofile:
            workload(args.kind, args.calls)
        else:
            prof = cProfile.Profile()
            prof.runcall(workload, args.kind, args.calls)
        secs = time.perf_counter() - t0
        print(
            f"{args.kind}: {args.calls} calls in {secs:.2f}s ({args.calls / secs:.0f}/s, {1000 * secs / args.calls:.2f} ms/call)"
        )
        if not args.no_cprofile:
            stats = pstats.Stats(prof)
            stats.sort_stats("cumulative").print_stats(args.top)
    finally:
        if not args.keep_db:
            cleanup(db)
    return 0


if __name__ == "__main__":
    sys.exit(main())
