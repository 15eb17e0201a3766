"""One ASGI application: ``/mcp`` (and ``/mcp/``) goes to the MCP streamable HTTP endpoint, the rest to Django.

Serve it with ``uvicorn config.asgi:application`` (lifespan ``auto`` or ``on``: the lifespan events start the
MCP SDK's session manager; Django itself ignores them).
"""

import os

from django.core.asgi import get_asgi_application
from starlette.types import Receive, Scope, Send

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_asgi_application()  # sets Django up; import the MCP app only after this

from memory.mcp import http_app  # noqa: E402

MCP_PATH = "/mcp"
mcp_application = http_app(MCP_PATH)


async def application(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await mcp_application(scope, receive, send)
        return
    path = scope.get("path", "")
    if scope["type"] == "http" and path in (MCP_PATH, MCP_PATH + "/"):
        if path != MCP_PATH:
            scope = {**scope, "path": MCP_PATH, "raw_path": MCP_PATH.encode()}
        await mcp_application(scope, receive, send)
        return
    await django_application(scope, receive, send)
