"""Agent feedback (SPEC A3 ``memory_feedback``, B8, B9): a verdict on one of the agent's memories or searches,
and what it teaches.

A verdict on a memory moves that memory's feedback weight; a verdict on a search (its journal ``query_id``)
moves the weight of every memory the search returned, by the same step (``reinforce.updated_weight``), and
counts toward (or resolves) the knowledge gap of the search's signature (``gaps``). An unknown query id,
another agent's and one past the journal's retention are the same ``not_found``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memory.models import VERDICTS, Feedback, Memory

from . import common as c
from . import gaps, reinforce
from .belief import NOT_RETRACTED
from .journal import check_at, journal_entry, new_query_id
from .types import InvalidArgument, NotFound, iso

VERDICT_ALIASES = {"+": "CORRECT", "-": "INCORRECT"}
MAX_NOTE = 2000

__all__ = ["FeedbackResult", "check_verdict", "feedback_record", "new_query_id"]


@dataclass(frozen=True)
class FeedbackResult:
    id: int
    agent_id: str
    target_type: str  # memory | query
    target_id: str
    verdict: str
    created_at: datetime
    weights: dict[str, float] = field(default_factory=dict)  # memory id -> its feedback weight now
    gap: gaps.GapRecord | None = None  # the knowledge gap this verdict recorded, updated or resolved

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "target_type": self.target_type,
            "target_id": self.target_id,
            "verdict": self.verdict,
            "created_at": iso(self.created_at),
            "adjusted": len(self.weights),
            "gap": self.gap.to_dict() if self.gap else None,
        }


def check_verdict(verdict: Any) -> str:
    if isinstance(verdict, str):
        value = VERDICT_ALIASES.get(verdict.strip(), verdict.strip().upper())
        if value in VERDICTS:
            return value
    raise InvalidArgument(f"verdict must be one of {', '.join(VERDICTS)}, '+' or '-'", field="verdict")


@c.write_transaction
def feedback_record(
    *,
    agent_id: str,
    verdict: str,
    memory_id: str | None = None,
    query_id: str | None = None,
    note: str | None = None,
    actor: str = "system",
    at: datetime | str | None = None,
) -> FeedbackResult:
    """Record a verdict on exactly one target and apply it to the feedback weights (and, for a search, to its
    signature's knowledge gap). A memory id must be one of the agent's visible memories; a query id one of
    its journaled searches within retention. ``at`` dates the verdict (default now)."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    value = check_verdict(verdict)
    if (memory_id is None) == (query_id is None):
        raise InvalidArgument("give exactly one of memory_id or query_id", field="memory_id")
    note_text = c.check_text(note, field="note", required=False, limit=MAX_NOTE) or ""
    t = check_at(at)
    entry = None
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
        target_type, target_id, ids = Feedback.TARGET_MEMORY, memory_id, [memory_id]
    else:
        entry = journal_entry(agent_id=agent_id, query_id=query_id, at=t)
        target_type, target_id = Feedback.TARGET_QUERY, entry.id
        ids = [i for i in entry.result_ids or [] if isinstance(i, str)]
    c.lock_feedback(agent_id)
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
    weights = reinforce.adjust(agent_id, ids, value, t)
    gap = gaps.note_verdict(entry=entry, verdict=value, actor=actor, t=t) if entry is not None else None
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="feedback",
        memory_id=target_id if target_type == Feedback.TARGET_MEMORY else None,
        reason=value,
        at=t,
        target_type=target_type,
        target_id=target_id,
        feedback_id=row.id,
        adjusted=len(weights),
    )
    return FeedbackResult(row.id, agent_id, target_type, target_id, value, t, weights, gap)


def feedback(
    *,
    agent_id: str,
    verdict: str,
    query_id: str | None = None,
    memory_id: str | None = None,
    note: str | None = None,
    actor: str = "system",
) -> FeedbackResult:
    """SPEC §11's name for ``feedback_record``."""
    return feedback_record(
        agent_id=agent_id, verdict=verdict, query_id=query_id, memory_id=memory_id, note=note, actor=actor
    )
