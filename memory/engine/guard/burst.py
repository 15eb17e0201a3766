"""The burst counter (SPEC P5): a persistent sliding window per (agent, origin, subject), fail-closed."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import DatabaseError, connection, transaction

from memory.config import guard_settings
from memory.models import GuardCounter

log = logging.getLogger("memdesk.guard")


@dataclass
class GuardDecision:
    quarantine: bool
    reason: str = ""
    earlier_write_ids: list[int] = field(default_factory=list)
    counter_id: int | None = None
    hits: list[list[Any]] = field(default_factory=list)


def _us(t: datetime) -> int:
    return int(t.timestamp() * 1_000_000)


def _lock_counter(agent_id: str, origin: str, subject: str, t: datetime) -> GuardCounter:
    GuardCounter.objects.get_or_create(
        agent_id=agent_id, origin=origin, subject=subject, defaults={"updated_at": t}
    )
    qs = GuardCounter.objects.filter(agent_id=agent_id, origin=origin, subject=subject)
    if connection.vendor == "postgresql":
        qs = qs.select_for_update()  # parallel writers of one (agent, origin, subject) count one at a time
    return qs.get()


def check_burst(*, agent_id: str, origin: str, subject: str, n: int, t: datetime) -> GuardDecision:
    """Count ``n`` new writes; quarantine if the window then holds ``max_per_subject`` or more (fail closed)."""
    cfg = guard_settings()
    if not cfg.enabled:
        return GuardDecision(False)
    try:
        with transaction.atomic():  # a savepoint: a failure to read or lock the counter quarantines
            counter = _lock_counter(agent_id, origin, subject, t)
            cutoff = _us(t) - cfg.window_secs * 1_000_000
            hits = [h for h in (counter.hits or []) if isinstance(h, list) and len(h) == 2 and h[0] > cutoff]
    except DatabaseError as exc:
        log.warning("burst guard unavailable for %s/%s/%s: %s; quarantining", agent_id, origin, subject, exc)
        return GuardDecision(True, "guard_unavailable")
    if len(hits) + n < cfg.max_per_subject:
        return GuardDecision(False, counter_id=counter.id, hits=hits)
    reason = (
        f"burst: {len(hits) + n} facts about {subject!r} from {origin} within {cfg.window_secs} s "
        f"(limit {cfg.max_per_subject})"
    )
    return GuardDecision(True, reason, [int(h[1]) for h in hits], counter.id, hits)


def record_hits(decision: GuardDecision, t: datetime, write_ids: list[int]) -> None:
    if decision.counter_id is None:
        return
    hits = decision.hits + [[_us(t), wid] for wid in write_ids]
    GuardCounter.objects.filter(id=decision.counter_id).update(hits=hits, updated_at=t)
