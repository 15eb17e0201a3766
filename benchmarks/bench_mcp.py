"""MCP over streamable HTTP: ``memory_fetch_batch`` of 100 ids against 100 ``memory_read`` calls, and the
``memory_get_at`` round trip (issue 3, item 7).

Run alone: ``python benchmarks/bench_mcp.py [--rounds 20] [--get-at-calls 300] [--out FILE]`` (prints JSON).

A fresh SQLite file gets a token and 100 memories plus one fact with a 20-segment history, all written by
engine functions; then ``uvicorn config.asgi:application`` serves it on a free 127.0.0.1 port (one worker, the
project's settings) and the official SDK client (``ClientSession`` over ``streamable_http_client``) measures
whole round trips: client serialisation, HTTP, bearer authentication, the tool, the engine, the reply.
Batch and sequential reads alternate round by round so both see the same machine load.

Results use the shape of the other benchmark scripts: ``{"name", "n", "value", "unit", "baseline", "ratio",
"goal", "met", ...}``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
AGENT = "bench-mcp"
N_IDS = 100
SEGMENTS = 20
GOAL_BATCH_RATIO = 20.0
GOAL_GET_AT_P50_MS = 10.0
START = datetime(2020, 1, 1, tzinfo=UTC)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[max(0, min(98, round(p) - 1))]


def result(
    name: str, n: int, value: float, unit: str, baseline: float | None, goal: str, met: bool, **extra: Any
):
    return {
        "name": name,
        "n": n,
        "value": round(value, 3),
        "unit": unit,
        "baseline": round(baseline, 3) if baseline is not None else None,
        "ratio": round(value / baseline, 3) if baseline else None,
        "goal": goal,
        "met": met,
        **extra,
    }


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    try:
        from importlib.metadata import version

        info["mcp"] = version("mcp")
        info["commit"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except Exception:  # noqa: BLE001 - informational only
        pass
    return info


# --- setup: a database written by the engine, served by uvicorn ----------------------------------------------


def provision(base: Path) -> tuple[Path, dict[str, Any]]:
    """Configure Django on a new SQLite file; write a token, 100 memories and a fact's history."""
    db_path = base / "mcp-bench.sqlite3"
    os.environ.pop("DATABASE_URL", None)
    os.environ.update(
        MEMDESK_SQLITE_PATH=str(db_path), MEMDESK_VAR_DIR=str(base), DJANGO_SETTINGS_MODULE="config.settings"
    )
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    from memory import engine

    call_command("migrate", verbosity=0, interactive=False)
    _, secret = engine.token_create(agent_id=AGENT, scopes="memory:read", name="bench")
    ids = [
        engine.store(
            agent_id=AGENT, content=f"benchmark memory {i}: the quick brown fox {i}", tags=["bench"]
        ).id
        for i in range(N_IDS)
    ]
    for k in range(SEGMENTS):
        engine.store_temporal(
            agent_id=AGENT,
            content=f"Bench user lives in city {k}",
            subject="user:bench",
            predicate="lives_in",
            object=f"city-{k}",
            valid_from=START + timedelta(days=90 * k),
            source_event=f"bench-{k}",
        )
    connections.close_all()
    return db_path, {"secret": secret, "ids": ids}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(db_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "MEMDESK_SQLITE_PATH": str(db_path), "MEMDESK_VAR_DIR": str(db_path.parent)}
    env.pop("DATABASE_URL", None)
    log = open(db_path.parent / "uvicorn.log", "wb")  # noqa: SIM115 - lives as long as the server
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--port", str(port),
         "--lifespan", "on", "--no-access-log", "--log-level", "warning"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    import httpx2

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError((db_path.parent / "uvicorn.log").read_text())
        try:
            if httpx2.post(url, json={}, timeout=2).status_code == 401:
                return proc, url
        except httpx2.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("uvicorn did not start in 90 s")


# --- measurement -----------------------------------------------------------------------------------------


async def _measure(
    url: str, secret: str, ids: list[str], rounds: int, get_at_calls: int
) -> list[dict[str, Any]]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    def check(res: Any) -> Any:
        if res.is_error:
            raise RuntimeError(res.content[0].text)
        return res.structured_content

    headers = {"Authorization": f"Bearer {secret}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()
        for _ in range(3):  # warm up both paths and the server's caches
            assert check(await session.call_tool("memory_fetch_batch", {"ids": ids}))["total_found"] == N_IDS
            for i in ids[:10]:
                check(await session.call_tool("memory_read", {"id": i}))

        batch_ms: list[float] = []
        reads_ms: list[float] = []
        for _ in range(rounds):
            t = time.perf_counter()
            check(await session.call_tool("memory_fetch_batch", {"ids": ids}))
            batch_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            for i in ids:
                check(await session.call_tool("memory_read", {"id": i}))
            reads_ms.append((time.perf_counter() - t) * 1000)

        at_ms: list[float] = []
        span = SEGMENTS * 90
        for k in range(get_at_calls):
            at = (START + timedelta(days=(k * 37) % span, hours=k % 24)).isoformat()
            t = time.perf_counter()
            body = check(
                await session.call_tool(
                    "memory_get_at", {"subject": "user:bench", "predicate": "lives_in", "at": at}
                )
            )
            at_ms.append((time.perf_counter() - t) * 1000)
            assert body["found"], at

    batch, reads = statistics.median(batch_ms), statistics.median(reads_ms)
    ratio = reads / batch
    p50 = percentile(at_ms, 50)
    return [
        result(
            "mcp_fetch_batch_speedup",
            N_IDS,
            ratio,
            "x",
            None,
            f">= {GOAL_BATCH_RATIO:g}x: 100 memory_read calls / one memory_fetch_batch of 100 ids (HTTP)",
            ratio >= GOAL_BATCH_RATIO,
            batch_ms_p50=round(batch, 3),
            reads_ms_p50=round(reads, 3),
            read_ms_per_call=round(reads / N_IDS, 3),
            rounds=rounds,
        ),
        result(
            "mcp_get_at_rtt",
            get_at_calls,
            p50,
            "ms",
            None,
            f"p50 <= {GOAL_GET_AT_P50_MS:g} ms per memory_get_at round trip (HTTP)",
            p50 <= GOAL_GET_AT_P50_MS,
            p95_ms=round(percentile(at_ms, 95), 3),
            mean_ms=round(statistics.fmean(at_ms), 3),
            segments=SEGMENTS,
        ),
    ]


def measure(*, rounds: int = 20, get_at_calls: int = 300, db_dir: str | None = None) -> list[dict[str, Any]]:
    import anyio

    base = Path(db_dir) if db_dir else Path(tempfile.mkdtemp(prefix="memdesk-bench-mcp-"))
    base.mkdir(parents=True, exist_ok=True)
    proc = None
    try:
        db_path, data = provision(base)
        proc, url = start_server(db_path)
        return anyio.run(_measure, url, data["secret"], data["ids"], rounds, get_at_calls)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        if not db_dir:
            shutil.rmtree(base, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20, help="batch-vs-reads rounds (100 reads each)")
    ap.add_argument("--get-at-calls", type=int, default=300)
    ap.add_argument("--db-dir", help="keep the database and server log here (default: a temp dir, removed)")
    ap.add_argument("--out", type=Path, help="also write the JSON report to this file")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    info = machine()
    results = measure(rounds=args.rounds, get_at_calls=args.get_at_calls, db_dir=args.db_dir)
    info["seconds"] = round(time.perf_counter() - started, 1)
    report = json.dumps({"machine": info, "results": results}, indent=2)
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
