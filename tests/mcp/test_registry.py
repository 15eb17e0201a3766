"""Apps contribute MCP tools through memory.mcp_registry (issue 12): a server built from the registry serves
the wiki's tools without memory importing the wiki. In-process SDK client, no database."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context

from memory import engine
from memory import mcp as memory_mcp
from memory.mcp_registry import READ, READ_ONLY, WRITES, ToolSet, app_tool_sets, invoke
from wiki import mcp_tools as wiki_mcp_tools

from .harness import error_of

WIKI_TOOLS = ["wiki_publish_auto", "wiki_search"]
READER = engine.Principal(token_id=8, agent_id="agent-r", scopes=frozenset({"memory:read"}), external=False)


def listed(server: memory_mcp.MemdeskMCP) -> dict[str, Any]:
    return {t.name: t for t in anyio.run(server.list_tools)}


def call(server: memory_mcp.MemdeskMCP, tool: str, args: dict[str, Any]):
    async def go():
        async with Client(server) as client:
            return await client.call_tool(tool, args)

    return anyio.run(go)


def test_the_wiki_app_contributes_its_tools_by_its_mcp_tools_module():
    [wiki_set] = [s for s in app_tool_sets() if s is wiki_mcp_tools.tools]
    assert [t.name for t in wiki_set] == WIKI_TOOLS
    assert {t.name: t.annotations for t in wiki_set} == {
        "wiki_publish_auto": WRITES,
        "wiki_search": READ_ONLY,
    }


def test_a_server_built_from_the_registry_lists_memorys_tools_then_the_wikis():
    server = memory_mcp.build_server()
    assert server is not memory_mcp.server
    names = list(listed(server))
    assert names[-2:] == WIKI_TOOLS and names[0] == "memory_store"
    assert listed(memory_mcp.server).keys() == listed(server).keys()
    publish = listed(server)["wiki_publish_auto"]
    assert publish.input_schema["required"] == ["doc_type", "title", "summary", "original_text"]
    assert set(publish.input_schema["properties"]) == {
        "doc_type",
        "title",
        "summary",
        "original_text",
        "slug",
        "tags",
    }
    assert "trust" not in publish.input_schema["properties"]


def test_the_wiki_tools_check_their_scope_through_the_registry(monkeypatch):
    monkeypatch.setattr(engine, "authenticate", lambda secret: READER)
    server = memory_mcp.build_server()
    page = {"doc_type": "sop", "title": "t", "summary": "s", "original_text": "x"}
    assert error_of(call(server, "wiki_publish_auto", page)) == {
        "code": "forbidden",
        "message": "this token does not have the memory:write scope",
        "field": None,
    }
    assert error_of(call(server, "wiki_search", {"query": "refund"}))["message"] == (
        "this token does not have the admin scope"
    )


def test_two_tools_of_one_name_are_refused():
    tools = ToolSet()

    @tools.tool(annotations=READ_ONLY)
    async def memory_read(ctx: Context) -> Any:
        return await invoke(ctx, READ, lambda p: {})

    with pytest.raises(ValueError, match="registered already"):
        tools.tool(annotations=READ_ONLY)(memory_read)
    assert [t.name for t in tools] == ["memory_read"]


def test_an_app_tool_named_like_a_memory_tool_stops_the_build(monkeypatch):
    clash = ToolSet()

    @clash.tool(annotations=READ_ONLY)
    async def memory_read(ctx: Context) -> Any:
        return await invoke(ctx, READ, lambda p: {})

    monkeypatch.setattr(memory_mcp, "app_tool_sets", lambda: [clash])
    with pytest.raises(Exception, match="two MCP tools are named 'memory_read'"):
        memory_mcp.build_server()
