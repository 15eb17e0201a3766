"""MCP tools (SPEC A): parse the arguments, resolve the caller, check scope, call the engine, shape the reply.

Memory's own tools are defined here; an installed app contributes its tools through ``memory.mcp_registry``
(``<app>/mcp_tools.py``, e.g. the wiki's), which also holds the calling convention every tool uses.
``build_server()`` serves memory's tools first, then each app's in INSTALLED_APPS order.

One ``MCPServer`` (official SDK 2.x) serves two transports:

* stdio: ``manage.py mcp --token TOKEN`` (see ``serve_stdio``); the token is checked at start and again on
  every call, so a revoked token stops working mid-session.
* streamable HTTP: ``http_app()`` is mounted by ``config/asgi.py`` at ``/mcp``. Every HTTP request must carry
  ``Authorization: Bearer TOKEN``; a missing, unknown, expired or revoked token is answered ``401`` before any
  MCP handling, with a JSON-RPC error body whose ``error.data.code`` is ``unauthorized``. Every request counts
  against its token's call rate and share of the server (``memory.mcp_calls``); a token over them is answered
  ``429`` (``Retry-After``) with ``error.data.code`` ``rate_limited`` before its body is read.

The agent namespace always comes from the token, never from arguments, and so does the origin of writes
(``agent_derived``, or ``mcp_external:…`` for external tokens).

Every failure is a tool result with ``isError: true`` whose text is a JSON document::

    {"error": {"code": "not_found", "message": "no memory with that id", "field": "id"}}

Codes: the engine's (``invalid_argument``, ``invalid_time``, ``too_many_ids``, ``content_too_large``,
``not_found``, ``rate_limited``), ``forbidden`` (missing scope), ``unauthorized`` (token stopped working),
``unknown_tool``, an app's own (the wiki's ``prompt_injection``: a page that was dropped), and
``internal_error`` (a bug: logged server-side with a reference; no traceback or exception text is sent).
Argument schema violations (missing, wrong type, unknown argument) are ``invalid_argument``.
"""

import logging
import secrets
import time
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

import anyio
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memory import engine, mcp_calls
from memory.config import insights_settings
from memory.engine.types import iso
from memory.mcp_calls import run_in_pool
from memory.mcp_registry import (
    ADMIN,
    DESTRUCTIVE,
    GATE_KEY,
    PRINCIPAL_KEY,
    READ,
    READ_ONLY,
    WRITE,
    WRITES,
    Tags,
    ToolFailure,
    ToolSet,
    app_tool_sets,
    db_ready,
    invoke,
)

log = logging.getLogger("memdesk.mcp")

MAX_TTL_DAYS = 36_500
UNAUTHORIZED_RPC_CODE = -32001  # JSON-RPC "server error" range: authentication required
INTERNAL_RPC_CODE = -32603
RATE_LIMITED_RPC_CODE = -32002  # JSON-RPC "server error" range: the token is over its limits


# --- errors ----------------------------------------------------------------------------------------------


def _validation_failure(exc: ValidationError) -> ToolFailure:
    """Pydantic's complaint about the arguments, without echoing the rejected values."""
    parts, first = [], None
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        first = first or where
        if err.get("type") == "missing":
            parts.append(f"{where} is required")
        else:
            parts.append(f"{where}: {err.get('msg', 'invalid value')}")
    return ToolFailure("invalid_argument", "; ".join(parts) or "invalid arguments", first)


def _internal(tool: str, exc: BaseException) -> ToolFailure:
    ref = secrets.token_hex(6)
    log.error("MCP %s failed unexpectedly (ref %s)", tool, ref, exc_info=exc)
    return ToolFailure("internal_error", f"internal error (ref {ref}); the details are in the server log")


# --- the server ------------------------------------------------------------------------------------------


MAX_LIST_ITEMS = engine.MAX_RAW_TAGS  # the longest list any tool takes (tags; ids take 100, facts 20)


