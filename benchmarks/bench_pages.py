"""Every main dashboard page at 10k and 100k memories (issue 19 "Done when": pages stay <= 50 ms server time with
constant query counts at 100k memories).

Run alone: ``python benchmarks/bench_pages.py [--sizes 10000,100000] [--requests 20] [--db-dir DIR --keep-db]
[--reuse-db] [--out FILE]`` (prints JSON; ``make bench`` runs it through run_all.py). ``--keep-db`` leaves one
database file per size in ``--db-dir`` (``pages-<n>.sqlite3``); ``--reuse-db`` measures those files again
without building (after a code change: migrations are applied first).

One agent, ``bench-pages``, of a team with an admin (who may open every page), gets the same fixtures at every
size, written first through the engine and the wiki service: 20 batches the burst guard held (five to seven facts
from one channel about one customer; every fifth would supersede a fact the user told the agent), two of them
decided, 30 review-queue conflict items, three tokens, five wiki pages, five mistakes and a key with a
supersession chain (the memory detail and timeline pages open it). Then its corpus grows through
``engine.store`` / ``engine.store_temporal`` (``corpus.py``'s generator) to the first size, discovery runs
(inbox items and communities for the graph page), and the database file is copied; then to the next size, and
so on. Only the corpus and the discovery output differ between the files.

Each size is measured in a fresh child process (no cache carries over): every page through Django's test client
(middleware, session, access checks, selectors, templates; no network), two warm-ups, then ``--requests``
timed requests: p50 and p95 of the wall time ("server time") and this thread's CPU time. The query count of one
request comes from ``CaptureQueriesContext``. Goal per page: p50 <= 50 ms at the largest size, and the same
query count at every size.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, machine, percentile, result, write_report  # noqa: E402

AGENT = "bench-pages"
ADMIN = "bench-pages-admin"
GOAL_P50_MS = 50.0
BATCHES = 20
REVIEW_ITEMS = 30
CHUNK = 1_000
TIMELINE_SUBJECT, TIMELINE_PREDICATE = "user:bench", "lives_in"
# name -> (url name, url args after the agent id ("" for none), query string); the agent id is the first arg
# except for the home page. ``{detail}``, ``{wiki}`` are filled from the fixtures.
PAGES: dict[str, tuple[str, str, str]] = {
    "home": ("dashboard:home", "-", ""),
    "agent_home": ("dashboard:agent", "", ""),
    "memories": ("dashboard:memories", "", ""),
    "memories_filter": ("dashboard:memories", "", "?layer=semantic&origin_class=user"),
    "memories_history": ("dashboard:memories", "", "?status=all"),
    "memories_search": ("dashboard:memories", "", "?q=deploy"),
    "memory_detail": ("dashboard:memory", "{detail}", ""),
    "timeline_keys": ("dashboard:timeline", "", ""),
    "timeline_keys_search": ("dashboard:timeline", "", "?q=user"),
    "timeline_key": ("dashboard:timeline", "", f"?subject={TIMELINE_SUBJECT}&predicate={TIMELINE_PREDICATE}"),
    "desk_expiry": ("review:quarantine", "", ""),
    "desk_size": ("review:quarantine", "", "?sort=size"),
    "desk_impact": ("review:quarantine", "", "?sort=impact"),
    "desk_origin": ("review:quarantine", "", "?sort=origin"),
    "desk_all": ("review:quarantine", "", "?status=all"),
    "desk_card": ("review:quarantine", "", "?status=all&batch={batch}&card=1"),
    "review_queue": ("review:review", "", ""),
    "discoveries": ("review:discoveries", "", ""),
    "graph": ("dashboard:graph", "", ""),
    "graph_entity": ("dashboard:graph", "", "?entity=user:0"),
    "wiki_list": ("wiki:list", "", ""),
    "wiki_page": ("wiki:page", "{wiki}", ""),
    "audit": ("dashboard:audit", "", ""),
    "operations": ("dashboard:operations", "", ""),
    "tokens": ("dashboard:tokens", "", ""),
    "mistakes": ("dashboard:mistakes", "", ""),
    "insights": ("dashboard:insights", "", ""),
}
HTMX = {"desk_card"}


# --- building -----------------------------------------------------------------------------------------------


def provision() -> None:
    from django.contrib.auth import get_user_model

    from memory.models import Agent, Membership, Role, Team

    team = Team.objects.create(name="Pages bench team", slug="bench-pages")
    user = get_user_model().objects.create_user(ADMIN, password="bench-password-1")
    Membership.objects.create(team=team, user=user, role=Role.ADMIN)
    Agent.objects.create(agent_id=AGENT, display_name="Pages bench", team=team)


def hold_batches() -> None:
    """``BATCHES`` held bursts; the first two decided (one approved, one rejected: audit entries)."""
    from memory import engine
    from memory.models import ApprovalRequest

    for b in range(BATCHES):
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
    first, second = ApprovalRequest.objects.filter(agent_id=AGENT).order_by("id")[:2]
    engine.quarantine_approve(request_id=first.id, actor=f"user:{ADMIN}", reason="verified")
    engine.quarantine_reject(request_id=second.id, actor=f"user:{ADMIN}", reason="wrong")


def review_items() -> None:
    """Conflict items over pairs of near-synonym facts (as the dream loop proposes them)."""
    from memory import engine

    rows = []
    for k in range(REVIEW_ITEMS):
        pair = []
        for predicate, value in (("deploy_target", f"region-{k}"), ("deploy_target_v2", f"Region {k} (EU)")):
            pair.append(
                engine.store_temporal(
                    agent_id=AGENT,
                    content=f"service-{k} deploys to {value}",
                    subject=f"service-{k}",
                    predicate=predicate,
                    object=value,
                    origin="user_direct",
                )
            )
        rows.append(pair)
    from memory.models import Memory

    for n, (a, b) in enumerate(rows):
        old, new = Memory.objects.get(id=a.id), Memory.objects.get(id=b.id)
        verdict = ("UNSURE", "MERGE", "SUPERSEDE")[n % 3]
        engine.review_propose(
            agent_id=AGENT,
            proposal=engine.Proposal(
                kind="conflict",
                fingerprint=f"bench-pages-{n:04d}",
                title=f"{old.subject}: “{old.object}” vs “{new.object}”",
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
                state=engine.state_fingerprint([old, new]),
                verdict_type=f"conflict:{verdict}",
            ),
        )


def other_fixtures() -> None:
    from memory import engine
    from wiki import services

    for name in ("deploy bot", "crm sync", "notebook"):
        engine.token_create(agent_id=AGENT, scopes=["memory:read", "memory:write"], name=name, actor="bench")
    for i in range(5):
        services.publish_auto(
            agent_id=AGENT,
            doc_type="runbook",
            title=f"Runbook {i}: deploying service {i}",
            summary=f"How service {i} is deployed and rolled back.",
            original_text="\n\n".join(f"## Step {s}\n\nDo thing {s} for service {i}." for s in range(12)),
            actor="bench",
        )
    for i, category in enumerate(("factual", "safety", "capability", "behavioral", "hallucination")):
        engine.record_mistake(
            agent_id=AGENT,
            category=category,
            input_summary=f"question {i} about deploys",
            what_went_wrong=f"answered with the old deploy target ({i})",
        )
    for city in ("london", "paris", "berlin", "tokyo"):  # a key with a supersession chain
        engine.store_temporal(
            agent_id=AGENT,
            content=f"The bench user lives in {city}",
            subject=TIMELINE_SUBJECT,
            predicate=TIMELINE_PREDICATE,
            object=city,
            origin="user_direct",
        )


def memory_rows() -> int:
    from memory.models import Memory

    return Memory.objects.filter(agent_id=AGENT).count()


def grow(n_rows: int, next_item: int) -> int:
    """Grow the agent's memories to ``n_rows`` through the engine; returns the next corpus item."""
    from corpus import corpus_items
    from django.db import transaction

    from memory import engine

    rows, t0 = memory_rows(), time.perf_counter()
    while rows < n_rows:
        want = min(CHUNK, max(50, int((n_rows - rows) * 1.15)))
        with transaction.atomic():
            for item in corpus_items(start=next_item, stop=next_item + want, n_keys=5_000, seed=7):
                if item.kind == "fact":
                    engine.store_temporal(agent_id=AGENT, **item.args)
                else:
                    engine.store(agent_id=AGENT, **item.args)
        next_item += want
        rows = memory_rows()
        if rows // 10_000 != (rows - want) // 10_000:
            rate = next_item / max(1e-9, time.perf_counter() - t0)
            print(
                f"  pages bench corpus: {rows} rows ({rate:.0f} engine calls/s)", file=sys.stderr, flush=True
            )
    return next_item


