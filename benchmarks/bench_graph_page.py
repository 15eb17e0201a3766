"""The graph page's opening read (issue 19 item 16) at size: ``engine.graph_view`` as the page calls it on a large
graph (``focus_over``: the hub by PageRank, then its neighbourhood, labels in their stored surface form), against
the same run's plain capped view of the whole graph (no focus) as the baseline; and the two additions alone
(``hub`` and ``surface_forms``) as a share of that baseline.

Run alone: ``python benchmarks/bench_graph_page.py --sizes 10000,100000`` (prints JSON). The facts are written by
``bench_graph.bulk_db`` (one bulk SQL insert of current fact rows, Zipf subjects). Goal: the opening read costs at
most 1.5× the plain capped view of the same graph.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_graph import AGENT, bulk_db  # noqa: E402
from common import percentile, result, write_report  # noqa: E402

GOAL_RATIO = 1.5
LARGE = 150  # dashboard.graph_views.LARGE_GRAPH_NODES


def timed(fn: Any, rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def measure_size(n: int, start: int, *, rounds: int) -> list[dict[str, Any]]:
    from memory import engine
    from memory.engine import common as c
    from memory.engine.graph.aliases import _alias_map
    from memory.engine.graph.curation import hub, surface_forms
    from memory.engine.graph.scan import _edge_columns

    bulk_db(start, n, max(50, n // 20), seed=7)
    plain = engine.graph_view(agent_id=AGENT, limit=300)
    opening = engine.graph_view(agent_id=AGENT, limit=300, focus_over=LARGE)
    assert opening.auto_focus and opening.entities > LARGE, (opening.entities, opening.auto_focus)
    base = timed(lambda: engine.graph_view(agent_id=AGENT, limit=300), rounds)
    page = timed(lambda: engine.graph_view(agent_id=AGENT, limit=300, focus_over=LARGE), rounds)
    edges = _edge_columns(AGENT, c.now(), aliases=_alias_map(AGENT))
    wanted = {node["id"] for node in plain.nodes}
    hub_ms = timed(lambda: hub(edges.subjects, edges.objects, len(edges.names)), rounds)
    labels_ms = timed(lambda: surface_forms(edges, wanted), rounds)
    b50, p50 = percentile(base, 50), percentile(page, 50)
    return [
        result(
            "graph_page_opening_p50",
            n,
            p50,
            "ms",
            b50,
            f"<= {GOAL_RATIO}x the plain capped view",
            p50 <= GOAL_RATIO * b50,
            entities=opening.entities,
            hub=opening.entity,
            shown_edges=opening.shown_edges,
        ),  # fmt: skip
        result("graph_hub_pagerank_p50", n, percentile(hub_ms, 50), "ms", b50, "informative", None),
        result(
            "graph_surface_forms_p50",
            n,
            percentile(labels_ms, 50),
            "ms",
            b50,
            "informative",
            None,
            labelled=len(wanted),
        ),  # fmt: skip
    ]


def main(argv: list[str] | None = None) -> int:
    from common import cleanup, machine, setup_django

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[10_000, 100_000])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    started = time.perf_counter()
    info = machine()
    db = setup_django()
    results: list[dict[str, Any]] = []
    try:
        done = 0
        for n in sorted(args.sizes):
            print(f"  graph page: {n} facts ...", file=sys.stderr, flush=True)
            results += measure_size(n, done, rounds=args.rounds)
            done = n
    finally:
        cleanup(db)
    return write_report(info, started, results, args.out)


if __name__ == "__main__":
    sys.exit(main())
