"""Error shaping inside the MCP server, with the SDK's in-process client (no database, no child process)."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import pytest
from mcp import Client

from memory import engine
from memory import mcp as memory_mcp

from .harness import error_of

PRINCIPAL = engine.Principal(
    token_id=7, agent_id="agent-z", scopes=frozenset({"memory:read"}), external=False
)


def call(tool: str, args: dict[str, Any]):
    async def go():
        async with Client(memory_mcp.server) as client:
            return await client.call_tool(tool, args)

    return anyio.run(go)


@pytest.fixture
def signed_in(monkeypatch):
    monkeypatch.setattr(engine, "authenticate", lambda secret: PRINCIPAL)


def test_a_crash_is_an_internal_error_without_details_and_is_logged(signed_in, monkeypatch, caplog) -> None:
    def explode(principal, **kwargs):
        raise RuntimeError("password=hunter2 at /srv/secret/path")

    monkeypatch.setattr(memory_mcp, "_read", explode)
    with caplog.at_level(logging.ERROR, logger="memdesk.mcp"):
        result = call("memory_read", {"id": "m_x"})
    error = error_of(result)
    assert error["code"] == "internal_error" and error["field"] is None
    text = result.content[0].text
    assert "hunter2" not in text and "RuntimeError" not in text and "/srv" not in text
    ref = error["message"].split("(ref ")[1].split(")")[0]
    (record,) = [r for r in caplog.records if ref in r.getMessage()]
    assert record.exc_info is not None  # the traceback stays in the server log


def test_argument_errors_never_echo_the_rejected_value() -> None:
    error = error_of(call("memory_search", {"query": "x", "limit": "SECRET-VALUE-123"}))
    assert error["code"] == "invalid_argument" and error["field"] == "limit"
    assert "SECRET-VALUE-123" not in error["message"]


def test_engine_errors_keep_their_code_field_and_details(signed_in) -> None:
    error = error_of(call("memory_fetch_batch", {"ids": [f"m_{i}" for i in range(150)]}))
    assert error == {
        "code": "too_many_ids",
        "message": "at most 100 ids per call; got 150",
        "field": "ids",
        "details": {"limit": 100},
    }


def test_the_scope_is_checked_before_the_engine_runs(signed_in, monkeypatch) -> None:
    monkeypatch.setattr(memory_mcp, "_store", lambda *a, **k: pytest.fail("the engine must not run"))
    error = error_of(call("memory_store", {"content": "hello"}))
    assert error == {
        "code": "forbidden",
        "message": "this token does not have the memory:write scope",
        "field": None,
    }


def _asgi_call(app: Any, authorization: bytes) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    scope = {"type": "http", "method": "POST", "path": "/mcp", "query_string": b"",
             "headers": [(b"authorization", authorization), (b"content-type", b"application/json")]}  # fmt: skip

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    anyio.run(app, scope, receive, send)
    return sent


def test_bearer_auth_puts_the_principal_on_the_request(monkeypatch) -> None:
    monkeypatch.setattr(memory_mcp, "_authenticate", lambda secret: PRINCIPAL if secret == "mdk_ok" else None)
    seen: list[Any] = []

    async def inner(scope, receive, send) -> None:
        seen.append(scope[memory_mcp.PRINCIPAL_KEY])

    assert _asgi_call(memory_mcp.BearerAuth(inner), b"Bearer mdk_ok") == [] and seen == [PRINCIPAL]


def test_a_crash_while_authenticating_is_a_generic_500(monkeypatch, caplog) -> None:
    def explode(secret):
        raise RuntimeError("database password=hunter2")

    monkeypatch.setattr(memory_mcp, "_authenticate", explode)

    async def inner(scope, receive, send) -> None:
        pytest.fail("the MCP app must not run")

    with caplog.at_level(logging.ERROR, logger="memdesk.mcp"):
        start, body = _asgi_call(memory_mcp.BearerAuth(inner), b"Bearer mdk_x")
    assert start["status"] == 500 and b"hunter2" not in body["body"]
    error = json.loads(body["body"])["error"]
    assert error["code"] == -32603 and error["data"]["code"] == "internal_error"
    assert any(r.exc_info for r in caplog.records)


def test_a_flood_of_tags_is_an_argument_error_before_the_engine_runs(signed_in, monkeypatch) -> None:
    """Issue 15 item 2: 50,000 tags from a read-only token were read one by one by a quadratic check."""
    monkeypatch.setattr(memory_mcp, "_search", lambda *a, **k: pytest.fail("the engine must not run"))
    error = error_of(call("memory_search", {"query": "x", "tags": [f"t{i}" for i in range(50_000)]}))
    assert error["code"] == "invalid_argument" and error["field"] == "tags"
    error = error_of(call("memory_search", {"query": "x", "tags": ["x" * 101]}))
    assert error["code"] == "invalid_argument" and error["field"].startswith("tags")