def snapshot(db: Path, target: Path) -> None:
    """A consistent copy of the live database file (WAL folded in)."""
    from django.db import connection

    connection.close()
    target.unlink(missing_ok=True)
    with sqlite3.connect(db) as src, sqlite3.connect(target) as dst:
        src.backup(dst)


def build(db_dir: Path, sizes: list[int]) -> dict[int, Path]:
    from common import setup_django

    db = setup_django(str(db_dir / "build"))
    from memory.dream.discovery import discover

    provision()
    hold_batches()
    review_items()
    other_fixtures()
    files, next_item = {}, 0
    for n in sorted(sizes):
        next_item = grow(n, next_item)
        discover(AGENT, actor="system:bench")
        files[n] = db_dir / f"pages-{n}.sqlite3"
        snapshot(db, files[n])
        print(f"  pages bench: {files[n]} ({memory_rows()} memories)", file=sys.stderr, flush=True)
    shutil.rmtree(db.parent, ignore_errors=True)
    return files


# --- measuring (in a child process per database file) -------------------------------------------------------


def page_urls() -> dict[str, tuple[str, dict[str, str]]]:
    from django.urls import reverse

    from memory.models import ApprovalRequest, Memory
    from wiki.models import WikiPage

    detail = (
        Memory.objects.filter(agent_id=AGENT, subject=TIMELINE_SUBJECT, predicate=TIMELINE_PREDICATE)
        .exclude(superseded_by__isnull=True)
        .order_by("-id")
        .values_list("id", flat=True)
        .first()
    )
    fill = {
        "detail": str(detail),
        "wiki": str(WikiPage.objects.filter(agent_id=AGENT).order_by("id").values_list("id", flat=True)[0]),
        "batch": str(
            ApprovalRequest.objects.filter(agent_id=AGENT, status="pending")
            .order_by("-id")
            .values_list("id", flat=True)[0]
        ),
    }
    out = {}
    for name, (view, extra, query) in PAGES.items():
        if extra == "-":
            url = reverse(view)
        elif view == "wiki:page":
            url = reverse(view, kwargs={"agent_id": AGENT, "page_id": int(extra.format(**fill))})
        elif view.startswith("wiki:"):
            url = reverse(view, kwargs={"agent_id": AGENT})
        else:
            url = reverse(view, args=[AGENT, *([extra.format(**fill)] if extra else [])])
        out[name] = (url + query.format(**fill), {"HX-Request": "true"} if name in HTMX else {})
    return out


