"""Tainted facts in the review queue (issue 19 item 9): the low-level half, which every write path may import.

A fact derived from a purged source (``belief.TAINTED``) gets a ``low_confidence`` review item when the purge
taints it (``taint_review.propose_tainted``). The item is resolved without a person when what it asks about is
settled elsewhere: the fact was retracted, re-confirmed (its trust lifted above ``TAINT_TRUST``), or every source
it cited is believed again. ``resolve_tainted`` checks the agent's pending tainted items and marks those settled
as ``stale`` (decided by ``system:taint``, the reason in words). It imports nothing that writes facts, so the
write paths (retract, purge, snapshot restore) can call it without an import cycle.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from memory.models import Memory, ReviewItem

from . import common as c
from .belief import TAINT_TRUST, is_retracted

KIND = "low_confidence"
RULE = "tainted"
ACTOR = "system:taint"


CHUNK = 500  # ids per query (SQLite's bound parameters)


def tainted_items(agent_id: str, facts: Iterable[str] | None = None) -> list[ReviewItem]:
    """The agent's pending tainted-fact items (one per tainted fact at most); with ``facts``, only those about
    these facts (by the payload's fact id, in chunks: a purge may name thousands)."""
    qs = ReviewItem.objects.filter(
        agent_id=agent_id, kind=KIND, status=ReviewItem.PENDING, payload__rule=RULE
    )
    if facts is None:
        return list(qs)
    ids = sorted(set(facts))
    out: list[ReviewItem] = []
    for i in range(0, len(ids), CHUNK):
        out += qs.filter(payload__fact__id__in=ids[i : i + CHUNK])
    return out


def settled(item: ReviewItem, rows: dict[str, Any]) -> str:
    """Why ``item`` needs no person any more (a sentence), or "" while it still does. ``rows``: the item's fact
    and the sources it cited, by id, as ``(invalidated_by_event, origin_trust)``."""
    fact_id = (item.memory_ids or [""])[0]
    fact = rows.get(fact_id)
    if fact is None:
        return "the fact is gone"
    if is_retracted(fact[0]):
        return "the fact was retracted"
    if float(fact[1]) > TAINT_TRUST:
        return "the fact was re-confirmed"
    sources = [s for s in (item.payload or {}).get("sources", []) if isinstance(s, str)]
    if sources and all(s in rows and not is_retracted(rows[s][0]) for s in sources):
        return "its source was restored"
    return ""


def resolve_tainted(*, agent_id: str, t: datetime, ids: Iterable[str] | None = None) -> int:
    """Mark the agent's pending tainted items that are settled (see ``settled``) as resolved. ``ids``: only
    items about these facts (a retraction's rows; None: all, e.g. after a snapshot restore that may have
    brought a source back). Audited per item; returns how many."""
    items = tainted_items(agent_id, ids)
    if not items:
        return 0
    needed: set[str] = set()
    for item in items:
        needed |= {x for x in item.memory_ids or [] if isinstance(x, str)}
        needed |= {x for x in (item.payload or {}).get("sources", []) if isinstance(x, str)}
    rows = {
        mid: (event, trust)
        for mid, event, trust in Memory.objects.filter(agent_id=agent_id, id__in=needed).values_list(
            "id", "invalidated_by_event", "origin_trust"
        )
    }
    resolved = 0
    for item in items:
        why = settled(item, rows)
        if not why:
            continue
        won = ReviewItem.objects.filter(id=item.id, status=ReviewItem.PENDING).update(
            status=ReviewItem.STALE,
            decided_at=t,
            decided_by=ACTOR,
            decision_reason=f"resolved: {why}",
            claimed_by="",
            claimed_until=None,
        )
        if won:
            resolved += 1
            c.audit(
                agent_id=agent_id,
                actor=ACTOR,
                action="review_resolved",
                reason=f"resolved: {why}",
                at=t,
                item_id=item.id,
                kind=item.kind,
                title=item.title,
            )
    return resolved
