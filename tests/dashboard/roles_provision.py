"""Provision a migrated SQLite file for the per-role browser tests (accessibility and journeys); print what they
need as JSON.

Run in a child process (``python -m tests.dashboard.roles_provision``) with ``MEMDESK_SQLITE_PATH`` set and
``MEMDESK_DEMO_PASSWORD``: ``manage.py seed_demo`` (the demo's teams, users of every role, two agents of two
teams, ten weeks of memory, wiki pages, one dream pass), then four more batches the burst guard holds on the
support bot through the agent-facing write path (one written by an external MCP token, so its origin links to
the token; one that would supersede a fact the user told the agent), and two merges and two removed wiki pages
for the curator to take back (one of each per width).
"""

from __future__ import annotations

import io
import json
import os
import sys
from datetime import timedelta

AGENT = "support-bot"
OTHER_AGENT = "research-bot"  # Northwind Research's: the outsider's own agent
USERS = {
    "viewer": "viewer",
    "reviewer": "reviewer",
    "curator": "curator",
    "admin": "admin",
    "outsider": "researcher",
}


def hold(agent: str, subject: str, origin: str, facts: list[tuple[str, str]], *, minutes_ago: int) -> int:
    import time_machine
    from django.utils import timezone

    from memory import engine
    from memory.models import ApprovalRequest

    start = timezone.now() - timedelta(minutes=minutes_ago)
    for k, (predicate, value) in enumerate(facts):
        with time_machine.travel(start + timedelta(seconds=20 * k), tick=False):
            engine.store_temporal(
                agent_id=agent,
                content=f"{subject} {predicate.replace('_', ' ')} is {value}",
                subject=subject,
                predicate=predicate,
                object=value,
                origin=origin,
                protect=True,
            )
    return ApprovalRequest.objects.filter(agent_id=agent, subject=subject, origin=origin).latest("id").id


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from memory import engine

    call_command("migrate", verbosity=0, interactive=False)
    call_command("seed_demo", stdout=io.StringIO())
    token, _secret = engine.token_create(
        agent_id=AGENT, scopes=["memory:read", "memory:write"], external=True, name="help-widget",
        actor="user:admin",
    )  # fmt: skip
    notes = [(f"note_{k}", f"value {k}") for k in range(5)]
    import time_machine
    from django.utils import timezone

    with time_machine.travel(
        timezone.now() - timedelta(days=2), tick=False
    ):  # before the burst that changes it
        engine.store_temporal(
            agent_id=AGENT, content="Globex plan is basic", subject="Globex", predicate="plan", object="basic",
            origin="user_direct",
        )  # fmt: skip
    batches = {
        "token": hold(AGENT, "Zed Ortiz", f"mcp_external:token-{token.id}", notes, minutes_ago=40),
        "supersedes": hold(AGENT, "Globex", "channel:crm-sync", [("plan", "enterprise"), *notes[1:]], minutes_ago=30),
        "spam": hold(AGENT, "Ivy Chen", "channel:telegram-991", notes, minutes_ago=20),
        "fresh": hold(AGENT, "Kai Moreau", "channel:crm-sync", notes, minutes_ago=10),
    }  # fmt: skip
    from django.db.models import Count

    from memory.models import Memory
    from wiki import services as wiki_services
    from wiki.models import WikiPage

    # the curator's journey undoes a merge and restores a removed wiki page at each width (issue 19 item 3)
    merges = [
        engine.alias_add(agent_id=AGENT, canonical=canonical, alias=alias, actor="user:curator").event_id
        for canonical, alias in (("Priya Raman", "P. Raman"), ("Dana Whitfield", "D. Whitfield"))
    ]
    old_page = wiki_services.publish_auto(
        agent_id=AGENT, doc_type="reference", slug="old-escalation-list", title="Old escalation list",
        summary="Who to page for outages, before the paging tool.", original_text="- Ops lead: page them.\n",
        actor="auto-distill",
    )  # fmt: skip
    wiki_services.remove(page=old_page, actor="user:curator", reason="replaced by the paging tool")
    removed_pages = sorted(
        WikiPage.objects.filter(agent_id=AGENT, removed_at__isnull=False).values_list("id", flat=True)
    )

    # ... and restores a fact a curator retracted (one per width), from the memory's page
    from django.utils import timezone

    from memory.engine.belief import current_q

    busy = {
        "Jordan Lee",
        "Priya Raman",
        "Dana Whitfield",
        "李老闆",
        "Zed Ortiz",
        "Globex",
        "Ivy Chen",
        "Kai Moreau",
    }
    retracted = list(
        Memory.objects.filter(agent_id=AGENT, subject__isnull=False, predicate__isnull=False)
        .exclude(subject="")
        .exclude(subject__in=busy)
        .exclude(content__icontains="deploy")
        .filter(current_q(timezone.now()))
        .order_by("id")
        .values_list("id", flat=True)[:2]
    )
    for memory_id in retracted:
        engine.retract_fact(agent_id=AGENT, memory_id=memory_id, reason="wrong", actor="user:curator")

    memory = (
        Memory.objects.filter(agent_id=AGENT, subject="Jordan Lee", predicate="marital_status")
        .order_by("-created_at")
        .values_list("id", flat=True)
        .first()
    )
    out = {
        "agent": AGENT,
        "memory": memory,
        # the page with the most revisions, so the curator's journey sees a diff when the demo has one
        "wiki_page": WikiPage.objects.filter(agent_id=AGENT)
        .annotate(n=Count("revisions"))
        .order_by("-n", "id")
        .values_list("id", flat=True)
        .first(),
        "wiki_single": not WikiPage.objects.filter(agent_id=AGENT)
        .annotate(n=Count("revisions"))
        .filter(n__gt=1)
        .exists(),
        "merges": merges,
        "removed_pages": removed_pages,
        "retracted": retracted,
        "other_agent": OTHER_AGENT,
        "users": USERS,
        "password": os.environ["MEMDESK_DEMO_PASSWORD"],
        "batches": batches,
        "token": token.id,
        "tokens": {},
    }
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
