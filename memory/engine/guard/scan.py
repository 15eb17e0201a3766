"""The injection scan on protected writes (SPEC P4): a blocked write is dropped and audited."""

from __future__ import annotations

from .. import common as c
from ..types import StoreResult


def scan_or_drop(
    *,
    agent_id: str,
    actor: str,
    content: str,
    subject: str | None,
    predicate: str | None,
    obj: str | None,
    origin: str,
) -> StoreResult | None:
    """Run the shared rule engine; a blocked write is dropped (never stored) and audited (SPEC P4)."""
    from ..injection import scan_fact  # the rule tables load on first use

    result = scan_fact(content, subject or "", predicate or "", obj or "")
    if not result.blocked:
        return None
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="prompt_injection",
        subject=subject,
        reason="dropped: " + ", ".join(result.rules),
        rules=list(result.rules),
        score=result.score,
        origin=origin,
        snippet=content[:200],
    )
    return StoreResult(None, "dropped", reason="prompt_injection: " + ", ".join(result.rules))
