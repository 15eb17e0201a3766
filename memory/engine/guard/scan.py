"""The injection scan on protected writes (SPEC P4), bounded in time (issue 15 item 5).

The scan runs after the size checks (a write reaches it only once its content and triple are within their
limits). A text of at most ``SCAN_WHOLE`` characters is scanned whole, as ``scan_fact`` scans it. A longer one
is scanned in windows of ``SCAN_WINDOW`` characters overlapping by ``SCAN_OVERLAP`` (a phrase or an encoded
blob that short always lies whole in some window), one after the other, while the scan's CPU time stays within
``SCAN_BUDGET_S``: the scanner's cost grows faster than the length of some texts (64 KB of random base64 took
1.5 s whole), never the windows'. The windows' findings are added up as one text's would be (a family counts
once; blocked at the threshold or by a family that blocks alone). If the budget runs out before the last
window, the rest of the text was never looked at: the write is not stored as believed but held for a reviewer
(reason ``scan_incomplete``), never dropped and never let through unscanned. A write the detector finds
suspicious (SPEC P4: the classifier's review band, a rule score of 30 or more, a model that could not load) is
held the same way with reason ``possible_injection`` and the detector's record in its approval.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .. import common as c
from ..types import StoreResult

SCAN_WHOLE = 4096
SCAN_WINDOW = 2048
SCAN_OVERLAP = 256
SCAN_BUDGET_S = 0.05
SUSPICIOUS_SCORE = 30  # SPEC P4: a rule score this high without blocking is suspicious


@dataclass(frozen=True)
class ScanVerdict:
    """The scan's verdict on one write: ``blocked`` (dropped), else held for a person when the detector found it
    ``suspicious`` (the classifier's probability in the review band, a rule score of 30 or more, a model that
    could not load) or the scan stopped early (``incomplete``); else stored. ``audit`` is the detector's own
    record (rules, score, probability, thresholds, model), kept with the drop or the hold."""

    blocked: bool
    rules: tuple[str, ...] = ()
    score: int = 0
    incomplete: str = ""  # why the scan stopped early: the write is held for review
    suspicious: bool = False
    probability: float | None = None
    audit: dict[str, Any] = field(default_factory=dict)

    @property
    def hold_reason(self) -> str:
        from ..injection import QUARANTINE_REASON

        if self.incomplete:
            return f"scan_incomplete: {self.incomplete}"
        return QUARANTINE_REASON if self.suspicious else ""

    @property
    def hold_extra(self) -> dict[str, Any]:
        """What a held write's approval carries of the scan (the desk shows it)."""
        return {"injection": self.audit} if self.hold_reason and self.audit else {}

    @property
    def why(self) -> str:
        return ", ".join(self.rules) or (
            f"classifier {self.probability:.2f}" if self.probability is not None else "the scan"
        )


def _text(content: str, subject: str | None, predicate: str | None, obj: str | None) -> str:
    """What ``scan_fact`` scans: the content, then the "s p o" string, one per line."""
    spo = " ".join(p for p in (subject, predicate, obj) if p)
    return "\n".join(p for p in (content, spo) if p)


def windows(text: str) -> list[str]:
    """``text`` in windows of ``SCAN_WINDOW`` characters, each starting ``SCAN_OVERLAP`` before the last one
    ended."""
    step = SCAN_WINDOW - SCAN_OVERLAP
    return [text[i : i + SCAN_WINDOW] for i in range(0, max(1, len(text) - SCAN_OVERLAP), step)]


def scan_write(
    content: str,
    subject: str | None = None,
    predicate: str | None = None,
    obj: str | None = None,
    *,
    budget: float | None = SCAN_BUDGET_S,
) -> ScanVerdict:
    """The verdict on a protected write: pure (no database), bounded in CPU time by ``budget`` seconds
    (None: every window is scanned, for an operator's import)."""
    from ..injection import BLOCK_THRESHOLD, BLOCKS_ALONE, WEIGHTS, scan_injection  # rules load on first use

    text = _text(content, subject, predicate, obj)
    if len(text) <= SCAN_WHOLE:
        result = scan_injection(text)
        return ScanVerdict(
            result.blocked,
            tuple(result.rules),
            result.score,
            suspicious=result.suspicious,
            probability=result.probability,
            audit=result.to_audit(),
        )
    parts = windows(text)
    families: list[str] = []
    worst: Any = None  # the window the classifier liked least (its record is the verdict's audit)
    suspicious = classifier_blocked = False
    started = time.thread_time()
    for k, part in enumerate(parts):
        if k and budget is not None and time.thread_time() - started > budget:
            seen = min(len(text), k * (SCAN_WINDOW - SCAN_OVERLAP) + SCAN_OVERLAP)
            return _verdict(
                families, worst, suspicious, classifier_blocked, WEIGHTS, BLOCK_THRESHOLD, BLOCKS_ALONE,
                incomplete=f"scanned {seen} of {len(text)} characters",
            )  # fmt: skip
        result = scan_injection(part)
        families += [f for f in result.rules if f not in families]
        suspicious = suspicious or result.suspicious
        if worst is None or (result.probability or 0) > (worst.probability or 0):
            worst = result
        if result.blocked:
            classifier_blocked = classifier_blocked or not result.rules
            break
    return _verdict(families, worst, suspicious, classifier_blocked, WEIGHTS, BLOCK_THRESHOLD, BLOCKS_ALONE)


def _verdict(
    families: list[str],
    worst: Any,
    suspicious: bool,
    classifier_blocked: bool,
    weights: dict[str, int],
    threshold: int,
    alone: Any,
    *,
    incomplete: str = "",
) -> ScanVerdict:
    """The windows' findings added up as one text's would be; the classifier's worst window decides its part."""
    score = _score(families, weights)
    blocked = not incomplete and (
        classifier_blocked or score >= threshold or any(f in alone for f in families)
    )
    audit = dict(worst.to_audit()) if worst is not None else {}
    audit.update(rules=list(families), score=score, blocked=blocked, windowed=True)
    return ScanVerdict(
        blocked,
        tuple(families),
        score,
        incomplete,
        suspicious=not blocked and (suspicious or score >= SUSPICIOUS_SCORE),
        probability=worst.probability if worst is not None else None,
        audit=audit,
    )


def _score(families: list[str], weights: dict[str, int]) -> int:
    return sum(weights.get(f, 0) for f in families)


def record_drop(
    verdict: ScanVerdict,
    *,
    agent_id: str,
    actor: str,
    content: str,
    subject: str | None,
    origin: str,
) -> StoreResult:
    """A blocked write: dropped (never stored) and audited with the detector's record (SPEC P4)."""
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="prompt_injection",
        subject=subject,
        reason="dropped: " + verdict.why,
        origin=origin,
        snippet=content[:200],
        **{**verdict.audit, "rules": list(verdict.rules), "score": verdict.score},
    )
    return StoreResult(None, "dropped", reason="prompt_injection: " + verdict.why)
