"""Tool calls under hostile clients (issue 15 items 4, 16; SPEC A2, A4), in process: a bounded pool of
database threads, per-token concurrency and rate limits on every tool, strict argument types."""

from __future__ import annotations

import json
import threading
from typing import Any

import anyio
import pytest
from mcp import Client

from memory import engine, mcp_calls
from memory import mcp as memory_mcp

from .harness import error_of

PRINCIPAL = engine.Principal(
    token_id=7, agent_id="agent-z", scopes=frozenset({"memory:read", "memory:write"}), external=False
)


@pytest.fixture
def signed_in(monkeypatch):
    monkeypatch.setattr(engine, "authenticate", lambda secret: PRINCIPAL)
    _gate(monkeypatch, mcp_calls.Limits(concurrency=2, rate=1000, burst=1000))


def _gate(monkeypatch, limits: mcp_calls.Limits, clock=None) -> mcp_calls.CallGate:
    """The gate every tool call passes, with these limits (and a clock the test moves)."""
    gate = mcp_calls.CallGate(limits, clock=clock or (lambda: 0.0))
    monkeypatch.setattr(mcp_calls, "gate", gate)
    return gate


def test_a_slow_call_does_not_hold_up_another_call(signed_in, monkeypatch) -> None:
    """Before: every tool ran on one shared database thread, so this second call waited for the first."""
    release, started = threading.Event(), threading.Event()

    def slow(principal, **kwargs):
        started.set()
        assert release.wait(30)
        return {"results": [], "total": 0, "query_id": "q"}

    monkeypatch.setattr(memory_mcp, "_search", slow)
    monkeypatch.setattr(memory_mcp, "_alias_list", lambda principal: {"aliases": [], "total": 0})
    done: dict[str, Any] = {}

    async def go():
        async with Client(memory_mcp.server) as client:
            async with anyio.create_task_group() as tg:

                async def first():
                    done["slow"] = await client.call_tool("memory_search", {"query": "x"})

                tg.start_soon(first)
                await anyio.to_thread.run_sync(started.wait, 30)
                with anyio.fail_after(10):
                    done["quick"] = await client.call_tool("memory_alias_list", {})
                release.set()

    anyio.run(go)
    assert not done["quick"].is_error and not done["slow"].is_error


def test_calls_past_a_tokens_concurrency_are_rate_limited(signed_in, monkeypatch) -> None:
    _gate(monkeypatch, mcp_calls.Limits(concurrency=1, rate=1000, burst=1000))
    release, started = threading.Event(), threading.Event()

    def slow(principal, **kwargs):
        started.set()
        assert release.wait(30)
        return {"aliases": [], "total": 0}

    monkeypatch.setattr(memory_mcp, "_alias_list", slow)
    out: dict[str, Any] = {}

    async def go():
        async with Client(memory_mcp.server) as client:
            async with anyio.create_task_group() as tg:

                async def first():
                    out["first"] = await client.call_tool("memory_alias_list", {})

                tg.start_soon(first)
                await anyio.to_thread.run_sync(started.wait, 30)
                out["second"] = await client.call_tool("memory_alias_list", {})
                release.set()

    anyio.run(go)
    error = error_of(out["second"])
    assert error["code"] == "rate_limited" and error["details"]["kind"] == "concurrency"
    assert not out["first"].is_error


def test_every_tool_has_a_per_token_rate(signed_in, monkeypatch) -> None:
    now = [0.0]
    _gate(monkeypatch, mcp_calls.Limits(concurrency=4, rate=2, burst=3), clock=lambda: now[0])
    monkeypatch.setattr(memory_mcp, "_alias_list", lambda principal: {"aliases": [], "total": 0})

    async def calls(n):
        async with Client(memory_mcp.server) as client:
            return [await client.call_tool("memory_alias_list", {}) for _ in range(n)]

    results = anyio.run(calls, 4)
    assert [r.is_error for r in results] == [False, False, False, True]
    error = error_of(results[3])
    assert error["code"] == "rate_limited" and error["details"]["kind"] == "rate"
    assert error["details"]["retry_after"] == 0.5
    now[0] = 0.5  # one call's worth refilled
    assert [r.is_error for r in anyio.run(calls, 2)] == [False, True]


def test_a_token_that_spent_its_cpu_share_waits_until_it_is_paid_back() -> None:
    now = [0.0]
    gate = mcp_calls.CallGate(
        mcp_calls.Limits(concurrency=4, rate=1000, burst=1000, cpu_share=0.1, cpu_burst=0.5),
        clock=lambda: now[0],
    )
    with gate.admit(1) as charge:
        charge(0.8)  # a call may overdraw once: its cost is known only afterwards
    with pytest.raises(engine.RateLimited) as refused:
        with gate.admit(1):
            pass
    assert refused.value.details["kind"] == "cpu" and refused.value.details["retry_after"] == 3.0
    with gate.admit(2):  # another token is not affected
        pass
    now[0] = 3.0
    with gate.admit(1):
        pass


