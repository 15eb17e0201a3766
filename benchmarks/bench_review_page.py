"""The review queue page with 10k pending items (issue 13): p50 over 20 requests (goal <= 50 ms) and a query
count that does not grow with the items.

Run alone: ``python benchmarks/bench_review_page.py [--items 10000] [--requests 20] [--out FILE]`` (prints JSON).
``measure(...)`` works on a database ``common.setup_django`` configured (as ``run_all.py`` does).

Agent ``bench-review`` gets a team, a reviewer and 200 facts written by ``engine.store_temporal``; then 10k
conflict items are proposed through ``engine.review_propose`` with the dream loop's payload (both sides from
``engine.side_of``), spread over confidences, impacts and verdicts. Each request is a whole page render through
Django's test client in this process (middleware, session, access checks, selectors, templates; no network):
the default view (pending, lowest confidence first), sorted by impact, and filtered by kind and text. The query
count is read at 100 items and again at the full size.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from common import cleanup, machine, percentile, result, setup_django, write_report

AGENT = "bench-review"
N_FACTS = 200
GOAL_P50_MS = 50.0
VIEWS = {
    "default": "",
    "by_impact": "?sort=impact",
    "filtered": "?kind=conflict&q=service-1&conf_max=0.7",
}


def provision_people() -> Any:
    from django.contrib.auth import get_user_model

    from memory.models import Agent, Membership, Role, Team

    team = Team.objects.create(name="Bench team", slug="bench-review")
    user = get_user_model().objects.create_user("bench-reviewer", password="bench-password-1")
    Membership.objects.create(team=team, user=user, role=Role.REVIEWER)
    Agent.objects.create(agent_id=AGENT, display_name="Review bench", team=team)
    return user


def write_facts() -> list[Any]:
    """Facts in pairs of near-synonym predicates (both stay current), written through the engine."""
    from memory import engine
    from memory.models import Memory

    ids = []
    for k in range(N_FACTS // 2):
        for predicate, value in (("deploy_target", f"region-{k}"), ("deploy_target_v2", f"Region {k} (EU)")):
            ids.append(
                engine.store_temporal(
                    agent_id=AGENT,
                    content=f"service-{k} deploys to {value}",
                    subject=f"service-{k}",
                    predicate=predicate,
                    object=value,
                    origin="user_direct",
                    source_event=f"bench-{k}",
                ).id
            )
    rows = {m.id: m for m in Memory.objects.filter(agent_id=AGENT, id__in=ids)}
    return [rows[i] for i in ids]


def propose(rows: list[Any], start: int, stop: int) -> None:
    """Items ``start`` to ``stop``: each about one pair of facts (pairs repeat; fingerprints do not)."""
    from django.db import transaction

    from memory import engine

    pairs = [(rows[k], rows[k + 1]) for k in range(0, len(rows), 2)]
    states = {old.id: engine.state_fingerprint([old, new]) for old, new in pairs}
    for chunk in range(start, stop, 500):
        with transaction.atomic():
            for n in range(chunk, min(stop, chunk + 500)):
                old, new = pairs[n % len(pairs)]
                verdict = ("UNSURE", "MERGE", "SUPERSEDE")[n % 3]
                proposal = engine.Proposal(
                    kind="conflict",
                    fingerprint=f"bench-review-{n:08d}",
                    title=f"{old.subject}: “{old.object}” vs “{new.object}” ({n})",
                    payload={
                        "action": {"verdict": verdict, "old_id": old.id, "new_id": new.id},
                        "old": engine.side_of(old),
                        "new": engine.side_of(new),
                        "rule": "b",
                        "judge_reason": "near-synonym predicates with near-equal objects",
                    },
                    memory_ids=[old.id, new.id],
                    confidence=round(0.3 + (n * 37 % 50) / 100, 2),
                    impact=n % 9,
                    reason="confidence is not above the threshold",
                    judge="heuristic",
                    state=states[old.id],
                    verdict_type=f"conflict:{verdict}",
                )
                engine.review_propose(agent_id=AGENT, proposal=proposal)


def timed(client: Any, url: str, requests: int) -> tuple[list[float], list[float], int]:
    """Wall and CPU milliseconds per request (after two warm-up requests), and the queries of one request
    (counted at the connection, which the request cycle closes and reopens)."""
    from django.db import connection

    for _ in range(2):
        assert client.get(url).status_code == 200
    executed: list[str] = []

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        executed.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        response = client.get(url)
    assert response.status_code == 200 and b'class="card queue-card' in response.content
    wall, cpu = [], []
    for _ in range(requests):
        t0, c0 = time.perf_counter(), time.thread_time()
        response = client.get(url)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
        assert response.status_code == 200
    return wall, cpu, len(executed)


def measure(*, items: int = 10_000, requests: int = 20) -> list[dict[str, Any]]:
    from django.test import Client
    from django.urls import reverse

    user = provision_people()
    rows = write_facts()
    client = Client(SERVER_NAME="localhost")
    client.force_login(user)
    base = reverse("review:review", args=[AGENT])
    small = min(100, items)
    propose(rows, 0, small)
    counts_small = {name: timed(client, base + q, 1)[2] for name, q in VIEWS.items()}
    t0 = time.perf_counter()
    propose(rows, small, items)
    build_s = time.perf_counter() - t0
    out = []
    for name, query in VIEWS.items():
        times, cpu, count = timed(client, base + query, requests)
        p50 = statistics.median(times)
        out.append(
            result(
                f"review_page_{name}",
                items,
                p50,
                "ms",
                None,
                f"p50 <= {GOAL_P50_MS:.0f} ms over {requests} requests; queries constant in the items",
                p50 <= GOAL_P50_MS and count == counts_small[name],
                p95_ms=round(percentile(times, 95), 3),
                cpu_p50_ms=round(statistics.median(cpu), 3),  # this thread's CPU: what load on the box hides
                queries=count,
                queries_at_100=counts_small[name],
                requests=requests,
                url=base + query,
            )
        )
    out.append(
        result(
            "review_items_build",
            items,
            round((items - small) / build_s, 1),
            "items/s",
            None,
            "informational: engine.review_propose calls in outer transactions",
            None,
        )
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--db-dir", help="where to put the temporary database (default: a new temp dir)")
    ap.add_argument("--keep-db", action="store_true")
    ap.add_argument("--out", type=Path, help="also write the JSON report to this file")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    info = machine()
    db = setup_django(args.db_dir)
    try:
        results = measure(items=args.items, requests=args.requests)
    finally:
        if not args.keep_db:
            cleanup(db)
    return write_report(info, started, results, args.out)


if __name__ == "__main__":
    sys.exit(main())
