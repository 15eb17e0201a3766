"""Provision a migrated SQLite file for the desk-at-volume browser tests; print what they need as JSON.

Run in a child process (``python -m tests.review.desk_volume_provision``) with ``MEMDESK_SQLITE_PATH`` set: the
quarantine journey's team, reviewers and agent (``quarantine_provision``), an admin, and ``DESK_BATCHES``
batches (``DESK_BATCHES``, default 50) held by the burst guard through the agent-facing write path: every fifth supersedes a fact the user
told the agent (its approval asks for a reason), the others only add facts.
"""

from __future__ import annotations

import json
import os
import sys

from tests.review import quarantine_provision

BATCHES = int(os.environ.get("DESK_BATCHES", "50"))  # the phone test needs only a few
ADMIN = "ada"


def main() -> int:
    import io
    from contextlib import redirect_stdout

    with redirect_stdout(io.StringIO()) as out:
        quarantine_provision.main()
    info = json.loads(out.getvalue().strip().splitlines()[-1])
    from datetime import timedelta

    import time_machine
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from memory import engine
    from memory.models import ApprovalRequest, Membership, Role, Team

    agent = info["agent"]
    admin = get_user_model().objects.create_user(ADMIN, password=quarantine_provision.PASSWORD)
    Membership.objects.create(team=Team.objects.get(slug="acme"), user=admin, role=Role.ADMIN)
    start = timezone.now() - timedelta(hours=2)
    superseding = []
    for b in range(BATCHES):
        subject = f"customer-{b:02d}"
        if b % 5 == 0:
            with time_machine.travel(start - timedelta(days=1), tick=False):
                engine.store_temporal(
                    agent_id=agent,
                    content=f"{subject} plan is basic",
                    subject=subject,
                    predicate="plan",
                    object="basic",
                    origin="user_direct",
                )
            superseding.append(subject)
        for k in range(5):
            predicate, value = ("plan", "enterprise") if (b % 5 == 0 and k == 0) else (f"note_{k}", f"v{k}")
            with time_machine.travel(start + timedelta(minutes=b, seconds=k), tick=False):
                engine.store_temporal(
                    agent_id=agent,
                    content=f"{subject} {predicate} is {value}",
                    subject=subject,
                    predicate=predicate,
                    object=value,
                    origin="channel:crm-sync",
                    protect=True,
                )
    pending = ApprovalRequest.objects.filter(agent_id=agent, status="pending").count()
    assert pending == BATCHES, pending
    info.update({"batches": BATCHES, "superseding": superseding, "admin": ADMIN})
    sys.stdout.write(json.dumps(info) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
