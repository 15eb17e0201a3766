"""Real MCP clients against real servers: the official SDK's ``ClientSession`` over stdio (a ``manage.py mcp``
child per token) and over streamable HTTP (one uvicorn child serving ``config.asgi:application``).

Tests are plain synchronous functions: the sessions live in an AnyIO blocking portal (one event loop thread
per harness), so one server process serves every test of a module.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, Tool

REPO = Path(__file__).resolve().parents[2]
STORE_LIMIT = 20  # MEMDESK_MCP_STORE_DAILY_LIMIT for the servers under test
CALL_TIMEOUT = 60
TABLES = (
    "memories",
    "memory_fact_writes",
    "mistakes",
    "memory_feedback",
    "audit_events",
    "wiki_pages",
    "wiki_revisions",
    "entity_alias",
    "query_journal",
    "memory_feedback_weights",
    "knowledge_gaps",
    "attitudes",
    "skills",
    "review_items",
)


def child_env(db_path: Path) -> dict[str, str]:
    """The environment of every child: the SQLite file under test, never a PostgreSQL DATABASE_URL."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        MEMDESK_SQLITE_PATH=str(db_path),
        MEMDESK_VAR_DIR=str(db_path.parent),
        MEMDESK_MCP_STORE_DAILY_LIMIT=str(STORE_LIMIT),
        # the per-token rate limit is tested in-process (test_limits.py); these tests call as fast as they can
        MEMDESK_MCP_TOKEN_RATE="10000",
        MEMDESK_MCP_TOKEN_BURST="10000",
        MEMDESK_MCP_TOKEN_CPU_SHARE="10000",
        PYTHONUNBUFFERED="1",
    )
    return env


def provision(db_path: Path, module: str = "tests.mcp.provision") -> dict[str, Any]:
    """Migrate ``db_path`` and run a provisioning ``module`` in a child process; its last stdout line is JSON
    (``tests.mcp.provision``: the tokens; the browser journeys' modules: ``{"tokens": …, …}``)."""
    proc = subprocess.run(
        [sys.executable, "-m", module],
        cwd=REPO,
        env=child_env(db_path),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def copy_db(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)
    b.close()
    a.close()


def error_of(result: CallToolResult) -> dict[str, Any]:
    """The ``error`` object of a tool error, after checking the wire shape."""
    assert result.is_error, result.content
    assert len(result.content) == 1 and result.content[0].type == "text"
    text = result.content[0].text
    assert "Traceback" not in text and 'File "' not in text
    body = json.loads(text)
    assert list(body) == ["error"] and body == result.structured_content
    assert set(body["error"]) <= {"code", "message", "field", "details"}
    assert {"code", "message", "field"} <= set(body["error"])
    return body["error"]


class Harness(ABC):
    kind = "?"

    def __init__(self, db_path: Path, tokens: dict[str, dict[str, Any]]):
        self.db_path = db_path
        self.tokens = tokens
        self.env = child_env(db_path)
        self.log_dir = db_path.parent
        self._portal_cm: AbstractContextManager[BlockingPortal] = start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        self._sessions: dict[str, ClientSession] = {}
        self._session_cms: list[AbstractContextManager[ClientSession]] = []

    # --- clients -----------------------------------------------------------------------------------------

    @abstractmethod
    def connect(self, secret: str) -> Any:
        """An async context manager yielding an initialised ClientSession (stdio or HTTP)."""

    def session(self, who: str) -> ClientSession:
        if who not in self._sessions:
            cm = self.portal.wrap_async_context_manager(self.connect(self.tokens[who]["secret"]))
            self._sessions[who] = cm.__enter__()
            self._session_cms.append(cm)
        return self._sessions[who]

    def run(self, fn: Any, *args: Any) -> Any:
        async def bounded() -> Any:
            with anyio.fail_after(CALL_TIMEOUT):
                return await fn(*args)

        return self.portal.call(bounded)

    def call(self, who: str, tool: str, args: dict[str, Any] | None = None) -> CallToolResult:
        return self.run(self.session(who).call_tool, tool, args or {})

    def ok(self, who: str, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        result = self.call(who, tool, args)
        assert not result.is_error, result.content
        data = json.loads(result.content[0].text)
        assert data == result.structured_content
        return data

    def err(self, who: str, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        return error_of(self.call(who, tool, args))

    def list_tools(self, who: str) -> list[Tool]:
        return self.run(self.session(who).list_tools).tools

    # --- the database, read directly -------------------------------------------------------------------

    def query(self, sql: str, *params: Any) -> list[sqlite3.Row]:
        with sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=30) as raw:
            raw.row_factory = sqlite3.Row
            rows = raw.execute(sql, params).fetchall()
        raw.close()
        return rows

    def row(self, memory_id: str) -> sqlite3.Row:
        rows = self.query("SELECT * FROM memories WHERE id = ?", memory_id)
        assert len(rows) == 1, memory_id
        return rows[0]

    def snapshot(self) -> dict[str, Any]:
        """Everything a refused call must leave alone."""
        counts: dict[str, Any] = {t: self.query(f"SELECT count(*) FROM {t}")[0][0] for t in TABLES}
        counts["quota"] = self.query("SELECT coalesce(sum(count), 0) FROM daily_counters")[0][0]
        counts["memories_digest"] = self.query(
            "SELECT group_concat(id || coalesce(valid_until, '') || coalesce(invalidated_by_event, ''), ',') "
            "FROM (SELECT * FROM memories ORDER BY id)"
        )[0][0]
        return counts

    def manage(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=REPO,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def close(self) -> None:
        for cm in reversed(self._session_cms):
            try:
                cm.__exit__(None, None, None)
            except Exception:  # a session a test broke on purpose (revoked token)
                pass
        self._portal_cm.__exit__(None, None, None)


class StdioHarness(Harness):
    kind = "stdio"

    def params(self, secret: str) -> StdioServerParameters:
        return StdioServerParameters(
            command=sys.executable, args=["manage.py", "mcp", "--token", secret], env=self.env, cwd=str(REPO)
        )

    @asynccontextmanager
    async def connect(self, secret: str) -> AsyncIterator[ClientSession]:
        with open(self.log_dir / "stdio-server.log", "a", encoding="utf-8") as errlog:
            async with (
                stdio_client(self.params(secret), errlog=errlog) as (read, write),
                ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session,
            ):
                await session.initialize()
                yield session


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HttpHarness(Harness):
    kind = "http"

    def __init__(self, db_path: Path, tokens: dict[str, dict[str, Any]]):
        super().__init__(db_path, tokens)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/mcp"
        self.log = open(self.log_dir / "uvicorn.log", "w", encoding="utf-8")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1",
             "--port", str(self.port), "--lifespan", "on", "--no-access-log"],
            cwd=REPO,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        self._wait_until_up()

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"uvicorn exited: {(self.log_dir / 'uvicorn.log').read_text()}")
            try:
                if httpx2.post(self.url, json={}, timeout=2).status_code == 401:
                    return
            except httpx2.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError("uvicorn did not answer in 90 s")

    def http_client(self, secret: str | None) -> httpx2.AsyncClient:
        headers = {"Authorization": f"Bearer {secret}"} if secret is not None else {}
        return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=CALL_TIMEOUT))

    @asynccontextmanager
    async def connect(self, secret: str | None) -> AsyncIterator[ClientSession]:
        async with (
            self.http_client(secret) as http,
            streamable_http_client(self.url, http_client=http) as (read, write),
            ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session,
        ):
            await session.initialize()
            yield session

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)
            self.log.close()
