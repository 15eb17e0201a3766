"""Agent feedback (SPEC A3 ``memory_feedback``): a verdict on one of the agent's memories or searches."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.models import VERDICTS, Feedback, Memory

from . import common as c
from .belief import NOT_RETRACTED
from .types import InvalidArgument, NotFound, iso

VERDICT_ALIASES = {"+": "CORRECT", "-": "INCORRECT"}
QUERY_ID = re.compile(r"^q_[0-9a-z]{26}$")
MAX_NOTE = 2000


@dataclass(frozen=True)
class FeedbackResult:
    id: int
    agent_id: str
    target_type: str  # memory | query
    target_id: str
    verdict: str
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "target_type": self.target_type,
            "target_id": self.target_id,
            "verdict": self.verdict,
            "created_at": iso(self.created_at),
        }


def check_verdict(verdict: Any) -> str:
    if isinstance(verdict, str):
        value = VERDICT_ALIASES.get(verdict.strip(), verdict.strip().upper())
        if value in VERDICTS:
            return value
    raise InvalidArgument(f"verdict must be one of {', '.join(VERDICTS)}, '+' or '-'", field="verdict")


def new_query_id() -> str:
    """An opaque id handed out with search results so an agent can give feedback on the search."""
    return c.new_memory_id().replace("m_", "q_", 1)


@c.write_transaction
def feedback_record(
    *,
    agent_id: str,
    verdict: str,
    memory_id: str | None = None,
    query_id: str | None = None,
    note: str | None = None,
    actor: str = "system",
) -> FeedbackResult:
    """Record a verdict on exactly one target. A memory id must be one of the agent's visible memories;
    another agent's id and an unknown id raise the same ``not_found``."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    value = check_verdict(verdict)
    if (memory_id is None) == (query_id is None):
        raise InvalidArgument("give exactly one of memory_id or query_id", field="memory_id")
    note_text = c.check_text(note, field="note", required=False, limit=MAX_NOTE) or ""
    if memory_id is not None:
        if not isinstance(memory_id, str) or not memory_id or len(memory_id) > 64 or "\x00" in memory_id:
            raise InvalidArgument("memory_id must be a non-empty string without NUL", field="memory_id")
        visible = (
            Memory.objects.filter(agent_id=agent_id, id=memory_id, quarantined=False)
            .filter(NOT_RETRACTED)
            .exists()
        )
        if not visible:
            raise NotFound("no memory with that id", field="memory_id")
        target_type, target_id = Feedback.TARGET_MEMORY, memory_id
    else:
        if not isinstance(query_id, str) or not QUERY_ID.match(query_id):
            raise InvalidArgument("query_id must be a query_id returned by memory_search", field="query_id")
        target_type, target_id = Feedback.TARGET_QUERY, query_id
    t = c.now()
    row = Feedback.objects.create(
        agent_id=agent_id,
        created_at=t,
        target_type=target_type,
        memory_id=target_id if target_type == Feedback.TARGET_MEMORY else None,
        query_id=target_id if target_type == Feedback.TARGET_QUERY else None,
        verdict=value,
        note=note_text,
        actor=actor,
    )
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="feedback",
        memory_id=target_id if target_type == Feedback.TARGET_MEMORY else None,
        reason=value,
        target_type=target_type,
        target_id=target_id,
        feedback_id=row.id,
    )
    return FeedbackResult(row.id, agent_id, target_type, target_id, value, t)
