"""Link the plain memories written before entity links existed to the names they mention (issue 17).

Idempotent (links that exist are kept, none is doubled) and resumable: ``--after`` takes the ``last`` id a run
printed. Run it once after migrating to 0019 (``memory_entity``); a second run adds nothing.
"""

import json

from django.core.management.base import BaseCommand

from memory import engine


class Command(BaseCommand):
    help = "Link existing plain memories to the entities they mention (idempotent, resumable)."

    def add_arguments(self, parser):
        parser.add_argument("--agent", default=None, help="only this agent (default: every agent)")
        parser.add_argument("--after", default="", help="resume after this memory id")
        parser.add_argument("--batch", type=int, default=500, help="rows per transaction")

    def handle(self, *args, **options):
        if not 1 <= options["batch"] <= 10_000:
            self.stderr.write("invalid_argument: --batch must be from 1 to 10000")
            raise SystemExit(2)
        try:
            report = engine.link_backfill(
                agent_id=options["agent"], after=options["after"], batch=options["batch"]
            )
        except engine.EngineError as exc:
            self.stderr.write(f"{exc.code}: {exc.message}")
            raise SystemExit(2) from None
        self.stdout.write(json.dumps(report, sort_keys=True))
