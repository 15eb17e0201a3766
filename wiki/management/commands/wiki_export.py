"""``manage.py wiki_export DIR --agent AGENT``: each live page as ``DIR/<namespace>/<doc_type>/<slug>.md``."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory.engine.types import EngineError
from wiki import io, selectors


class Command(BaseCommand):
    help = (
        "Write the agent's wiki pages as markdown files with YAML frontmatter, laid out like the source engine: "
        "DIR/<namespace>/<doc_type>/<slug>.md (removed pages are left out unless --include-removed)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("dir", help="the folder to write into (created if missing)")
        parser.add_argument("--agent", dest="agent_id", required=True, help="whose pages")
        parser.add_argument("--include-removed", action="store_true", help="also write removed pages")

    def handle(self, *args: Any, **options: Any) -> None:
        root = Path(options["dir"])
        try:
            pages = selectors.list_pages(
                agent_id=options["agent_id"], status="all" if options["include_removed"] else "live"
            ).prefetch_related("revisions")
            pages = list(pages)
        except EngineError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from None
        written = 0
        for page in pages:
            target = root / io.export_relpath(page)
            target.parent.mkdir(parents=True, exist_ok=True)
            data = io.page_markdown(page).encode("utf-8")
            # write-then-rename: a reader (or a crash) never sees half a file
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".md")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            written += 1
        self.stdout.write(f"exported {written} page(s) of {options['agent_id']} to {root}")
