"""Re-key stored facts after the predicate registry changed a predicate's cardinality (SPEC B3).

Run it after migrating to 0016 (rows written before were keyed single-valued) and after any change to
``[registry] path`` that flips a predicate between single and multi. Audited per agent; a second run changes
nothing. ``--dry-run`` only counts.
"""

import json

from django.core.management.base import BaseCommand

from memory import engine


class Command(BaseCommand):
    help = "Re-derive the keys of facts whose predicate's cardinality (registry) differs from how they are stored."

    def add_arguments(self, parser):
        parser.add_argument("--agent", default=None, help="only this agent (default: every agent)")
        parser.add_argument("--dry-run", action="store_true", help="count what would change, write nothing")
        parser.add_argument("--actor", default="operator:rekey_predicates")

    def handle(self, *args, **options):
        try:
            report = engine.rekey_predicates(
                agent_id=options["agent"], actor=options["actor"], dry_run=options["dry_run"]
            )
        except engine.EngineError as exc:
            self.stderr.write(f"{exc.code}: {exc.message}")
            raise SystemExit(2) from None
        self.stdout.write(json.dumps({"dry_run": options["dry_run"], **report.as_dict()}, sort_keys=True))
