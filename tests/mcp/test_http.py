"""The MCP tools over streamable HTTP: ``config.asgi:application`` under uvicorn, the SDK's HTTP client."""

from __future__ import annotations

import httpx2
import pytest
from mcp import MCPError

from .harness import HttpHarness
from .scenarios import Scenarios

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def mcp(mcp_db):
    harness = HttpHarness(*mcp_db)
    yield harness
    harness.close()


class TestHttp(Scenarios):
    pass


def _mcp_errors(exc: BaseException) -> list[MCPError]:
    if isinstance(exc, MCPError):
        return [exc]
    if isinstance(exc, BaseExceptionGroup):
        return [e for sub in exc.exceptions for e in _mcp_errors(sub)]
    return []


@pytest.mark.parametrize(
    "authorization", [None, "Bearer mdk_not_a_real_token", "Bearer", "Basic dXNlcjpwYXNz", "mdk_no_scheme"]
)
def test_a_missing_or_bad_bearer_is_a_401_before_any_mcp_handling(mcp: HttpHarness, authorization) -> None:
    headers = {**ACCEPT, **({"Authorization": authorization} if authorization is not None else {})}
    response = httpx2.post(mcp.url, json=INITIALIZE, headers=headers, timeout=30)
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["www-authenticate"].startswith("Bearer")
    body = response.json()
    assert body["error"]["code"] == -32001 and body["id"] is None
    assert body["error"]["data"] == {
        "code": "unauthorized",
        "message": "missing, unknown, expired or revoked token",
        "field": None,
    }


def test_the_sdk_client_sees_unauthorized_for_a_bad_token(mcp: HttpHarness) -> None:
    async def connect() -> None:
        async with mcp.connect("mdk_not_a_real_token"):
            pass

    with pytest.raises(BaseException) as caught:  # noqa: B017 - the SDK may wrap it in an ExceptionGroup
        mcp.run(connect)
    (error,) = _mcp_errors(caught.value)
    assert error.error.code == -32001 and error.error.data["code"] == "unauthorized"


def test_a_token_revoked_mid_session_gets_401_on_its_next_request(mcp: HttpHarness) -> None:
    stored = mcp.ok("r_rw", "memory_store", {"content": "written before the revocation"})
    revoked = mcp.manage("token", "revoke", str(mcp.tokens["r_rw"]["id"]))
    assert revoked.returncode == 0, revoked.stderr
    before = mcp.snapshot()
    with pytest.raises(MCPError) as caught:
        mcp.call("r_rw", "memory_store", {"content": "after the revocation"})
    assert caught.value.error.data["code"] == "unauthorized"
    assert mcp.snapshot() == before
    with pytest.raises(MCPError):
        mcp.call("r_rw", "memory_read", {"id": stored["id"]})


def test_the_endpoint_answers_on_mcp_and_mcp_slash_for_local_hosts(mcp: HttpHarness) -> None:
    headers = {**ACCEPT, "Authorization": f"Bearer {mcp.tokens['a_read']['secret']}"}
    for url in (mcp.url, mcp.url + "/", f"http://localhost:{mcp.port}/mcp"):
        response = httpx2.post(url, json=INITIALIZE, headers=headers, timeout=30)
        assert response.status_code == 200, (url, response.text)
        assert response.json()["result"]["serverInfo"]["name"] == "memdesk"
    rebinding = httpx2.post(mcp.url, json=INITIALIZE, headers={**headers, "Host": "evil.example"}, timeout=30)
    assert rebinding.status_code == 421  # DNS-rebinding protection: only MEMDESK_ALLOWED_HOSTS


def test_everything_else_is_still_django(mcp: HttpHarness) -> None:
    response = httpx2.get(mcp.base + "/", timeout=30)
    assert response.status_code == 302 and "/login" in response.headers["location"]