def _argument_problem(value: Any, where: str = "") -> tuple[str, str] | None:
    """(field, problem) for the first list longer than any tool takes (checked before its items are walked)
    or string (value or key) holding a NUL character: one rule on every backend (PostgreSQL cannot store NUL
    in text, SQLite would)."""
    if isinstance(value, str):
        return ((where or "arguments"), "contains a NUL character") if "\x00" in value else None
    if isinstance(value, dict):
        for k, v in value.items():
            path = f"{where}.{k}" if where else str(k)
            if isinstance(k, str) and "\x00" in k:
                return (where or "arguments"), "has a key with a NUL character"
            found = _argument_problem(v, path)
            if found is not None:
                return found
    elif isinstance(value, list):
        if len(value) > MAX_LIST_ITEMS:
            return (where or "arguments"), f"has {len(value)} items; no tool takes more than {MAX_LIST_ITEMS}"
        for i, v in enumerate(value):
            found = _argument_problem(v, f"{where}.{i}")
            if found is not None:
                return found
    return None


class MemdeskMCP(MCPServer[Any]):
    """MCPServer whose tool errors are always the JSON error document, argument errors included."""

    stdio_secret: str | None = None  # the token given to ``manage.py mcp``; None on HTTP
    _arg_names: dict[str, set[str]] | None = None

    async def _known_arguments(self, name: str) -> set[str] | None:
        if self._arg_names is None:
            tools = await self.list_tools()
            self._arg_names = {t.name: set((t.input_schema or {}).get("properties", {})) for t in tools}
        return self._arg_names.get(name)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        try:
            known = await self._known_arguments(name)
            if known is None:
                raise ToolFailure("unknown_tool", f"no tool named {name[:80]!r}", "name")
            unknown = sorted(set(arguments or {}) - known)
            if unknown:
                raise ToolFailure(
                    "invalid_argument",
                    f"unknown argument {unknown[0][:80]!r}; this tool takes: {', '.join(sorted(known))}",
                    unknown[0][:80],
                )
            problem = _argument_problem(arguments or {})
            if problem is not None:
                raise ToolFailure("invalid_argument", f"{problem[0]} {problem[1]}", problem[0])
            return await super().call_tool(name, arguments, context)
        except ToolFailure as failure:
            return failure.result()
        except UnexpectedToolError as exc:
            return _internal(name, exc).result()
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ToolFailure):
                return cause.result()
            if isinstance(cause, ValidationError):
                return _validation_failure(cause).result()
            return _internal(name, exc).result()


INSTRUCTIONS = (
    "Long-term memory for one agent. Your namespace comes from your token: every id you see is yours, and "
    "an id you do not own looks exactly like one that does not exist. Times are RFC 3339 with an offset or "
    "Z. Store facts (subject + predicate) with memory_store_fact so newer values supersede older ones; read "
    "them back with memory_get_at / memory_get_history. Prefer memory_fetch_batch over many memory_read "
    "calls. Errors come back as {'error': {'code', 'message', 'field'}}."
)


class StrictArguments(FuncMetadata):
    """A tool's arguments taken as sent (issue 15 item 16): no coercion (``true`` is not a number, ``"5"`` not
    5, ``5.0`` not an integer) and no pre-parsing of strings as JSON (a string argument that looks like a JSON
    list stays a string)."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        return data


def _strict(meta: FuncMetadata) -> StrictArguments:
    model = type(
        meta.arg_model.__name__,
        (meta.arg_model,),
        {"model_config": ConfigDict(strict=True), "__module__": meta.arg_model.__module__},
    )
    return StrictArguments(
        arg_model=model,
        output_schema=meta.output_schema,
        output_model=meta.output_model,
        wrap_output=meta.wrap_output,
    )


def build_server() -> MemdeskMCP:
    """Memory's tools, then each installed app's (``<app>/mcp_tools.py``, see ``memory.mcp_registry``)."""
    built = MemdeskMCP(
        "memdesk",
        title="memdesk memory",
        instructions=INSTRUCTIONS,
        version="0.1.0",
        log_level="WARNING",
    )
    seen: set[str] = set()
    for tool_set in (tools, *app_tool_sets()):
        for tool in tool_set:
            if tool.name in seen:
                raise ImproperlyConfigured(f"two MCP tools are named {tool.name!r}")
            seen.add(tool.name)
            built.add_tool(tool.fn, annotations=tool.annotations)
            added = built._tool_manager.get_tool(tool.name)
            assert added is not None
            added.fn_metadata = _strict(added.fn_metadata)
    return built


# --- helpers ---------------------------------------------------------------------------------------------


def _normalise_time(value: str | None) -> str | None:
    """The engine accepted ``value``; echo it in canonical UTC form."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "zZ" else text)
    except ValueError:
        return text
    return iso(parsed.astimezone(UTC))


def attitude_floor() -> float:
    return float(insights_settings().attitude_floor)


