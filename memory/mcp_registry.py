"""How apps contribute MCP tools (SPEC A) without ``memory.mcp`` importing them: dependencies point one way.

A tool is a typed ``async def``: its parameters (``Annotated`` with a ``Field`` description) are the input
schema, its docstring the description. Its body hands the arguments to ``invoke(ctx, SCOPE, fn, **arguments)``,
which resolves the caller from the token, checks the scope, runs ``fn(principal, **arguments)`` (the engine
call and the reply's shape, a JSON-able dict) on a database thread of the pool (``memory.mcp_calls``: per-token
concurrency and rate limits), and turns an ``EngineError`` into the
JSON error document. Register it on a ``ToolSet`` with its annotations::

    tools = ToolSet()

    @tools.tool(annotations=WRITES)
    async def wiki_publish_auto(ctx: Context, title: Annotated[str, Field(...)], ...) -> CallToolResult:
        return await invoke(ctx, WRITE, _publish, title=title, ...)

An installed app contributes its tools as ``tools`` in a module ``<app>/mcp_tools.py``; ``app_tool_sets()``
finds them (in INSTALLED_APPS order) and ``memory.mcp.build_server()`` serves them after memory's own.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any

from django.db import connections
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from memory import engine, mcp_calls
from memory.contrib import app_modules
from memory.mcp_calls import cpu_timed, run_in_pool

READ = "memory:read"
WRITE = "memory:write"
ADMIN = "admin"
PRINCIPAL_KEY = "memdesk.principal"  # set on the ASGI scope by memory.mcp.BearerAuth
GATE_KEY = "memdesk.gate_key"  # the key of the token's limits (memory.mcp_calls), set beside it
TOOLS_MODULE = "mcp_tools"

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
DESTRUCTIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


# Tags as every tool takes them: the list's length and each tag's size are checked before anything else, so a
# flood of tags costs a bounded amount of work (the engine's check_tags then de-duplicates and counts).
Tags = Annotated[
    list[Annotated[str, Field(max_length=engine.MAX_TAG_CHARS)]] | None,
    Field(max_length=engine.MAX_RAW_TAGS, description=f"Up to {engine.MAX_TAGS} short tags"),
]

# --- errors ----------------------------------------------------------------------------------------------


class ToolFailure(ToolError):
    """A tool error whose text is the JSON document the agent receives."""

    def __init__(
        self, code: str, message: str, field: str | None = None, details: dict[str, Any] | None = None
    ):
        error: dict[str, Any] = {"code": code, "message": message, "field": field}
        if details:
            error["details"] = details
        text = json.dumps({"error": error}, ensure_ascii=False, default=str)
        self.payload: dict[str, Any] = json.loads(text)  # JSON-clean, whatever ``details`` held
        super().__init__(text)

    @classmethod
    def from_engine(cls, exc: engine.EngineError) -> ToolFailure:
        return cls(exc.code, exc.message, exc.field, exc.details or None)

    def result(self) -> CallToolResult:
        return CallToolResult(
            content=[TextContent(type="text", text=str(self))], structured_content=self.payload, is_error=True
        )


# --- the calling convention: principal, scope, limits, database threads ----------------------------------


def reply(data: dict[str, Any]) -> CallToolResult:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def db_ready() -> None:
    """Django's per-request connection hygiene, for the database thread that runs a tool's database work.

    Like ``close_old_connections`` (a broken connection or one past CONN_MAX_AGE is dropped), except that a
    SQLite connection with CONN_MAX_AGE 0 is kept between calls: reopening it costs about a millisecond per
    call, and a file database has no server that could drop an idle connection.
    """
    for conn in connections.all(initialized_only=True):
        if conn.vendor == "sqlite" and not conn.settings_dict.get("CONN_MAX_AGE"):
            if conn.connection is None:
                continue
            if conn.get_autocommit() != conn.settings_dict["AUTOCOMMIT"] or (
                conn.errors_occurred and not conn.is_usable()
            ):
                conn.close()
            else:
                conn.errors_occurred = False
        else:
            conn.close_if_unusable_or_obsolete()


def _run_sync(
    principal: engine.Principal | None,
    stdio_secret: str | None,
    scope: str,
    fn: Callable[..., dict[str, Any]],
    kwargs: dict[str, Any],
) -> dict[str, Any]:
    db_ready()
    try:
        if principal is None:  # stdio: re-check the token on every call (revocation, expiry)
            principal = engine.authenticate(stdio_secret)
        if not principal.has(scope):
            raise engine.Forbidden(f"this token does not have the {scope} scope")
        return fn(principal, **kwargs)
    except engine.EngineError as exc:
        raise ToolFailure.from_engine(exc) from None


async def invoke(
    ctx: Context[Any, Any], scope: str, fn: Callable[..., dict[str, Any]], **kwargs: Any
) -> CallToolResult:
    """Run ``fn(principal, **kwargs)`` for the caller if its token has ``scope``; its dict is the reply. The
    call takes one of the token's slots (``mcp_calls.gate``: ``rate_limited`` past its limits) and runs on the
    pool of database threads."""
    request = ctx.request_context.request
    principal = None
    key: Any = "stdio"  # a stdio server serves one token
    if request is not None:  # HTTP: BearerAuth resolved the token for this very request and counted it
        principal = request.scope.get(PRINCIPAL_KEY)
        if principal is None:
            raise ToolFailure("unauthorized", "missing, unknown, expired or revoked token")
        key = request.scope.get(GATE_KEY) or principal.token_id
    stdio_secret = getattr(ctx.mcp_server, "stdio_secret", None)  # the token given to ``manage.py mcp``
    try:
        with mcp_calls.gate.admit(key, count_call=principal is None) as charge:
            args: tuple[Any, ...] = (_run_sync, principal, stdio_secret, scope, fn, kwargs)
            if mcp_calls.gate.is_heavy(key):
                args = (mcp_calls.heavy_lane, *args)
            data, cpu = await run_in_pool(cpu_timed, *args)
            charge(cpu)
    except engine.RateLimited as exc:
        raise ToolFailure.from_engine(exc) from None
    if isinstance(data, engine.RateLimited):
        raise ToolFailure.from_engine(data)
    if isinstance(data, BaseException):
        raise data
    return reply(data)


# --- registration ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tool:
    fn: Callable[..., Awaitable[CallToolResult]]
    annotations: ToolAnnotations

    @property
    def name(self) -> str:
        return self.fn.__name__


class ToolSet:
    """One module's tools, in the order they were registered."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def tool(
        self, *, annotations: ToolAnnotations
    ) -> Callable[[Callable[..., Awaitable[CallToolResult]]], Callable[..., Awaitable[CallToolResult]]]:
        def register(
            fn: Callable[..., Awaitable[CallToolResult]],
        ) -> Callable[..., Awaitable[CallToolResult]]:
            if fn.__name__ in self._tools:
                raise ValueError(f"an MCP tool named {fn.__name__!r} is registered already")
            self._tools[fn.__name__] = Tool(fn, annotations)
            return fn

        return register

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))


def app_tool_sets() -> list[ToolSet]:
    """The ``tools`` of each installed app's ``mcp_tools`` module, in INSTALLED_APPS order."""
    found = []
    for module in app_modules(TOOLS_MODULE):
        tools = getattr(module, "tools", None)
        if not isinstance(tools, ToolSet):
            raise TypeError(f"{module.__name__} must define tools = ToolSet()")
        found.append(tools)
    return found
