"""Discovery figures (issue 14): entity edges + Leiden + discovery for one agent at 10k / 100k / 1M facts (time and
peak memory), the Leiden step beside networkx's Louvain on the same weights, and the inbox page with 1,000 items.

Run alone: ``python benchmarks/bench_discovery.py --sizes 10000,100000,1000000`` (prints JSON). ``run_all.py``
calls ``measure``.

Data: one agent per size (``bench-disc-<n>``), ``n / 5`` entities (one-word names), subjects Zipf-distributed
(hubs carry many facts), objects uniform. Each subject's first facts use predicates the registry types
(works_at, knows, lives_in, member_of, uses_tool, …; a subject has each at most once, as the one-open-row rule
wants), the rest ``rel_<i>``; half the facts belong to sessions of three facts. The rows are a bulk SQL insert
of current fact rows (writing 1M facts through the engine takes most of an hour here), then one generation
bump through the engine.

Each size's discovery runs in a child process (``--child``), so its peak memory (ru_maxrss) is its own: the
product's ``discover`` end to end (the DB read, the five signals, Leiden, the rules, the store of the run), with
the time of each step from the run's report. The same child then times networkx's Louvain (seeded) on the same
kept edges and weights, and the modularity of both partitions. The inbox page: a curator's GET of
``/agents/<id>/discoveries/`` (one page of 20) with 1,000 items stored, p50 over rounds, and its query count
beside the count with 10 items (must be equal).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, percentile, result  # noqa: E402

GOAL_1M_S = 30.0
GOAL_1M_MB = 2048
GOAL_INBOX_P50_MS = 50.0
INBOX_ITEMS = 1_000
TYPED = ("works_at", "knows", "lives_in", "member_of", "uses_tool", "manager_of", "located_in", "speaks")
SESSION_FACTS = 3


def agent_of(n: int) -> str:
    return f"bench-disc-{n}"


def bulk_facts(n: int, seed: int = 11) -> float:
    """Insert ``n`` current fact rows for ``agent_of(n)`` with one bulk SQL insert; return the seconds."""
    import numpy as np
    from django.db import connection, transaction
    from django.utils import timezone

    from memory.engine import common as c

    agent = agent_of(n)
    n_entities = max(50, n // 5)
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    cum = np.cumsum(1.0 / np.arange(1, n_entities + 1))
    subj = np.searchsorted(cum, rng.random(n) * cum[-1], side="right").clip(0, n_entities - 1)
    obj = rng.integers(0, n_entities, n)
    order = np.argsort(subj, kind="stable")
    rank = np.empty(n, dtype=np.int64)  # how many earlier facts the subject has
    sorted_s = subj[order]
    starts = np.r_[0, np.flatnonzero(sorted_s[1:] != sorted_s[:-1]) + 1]
    first = np.repeat(starts, np.diff(np.r_[starts, n]))
    rank[order] = np.arange(n) - first
    stamp = connection.ops.adapt_datetimefield_value(timezone.now() - timezone.timedelta(days=1))

    def rows() -> Any:
        for i in range(n):
            s, o = f"ent{subj[i]}", f"ent{obj[i]}"
            p = TYPED[rank[i]] if rank[i] < len(TYPED) else f"rel_{i}"
            session = f"sess{i // SESSION_FACTS}" if (i // SESSION_FACTS) % 2 == 0 else None
            yield (
                f"disc{n:08d}{i:018d}", agent, f"{s} {p} {o}", stamp, "[]", stamp, "semantic", 5.0, 0,
                stamp, p, s, o, 1.0, "{}", "import", 0.7, "[]", "[]", False, session,
            )  # fmt: skip

    with transaction.atomic(), connection.cursor() as cur:
        cur.executemany(
            "INSERT INTO memories (id, agent_id, content, timestamp, tags, created_at, layer, importance,"
            " access_count, valid_from, predicate, subject, object, confidence, metadata, origin, origin_trust,"
            " derived_from, reaffirmed_by, quarantined, session_id, source_event)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
            " 'bench')",
            rows(),
        )
        c.bump_generation(agent)
    return time.perf_counter() - t0


# --- one size, in a child process ---------------------------------------------------------------------------


def child(n: int) -> dict[str, Any]:
    """Run discovery for ``agent_of(n)`` and time Louvain on the same edges; print the figures as JSON."""
    import gc

    import numpy as np
    from django.utils import timezone

    from memory.dream import communities as C
    from memory.dream.discovery import discover
    from memory.dream.edges import compute_edges, load_facts

    gc.collect()
    t0 = time.perf_counter()
    outcome = discover(agent_of(n), actor="system:bench")
    total = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report = outcome.report
    # the same kept edges and weights again, for the two community algorithms side by side
    edges = compute_edges(load_facts(agent_id=agent_of(n), at=timezone.now()))
    from memory.dream.discovery import LEIDEN_MAX_EDGES, strongest

    kept = strongest(edges.kept, edges.composite, LEIDEN_MAX_EDGES)  # the edges discover's Leiden runs on
    a, b, w = edges.a[kept], edges.b[kept], edges.composite[kept]
    t0 = time.perf_counter()
    leiden = C.leiden(edges.facts.n_entities, a, b, w)
    leiden_s = time.perf_counter() - t0
    import igraph as ig
    import networkx as nx

    nodes = np.unique(np.concatenate([a, b]))
    t0 = time.perf_counter()
    g = nx.Graph()
    g.add_weighted_edges_from(zip(a.tolist(), b.tolist(), w.tolist(), strict=True))
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    parts = nx.community.louvain_communities(g, weight="weight", seed=C.SEED)
    louvain_s = time.perf_counter() - t0
    louvain = np.full(edges.facts.n_entities, -1)
    for k, part in enumerate(parts):
        louvain[list(part)] = k
    local = np.full(edges.facts.n_entities, -1)
    local[nodes] = np.arange(nodes.size)
    graph = ig.Graph(n=int(nodes.size), edges=np.column_stack([local[a], local[b]]).tolist())
    q_leiden = graph.modularity(leiden[nodes].tolist(), weights=w.tolist())
    q_louvain = graph.modularity(louvain[nodes].tolist(), weights=w.tolist())
    return {
        "n": n,
        "total_s": round(total, 3),
        "peak_mb": round(peak_mb, 1),
        "steps_s": report["seconds"],
        "entities": report["entities"],
        "candidates": report["candidates"],
        "edges": report["edges"],
        "stored_edges": report["stored_edges"],
        "communities": report["communities"],
        "added": report["added"],
        "weights": report["weights"],
        "missing": sorted(report["missing"]),
        "leiden_s": round(leiden_s, 3),
        "louvain_s": round(louvain_s, 3),
        "louvain_graph_build_s": round(build_s, 3),
        "leiden_communities": int(len(set(leiden[nodes].tolist()))),
        "louvain_communities": len(parts),
        "leiden_modularity": round(q_leiden, 4),
        "louvain_modularity": round(q_louvain, 4),
    }


def run_child(n: int, db: Path) -> dict[str, Any]:
    env_db = str(db)
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", str(n), "--db", env_db],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- the inbox page ---------------------------------------------------------------------------------------------


def inbox_page(rounds: int = 40) -> list[dict[str, Any]]:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from memory import engine
    from memory.models import Agent, Membership, Role, Team

    agent = "bench-inbox"
    team, _ = Team.objects.get_or_create(slug="bench-disc", defaults={"name": "Bench discovery"})
    Agent.objects.get_or_create(agent_id=agent, defaults={"display_name": "Bench inbox", "team": team})
    user = get_user_model().objects.filter(username="bench-curator").first()
    if user is None:
        user = get_user_model().objects.create_user("bench-curator", password="bench-password-123")
        Membership.objects.create(team=team, user=user, role=Role.CURATOR)
    client = Client(HTTP_HOST="localhost")
    client.force_login(user)
    url = reverse("review:discoveries", args=[agent])

    def store(lo: int, hi: int) -> None:
        for start in range(lo, hi, 100):
            engine.inbox_store(
                agent_id=agent,
                findings=[
                    engine.Finding(
                        kind=("cross_community", "indirect_strong", "knowledge_gap")[i % 3],
                        entity_a=f"alpha {i}",
                        entity_b=f"beta {i}",
                        score=(i % 97) / 97,
                        explanation=f"alpha {i} and beta {i} share 3 neighbours, but no fact links them.",
                        evidence={
                            "labels": [f"Alpha {i}", f"Beta {i}"],
                            "signals": {"composite": 0.4, "cooccurrence": 0.2},
                            "neighbours": [f"n{i}", f"m{i}"],
                            "neighbour_labels": [f"N{i}", f"M{i}"],
                            "neighbours_total": 2,
                            "sessions": [f"s{i}"],
                            "sessions_total": 1,
                            "facts": [{"id": f"m_{i:026d}", "subject": "a", "predicate": "p", "object": "b"}],
                            "path": {"nodes": [], "edges": []},
                        },
                    )
                    for i in range(start, min(hi, start + 100))
                ],
                actor="system:bench",
            )

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    store(0, 10)
    few = queries()
    store(10, INBOX_ITEMS)
    many = queries()
    client.get(url)  # warm
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - t0) * 1000)
        assert response.status_code == 200
    p50 = percentile(times, 50)
    return [
        result(
            "inbox_page_p50",
            INBOX_ITEMS,
            p50,
            "ms",
            None,
            f"<= {GOAL_INBOX_P50_MS} ms with {INBOX_ITEMS} items",
            p50 <= GOAL_INBOX_P50_MS,
            p95=round(percentile(times, 95), 2),
        ),
        result(
            "inbox_page_queries",
            INBOX_ITEMS,
            many,
            "queries",
            few,
            "constant: the same count with 10 and with 1,000 items",
            many == few,
        ),
    ]


# --- the figures --------------------------------------------------------------------------------------------------


def measure(*, sizes: list[int], db: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in sorted(sizes):
        print(f"  discovery: writing {n} facts (bulk SQL insert) ...", flush=True)
        spent = bulk_facts(n)
        print(f"  discovery: {n} facts in {spent:.0f} s; running discovery in a child ...", flush=True)
        r = run_child(n, db)
        at_1m = n == 1_000_000
        out.append(
            result(
                "discovery_total",
                n,
                r["total_s"],
                "s",
                None,
                f"<= {GOAL_1M_S} s at 1M" if at_1m else "informational",
                r["total_s"] <= GOAL_1M_S if at_1m else None,
                steps_s=r["steps_s"],
                entities=r["entities"],
                candidates=r["candidates"],
                edges=r["edges"],
                stored_edges=r["stored_edges"],
                communities=r["communities"],
                added=r["added"],
                missing=r["missing"],
            )
        )
        out.append(
            result(
                "discovery_peak_memory",
                n,
                r["peak_mb"],
                "MB",
                None,
                f"<= {GOAL_1M_MB} MB at 1M" if at_1m else "informational",
                r["peak_mb"] <= GOAL_1M_MB if at_1m else None,
            )
        )
        out.append(
            result(
                "leiden_vs_louvain",
                n,
                r["leiden_s"],
                "s",
                r["louvain_s"],
                "informational: igraph Leiden (seeded) vs networkx Louvain (seeded) on the same kept edges",
                None,
                leiden_modularity=r["leiden_modularity"],
                louvain_modularity=r["louvain_modularity"],
                leiden_communities=r["leiden_communities"],
                louvain_communities=r["louvain_communities"],
                louvain_graph_build_s=r["louvain_graph_build_s"],
            )
        )
        print(json.dumps(r), flush=True)
    print("  discovery: the inbox page with 1,000 items ...", flush=True)
    out += inbox_page()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[10_000, 100_000])
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        import os

        import django

        os.environ.pop("DATABASE_URL", None)
        os.environ["MEMDESK_SQLITE_PATH"] = args.db
        os.environ["MEMDESK_VAR_DIR"] = str(Path(args.db).parent)
        os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
        if str(REPO) not in sys.path:
            sys.path.insert(0, str(REPO))
        django.setup()
        print(json.dumps(child(args.child)))
        return 0
    from common import cleanup, machine, setup_django

    db = setup_django()
    try:
        results = measure(sizes=args.sizes, db=db)
    finally:
        cleanup(db)
    print(json.dumps({"machine": machine(), "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
