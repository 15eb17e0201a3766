"""The burst counter (SPEC P5): persistent sliding windows per (agent, origin, subject key), fail-closed.

A write is counted under its own origin and, for low-trust classes, under its class too (``keys``); it trips
the guard when any of its counters then holds the limit. Each counter row is also the lock that makes its count
atomic (SELECT … FOR UPDATE on PostgreSQL, the IMMEDIATE transaction on SQLite); rows are locked in name order.
A counter's hits are ``[microseconds, id]`` pairs: write-log ids for facts, memory ids for plain memories.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import DatabaseError, connection, transaction

from memory.config import guard_settings
from memory.models import GuardCounter

from .keys import class_counter

log = logging.getLogger("memdesk.guard")


@dataclass
class GuardDecision:
    quarantine: bool
    reason: str = ""
    earlier_ids: list[Any] = field(default_factory=list)  # ids counted in the window, all counters together
    counters: list[tuple[int, list[list[Any]]]] = field(default_factory=list)  # (row id, hits in the window)

    def held(self, reason: str) -> GuardDecision:
        """This decision, holding the write alone for ``reason`` (its window's earlier writes stay as they are)."""
        return GuardDecision(True, reason, [], self.counters)


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


def counted_origins(origin: str) -> list[str]:
    """The counters a write from ``origin`` goes into: its own and, for a low-trust class, the class's."""
    shared = class_counter(origin)
    return sorted({origin} | ({shared} if shared else set()))


def check_burst(
    *, agent_id: str, origin: str, subject: str, n: int, t: datetime, plain: bool = False
) -> GuardDecision:
    """Count ``n`` new writes about ``subject`` (a guard key); quarantine if a window then holds
    ``max_per_subject`` or more. ``plain``: ``n`` plain memories, counted per origin under ``subject``
    against ``max_plain_per_origin``."""
    cfg = guard_settings()
    if not cfg.enabled:
        return GuardDecision(False)
    limit = cfg.max_plain_per_origin if plain else cfg.max_per_subject
    names = [origin] if plain else counted_origins(origin)
    cutoff = _us(t) - cfg.window_secs * 1_000_000
    counters: list[tuple[int, list[list[Any]]]] = []
    try:
        with transaction.atomic():  # a savepoint: a failure to read or lock a counter quarantines
            for name in names:
                counter = _lock_counter(agent_id, name, subject, t)
                hits = [
                    h for h in (counter.hits or []) if isinstance(h, list) and len(h) == 2 and h[0] > cutoff
                ]
                counters.append((counter.id, hits))
    except DatabaseError as exc:
        log.warning("burst guard unavailable for %s/%s/%s: %s; quarantining", agent_id, origin, subject, exc)
        return GuardDecision(True, "guard_unavailable")
    counts = [(len(hits) + n, name) for name, (_, hits) in zip(names, counters, strict=True)]
    count, name = max(counts)
    if count < limit:
        return GuardDecision(False, counters=counters)
    who = f"origin class {name[:-2]}" if name.endswith(":*") else name
    what = "plain memories" if plain else f"facts about {subject!r}"
    reason = f"burst: {count} {what} from {who} within {cfg.window_secs} s (limit {limit})"
    earlier = list(dict.fromkeys(h[1] for _, hits in counters for h in hits))
    return GuardDecision(True, reason, earlier, counters)


def record_hits(decision: GuardDecision, t: datetime, ids: list[Any]) -> None:
    for counter_id, hits in decision.counters:
        GuardCounter.objects.filter(id=counter_id).update(
            hits=hits + [[_us(t), i] for i in ids], updated_at=t
        )
