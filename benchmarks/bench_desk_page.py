"""The dashboard's main pages at volume (issue 19 "Done when"): server time and query count of the quarantine
desk (by each sort) and the other main pages of one agent with 100k memories and 200 held batches, against the
same pages of the same agent at 10 batches and a few hundred memories, measured in the same run.

Run alone: ``python benchmarks/bench_desk_page.py [--memories 100000] [--batches 200] [--requests 20]
[--out FILE] [--db-dir DIR --keep-db] [--reuse-db]`` (prints JSON). ``--reuse-db`` measures a database a
previous ``--keep-db`` run left in ``--db-dir`` (no building; the "small" column is then missing).

Agent ``bench-desk`` gets a team and an admin (who may open every page). Phase one: 10 bursts of five to seven
facts are written through the agent-facing path (``engine.store_temporal(protect=True)``), so the burst guard
holds each as one batch (every fifth would supersede a fact the user told the agent), and every page is
measured. Phase two: the agent's corpus grows to ``--memories`` rows through ``engine.store`` /
``engine.store_temporal`` (``corpus.py``'s generator, many engine calls per outer transaction), 190 more
batches are held, and every page is measured again. Each request is a whole page render through Django's test
client in this process (middleware, session, access checks, selectors, templates; no network): "server time"
is that wall time (p50 over ``--requests`` after two warm-ups), with this thread's CPU time beside it (what load
on a shared machine hides). The query count of one request is read with Django's ``CaptureQueriesContext``.
The desk's list renders only the open batch's full card, so ``page_desk_card`` measures what opening another
batch costs (its card over HTMX, ``?batch=<id>&card=1``). Goal per page: p50 <= 50 ms at volume, and the same number of queries as at the small size.
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
ADMIN = "bench-desk-admin"
SMALL = 10
GOAL_P50_MS = 50.0
CHUNK = 1_000
# name -> (url name, query string); the desk's views first
DESK_VIEWS = {
    "desk_default": ("review:quarantine", ""),
    "desk_by_impact": ("review:quarantine", "?sort=impact"),
    "desk_by_size": ("review:quarantine", "?sort=size"),
    "desk_by_origin": ("review:quarantine", "?sort=origin"),
    "desk_filtered": ("review:quarantine", "?q=customer-1"),
    "desk_decided": ("review:quarantine", "?status=all"),
}
OTHER_PAGES = {
    "agent_home": ("dashboard:agent", ""),
    "memories": ("dashboard:memories", ""),
    "memories_search": ("dashboard:memories", "?q=deploy"),
    "timeline_keys": ("dashboard:timeline", ""),
    "timeline_key": ("dashboard:timeline", "?subject=customer-0&predicate=plan"),
    "review_queue": ("review:review", ""),
    "audit_log": ("dashboard:audit", ""),
    "operations": ("dashboard:operations", ""),
    "tokens": ("dashboard:tokens", ""),
}
PAGES = {**DESK_VIEWS, **OTHER_PAGES}
DESK_CARD = "desk_card"  # one batch's card as the desk loads it when the batch is opened (HTMX)


def provision_people() -> Any:
    from django.contrib.auth import get_user_model

    from memory.models import Agent, Membership, Role, Team

    team = Team.objects.create(name="Desk bench team", slug="bench-desk")
    user = get_user_model().objects.create_user(ADMIN, password="bench-password-1")
    Membership.objects.create(team=team, user=user, role=Role.ADMIN)
    Agent.objects.create(agent_id=AGENT, display_name="Desk bench", team=team)
    return user


def hold(start: int, stop: int) -> None:
    """Batches ``start`` to ``stop``: five to seven facts each from one origin about one subject."""
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


def memory_rows() -> int:
    from memory.models import Memory

    return Memory.objects.filter(agent_id=AGENT).count()


def grow(n_rows: int) -> tuple[int, float]:
    """Grow the agent's memories to ``n_rows`` through the engine; (rows, seconds)."""
    from corpus import corpus_items
    from django.db import transaction

    from memory import engine

    rows, next_item, seconds = memory_rows(), 0, 0.0
    while rows < n_rows:
        want = min(CHUNK, max(50, int((n_rows - rows) * 1.15)))
        t0 = time.perf_counter()
        with transaction.atomic():
            for item in corpus_items(start=next_item, stop=next_item + want, n_keys=5_000, seed=7):
                if item.kind == "fact":
                    engine.store_temporal(agent_id=AGENT, **item.args)
                else:
                    engine.store(agent_id=AGENT, **item.args)
        seconds += time.perf_counter() - t0
        next_item += want
        rows = memory_rows()
        if rows // 10_000 != (rows - want) // 10_000:
            print(f"  desk bench corpus: {rows} rows ({next_item / seconds:.0f} engine calls/s)", flush=True)
    return rows, seconds


