"""MCP over streamable HTTP: ``memory_fetch_batch`` of 100 ids against 100 ``memory_read`` calls, and the
``memory_get_at`` round trip (issue 3, item 7).

Run alone: ``python benchmarks/bench_mcp.py [--rounds 20] [--get-at-calls 300] [--out FILE]`` (prints JSON).
``measure(engine_db=...)`` works on a database ``common.setup_django`` configured (as ``run_all.py`` does).

Agent ``bench-mcp`` gets a token, 100 memories and one fact with a 20-segment history, all written by engine
functions; then ``uvicorn config.asgi:application`` serves that SQLite file on a free 127.0.0.1 port (one
worker, the project's settings) and the official SDK client (``ClientSession`` over ``streamable_http_client``)
measures whole round trips: client serialisation, HTTP, bearer authentication, the tool, the engine, the reply.
Batch and sequential reads alternate round by round so both see the same machine load.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from common import REPO, cleanup, machine, percentile, result, setup_django, write_report

AGENT = "bench-mcp"
N_IDS = 100
SEGMENTS = 20
GOAL_BATCH_RATIO = 20.0
GOAL_GET_AT_P50_MS = 10.0
START = datetime(2020, 1, 1, tzinfo=UTC)


# --- setup: a database written by the engine, served by uvicorn ----------------------------------------------


def provision() -> dict[str, Any]:
    """Write the benchmark agent's token, 100 memories and a fact's history into the configured database."""
    from django.db import connections

    from memory import engine

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
    return {"secret": secret, "ids": ids}


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


def measure(*, engine_db: Path, rounds: int = 20, get_at_calls: int = 300) -> list[dict[str, Any]]:
    """Both figures over HTTP against ``engine_db`` (already configured and migrated by ``setup_django``)."""
    import anyio

    data = provision()
    proc, url = start_server(engine_db)
    try:
        return anyio.run(_measure, url, data["secret"], data["ids"], rounds, get_at_calls)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20, help="batch-vs-reads rounds (100 reads each)")
    ap.add_argument("--get-at-calls", type=int, default=300)
    ap.add_argument("--db-dir", help="where to put the temporary database (default: a new temp dir)")
    ap.add_argument("--keep-db", action="store_true", help="keep the database and the server log afterwards")
    ap.add_argument("--out", type=Path, help="also write the JSON report to this file")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    info = machine()
    db = setup_django(args.db_dir)
    try:
        results = measure(engine_db=db, rounds=args.rounds, get_at_calls=args.get_at_calls)
    finally:
        if not args.keep_db:
            cleanup(db)
    return write_report(info, started, results, args.out)


if __name__ == "__main__":
    sys.exit(main())
