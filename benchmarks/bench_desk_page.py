"""The quarantine desk at volume (issue 19 item 1): p50 of the compact desk page over N pending batches, by
each sort, against the same page at 10 batches measured in the same run, and query counts that do not grow.

Run alone: ``python benchmarks/bench_desk_page.py [--batches 200] [--requests 20] [--out FILE]`` (prints JSON).

Agent ``bench-desk`` gets a team and a reviewer; N bursts of five facts each are written through the agent-facing
path (``engine.store_temporal(protect=True)``), so the burst guard holds each as one batch; every fifth would
supersede a fact the user told the agent. Each request is a whole page render through Django's test client in
this process (middleware, session, access checks, selectors, templates; no network).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from common import cleanup, machine, percentile, result, setup_django, write_report

AGENT = "bench-desk"
SMALL = 10
GOAL_P50_MS = 50.0
VIEWS = {
    "default": "",
    "by_impact": "?sort=impact",
    "by_size": "?sort=size",
    "by_origin": "?sort=origin",
    "filtered": "?q=customer-1",
}


def provision_people() -> Any:
    from django.contrib.auth import get_user_model

    from memory.models import Agent, Membership, Role, Team

    team = Team.objects.create(name="Desk bench team", slug="bench-desk")
    user = get_user_model().objects.create_user("bench-desk-reviewer", password="bench-password-1")
    Membership.objects.create(team=team, user=user, role=Role.REVIEWER)
    Agent.objects.create(agent_id=AGENT, display_name="Desk bench", team=team)
    return user


def hold(start: int, stop: int) -> None:
    """Batches ``start`` to ``stop``: five facts each from one origin about one subject."""
    from memory import engine

    for b in range(start, stop):
        subject = f"customer-{b}"
        if b % 5 == 0:
            engine.store_temporal(
                agent_id=AGENT,
                content=f"{subject} plan basic",
                subject=subject,
                predicate="plan",
                object="basic",
                origin="user_direct",
            )
        for k in range(5 + b % 3):
            predicate, value = ("plan", "enterprise") if (b % 5 == 0 and k == 0) else (f"note_{k}", f"v{k}")
            engine.store_temporal(
                agent_id=AGENT,
                content=f"{subject} {predicate} {value}",
                subject=subject,
                predicate=predicate,
                object=value,
                origin=f"channel:crm-{b % 4}",
                protect=True,
            )


def timed(client: Any, url: str, requests: int) -> tuple[list[float], int]:
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
    wall = []
    for _ in range(requests):
        t0 = time.perf_counter()
        assert client.get(url).status_code == 200
        wall.append((time.perf_counter() - t0) * 1000)
    return wall, len(executed)


def measure(*, batches: int = 200, requests: int = 20) -> list[dict[str, Any]]:
    from django.test import Client
    from django.urls import reverse

    from memory.models import ApprovalRequest

    user = provision_people()
    client = Client(SERVER_NAME="localhost")
    client.force_login(user)
    base = reverse("review:quarantine", args=[AGENT])
    hold(0, SMALL)
    small = {name: timed(client, base + q, requests) for name, q in VIEWS.items()}
    t0 = time.perf_counter()
    hold(SMALL, batches)
    build_s = time.perf_counter() - t0
    held = ApprovalRequest.objects.filter(agent_id=AGENT, status="pending").count()
    out = []
    for name, query in VIEWS.items():
        times, count = timed(client, base + query, requests)
        p50, base_p50 = statistics.median(times), statistics.median(small[name][0])
        out.append(
            result(
                f"desk_page_{name}",
                held,
                round(p50, 3),
                "ms",
                round(base_p50, 3),
                f"p50 <= {GOAL_P50_MS:.0f} ms over {requests} requests; queries the same as at {SMALL} batches",
                p50 <= GOAL_P50_MS and count == small[name][1],
                ratio_to_small=round(p50 / base_p50, 2) if base_p50 else None,
                p95_ms=round(percentile(times, 95), 3),
                queries=count,
                queries_at_small=small[name][1],
                requests=requests,
                url=base + query,
            )
        )
    out.append(
        result(
            "desk_batches_build",
            held,
            round((batches - SMALL) / build_s, 1),
            "batches/s",
            None,
            "informational: bursts through engine.store_temporal(protect=True)",
            None,
        )
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--db-dir", help="where to put the temporary database (default: a new temp dir)")
    ap.add_argument("--keep-db", action="store_true")
    ap.add_argument("--out", type=Path, help="also write the JSON report to this file")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    info = machine()
    db = setup_django(args.db_dir)
    try:
        results = measure(batches=args.batches, requests=args.requests)
    finally:
        if not args.keep_db:
            cleanup(db)
    return write_report(info, started, results, args.out)


if __name__ == "__main__":
    sys.exit(main())
