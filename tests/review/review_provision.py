"""Provision a migrated SQLite file for the review queue's browser test; print what the test needs as JSON.

Run in a child process (``python -m tests.review.review_provision``) with ``MEMDESK_SQLITE_PATH`` pointing at
the file the uvicorn child serves: a team, a reviewer who signs in, the agent, a read token of the agent (the
test reads over MCP what the agent sees), and two conflicts proposed as the dream loop proposes them (through
``engine.review_propose``): one the judge was unsure about (to approve with an edit) and one to reject, whose
new side carries an HTML/JS payload.
"""

from __future__ import annotations

import json
import os
import sys

AGENT = "review-bot"
REVIEWER = "rex"
PASSWORD = "correct-horse-battery"
XSS = "<img src=x onerror=window.__xss=1>"


def main(extra: int = 0) -> int:
    """``extra``: that many low-confidence facts to review as well (lower confidence than the conflicts)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from memory import engine
    from memory.models import Agent, Membership, Role, Team
    from tests.conftest import dt
    from tests.review.review_builders import fact, pair, propose_conflict, propose_low_confidence

    call_command("migrate", verbosity=0, interactive=False)
    team = Team.objects.create(name="Acme Support", slug="acme")
    user = get_user_model().objects.create_user(REVIEWER, password=PASSWORD)
    Membership.objects.create(team=team, user=user, role=Role.REVIEWER)
    Agent.objects.create(agent_id=AGENT, display_name="Review bot", team=team)
    token, secret = engine.token_create(
        agent_id=AGENT, scopes=["memory:read"], name="reader", actor="user:ada"
    )
    old, new = pair(AGENT, subject="acme-web", old="fly.io", new="cloudflare workers (CF)")
    edit = propose_conflict(AGENT, old, new, confidence=0.41, judge_reason="near-synonym predicates")
    home = fact(AGENT, "ana", "lives_in", "Paris", valid_from=dt("2021-05-01"), origin="user_direct")
    away = fact(
        AGENT,
        "ana",
        "resides_in",
        "Lyon",
        content=f"Ana resides in Lyon {XSS}",
        valid_from=dt("2024-09-01"),
        origin="channel:web",
    )
    reject = propose_conflict(AGENT, home, away, verdict="SUPERSEDE", confidence=0.58, rule="b")
    doubtful = [
        propose_low_confidence(
            AGENT,
            fact(AGENT, f"guest-{k}", "likes", "tea", confidence=0.2 + k / 100, origin="channel:web"),
            why="one mention from a low-trust origin",
        ).id
        for k in range(extra)
    ]
    out = {
        "agent": AGENT,
        "username": REVIEWER,
        "password": PASSWORD,
        "tokens": {"reader": {"id": token.id, "agent": AGENT, "secret": secret}},
        "edit": {"item": edit.id, "old": old, "new": new},
        "reject": {"item": reject.id, "old": home, "new": away},
        "doubtful": doubtful,
    }
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
