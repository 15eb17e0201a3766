"""Provision a migrated SQLite file for the discovery inbox's browser journey; print what the test needs as JSON.

Run in a child process (``python -m tests.review.discovery_provision``) with ``MEMDESK_SQLITE_PATH`` pointing at
the file the uvicorn child serves: a team, a curator who signs in, the agent with the office world
(tests/memory/dream/office.py), one discovery run, and a read token of the agent.
"""

from __future__ import annotations

import json
import os
import sys

AGENT = "office-bot"
CURATOR = "cora"
PASSWORD = "correct-horse-battery"


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from memory import engine
    from memory.models import Agent, Membership, Role, Team
    from tests.memory.dream.office import office

    call_command("migrate", verbosity=0, interactive=False)
    team = Team.objects.create(name="Acme Support", slug="acme")
    user = get_user_model().objects.create_user(CURATOR, password=PASSWORD)
    Membership.objects.create(team=team, user=user, role=Role.CURATOR)
    Agent.objects.create(agent_id=AGENT, display_name="Office bot", team=team)
    office(AGENT)
    outcome = engine.discover(agent_id=AGENT)
    token, secret = engine.token_create(
        agent_id=AGENT, scopes=["memory:read"], external=False, name="reader", actor="user:ada"
    )
    out = {
        "agent": AGENT,
        "username": CURATOR,
        "password": PASSWORD,
        "items": {f"{i.entity_a}|{i.entity_b}": i.id for i in outcome.items},
        "tokens": {"r": {"id": token.id, "agent": AGENT, "secret": secret}},
    }
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
