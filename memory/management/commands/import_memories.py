"""``manage.py import_memories PATH (--agent AGENT | --agent-map SRC=DST ...) [--trust-origins]``: import a
legacy memories SQLite file (SPEC M4) into the agents named on the command line."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory.engine.importer import import_legacy
from memory.engine.types import EngineError


class Command(BaseCommand):
    help = (
        "Import a legacy memories SQLite database losslessly into the agents named here (--agent or --agent-map); "
        "a second import of the same file changes nothing."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path", help="the legacy SQLite file (a `memories` table)")
        parser.add_argument(
            "--agent",
            dest="agent_id",
            default=None,
            help="import every row into this agent",
        )
        parser.add_argument(
            "--agent-map",
            dest="agent_map",
            action="append",
            default=[],
            metavar="SRC=DST",
            help="import the rows of file agent SRC into agent DST (repeat it); rows of other agents are refused",
        )
        parser.add_argument(
            "--trust-origins",
            action="store_true",
            help="trust the file's origins up to their classes' ceilings (default: at most the import class, 0.7)",
        )
        parser.add_argument("--actor", default="system:import", help="who is recorded in the audit log")
        parser.add_argument("--json", action="store_true", help="print the full report as JSON")

    def _agent_map(self, pairs: list[str]) -> dict[str, str] | None:
        if not pairs:
            return None
        out: dict[str, str] = {}
        for pair in pairs:
            src, sep, dst = pair.partition("=")
            if not sep or not src.strip() or not dst.strip():
                raise CommandError(f"invalid_argument: --agent-map takes SRC=DST, not {pair[:80]!r}")
            out[src.strip()] = dst.strip()
        return out

    def handle(self, *args: Any, **options: Any) -> None:
        agent_map = self._agent_map(options["agent_map"])
        if options["agent_id"] is None and agent_map is None:
            raise CommandError(
                "invalid_argument: name the agents to import into: --agent AGENT, or --agent-map SRC=DST for "
                "each agent of the file to import (rows of agents not named are refused)"
            )
        try:
            result = import_legacy(
                path=options["path"],
                actor=options["actor"],
                agent_id=options["agent_id"],
                agent_map=agent_map,
                trust_origins=options["trust_origins"],
            )
        except EngineError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from None
        if options["json"]:
            self.stdout.write(json.dumps(result.to_dict(), ensure_ascii=False, indent=2, default=str))
            return
        out = self.stdout
        out.write(
            f"imported {result.inserted} of {result.total} rows "
            f"({result.skipped} skipped: {result.already_present} already present, "
            f"{result.conflicts} id conflicts with another agent, {result.invalid} unusable)"
        )
        out.write(f"facts: {result.facts} rows, {result.fact_writes} write-log entries; "
                  f"quarantined rows: {result.quarantined}")  # fmt: skip
        out.write(f"agents: {', '.join(result.agents) or '-'}")
        out.write(f"columns: {', '.join(result.columns)}")
        if result.ignored_columns:
            out.write(f"ignored columns: {', '.join(result.ignored_columns)}")
        if result.trust_lowered:
            out.write(
                f"trust set by the trust rules on {result.trust_lowered} rows (legacy value kept in metadata)"
            )
        if result.conflict_ids:
            more = result.conflicts - len(result.conflict_ids)
            out.write("conflicting ids (kept as they are): " + ", ".join(result.conflict_ids[:20])
                      + (f" … and {more} more" if more > 0 else ""))  # fmt: skip
        if result.repaired_keys:
            out.write(f"keys re-derived because their rows overlapped: {result.repaired_keys}")
            for rep in result.repairs[:20]:
                out.write(
                    f"  {rep['agent_id']} / {rep['subject']} / {rep['predicate']}: {len(rep['changes'])} row(s) changed"
                )
        if result.problem_rows:
            out.write(self.style.WARNING(f"rows with problems: {result.problem_rows}"))
            for p in result.problems[:20]:
                out.write(f"  {p['id']}: {'; '.join(p['problems'])}")
