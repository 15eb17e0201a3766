"""``manage.py graph_export_html --agent A PATH``: the agent's graph as a self-contained interactive HTML file
(pyvis, every resource inline), with the graph page's filters: ``--entity``, ``--depth``, ``--pair``,
``--predicate``, ``--min-trust``, ``--community``, ``--limit``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from dashboard import graph_export
from dashboard.graph_views import GraphFilterForm, graph_data
from memory.models import Agent


class Command(BaseCommand):
    help = "Write an agent's graph (the graph page's view) as one self-contained interactive HTML file."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path", help="the file to write")
        parser.add_argument("--agent", required=True)
        parser.add_argument("--entity", default="")
        parser.add_argument("--depth", type=int, default=1)
        parser.add_argument("--pair", default="")
        parser.add_argument("--predicate", default="")
        parser.add_argument("--min-trust", dest="min_trust", default="")
        parser.add_argument("--community", default="")
        parser.add_argument("--limit", type=int, default=300)

    def handle(self, *args: Any, **options: Any) -> None:
        agent = Agent.objects.filter(agent_id=options["agent"]).first()
        if agent is None:
            raise CommandError(f"no agent {options['agent']!r}")
        keys = ("entity", "depth", "pair", "predicate", "min_trust", "community", "limit")
        given = {k: options[k] for k in keys if options[k] not in ("", None)}
        # the whole (capped) graph, as the command always wrote; only the page opens a large one on its hub
        form = GraphFilterForm({**given, "whole": True})
        if not form.is_valid():
            problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items())
            raise CommandError(f"bad filters: {problems}")
        data, errors = graph_data(agent.agent_id, form.filters())
        if errors:
            raise CommandError("; ".join(message for _, message in errors))
        page = graph_export.pyvis_html(data["network"], title=f"{agent} · graph · memdesk")
        path = Path(options["path"])
        path.write_text(page, encoding="utf-8")
        self.stdout.write(
            f"wrote {path} ({len(data['nodes'])} entities, {len(data['edges'])} edges, {len(page) // 1024} KB)"
        )
