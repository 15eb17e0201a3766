"""Provision a migrated SQLite file for the quarantine browser test; print what the test needs as JSON.

Run in a child process (``python -m tests.review.quarantine_provision``) with ``MEMDESK_SQLITE_PATH``
pointing at the file the uvicorn child serves: a team, a reviewer who signs in (and a second one who sees the first one's claims), the agent, and an external
MCP token of that agent (its writes get the ``mcp_external`` origin, and the burst guard).
"""

from __future__ import annotations

import json
import os
import sys

AGENT = "desk-bot"
REVIEWER = "rex"
SECOND_REVIEWER = "ria"  # sees rex's claims
PASSWORD = "correct-horse-battery"


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from memory import engine
    from memory.models import Agent, Membership, Role, Team

    call_command("migrate", verbosity=0, interactive=False)
    team = Team.objects.create(name="Acme Support", slug="acme")
    user = get_user_model().objects.create_user(REVIEWER, password=PASSWORD)
    Membership.objects.create(team=team, user=user, role=Role.REVIEWER)
    second = get_user_model().objects.create_user(SECOND_REVIEWER, password=PASSWORD)
    Membership.objects.create(team=team, user=second, role=Role.REVIEWER)
    Agent.objects.create(agent_id=AGENT, display_name="Desk bot", team=team)
    token, secret = engine.token_create(
        agent_id=AGENT, scopes=["memory:read", "memory:write"], external=True, name="ext", actor="user:ada"
    )
    out = {
        "agent": AGENT,
        "username": REVIEWER,
        "password": PASSWORD,
        "second_username": SECOND_REVIEWER,
        "tokens": {"ext": {"id": token.id, "agent": AGENT, "secret": secret}},
    }
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
