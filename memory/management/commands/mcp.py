"""``manage.py mcp --token TOKEN``: serve the MCP tools over stdio as the agent that owns TOKEN (SPEC A1)."""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from memory import engine


class Command(BaseCommand):
    help = (
        "Serve memdesk's MCP tools over stdin/stdout for one agent token. The token may also come from the "
        "MEMDESK_MCP_TOKEN environment variable (keeps it out of the process list)."
    )
    requires_system_checks: list[str] = []  # start fast; stdout belongs to the MCP protocol

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--token", default=None, help="an agent token (mdk_…) from `manage.py token create`"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        secret = options["token"] or os.environ.get("MEMDESK_MCP_TOKEN") or ""
        if not secret:
            raise CommandError("mcp: give --token TOKEN (or set MEMDESK_MCP_TOKEN)", returncode=2)
        try:
            principal = engine.authenticate(secret.strip())
        except engine.EngineError as exc:
            raise CommandError(f"mcp: {exc.code}: {exc.message}", returncode=2) from None
        self.stderr.write(
            f"memdesk MCP over stdio: agent {principal.agent_id}, scopes {', '.join(sorted(principal.scopes))}"
        )
        connections.close_all()  # the tools use their own database thread from here on
        from memory.mcp import serve_stdio

        serve_stdio(secret.strip())
