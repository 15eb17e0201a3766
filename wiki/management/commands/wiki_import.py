"""``manage.py wiki_import DIR --agent AGENT [--trust-curated]``: read ``DIR/<namespace>/<doc_type>/<slug>.md``
files back; ``curated/`` files come in as auto pages unless ``--trust-curated``.

Every file is validated before anything is written, and the pages are written in one transaction: a bad file
stops the import with ``invalid_wiki_file`` (naming the file) and nothing is written. Importing the same folder
again changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory.engine.types import EngineError
from wiki import io, services

MAX_FILE_BYTES = 256 * 1024


class Command(BaseCommand):
    help = "Import wiki pages from markdown files written by wiki_export (idempotent; all or nothing)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("dir", help="a folder laid out as <namespace>/<doc_type>/<slug>.md")
        parser.add_argument("--agent", dest="agent_id", required=True, help="whose pages these are")
        parser.add_argument(
            "--trust-curated",
            action="store_true",
            help="import curated/ files as curated pages at their own trust (default: as auto pages, trust 0.300)",
        )
        parser.add_argument("--actor", default=io.IMPORT_ACTOR, help="who is recorded in the audit log")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        root = Path(options["dir"])
        if not root.is_dir():
            raise CommandError(f"{services.InvalidWikiFile.code}: {root} is not a folder")
        try:
            parsed = [self._parse(root, path) for path in sorted(root.rglob("*.md"))]
            report = io.import_pages(
                agent_id=options["agent_id"],
                pages=parsed,
                actor=options["actor"],
                trust_curated=options["trust_curated"],
            )
        except EngineError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from None
        if options["json"]:
            self.stdout.write(json.dumps(report.to_dict(), indent=2))
            return
        self.stdout.write(
            f"imported {len(parsed)} file(s): {len(report.created)} created, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged"
        )

    @staticmethod
    def _parse(root: Path, path: Path) -> io.ParsedPage:
        relpath = path.relative_to(root).as_posix()
        if path.is_symlink() or not path.is_file():
            raise services.InvalidWikiFile(f"{relpath}: not a regular file", field="file", file=relpath)
        if path.stat().st_size > MAX_FILE_BYTES:
            raise services.InvalidWikiFile(
                f"{relpath}: larger than {MAX_FILE_BYTES} bytes", field="file", file=relpath
            )
        return io.parse_page_file(relpath, path.read_bytes())