def timed(
    client: Any, url: str, requests: int, headers: dict[str, str] | None = None
) -> tuple[list[float], list[float], int]:
    """Wall and CPU milliseconds per request (after two warm-ups), and the queries of one request."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for _ in range(2):
        assert client.get(url, headers=headers).status_code == 200, url
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url, headers=headers).status_code == 200, url
    count = len(queries.captured_queries)  # read now: the next request resets the connection's log
    wall, cpu = [], []
    for _ in range(requests):
        t0, c0 = time.perf_counter(), time.thread_time()
        response = client.get(url, headers=headers)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
        assert response.status_code == 200, url
    return wall, cpu, count


def measure_pages(client: Any, requests: int) -> dict[str, tuple[list[float], list[float], int]]:
    from django.urls import reverse

    from memory.models import ApprovalRequest

    out = {
        name: timed(client, reverse(view, args=[AGENT]) + query, requests)
        for name, (view, query) in PAGES.items()
    }
    # the desk's list renders only the open batch's card; opening another loads its body (queue.js, HTMX)
    last = ApprovalRequest.objects.filter(agent_id=AGENT, status="pending").order_by("-id").first()
    if last is not None:
        url = reverse("review:quarantine", args=[AGENT]) + f"?status=all&batch={last.id}&card=1"
        out[DESK_CARD] = timed(client, url, requests, headers={"HX-Request": "true"})
    return out


def measure(
    *, memories: int = 100_000, batches: int = 200, requests: int = 20, reuse: bool = False
) -> list[dict[str, Any]]:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from memory.models import ApprovalRequest

    client = Client(SERVER_NAME="localhost")
    small: dict[str, tuple[list[float], list[float], int]] = {}
    build_s = 0.0
    if reuse:
        client.force_login(get_user_model().objects.get(username=ADMIN))
    else:
        client.force_login(provision_people())
        hold(0, SMALL)
        small = measure_pages(client, requests)
        small_rows = memory_rows()
        t0 = time.perf_counter()
        grow(memories)
        hold(SMALL, batches)
        build_s = time.perf_counter() - t0
    rows = memory_rows()
    held = ApprovalRequest.objects.filter(agent_id=AGENT, status="pending").count()
    large = measure_pages(client, requests)
    out = []
    for name, (wall, cpu, count) in large.items():
        p50 = statistics.median(wall)
        base = small.get(name)
        base_p50 = statistics.median(base[0]) if base else None
        out.append(
            result(
                f"page_{name}",
                rows,
                p50,
                "ms",
                base_p50,
                f"p50 <= {GOAL_P50_MS:.0f} ms at {rows} memories / {held} held batches; queries the same as "
                f"at {SMALL} batches",
                p50 <= GOAL_P50_MS and (base is None or count == base[2]),
                p95_ms=round(percentile(wall, 95), 3),
                cpu_p50_ms=round(statistics.median(cpu), 3),
                cpu_p50_ms_small=round(statistics.median(base[1]), 3) if base else None,
                queries=count,
                queries_small=base[2] if base else None,
                held_batches=held,
                requests=requests,
                url=f"{PAGES[name][0]} {PAGES[name][1]}"
                if name in PAGES
                else "review:quarantine ?batch=…&card=1",
            )
        )
    if not reuse:
        out.append(
            result(
                "desk_bench_build",
                rows,
                round(build_s, 1),
                "s",
                None,
                f"informational: {rows - small_rows} memories and {batches - SMALL} batches through the engine",
                None,
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=100_000)
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--db-dir", help="where to put the temporary database (default: a new temp dir)")
    ap.add_argument("--keep-db", action="store_true")
    ap.add_argument("--reuse-db", action="store_true", help="measure the database --db-dir already holds")
    ap.add_argument("--out", type=Path, help="also write the JSON report to this file")
    args = ap.parse_args(argv)
    if args.reuse_db and not args.db_dir:
        ap.error("--reuse-db needs --db-dir")
    started = time.perf_counter()
    info = machine()
    db = setup_django(args.db_dir, keep=args.reuse_db)
    try:
        results = measure(
            memories=args.memories, batches=args.batches, requests=args.requests, reuse=args.reuse_db
        )
    finally:
        if not (args.keep_db or args.reuse_db):
            cleanup(db)
    return write_report(info, started, results, args.out)


if __name__ == "__main__":
    sys.exit(main())
