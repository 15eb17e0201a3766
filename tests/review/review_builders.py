"""Review items as the dream loop proposes them, made through the engine (``engine.review_propose``): facts are
written with ``engine.store_temporal``, and each proposal carries the payload the evidence card reads (the
``old`` and ``new`` sides from ``engine.side_of``, the rule and the judge's reason)."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from memory import engine
from memory.models import Memory
from tests.conftest import dt

T_OLD, T_NEW = dt("2024-01-10"), dt("2025-03-01")


def fact(agent_id: str, subject: str, predicate: str, obj: str, *, content: str = "", **kw: Any) -> str:
    return engine.store_temporal(
        agent_id=agent_id,
        content=content or f"{subject} {predicate} {obj}",
        subject=subject,
        predicate=predicate,
        object=obj,
        **kw,
    ).id


def pair(
    agent_id: str,
    subject: str = "proj",
    predicate: str = "deploy_target",
    old: str = "Cloudflare Workers",
    new: str = "cloudflare workers (CF)",
    *,
    old_from: datetime = T_OLD,
    new_from: datetime = T_NEW,
    old_origin: str = "user_direct",
    new_origin: str = "operator:crm",
) -> tuple[str, str]:
    """Two believed facts that conflict: under two predicates (near-synonyms) so both stay current."""
    a = fact(
        agent_id,
        subject,
        predicate,
        old,
        content=f"{subject} deploys to {old}",
        valid_from=old_from,
        origin=old_origin,
        source_event="chat-1",
        session_id="s-1",
    )
    b = fact(
        agent_id,
        subject,
        f"{predicate}_v2",
        new,
        content=f"{subject} deploys to {new}",
        valid_from=new_from,
        origin=new_origin,
        source_event="crm-sync-7",
    )
    return a, b


def fingerprint(*parts: Any) -> str:
    return hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:32]


def propose_conflict(
    agent_id: str,
    old_id: str,
    new_id: str,
    *,
    verdict: str = "UNSURE",
    confidence: float = 0.55,
    impact: int = 1,
    rule: str = "b",
    judge_reason: str = "near-synonym predicates with near-equal objects",
    reason: str = "confidence 0.55 is not above 0.80",
    run_id: int | None = None,
    title: str = "",
) -> engine.ReviewRecord:
    rows = {m.id: m for m in Memory.objects.filter(agent_id=agent_id, id__in=[old_id, new_id])}
    old, new = rows[old_id], rows[new_id]
    proposal = engine.Proposal(
        kind="conflict",
        fingerprint=fingerprint("conflict", rule, old_id, new_id),
        title=title or f"{old.subject}: “{old.object}” vs “{new.object}”",
        payload={
            "action": {"verdict": verdict, "old_id": old_id, "new_id": new_id},
            "old": engine.side_of(old),
            "new": engine.side_of(new),
            "rule": rule,
            "judge_reason": judge_reason,
        },
        memory_ids=[old_id, new_id],
        confidence=confidence,
        impact=impact,
        reason=reason,
        judge="heuristic",
        state=engine.state_fingerprint([old, new]),
        verdict_type=f"conflict:{verdict}",
    )
    item = engine.review_propose(agent_id=agent_id, proposal=proposal, run_id=run_id).item
    assert item is not None
    return item


def propose_lint(
    agent_id: str, memory_id: str, *, finding: str, action: str = "retract", impact: int = 1
) -> engine.ReviewRecord:
    row = Memory.objects.get(agent_id=agent_id, id=memory_id)
    proposal = engine.Proposal(
        kind="lint",
        fingerprint=fingerprint("lint", memory_id, finding),
        title=finding[:120],
        payload={
            "finding": finding,
            "rule": "domain",
            "fix": {"action": action, "memory_id": memory_id, "description": f"{action} the fact"},
            "facts": [engine.side_of(row)],
        },
        memory_ids=[memory_id],
        confidence=0.6,
        impact=impact,
        reason="lint findings are always reviewed",
        judge="lint",
        state=engine.state_fingerprint([row]),
        verdict_type=f"lint:{action}",
    )
    item = engine.review_propose(agent_id=agent_id, proposal=proposal).item
    assert item is not None
    return item


def propose_low_confidence(agent_id: str, memory_id: str, *, why: str) -> engine.ReviewRecord:
    row = Memory.objects.get(agent_id=agent_id, id=memory_id)
    proposal = engine.Proposal(
        kind="low_confidence",
        fingerprint=fingerprint("low", memory_id),
        title=f"Is “{row.content}” right?",
        payload={"why": why, "fact": engine.side_of(row)},
        memory_ids=[memory_id],
        confidence=row.confidence,
        impact=1,
        judge="policy",
        state=engine.state_fingerprint([row]),
        verdict_type="low_confidence",
    )
    item = engine.review_propose(agent_id=agent_id, proposal=proposal).item
    assert item is not None
    return item
