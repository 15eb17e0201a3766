"""The injection scan on protected writes (SPEC P4): a blocked write is dropped and audited; a suspicious one is
held in quarantine (reason ``possible_injection``) for a person, with the scan's verdict in the approval."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import common as c
from ..types import StoreResult


@dataclass(frozen=True)
class ScanDecision:
    """``dropped``: the write's result (never stored); ``hold``: the scan's audit of a suspicious write, which
    goes to quarantine; neither: store it."""

    dropped: StoreResult | None = None
    hold: dict[str, Any] | None = None


def scan_write(
    *,
    agent_id: str,
    actor: str,
    content: str,
    subject: str | None,
    predicate: str | None,
    obj: str | None,
    origin: str,
) -> ScanDecision:
    """Run the shared detector (rules and classifier) over the write's text and triple."""
    from ..injection import scan_fact  # the rule tables and the model load on first use

    result = scan_fact(content, subject or "", predicate or "", obj or "")
    if result.blocked:
        why = ", ".join(result.rules) or f"classifier {result.probability or 0:.2f}"
        c.audit(
            agent_id=agent_id,
            actor=actor,
            action="prompt_injection",
            subject=subject,
            reason="dropped: " + why,
            origin=origin,
            snippet=content[:200],
            **result.to_audit(),
        )
        return ScanDecision(dropped=StoreResult(None, "dropped", reason="prompt_injection: " + why))
    if result.suspicious:
        return ScanDecision(hold=result.to_audit())
    return ScanDecision()


def hold_reason(injection: dict[str, Any]) -> str:
    """The sentence a held write's result gives: the classifier's probability and the rules that matched."""
    from ..injection import QUARANTINE_REASON

    parts = []
    if injection.get("probability") is not None:
        parts.append(f"classifier {float(injection['probability']):.2f}")
    if injection.get("rules"):
        parts.append("rules " + ", ".join(injection["rules"]))
    if injection.get("model_error"):
        parts.append("model unavailable")
    return f"{QUARANTINE_REASON}: " + ("; ".join(parts) or "suspicious")
