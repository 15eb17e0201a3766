"""The wiki's MCP tools (SPEC W2–W4): ``wiki_publish_auto`` and ``wiki_search``, served by ``memory.mcp``.

Found by ``memory.mcp_registry.app_tool_sets()`` as this app's ``mcp_tools`` module, so memory never imports
the wiki. Same convention as memory's own tools: the typed signature is the schema, ``invoke`` checks the scope
and runs the service on the database thread, the dict it returns is the reply.
"""

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

from memory import engine
from memory.mcp_registry import ADMIN, READ_ONLY, WRITE, WRITES, Tags, ToolSet, invoke

from . import selectors, services

tools = ToolSet()


def _wiki_publish_auto(p: engine.Principal, **kwargs: Any) -> dict[str, Any]:
    kwargs["tags"] = kwargs["tags"] or ()
    return services.publish_auto_result(agent_id=p.agent_id, actor=p.actor, **kwargs).to_dict()


@tools.tool(annotations=WRITES)
async def wiki_publish_auto(
    ctx: Context,
    doc_type: Annotated[
        str, Field(description="charter, sop, spec, policy or reference (anything else becomes reference)")
    ],
    title: Annotated[str, Field(description="One line, at most 300 characters")],
    summary: Annotated[str, Field(description="A few sentences (markdown, at most 8 KB)")],
    original_text: Annotated[str, Field(description="The document itself (markdown, at most 64 KB)")],
    slug: Annotated[
        str | None,
        Field(description="^[a-z0-9][a-z0-9-]{0,63}$; default from the title, else <doc_type>-<hash>"),
    ] = None,
    tags: Tags = None,
) -> CallToolResult:
    """Publish a long-lived document you distilled from conversations (a charter, SOP, spec, policy or
    reference) as a wiki page at auto/<doc_type>/<slug>, trust 0.300, source_type raw_dialogue (you cannot set
    either; a curator may promote it). Memory keeps one pointer fact about it, never the text. The same slug
    again adds a revision. Checked for prompt injection; at most 20 new pages per UTC day. Needs memory:write.
    Returns {path, trust, source_type, pointer_id, revision, outcome}; outcome is created | revised |
    unchanged | proposed (the page is curated: your text waits for a curator) | quarantined (republished too
    often: waits for a reviewer)."""
    return await invoke(
        ctx,
        WRITE,
        _wiki_publish_auto,
        doc_type=doc_type,
        title=title,
        summary=summary,
        original_text=original_text,
        slug=slug,
        tags=tags,
    )


def _wiki_search(p: engine.Principal, *, query: str, limit: int) -> dict[str, Any]:
    hits = selectors.search(agent_id=p.agent_id, query=query, limit=limit)
    return {"results": [h.to_dict() for h in hits], "total": len(hits)}


@tools.tool(annotations=READ_ONLY)
async def wiki_search(
    ctx: Context,
    query: Annotated[str, Field(description="Plain text; words and any two-character CJK substring match")],
    limit: Annotated[int, Field(ge=1, le=100)] = 10,
) -> CallToolResult:
    """Search your wiki pages, ranked by relevance x (0.5 + trust) x a source factor, so curated pages come
    before equally relevant auto pages. Needs admin (SPEC A3: a tool it does not list needs admin). Returns
    {results: [{path, title, doc_type, summary, trust, source_type, score, relevance, pointer_id, updated}],
    total}."""
    return await invoke(ctx, ADMIN, _wiki_search, query=query, limit=limit)
