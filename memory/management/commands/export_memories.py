"""``manage.py export_memories --agent AGENT [--out FILE]``: every row of an agent as JSON lines, with its tier and,
when tiering shortened it, the exact archived original (``original_content``)."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory import engine


class Command(BaseCommand):
    help = "Export an agent's memory rows (history included) as JSON lines, archived originals included."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--agent", required=True, help="the agent id")
        parser.add_argument("--out", help="file to write (default: standard output)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            rows = engine.export_memories(agent_id=options["agent"])
            out = open(options["out"], "w", encoding="utf-8") if options["out"] else sys.stdout  # noqa: SIM115
            n = 0
            try:
                for row in rows:
                    out.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
                    n += 1
            finally:
                if out is not sys.stdout:
                    out.close()
        except engine.EngineError as exc:
            raise CommandError(exc.message) from exc
        if options["out"]:
            self.stderr.write(f"wrote {n} rows to {options['out']}")
