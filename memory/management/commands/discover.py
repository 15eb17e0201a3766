"""``manage.py discover --agent A``: compute the agent's entity edges, communities and discoveries now (SPEC B4,
B5) and put new findings in its discovery inbox. Safe to run again: a pair is never proposed twice."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory import engine
from memory.dream.edges import DEFAULT_FLOOR


class Command(BaseCommand):
    help = "Run discovery for one agent: multi-signal entity edges, Leiden communities, new inbox items."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--agent", required=True, help="the agent id")
        parser.add_argument(
            "--floor", type=float, default=DEFAULT_FLOOR, help=f"composite floor (default {DEFAULT_FLOOR})"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from memory.dream.discovery import discover

        if not 0.0 <= options["floor"] < 1.0:
            raise CommandError("--floor must be from 0 to 1")
        try:
            outcome = discover(options["agent"], actor="system:discover", floor=options["floor"])
        except engine.EngineError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
        r = outcome.report
        added = r.get("added", {})
        missing = r.get("missing", {})
        self.stdout.write(
            f"run {outcome.run_id} for {options['agent']}: {r.get('facts', 0)} facts, {r.get('entities', 0)} "
            f"entities, {r.get('candidates', 0)} candidate pairs, {r.get('edges', 0)} edges above "
            f"{r.get('floor')}, {r.get('communities', 0)} communities"
        )
        weights = ", ".join(f"{k} {v:.3f}" for k, v in r.get("weights", {}).items() if v)
        self.stdout.write(f"weights used: {weights or 'none'}")
        for name, why in missing.items():
            self.stdout.write(f"  {name} missing: {why} (its weight went to the others)")
        self.stdout.write(
            "new in the inbox: "
            + ", ".join(f"{k} {n}" for k, n in added.items())
            + f" ({len(outcome)} in all)"
        )
        if r.get("note"):
            self.stdout.write(r["note"])
