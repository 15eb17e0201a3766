"""Tainted facts enter the review queue (issue 19 item 9): a purge that taints facts proposes one
``low_confidence`` item per tainted fact, with the reason in words ("derived from a purged source: <origin>").

Idempotent: a fact with a pending tainted item gets no second one (another purge touching it only adds to
nothing); a fact whose earlier item was decided or resolved gets a new one when a later purge taints it again.
Approving the item confirms the fact (a reaffirming write) and lifts its trust back to what it was before the
purge; rejecting retracts it (``review_apply``). ``taint.resolve_tainted`` settles items no person needs to.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime

from memory.models import Memory

from .belief import NOT_RETRACTED
from .review import Proposal, review_propose, side_of
from .taint import KIND, RULE, tainted_items
from .verdicts import state_fingerprint

IMPACT = 1


def why(origin: str) -> str:
    return f"derived from a purged source: {origin}"


def propose_tainted(
    *,
    agent_id: str,
    tainted: dict[str, float],
    purged: Iterable[str],
    origin: str,
    t: datetime,
    actor: str,
) -> int:
    """One pending item per tainted fact (``tainted``: id → its trust before the purge) that has none yet.
    ``purged``: the ids the purge retracted (the sources each fact cited are the ones among them). Plain
    memories (no key) are marked tainted everywhere but get no item: there is no fact to confirm."""
    if not tainted:
        return 0
    purged_ids = set(purged)
    open_items = {i for item in tainted_items(agent_id, tainted) for i in item.memory_ids or []}
    rows = (
        Memory.objects.filter(agent_id=agent_id, id__in=list(tainted), quarantined=False)
        .filter(NOT_RETRACTED)
        .exclude(subject__isnull=True)
        .exclude(predicate__isnull=True)
        .order_by("id")
    )
    made = 0
    for row in rows:
        if row.id in open_items:
            continue
        sources = sorted(purged_ids.intersection(row.derived_from or []))
        digest = hashlib.sha256(f"{RULE}|{row.id}|{origin}|{t.isoformat()}".encode()).hexdigest()[:32]
        proposal = Proposal(
            kind=KIND,
            fingerprint=f"taint:{digest}",
            title=f"Derived from a purged source: “{row.content[:200]}”",
            payload={
                "rule": RULE,
                "why": why(origin),
                "origin": origin,
                "sources": sources,
                "trust_before": tainted[row.id],
                "fact": side_of(row),
            },
            memory_ids=[row.id],
            confidence=float(row.origin_trust),
            impact=IMPACT,
            reason=why(origin),
            judge="purge",
            state=state_fingerprint([row]),
            verdict_type=f"{KIND}:{RULE}",
        )
        if review_propose(agent_id=agent_id, proposal=proposal, actor=actor).item is not None:
            made += 1
    return made
