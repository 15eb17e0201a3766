"""The insights part of the demo (issue 18; ``seed_demo`` calls ``seed_insights`` last, in the agent's
transaction): a week of the support bot's searches with feedback (and one knowledge gap), daily snapshots,
attitudes in several categories with history (and changes waiting for review), skills at every level, and notes
migrated from the bot's previous memory store, old enough to spread over every tier.

Everything goes through the engine: searches and verdicts are dated with their ``at`` argument, the old notes
come in through the legacy importer (their own timestamps), and the tiering pass runs as the daily job would.
"""

from __future__ import annotations

import sqlite3
import tempfile
import uuid
from datetime import datetime, timedelta
from pathlib import Path

from django.utils import timezone

from memory import engine
from memory.dream.attitudes import reflect_attitudes

CURATOR = "user:curator"

# (query, verdict or None, days ago, hour): what the bot asked its memory during the week, and how it judged
WEEK = [
    ("Where is acme-web deployed?", "CORRECT", 6, 9),
    ("What is the first response SLA for paid plans?", "CORRECT", 6, 11),
    ("Who leads Project Lantern?", None, 5, 10),
    ("What SLA credits does an enterprise customer get?", "INCORRECT", 5, 15),
    ("台北會議 決定了什麼", "CORRECT", 4, 9),
    ("acme-web deploy target", "CORRECT", 4, 14),
    ("refund policy for annual plans", "AMBIGUOUS", 3, 10),
    ("Enterprise customer SLA credits?", "INCORRECT", 2, 16),
    ("Who reports to Priya Raman?", None, 2, 17),
    ("weekly report format for 李老闆", "CORRECT", 1, 9),
    ("Where is acme-web deployed?", "CORRECT", 1, 12),
    ("first response SLA paid plans", None, 0, 8),
]

ATTITUDES = [  # (category, statement, confidence, approve)
    ("workflow", "Answer from memory first, then ask the customer for what is missing.", 0.7, True),
    ("workflow", "Check the customer's plan and region before quoting any SLA or refund window.", 0.85, True),
    ("testing_philosophy", "Reproduce a reported bug on staging before escalating it.", 0.8, True),
    ("preference", "李老闆 gets the weekly report in Traditional Chinese.", 0.9, True),
    ("autonomy_level", "Escalate refunds over 500 EUR to a person instead of approving them.", 0.75, False),
]

SKILLS = [  # (skill, uses, approve every level change)
    ("zendesk macros", 2, True),  # L1 exposure
    ("refund policy", 7, True),  # L2 competent
    ("sql window functions", 18, True),  # L3 generative
    ("cloudflare workers", 6, False),  # L1, the climb to L2 waiting for review
]

LEGACY_NOTE = (
    "Notes from the {topic} call. The customer reported {issue}. We walked through the settings together and "
    "checked the audit trail for the last month. {detail} The account manager was copied on the follow-up. "
    "Next steps: confirm the fix in a week, update the help-center article, and close the ticket if the "
    "customer agrees. Everyone agreed that the onboarding checklist needs a clearer section on this."
)
LEGACY = [  # (days ago, topic, issue, detail, importance)
    (30, "Globex", "slow exports", "Exports over 50k rows time out after 60 seconds.", 5),
    (45, "Initech", "duplicate invoices", "Two invoices were created by a retried webhook.", 5),
    (60, "Umbrella", "SSO loops", "The SAML certificate had expired on their side.", 6),
    (120, "Hooli", "missing attachments", "Attachments over 25 MB were silently dropped.", 4),
    (150, "Stark", "timezone drift", "Scheduled reports used UTC instead of the account time zone.", 5),
    (200, "Wayne", "API rate limits", "Their integration polled every second instead of using webhooks.", 4),
    (420, "Wonka", "a broken CSV import", "Semicolon-separated files were read as one column.", 3),
    (480, "Acme Corp", "a locked admin account", "Five failed logins locked the only admin.", 4),
    (530, "Soylent", "search returning nothing", "The index was rebuilt after a failed migration.", 3),
]


def _at(now: datetime, days: float, hour: int = 9) -> datetime:
    """``hour`` o'clock (UTC) ``days`` ago, never later than now."""
    return min(now, (now - timedelta(days=days)).replace(hour=hour, minute=0, second=0, microsecond=0))


def _legacy_file(folder: Path, agent_id: str, now: datetime) -> Path:
    path = folder / "previous-store.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE memories (id TEXT PRIMARY KEY, agent_id TEXT, content TEXT, timestamp TEXT, tags TEXT,"
            " created_at TEXT, layer TEXT, importance REAL, access_count INTEGER, last_accessed TEXT,"
            " source_event TEXT)"
        )
        for days, topic, issue, detail, importance in LEGACY:
            when = _at(now, days).isoformat()
            db.execute(
                "INSERT INTO memories VALUES (?, ?, ?, ?, ?, ?, 'episodic', ?, 0, NULL, 'demo:legacy')",
                (
                    f"m_legacy{uuid.uuid4().hex[:18]}",
                    agent_id,
                    LEGACY_NOTE.format(topic=topic, issue=issue, detail=detail),
                    when,
                    '["legacy", "call-notes"]',
                    when,
                    importance,
                ),
            )
    db.close()
    return path


def seed_insights(agent_id: str, *, actor: str) -> None:
    """The insights demo of ``agent_id`` (see the module docstring)."""
    now = timezone.now()
    for query, verdict, days, hour in WEEK:
        when = _at(now, days, hour)
        found = engine.agent_search(agent_id=agent_id, query=query, at=when)
        if verdict:
            engine.feedback_record(
                agent_id=agent_id, verdict=verdict, query_id=found.query_id, actor=actor, at=when
            )
    for days in range(7, -1, -1):
        engine.profile_snapshot(agent_id=agent_id, day=_at(now, days).date(), actor=actor)

    for category, statement, confidence, approve in ATTITUDES:
        proposal = engine.attitude_propose(
            agent_id=agent_id,
            category=category,
            statement=statement,
            confidence=confidence,
            actor="token:demo",
        )
        if approve and proposal.item_id:
            engine.review_decide(item_id=proposal.item_id, decision="approve", actor=CURATOR, reason="agreed")
    reflect_attitudes(agent_id=agent_id)  # the reflect phase's proposals from consolidated mistake rules

    for skill, uses, approve in SKILLS:
        for k in range(uses):
            used = engine.skill_use(
                agent_id=agent_id, skill=skill, actor="token:demo", at=_at(now, 1, 8 + k % 10)
            )
            if approve and used.proposed_item_id:
                engine.review_decide(
                    item_id=used.proposed_item_id, decision="approve", actor=CURATOR, reason="seen it done"
                )

    with tempfile.TemporaryDirectory(prefix="memdesk-demo-") as folder:
        engine.import_legacy(path=_legacy_file(Path(folder), agent_id, now), agent_id=agent_id, actor=actor)
    engine.retier(agent_id=agent_id, actor=actor)