# --- argument types --------------------------------------------------------------------------------------

MemoryId = Annotated[str, Field(description="A memory id as returned by memdesk (m_…)")]
Time = Annotated[str, Field(description="RFC 3339 time with an offset or Z, e.g. 2025-03-01T12:00:00Z")]
OptTime = Annotated[str | None, Field(description="RFC 3339 time with an offset or Z")]
Layer = Literal["episodic", "semantic", "procedural"]
Subject = Annotated[str, Field(description="Who or what the fact is about, e.g. 'user:alice'")]
Predicate = Annotated[str, Field(description="The attribute, e.g. 'lives_in'")]


# --- tools -----------------------------------------------------------------------------------------------

tools = ToolSet()  # memory's own; the server is built after them (``server`` below)


def _store(
    p: engine.Principal,
    *,
    content: str,
    tags: list[str] | None,
    layer: str,
    importance: float,
    ttl_days: float | None,
) -> dict[str, Any]:
    valid_until = timezone.now() + timedelta(days=ttl_days) if ttl_days is not None else None
    limit = int(getattr(settings, "MEMDESK_MCP_STORE_DAILY_LIMIT", 1000))
    return engine.store(
        agent_id=p.agent_id,
        origin=p.origin,
        actor=p.actor,
        protect=True,
        quota=("memory_store", limit),  # per agent; a refused call writes nothing
        content=content,
        tags=tags or (),
        layer=layer,
        importance=importance,
        valid_until=valid_until,
    ).to_dict()


@tools.tool(annotations=WRITES)
async def memory_store(
    ctx: Context,
    content: Annotated[str, Field(description="The memory text (at most 64 KB)")],
    tags: Tags = None,
    layer: Layer = "episodic",
    importance: Annotated[float, Field(ge=0, le=10, description="0–10, default 5")] = 5.0,
    ttl_days: Annotated[
        float | None, Field(gt=0, le=MAX_TTL_DAYS, description="Stop being current after this many days")
    ] = None,
) -> CallToolResult:
    """Store a plain memory (no subject/predicate, so nothing is superseded). Needs memory:write.
    Limited to 1000 calls per agent per UTC day. Returns {id, outcome}."""
    return await invoke(
        ctx, WRITE, _store, content=content, tags=tags, layer=layer, importance=importance, ttl_days=ttl_days
    )


def _store_fact(p: engine.Principal, **kwargs: Any) -> dict[str, Any]:
    kwargs["derived_from"] = kwargs["derived_from"] or ()
    kwargs["source_event"] = kwargs["source_event"] or ""
    limit = int(getattr(settings, "MEMDESK_MCP_FACT_DAILY_LIMIT", 2000))
    result = engine.store_temporal(
        agent_id=p.agent_id,
        origin=p.origin,
        actor=p.actor,
        protect=True,
        quota=(f"memory_store_fact:token-{p.token_id}", limit),  # per token: each write is scanned
        **kwargs,
    )
    return result.to_dict()


@tools.tool(annotations=WRITES)
async def memory_store_fact(
    ctx: Context,
    content: Annotated[str, Field(description="The fact in words (at most 64 KB)")],
    subject: Subject,
    predicate: Predicate,
    object: Annotated[str | None, Field(description="The value, e.g. 'Lisbon'")] = None,
    valid_from: Annotated[
        str | None, Field(description="When it became true (RFC 3339); default now")
    ] = None,
    valid_until: Annotated[
        str | None, Field(description="When it stops being true (RFC 3339); default open")
    ] = None,
    confidence: Annotated[float, Field(ge=0, le=1)] = 1.0,
    derived_from: Annotated[
        list[str] | None, Field(description="Ids of memories this was derived from")
    ] = None,
    source_event: Annotated[
        str | None, Field(description="Your reference for the event that taught you")
    ] = None,
    session_id: str | None = None,
) -> CallToolResult:
    """Store a temporal fact (subject, predicate, object). A newer value supersedes the current one; an older
    valid_from inserts a historical segment; the same value reaffirms. Needs memory:write. Limited per token
    per UTC day (2000 by default).
    Returns {id, outcome} with outcome stored | reaffirmed | quarantined | dropped."""
    return await invoke(
        ctx,
        WRITE,
        _store_fact,
        content=content,
        subject=subject,
        predicate=predicate,
        object=object,
        valid_from=valid_from,
        valid_until=valid_until,
        confidence=confidence,
        derived_from=derived_from,
        source_event=source_event,
        session_id=session_id,
    )