def measure_file(db_file: Path, requests: int, only: list[str] | None) -> dict[str, Any]:
    """Every page on ``db_file`` (run in a child process)."""
    os.environ.pop("DATABASE_URL", None)
    os.environ["MEMDESK_SQLITE_PATH"] = str(db_file)
    os.environ["MEMDESK_VAR_DIR"] = str(db_file.parent)
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    os.environ.setdefault("MEMDESK_EMBEDDER", "off")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    call_command("migrate", verbosity=0, interactive=False)
    client = Client(SERVER_NAME="localhost")
    client.force_login(get_user_model().objects.get(username=ADMIN))
    pages: dict[str, Any] = {}
    for name, (url, headers) in page_urls().items():
        if only and name not in only:
            continue
        for _ in range(2):
            assert client.get(url, headers=headers).status_code == 200, url
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url, headers=headers).status_code == 200, url
        count = len(queries.captured_queries)
        wall, cpu = [], []
        for _ in range(requests):
            t0, c0 = time.perf_counter(), time.thread_time()
            response = client.get(url, headers=headers)
            wall.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.thread_time() - c0) * 1000)
            assert response.status_code == 200, url
        pages[name] = {
            "url": url,
            "p50_ms": round(statistics.median(wall), 2),
            "p95_ms": round(percentile(wall, 95), 2),
            "cpu_p50_ms": round(statistics.median(cpu), 2),
            "queries": count,
        }
        print(f"    {name:<22} p50 {pages[name]['p50_ms']:>8.1f} ms  {count:>3} queries", file=sys.stderr)
    return {"memories": memory_rows(), "pages": pages}


