"""Provision a migrated SQLite file for the dream-to-review journey (tests/review/test_browser_dream_journey.py).

Run in a child process (``python -m tests.review.dream_journey_provision``) with ``MEMDESK_SQLITE_PATH`` set: a
team with an admin and a reviewer who sign in, the agent, a read token of the agent, and the small world of the
dream loop's tests (tests/memory/dream/world.py), written through the engine. Prints the JSON the test needs.
"""

from __future__ import annotations

import json
import os
import sys

AGENT = "dream-bot"
ADMIN, REVIEWER = "ada", "rex"
PASSWORD = "correct-horse-battery"


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from memory import engine
    from memory.models import Agent, Membership, Role, Team
    from tests.memory.dream import world

    call_command("migrate", verbosity=0, interactive=False)
    team = Team.objects.create(name="Acme Support", slug="acme")
    for name, role in ((ADMIN, Role.ADMIN), (REVIEWER, Role.REVIEWER)):
        user = get_user_model().objects.create_user(name, password=PASSWORD)
        Membership.objects.create(team=team, user=user, role=role)
    Agent.objects.create(agent_id=AGENT, display_name="Dream bot", team=team)
    _, secret = engine.token_create(agent_id=AGENT, scopes=["memory:read"], name="reader", actor="user:ada")
    ids = world.build(AGENT)
    print(
        json.dumps(
            {
                "agent": AGENT,
                "admin": ADMIN,
                "reviewer": REVIEWER,
                "password": PASSWORD,
                "ids": ids,
                "tokens": {"reader": {"secret": secret, "scopes": ["memory:read"]}},
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