class DistilledFact(BaseModel):
    """One fact distilled from a conversation (SPEC P9)."""

    model_config = ConfigDict(extra="forbid")
    content: Annotated[str, Field(description="The fact in words (at most 600 characters)")]
    subject: Subject
    predicate: Predicate
    object: Annotated[str | None, Field(description="The value")] = None


def _distill(p: engine.Principal, *, facts: list[DistilledFact], session_id: str | None) -> dict[str, Any]:
    results = engine.store_facts_protected(
        agent_id=p.agent_id,
        facts=[f.model_dump() for f in facts],
        origin=p.origin,
        session_id=session_id,
        actor=p.actor,
    )
    return {"results": [r.to_dict() for r in results]}


@tools.tool(annotations=WRITES)
async def memory_distill(
    ctx: Context,
    facts: Annotated[list[DistilledFact], Field(description="Up to 20 facts from one conversation")],
    session_id: str | None = None,
) -> CallToolResult:
    """Store facts distilled from a conversation, protected: each is checked for prompt injection (dropped),
    de-duplicated against what is already believed (reaffirmed), and counted by the burst guard (a burst of
    facts about one subject waits for a human: quarantined). Needs memory:write.
    Returns {results: [{id, outcome, reason?}]} in the order given; outcome is stored | reaffirmed |
    quarantined | dropped."""
    return await invoke(ctx, WRITE, _distill, facts=facts, session_id=session_id)


def _search(
    p: engine.Principal, *, query: str, limit: int, layer: str | None, tags: list[str] | None
) -> dict[str, Any]:
    return engine.agent_search(
        agent_id=p.agent_id, query=query, limit=limit, layer=layer, tags=tags
    ).to_dict()


@tools.tool(annotations=READ_ONLY)
async def memory_search(
    ctx: Context,
    query: Annotated[str, Field(description="Plain text; never interpreted as query syntax")],
    limit: Annotated[int, Field(ge=1, le=100)] = 10,
    layer: Layer | None = None,
    tags: Tags = None,
) -> CallToolResult:
    """Search your current memories (full text, ranked by relevance, importance, recency, trust and the
    feedback you gave). Needs memory:read. Returns {results, total, query_id, gaps}; pass query_id to
    memory_feedback. gaps lists a knowledge gap this query keeps hitting (searches like it were marked
    INCORRECT twice within 7 days): memory lacks the answer, so do not guess."""
    return await invoke(ctx, READ, _search, query=query, limit=limit, layer=layer, tags=tags)


def _read(p: engine.Principal, *, memory_id: str) -> dict[str, Any]:
    return engine.get_memory(agent_id=p.agent_id, memory_id=memory_id).to_dict()


@tools.tool(annotations=READ_ONLY)
async def memory_read(ctx: Context, id: MemoryId) -> CallToolResult:
    """Read one memory by id. Needs memory:read. Returns the record; an unknown id is not_found."""
    return await invoke(ctx, READ, _read, memory_id=id)


def _fetch_batch(p: engine.Principal, *, ids: list[str]) -> dict[str, Any]:
    result = engine.get_by_ids(agent_id=p.agent_id, ids=ids)
    return {**result, "memories": [m.to_dict() for m in result["memories"]]}


@tools.tool(annotations=READ_ONLY)
async def memory_fetch_batch(
    ctx: Context,
    ids: Annotated[list[str], Field(description="Up to 100 memory ids", json_schema_extra={"maxItems": 100})],
) -> CallToolResult:
    """Fetch up to 100 memories by id in one call, in request order. Needs memory:read.
    Returns {memories, missing_ids, total_found, total_missing}."""
    return await invoke(ctx, READ, _fetch_batch, ids=ids)


def _held(record: dict[str, Any]) -> dict[str, Any]:
    """A quarantined row as an agent sees it (SPEC P7): that it exists (id, times, origin, trust), never its
    text; people see it on the quarantine desk."""
    empty: dict[str, Any] = {"content": "", "object": None, "tags": [], "metadata": {}, "source_event": ""}
    return {**record, **empty, "derived_from": [], "reaffirmed_by": []}


def _history(p: engine.Principal, *, subject: str, predicate: str) -> dict[str, Any]:
    records = engine.get_history(agent_id=p.agent_id, subject=subject, predicate=predicate)
    shown = [_held(r.to_dict()) if r.quarantined and not r.retracted else r.to_dict() for r in records]
    return {"subject": subject, "predicate": predicate, "records": shown, "total": len(records)}