def measure_in_child(db_file: Path, requests: int, only: list[str] | None) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", str(db_file), "--requests", str(requests)]
    if only:
        cmd += ["--only", ",".join(only)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    sys.stderr.write(done.stderr)
    done.check_returncode()
    return json.loads(done.stdout)


def results(by_size: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    sizes = sorted(by_size)
    largest, smallest = by_size[sizes[-1]], by_size[sizes[0]]
    out = []
    for name, page in largest["pages"].items():
        counts = {n: by_size[n]["pages"][name]["queries"] for n in sizes}
        small = smallest["pages"][name]
        out.append(
            result(
                f"page_{name}",
                largest["memories"],
                page["p50_ms"],
                "ms",
                small["p50_ms"] if len(sizes) > 1 else None,
                f"p50 <= {GOAL_P50_MS:.0f} ms at {largest['memories']} memories; the same queries at every size",
                page["p50_ms"] <= GOAL_P50_MS and len(set(counts.values())) == 1,
                p95_ms=page["p95_ms"],
                cpu_p50_ms=page["cpu_p50_ms"],
                queries=page["queries"],
                queries_by_size={str(n): c for n, c in counts.items()},
                by_size={
                    str(n): {k: by_size[n]["pages"][name][k] for k in ("p50_ms", "p95_ms", "queries")}
                    for n in sizes
                },
                url=page["url"],
            )
        )
    return out


def measure(
    *,
    sizes: list[int],
    requests: int = 20,
    db_dir: Path | None = None,
    keep: bool = False,
    reuse: bool = False,
    only: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Build (unless ``reuse``) and measure; the figures as ``common.result`` dicts."""
    import tempfile

    base = db_dir or Path(tempfile.mkdtemp(prefix="memdesk-pages-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        if reuse:
            files = {n: base / f"pages-{n}.sqlite3" for n in sizes}
            missing = [str(f) for f in files.values() if not f.exists()]
            if missing:
                raise SystemExit(f"--reuse-db: missing {', '.join(missing)}")
        else:
            files = build_in_child(base, sizes)
        by_size = {}
        for n, f in sorted(files.items()):
            print(f"  pages bench: measuring {f.name}", file=sys.stderr, flush=True)
            by_size[n] = measure_in_child(f, requests, only)
        return results(by_size)
    finally:
        if not (keep or reuse):
            shutil.rmtree(base, ignore_errors=True)


def build_in_child(base: Path, sizes: list[int]) -> dict[int, Path]:
    """The build runs in its own process too (its Django points at the build file, not the caller's)."""
    cmd = [sys.executable, __file__, "--build", str(base), "--sizes", ",".join(map(str, sizes))]
    subprocess.run(cmd, check=True, cwd=REPO)
    return {n: base / f"pages-{n}.sqlite3" for n in sizes}


def table(rows: list[dict[str, Any]]) -> str:
    sizes = sorted(rows[0]["by_size"], key=int) if rows else []
    head = "".join(f"{f'p50/p95 ms @{n}':>22}{'q':>5}" for n in sizes)
    lines = [f"{'page':<24}{head}  met"]
    for r in rows:
        cells = "".join(
            f"{r['by_size'][n]['p50_ms']:>12.1f} /{r['by_size'][n]['p95_ms']:>8.1f}{r['by_size'][n]['queries']:>5}"
            for n in sizes
        )
        lines.append(f"{r['name'][5:]:<24}{cells}  {r['met']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[10_000, 100_000])
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--db-dir", type=Path, help="where the database files go (default: a new temp dir)")
    ap.add_argument("--keep-db", action="store_true", help="keep pages-<n>.sqlite3 in --db-dir")
    ap.add_argument("--reuse-db", action="store_true", help="measure the files --db-dir already holds")
    ap.add_argument("--only", type=lambda s: s.split(","), help="measure only these pages (comma-separated)")
    ap.add_argument("--out", type=Path, help="also write the JSON report to this file")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--build", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure_file(args.child, args.requests, args.only)))
        return 0
    if args.build:
        build(args.build, args.sizes)
        return 0
    if args.reuse_db and not args.db_dir:
        ap.error("--reuse-db needs --db-dir")
    started = time.perf_counter()
    info = machine()
    rows = measure(
        sizes=args.sizes,
        requests=args.requests,
        db_dir=args.db_dir,
        keep=args.keep_db,
        reuse=args.reuse_db,
        only=args.only,
    )
    print(table(rows), file=sys.stderr)
    return write_report(info, started, rows, args.out)


if __name__ == "__main__":
    sys.exit(main())