def test_the_gate_counts_tokens_apart_and_frees_a_slot_when_a_call_ends() -> None:
    gate = mcp_calls.CallGate(mcp_calls.Limits(concurrency=1, rate=1000, burst=1000), clock=lambda: 0.0)
    with gate.admit(1):
        with gate.admit(2):
            pass
        with pytest.raises(engine.RateLimited):
            with gate.admit(1):
                pass
    with gate.admit(1):
        pass


# --- item 16: strict argument types ------------------------------------------------------------------------


def call(tool: str, args: dict[str, Any]):
    async def go():
        async with Client(memory_mcp.server) as client:
            return await client.call_tool(tool, args)

    return anyio.run(go)


@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("memory_store", {"content": "x", "importance": True}, "importance"),
        ("memory_store", {"content": "x", "importance": "5"}, "importance"),
        ("memory_search", {"query": "x", "limit": "10"}, "limit"),
        ("memory_search", {"query": "x", "limit": 10.0}, "limit"),
        (
            "memory_store_fact",
            {"content": "c", "subject": "s", "predicate": "p", "confidence": "1"},
            "confidence",
        ),
        ("memory_store", {"content": 5}, "content"),
        ("memory_fetch_batch", {"ids": '["m_1"]'}, "ids"),
    ],
)
def test_arguments_are_not_coerced(signed_in, monkeypatch, tool, args, field) -> None:
    monkeypatch.setattr(memory_mcp, "_store", lambda *a, **k: pytest.fail("the engine must not run"))
    monkeypatch.setattr(memory_mcp, "_search", lambda *a, **k: pytest.fail("the engine must not run"))
    monkeypatch.setattr(memory_mcp, "_store_fact", lambda *a, **k: pytest.fail("the engine must not run"))
    monkeypatch.setattr(memory_mcp, "_fetch_batch", lambda *a, **k: pytest.fail("the engine must not run"))
    error = error_of(call(tool, args))
    assert error["code"] == "invalid_argument" and error["field"] == field


def test_well_typed_arguments_pass_and_strings_stay_strings(signed_in, monkeypatch) -> None:
    seen: dict[str, Any] = {}

    def store_fact(principal, **kwargs):
        seen.update(kwargs)
        return {"id": "m_1", "outcome": "stored"}

    monkeypatch.setattr(memory_mcp, "_store_fact", store_fact)
    result = call(
        "memory_store_fact",
        {"content": "c", "subject": "s", "predicate": "p", "object": '["a", "b"]', "confidence": 1},
    )
    assert not result.is_error
    assert seen["object"] == '["a", "b"]' and seen["confidence"] == 1.0


# --- over HTTP: every request counts, and a token over its limits is refused before any other work ----------


def _asgi(app: Any, authorization: bytes, body: bytes = b"{}") -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    scope = {"type": "http", "method": "POST", "path": "/mcp", "query_string": b"",
             "headers": [(b"authorization", authorization), (b"content-type", b"application/json")]}  # fmt: skip

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    anyio.run(app, scope, receive, send)
    return sent


def test_a_token_over_its_rate_is_answered_429_before_its_token_is_looked_up(monkeypatch) -> None:
    now = [0.0]
    _gate(monkeypatch, mcp_calls.Limits(concurrency=2, rate=1, burst=2), clock=lambda: now[0])
    looked_up: list[str] = []
    monkeypatch.setattr(memory_mcp, "_authenticate", lambda secret: looked_up.append(secret) or PRINCIPAL)

    async def inner(scope, receive, send) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    app = memory_mcp.BearerAuth(inner)
    for _ in range(2):
        start, _ = _asgi(app, b"Bearer mdk_flood")
        assert start["status"] == 200 and dict(start["headers"])[b"server-timing"].startswith(b"app;dur=")
    start, body = _asgi(app, b"Bearer mdk_flood")
    assert start["status"] == 429 and dict(start["headers"])[b"retry-after"] == b"1"
    assert json.loads(body["body"])["error"]["data"]["code"] == "rate_limited"
    assert looked_up == ["mdk_flood", "mdk_flood"]  # the third request cost no database lookup
    assert _asgi(app, b"Bearer mdk_other")[0]["status"] == 200  # another token is not affected


def test_a_huge_body_spends_the_tokens_share(monkeypatch) -> None:
    _gate(monkeypatch, mcp_calls.Limits(concurrency=2, rate=1000, burst=1000, cpu_share=0.01, cpu_burst=0.01))
    monkeypatch.setattr(memory_mcp, "_authenticate", lambda secret: PRINCIPAL)

    async def inner(scope, receive, send) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    app = memory_mcp.BearerAuth(inner)
    big = json.dumps({"tags": [f"t{i}" for i in range(50_000)]}).encode()  # ~490 KB: ~25 ms of parsing
    assert _asgi(app, b"Bearer mdk_big", big)[0]["status"] == 200
    assert _asgi(app, b"Bearer mdk_big")[0]["status"] == 429