@tools.tool(annotations=READ_ONLY)
async def memory_get_history(ctx: Context, subject: Subject, predicate: Predicate) -> CallToolResult:
    """Every value a fact ever had, oldest world time first, superseded and retracted rows included and
    marked; a row held for review (quarantined) shows only that it exists, never its text. Needs memory:read.
    Returns {subject, predicate, records, total}."""
    return await invoke(ctx, READ, _history, subject=subject, predicate=predicate)


def _get_at(
    p: engine.Principal, *, subject: str, predicate: str, at: str, as_of: str | None
) -> dict[str, Any]:
    records = engine.get_values_at(
        agent_id=p.agent_id, subject=subject, predicate=predicate, at=at, as_of=as_of
    )
    return {
        "subject": subject,
        "predicate": predicate,
        "at": _normalise_time(at),
        "record": records[0].to_dict() if records else None,
        "found": bool(records),
        # SPEC B3: a multi-valued predicate (likes, speaks, ...) may hold several values at once
        "multi_valued": engine.is_multi_valued(predicate),
        "records": [r.to_dict() for r in records],
    }


@tools.tool(annotations=READ_ONLY)
async def memory_get_at(
    ctx: Context,
    subject: Subject,
    predicate: Predicate,
    at: Time,
    as_of: Annotated[
        str | None, Field(description="Answer as believed at this record time (RFC 3339); default now")
    ] = None,
) -> CallToolResult:
    """The value of a fact at world time `at`. Needs memory:read. For a multi-valued predicate (likes, speaks,
    uses_tool, ...) every value holding then is in `records` (latest start first); `record` is the first.
    Returns {subject, predicate, at, record, found, multi_valued, records}."""
    return await invoke(ctx, READ, _get_at, subject=subject, predicate=predicate, at=at, as_of=as_of)


EntityName = Annotated[str, Field(description="An entity name as it appears in facts, e.g. 'Li Laoban'")]


def _alias_add(p: engine.Principal, *, canonical: str, alias: str) -> dict[str, Any]:
    return engine.alias_add(agent_id=p.agent_id, canonical=canonical, alias=alias, actor=p.actor).to_dict()


@tools.tool(annotations=WRITES)
async def memory_alias_add(
    ctx: Context,
    canonical: Annotated[str, Field(description="The entity's main name, e.g. 'Li Laoban'")],
    alias: EntityName,
) -> CallToolResult:
    """Record that `alias` is another name of the entity `canonical`, so the graph and search treat both as
    one. Names are trimmed and lower-cased; chains are flattened (an alias of an alias points at the final
    name). Needs memory:write. Returns {canonical, alias, created, flattened, event_id}: `event_id` is the
    merge's audit event (null when nothing changed), which an admin can take back with `memory_alias_undo`."""
    return await invoke(ctx, WRITE, _alias_add, canonical=canonical, alias=alias)


def _alias_undo(p: engine.Principal, *, event_id: int, reason: str) -> dict[str, Any]:
    return engine.alias_undo(agent_id=p.agent_id, event_id=event_id, actor=p.actor, reason=reason).to_dict()


@tools.tool(annotations=DESTRUCTIVE)
async def memory_alias_undo(
    ctx: Context,
    event_id: Annotated[
        int, Field(description="The merge's audit event id (`event_id` from memory_alias_add)")
    ],
    reason: Annotated[str, Field(description="Why the merge is taken back (audited)", max_length=2000)] = "",
) -> CallToolResult:
    """Take a merge back: the alias is its own entity again (or points where it pointed before), names the merge
    re-pointed point back, plain memories written since are linked again and the graph rebuilds. Merges are
    undone newest first. Needs admin. Refusals: `already_undone`, `merge_changed` (a later merge kept, moved or
    rewrote one of its names: undo that one first), `not_found` (not one of this agent's merges).
    Returns {canonical, alias, restored_aliases, relinked, event_id, merge_event_id}."""
    return await invoke(ctx, ADMIN, _alias_undo, event_id=event_id, reason=reason)


def _alias_list(p: engine.Principal) -> dict[str, Any]:
    aliases = [a.to_dict() for a in engine.alias_list(agent_id=p.agent_id)]
    return {"aliases": aliases, "total": len(aliases)}


