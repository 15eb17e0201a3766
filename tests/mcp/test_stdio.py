"""The MCP tools over stdio: ``manage.py mcp --token TOKEN`` driven by the SDK's ``stdio_client``."""

from __future__ import annotations

import pytest

from .harness import StdioHarness
from .scenarios import Scenarios


@pytest.fixture(scope="module")
def mcp(mcp_db):
    harness = StdioHarness(*mcp_db)
    yield harness
    harness.close()


class TestStdio(Scenarios):
    pass


def test_a_bad_or_missing_token_stops_the_server_at_start(mcp: StdioHarness) -> None:
    for args in (["--token", "mdk_not_a_real_token"], ["--token", mcp.tokens["a_rw"]["secret"] + "x"], []):
        proc = mcp.manage("mcp", *args)
        assert proc.returncode == 2, proc.stderr
        assert proc.stdout == ""  # stdout belongs to the protocol
        assert "unauthorized" in proc.stderr or "--token" in proc.stderr
        assert "Traceback" not in proc.stderr


def test_a_token_revoked_mid_session_stops_working(mcp: StdioHarness) -> None:
    stored = mcp.ok("r_rw", "memory_store", {"content": "written before the revocation"})
    assert mcp.ok("r_rw", "memory_read", {"id": stored["id"]})["id"] == stored["id"]
    revoked = mcp.manage("token", "revoke", str(mcp.tokens["r_rw"]["id"]))
    assert revoked.returncode == 0, revoked.stderr
    before = mcp.snapshot()
    for tool, args in [("memory_read", {"id": stored["id"]}), ("memory_store", {"content": "after"})]:
        error = mcp.err("r_rw", tool, args)
        assert error == {
            "code": "unauthorized",
            "message": "missing, unknown, expired or revoked token",
            "field": None,
        }
    assert mcp.snapshot() == before
