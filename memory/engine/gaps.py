"""Knowledge gaps (SPEC B8): a query signature with at least two INCORRECT verdicts within seven days.

A gap is recorded (signature, fail count, first and last failure), surfaced in the reply of the next agent
search with that signature (``gaps``), listed for people, and never filled automatically: nothing here writes
memory. A later CORRECT verdict on a search with that signature resolves it; failures counted toward a new gap
start after that resolution.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import F, Max

from memory.models import Feedback, KnowledgeGap, QueryJournal

from . import common as c
from .types import InvalidArgument, iso

GAP_FAILURES = 2
GAP_WINDOW = timedelta(days=7)
STATUSES = (KnowledgeGap.OPEN, KnowledgeGap.RESOLVED)


@dataclass(frozen=True)
class GapRecord:
    id: int
    agent_id: str
    signature: str
    query: str
    fail_count: int
    first_failure_at: datetime
    last_failure_at: datetime
    status: str
    resolved_at: datetime | None = None

    @classmethod
    def of(cls, gap: KnowledgeGap) -> GapRecord:
        return cls(
            gap.id,
            gap.agent_id,
            gap.signature,
            gap.query,
            gap.fail_count,
            gap.first_failure_at,
            gap.last_failure_at,
            gap.status,
            gap.resolved_at,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "signature": self.signature,
            "query": self.query,
            "fail_count": self.fail_count,
            "first_failure_at": iso(self.first_failure_at),
            "last_failure_at": iso(self.last_failure_at),
            "status": self.status,
            "resolved_at": iso(self.resolved_at),
        }


def open_gaps(agent_id: str, signature: str) -> list[GapRecord]:
    """The open gap of this signature, as a list (what a search reply's ``gaps`` holds)."""
    if not signature:
        return []
    return [
        GapRecord.of(g)
        for g in KnowledgeGap.objects.filter(agent_id=agent_id, signature=signature, status="open")
    ]


def knowledge_gaps(*, agent_id: str, status: str | None = "open", limit: int = 200) -> list[GapRecord]:
    """The agent's gaps, most recent failure first (``status`` open, resolved or None for both)."""
    agent_id = c.check_agent_id(agent_id)
    if status is not None and status not in STATUSES:
        raise InvalidArgument("status must be open, resolved or omitted", field="status")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise InvalidArgument("limit must be an integer from 1 to 1000", field="limit")
    qs = KnowledgeGap.objects.filter(agent_id=agent_id)
    if status is not None:
        qs = qs.filter(status=status)
    return [GapRecord.of(g) for g in qs.order_by("-last_failure_at", "-id")[:limit]]


def note_verdict(*, entry: QueryJournal, verdict: str, actor: str, t: datetime) -> GapRecord | None:
    """Record, update or resolve the gap of ``entry``'s signature after a verdict on it (the verdict's
    feedback row is already written). Returns the gap it touched, if any."""
    signature = entry.signature
    if not signature or verdict not in ("CORRECT", "INCORRECT"):
        return None
    agent_id = entry.agent_id
    gap = KnowledgeGap.objects.filter(agent_id=agent_id, signature=signature, status="open").first()
    if verdict == "CORRECT":
        if gap is None:
            return None
        KnowledgeGap.objects.filter(id=gap.id).update(
            status="resolved", resolved_at=t, resolved_by_query=entry.id
        )
        c.audit(
            agent_id=agent_id,
            actor=actor,
            action="knowledge_gap_resolved",
            reason=signature,
            at=t,
            gap_id=gap.id,
            query_id=entry.id,
        )
        gap.refresh_from_db()
        return GapRecord.of(gap)
    if gap is not None:  # still open: one more failure
        KnowledgeGap.objects.filter(id=gap.id).update(
            fail_count=F("fail_count") + 1, last_failure_at=t, query=entry.query
        )
        gap.refresh_from_db()
        return GapRecord.of(gap)
    since = t - GAP_WINDOW
    resolved = KnowledgeGap.objects.filter(
        agent_id=agent_id, signature=signature, status="resolved"
    ).aggregate(last=Max("resolved_at"))["last"]
    failures = Feedback.objects.filter(
        agent_id=agent_id,
        target_type=Feedback.TARGET_QUERY,
        verdict="INCORRECT",
        created_at__gte=since,
        created_at__lte=t,
        query_id__in=QueryJournal.objects.filter(agent_id=agent_id, signature=signature).values("id"),
    )
    if resolved is not None:  # failures before the last resolution belong to that gap
        failures = failures.filter(created_at__gt=resolved)
    count = failures.count()
    if count < GAP_FAILURES:
        return None
    first = failures.order_by("created_at").values_list("created_at", flat=True).first() or t
    gap = KnowledgeGap.objects.create(
        agent_id=agent_id,
        signature=signature,
        query=entry.query,
        fail_count=count,
        first_failure_at=first,
        last_failure_at=t,
    )
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="knowledge_gap_recorded",
        reason=signature,
        at=t,
        gap_id=gap.id,
        fail_count=count,
    )
    return GapRecord.of(gap)