@tools.tool(annotations=READ_ONLY)
async def memory_alias_list(ctx: Context) -> CallToolResult:
    """Every entity alias of your memory, sorted by canonical name then alias. Needs memory:read.
    Returns {aliases: [{canonical, alias, created_at}], total}."""
    return await invoke(ctx, READ, _alias_list)


DiscoveryKind = Literal["cross_community", "indirect_strong", "knowledge_gap"]


def _discoveries(p: engine.Principal, *, kind: str | None, limit: int) -> dict[str, Any]:
    items = engine.inbox_list(agent_id=p.agent_id, kind=kind)
    shown = [i for i in items if i.status in ("open", "pinned")][:limit]
    return {"discoveries": [i.to_dict() for i in shown], "total": len(shown)}


@tools.tool(annotations=READ_ONLY)
async def memory_discoveries(
    ctx: Context,
    kind: Annotated[
        DiscoveryKind | None,
        Field(description="cross_community | indirect_strong | knowledge_gap; default every kind"),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
) -> CallToolResult:
    """Connections between your entities that no fact states, found in the background (SPEC B5): pinned ones
    first, then open ones, by kind and score. Snoozed and dismissed ones are left out; nothing here is ever put in your
    search results. Needs memory:read. Returns {discoveries: [{id, kind, entities, score, status, explanation,
    evidence: {memory_ids, sessions, shared_neighbours, signals}, created_at}], total}."""
    return await invoke(ctx, READ, _discoveries, kind=kind, limit=limit)


def _record_mistake(p: engine.Principal, **kwargs: Any) -> dict[str, Any]:
    kwargs["agent_response_summary"] = kwargs["agent_response_summary"] or ""
    mistake = engine.record_mistake(agent_id=p.agent_id, actor=p.actor, **kwargs)
    rules = engine.maybe_consolidate(agent_id=p.agent_id)
    return {
        "id": mistake.id,
        "category": mistake.category,
        "consolidated": [
            {"category": r.category, "rule_id": r.rule_id, "source_ids": r.source_ids} for r in rules
        ],
    }


@tools.tool(annotations=WRITES)
async def memory_record_mistake(
    ctx: Context,
    category: Annotated[
        str, Field(description="factual, behavioral, capability, safety or hallucination (else behavioral)")
    ],
    input_summary: Annotated[str, Field(description="What you were asked")],
    what_went_wrong: Annotated[str, Field(description="The mistake, in one or two sentences")],
    agent_response_summary: Annotated[str | None, Field(description="What you answered")] = None,
    ground_truth: Annotated[str | None, Field(description="What the right answer was")] = None,
    session_id: str | None = None,
) -> CallToolResult:
    """Note a mistake in your notebook so it is recalled before similar requests; three open mistakes of
    one category become one rule memory. Needs memory:write. Returns {id, category, consolidated}."""
    return await invoke(
        ctx,
        WRITE,
        _record_mistake,
        category=category,
        input_summary=input_summary,
        what_went_wrong=what_went_wrong,
        agent_response_summary=agent_response_summary,
        ground_truth=ground_truth,
        session_id=session_id,
    )


def _reflexion_context(p: engine.Principal, *, message: str, include_attitudes: bool) -> dict[str, Any]:
    mistakes = engine.recall(agent_id=p.agent_id, message=message)
    out: dict[str, Any] = {"block": engine.render_block(mistakes), "mistakes": [m.id for m in mistakes]}
    if include_attitudes:
        held = engine.attitudes(agent_id=p.agent_id, floor=attitude_floor())
        out["block"] += engine.render_attitudes(held)
        out["attitudes"] = [a.to_dict() for a in held]
    return out


@tools.tool(annotations=READ_ONLY)
async def memory_reflexion_context(
    ctx: Context,
    message: Annotated[str, Field(description="The message you are about to answer")],
    include_attitudes: Annotated[
        bool, Field(description="Also add your current reviewed attitudes above the confidence floor")
    ] = False,
) -> CallToolResult:
    """The '## Past Mistakes to Avoid' block for a message (empty when nothing relevant is open); with
    include_attitudes, followed by '## Standing Attitudes' (current, reviewed, decayed confidence at or above
    the floor). Needs memory:read. Returns {block, mistakes} (and attitudes)."""
    return await invoke(ctx, READ, _reflexion_context, message=message, include_attitudes=include_attitudes)


def _feedback(p: engine.Principal, **kwargs: Any) -> dict[str, Any]:
    return engine.feedback_record(agent_id=p.agent_id, actor=p.actor, **kwargs).to_dict()


@tools.tool(annotations=WRITES)
async def memory_feedback(
    ctx: Context,
    verdict: Annotated[
        Literal["CORRECT", "INCORRECT", "AMBIGUOUS", "+", "-"],
        Field(description="'+' = CORRECT, '-' = INCORRECT"),
    ],
    memory_id: Annotated[str | None, Field(description="A memory the verdict is about")] = None,
    query_id: Annotated[str | None, Field(description="A query_id from memory_search")] = None,
    note: Annotated[str | None, Field(description="Why (at most 2000 characters)")] = None,
) -> CallToolResult:
    """Say whether a memory or a search result set was right. Give exactly one of memory_id or query_id (a
    search of the last 90 days). Verdicts move how the memories rank in later searches; two INCORRECT verdicts
    on searches like one another within 7 days record a knowledge gap. Needs memory:write.
    Returns {id, target_type, target_id, verdict, created_at, adjusted, gap}."""
    return await invoke(
        ctx, WRITE, _feedback, verdict=verdict, memory_id=memory_id, query_id=query_id, note=note
    )


def _attitude_propose(p: engine.Principal, **kwargs: Any) -> dict[str, Any]:
    kwargs["evidence"] = kwargs["evidence"] or ()
    return engine.attitude_propose(agent_id=p.agent_id, actor=p.actor, **kwargs).to_dict()


@tools.tool(annotations=WRITES)
async def memory_attitude_propose(
    ctx: Context,
    category: Annotated[
        str,
        Field(
            description="One of workflow, tool_behavior, config, architecture, preference, testing_philosophy, "
            "autonomy_level, safety, design_preference, system_feedback"
        ),
    ],
    statement: Annotated[
        str, Field(description="The attitude in one or two sentences (at most 500 characters)")
    ],
    confidence: Annotated[float, Field(ge=0, le=1, description="How sure you are, 0–1")],
    evidence: Annotated[
        list[str] | None, Field(description="Up to 10 short reasons or memory ids behind it")
    ] = None,
) -> CallToolResult:
    """Propose an attitude (how to work, what to prefer) for a category. A person reviews every change before
    it holds; proposing what the category already says reaffirms it. Needs memory:write.
    Returns {outcome, category, review_item_id, current}; outcome is proposed | already_proposed | reaffirmed."""
    return await invoke(
        ctx,
        WRITE,
        _attitude_propose,
        category=category,
        statement=statement,
        confidence=confidence,
        evidence=evidence,
    )


def _skill_use(p: engine.Principal, *, skill: str) -> dict[str, Any]:
    return engine.skill_use(agent_id=p.agent_id, skill=skill, actor=p.actor).to_dict()


@tools.tool(annotations=WRITES)
async def memory_skill_use(
    ctx: Context,
    skill: Annotated[str, Field(description="The skill you just used, e.g. 'sql window functions'")],
) -> CallToolResult:
    """Count one use of a skill. Levels: 1 exposure, 2 competent, 3 generative; uses decay with a 30-day
    half-life, and a level change waits for a person's review. Needs memory:write. Returns {skill, level,
    level_name, uses, score, called_for, ..., proposed_review_item_id}."""
    return await invoke(ctx, WRITE, _skill_use, skill=skill)


def _invalidate_by_origin(p: engine.Principal, *, origin: str, since: str | None) -> dict[str, Any]:
    return engine.invalidate_by_origin(
        agent_id=p.agent_id, origin=origin, since=since, actor=p.actor
    ).to_dict()


@tools.tool(annotations=DESTRUCTIVE)
async def memory_invalidate_by_origin(
    ctx: Context,
    origin: Annotated[str, Field(description="The exact origin string whose writes to retract")],
    since: OptTime = None,
) -> CallToolResult:
    """Retract everything one origin wrote (optionally since a time), restore what it had superseded and
    lower the trust of memories derived from it. Needs admin.
    Returns {origin, since, retracted, restored, trust_crushed}."""
    return await invoke(ctx, ADMIN, _invalidate_by_origin, origin=origin, since=since)


server = build_server()


# --- transports ------------------------------------------------------------------------------------------


def serve_stdio(secret: str) -> None:
    """Serve over stdin/stdout as the agent owning ``secret`` (checked again on every call)."""
    server.stdio_secret = secret
    anyio.run(server.run_stdio_async)


def _authenticate(secret: str | None) -> engine.Principal:
    db_ready()
    return engine.authenticate(secret)


def _bearer(scope: Scope) -> str | None:
    value = Headers(scope=scope).get("authorization") or ""
    kind, _, secret = value.strip().partition(" ")
    return secret.strip() if kind.lower() == "bearer" and secret.strip() else None


def _http_error(
    status: int, rpc_code: int, failure: ToolFailure, headers: dict[str, str] | None = None
) -> JSONResponse:
    """A JSON-RPC error body (what MCP clients parse) carrying memdesk's error object as ``data``."""
    error = failure.payload["error"]
    message = f"{error['code']}: {error['message']}"
    return JSONResponse(
        {"jsonrpc": "2.0", "id": None, "error": {"code": rpc_code, "message": message, "data": error}},
        status_code=status,
        headers=headers,
    )


class BearerAuth:
    """Resolve ``Authorization: Bearer`` to a Principal before the MCP transport sees the request. Every
    response carries ``Server-Timing: app;dur=<ms>``: the server's time from the request to its answer."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan: starts the SDK's session manager
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def timed(message: Message) -> None:
            if message["type"] == "http.response.start":
                took = f"app;dur={(time.perf_counter() - started) * 1000:.1f}".encode()
                message = {**message, "headers": [*message.get("headers", []), (b"server-timing", took)]}
            await send(message)

        await self._call(scope, receive, timed)

    async def _call(self, scope: Scope, receive: Receive, send: Send) -> None:
        secret = _bearer(scope)
        # a token's limits are kept under its secret's hash, so an over-limit client is refused before its
        # request costs a database lookup
        key = engine.hash_secret(secret) if secret and len(secret) <= 200 else None
        charge = None
        if key is not None:
            try:
                charge = mcp_calls.gate.request(key)
            except engine.RateLimited as exc:
                wait = exc.details.get("retry_after")
                headers = {"Retry-After": str(max(1, round(wait)))} if isinstance(wait, int | float) else None
                await _http_error(429, RATE_LIMITED_RPC_CODE, ToolFailure.from_engine(exc), headers)(
                    scope, receive, send
                )
                return
        try:
            principal = await run_in_pool(_authenticate, secret)
        except engine.EngineError as exc:
            challenge = {"WWW-Authenticate": 'Bearer realm="memdesk", error="invalid_token"'}
            await _http_error(401, UNAUTHORIZED_RPC_CODE, ToolFailure.from_engine(exc), challenge)(
                scope, receive, send
            )
            return
        except Exception as exc:  # e.g. the database is down: a generic answer, the details in the log
            await _http_error(500, INTERNAL_RPC_CODE, _internal("authentication", exc))(scope, receive, send)
            return
        scope[PRINCIPAL_KEY] = principal
        scope[GATE_KEY] = key
        size = 0  # bytes of the request's body and of the answer: what parsing and serialising them cost

        async def counted() -> Message:
            nonlocal size
            message = await receive()
            size += len(message.get("body", b""))
            return message

        async def answered(message: Message) -> None:
            nonlocal size
            size += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, counted, answered)
        finally:
            if charge is not None:
                charge(size * mcp_calls.PARSE_SECONDS_PER_BYTE)


def transport_security() -> TransportSecuritySettings:
    """DNS-rebinding protection for the hosts Django serves (MEMDESK_ALLOWED_HOSTS); off for '*'."""
    hosts = [h.lstrip(".") for h in settings.ALLOWED_HOSTS if h]
    if not hosts or "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    allowed_hosts, origins = [], []
    for host in hosts:
        allowed_hosts += [host, f"{host}:*"]
        origins += [f"{scheme}://{host}{port}" for scheme in ("http", "https") for port in ("", ":*")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts, allowed_origins=origins
    )


def http_app(path: str = "/mcp") -> ASGIApp:
    """The streamable HTTP endpoint (stateless, JSON responses) behind bearer authentication.

    Stateless: every POST stands alone, so any worker process can answer any request and a revoked token
    stops working on its next request. The returned app also answers the ASGI lifespan protocol, which
    starts the SDK's session manager; serve it with lifespan enabled (uvicorn's default ``auto`` works).
    """
    app = server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=True,
        json_response=True,
        transport_security=transport_security(),
    )
    return BearerAuth(app)
