"""``manage.py token create|list|revoke``: agent tokens (SPEC A2). The secret is shown once, at creation."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory import engine
from memory.engine.types import iso


class Command(BaseCommand):
    help = "Create, list and revoke agent tokens. `create` prints the new token alone on its last line."

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True, metavar="{create,list,revoke}")
        create = sub.add_parser("create", help="create a token and print it (shown once)")
        create.add_argument("--agent", required=True, help="the agent (namespace) the token belongs to")
        create.add_argument(
            "--scopes", required=True, help="comma-separated: memory:read, memory:write, admin"
        )
        create.add_argument(
            "--external", action="store_true", help="writes count as mcp_external (trust 0.3)"
        )
        create.add_argument("--name", default="", help="a label, e.g. the machine or client using it")
        create.add_argument(
            "--expires", default=None, help="expiry, RFC 3339 with an offset, e.g. 2026-01-01T00:00Z"
        )
        create.add_argument("--actor", default="system:cli", help="who is recorded in the audit log")
        listing = sub.add_parser("list", help="list an agent's tokens (never the secrets)")
        listing.add_argument("--agent", required=True)
        listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
        revoke = sub.add_parser("revoke", help="revoke a token by id (idempotent)")
        revoke.add_argument("token_id", help="the id shown by `token list`")
        revoke.add_argument("--actor", default="system:cli", help="who is recorded in the audit log")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            getattr(self, f"_{options['action']}")(options)
        except engine.EngineError as exc:
            raise CommandError(
                f"token {options['action']}: {exc.code}: {exc.message}", returncode=2
            ) from None

    def _create(self, options: dict[str, Any]) -> None:
        token, secret = engine.token_create(
            agent_id=options["agent"],
            scopes=options["scopes"],
            name=options["name"],
            external=options["external"],
            expires_at=options["expires"],
            actor=options["actor"],
        )
        expires = iso(token.expires_at) or "never"
        kind = " (external)" if token.external else ""
        self.stderr.write(
            f"token {token.id} for agent {token.agent.agent_id}{kind}: scopes {','.join(token.scopes)}, "
            f"expires {expires}. Copy it now: it cannot be shown again."
        )
        self.stdout.write(secret)

    def _list(self, options: dict[str, Any]) -> None:
        rows: list[dict[str, Any]] = [
            {
                "id": t.id,
                "name": t.name,
                "prefix": f"mdk_{t.prefix}",
                "scopes": list(t.scopes),
                "external": t.external,
                "created": iso(t.created_at),
                "last_used": iso(t.last_used_at),
                "expires": iso(t.expires_at),
                "revoked": iso(t.revoked_at),
            }
            for t in engine.token_list(agent_id=options["agent"])
        ]
        if options["json"]:
            self.stdout.write(json.dumps(rows, indent=2))
            return
        if not rows:
            self.stdout.write(f"no tokens for agent {options['agent']}")
            return
        head = ("id", "name", "prefix", "scopes", "created", "last used", "expires", "revoked")
        table: list[tuple[str, ...]] = [
            (
                str(r["id"]),
                r["name"] or "-",
                r["prefix"] + ("" if not r["external"] else " ext"),
                ",".join(r["scopes"]),
                r["created"] or "-",
                r["last_used"] or "never",
                r["expires"] or "never",
                r["revoked"] or "no",
            )
            for r in rows
        ]
        widths = [max(len(row[i]) for row in [head, *table]) for i in range(len(head))]
        for row in [head, *table]:
            self.stdout.write("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())

    def _revoke(self, options: dict[str, Any]) -> None:
        token = engine.token_revoke(token_id=options["token_id"], actor=options["actor"])
        self.stdout.write(
            f"revoked token {token.id} of agent {token.agent.agent_id} at {iso(token.revoked_at)}"
        )
