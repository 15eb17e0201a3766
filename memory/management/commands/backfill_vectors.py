"""Embed the memories that have no vector of the active memory embedder (issue 17; SPEC R2 ``w_vec``).

Run it after turning vectors on (or changing ``[retrieval] embedder``) for rows written before, or after the
embedder was down. Batches commit one by one: stopping it loses at most one batch, and a second run continues
with the rows still missing (a row is never embedded twice). ``--enqueue`` hands it to the job queue instead.
"""

import json

from django.core.management.base import BaseCommand

from memory import engine


class Command(BaseCommand):
    help = "Embed memories that have no vector of the active embedder (idempotent and resumable)."

    def add_arguments(self, parser):
        parser.add_argument("--agent", default=None, help="only this agent (default: every agent)")
        parser.add_argument(
            "--batch-size", type=int, default=256, help="rows embedded and committed together"
        )
        parser.add_argument("--max-batches", type=int, default=None, help="stop after this many batches")
        parser.add_argument("--enqueue", action="store_true", help="run it as a background job")

    def handle(self, *args, **options):
        if options["enqueue"]:
            from memory import tasks

            tasks.enqueue("vectors_backfill", options["agent"])
            self.stdout.write(json.dumps({"enqueued": True}))
            return
        size = options["batch_size"]
        if not 1 <= size <= 10_000:
            self.stderr.write("invalid_argument: --batch-size must be from 1 to 10000")
            raise SystemExit(2)
        report = engine.vectors_backfill(
            agent_id=options["agent"], batch_size=size, max_batches=options["max_batches"]
        )
        self.stdout.write(json.dumps(report.as_dict(), sort_keys=True))
        if report.failed:
            raise SystemExit(1)
