"""The injection scan on protected writes (SPEC P4), bounded in time (issue 15 item 5).

The scan runs after the size checks (a write reaches it only once its content and triple are within their
limits). A text of at most ``SCAN_WHOLE`` characters is scanned whole, as ``scan_fact`` scans it. A longer one
is scanned in windows of ``SCAN_WINDOW`` characters overlapping by ``SCAN_OVERLAP`` (a phrase or an encoded
blob that short always lies whole in some window), one after the other, while the scan's CPU time stays within
``SCAN_BUDGET_S``: the scanner's cost grows faster than the length of some texts (64 KB of random base64 took
1.5 s whole), never the windows'. The windows' findings are added up as one text's would be (a family counts
once; blocked at the threshold or by a family that blocks alone). If the budget runs out before the last
window, the rest of the text was never looked at: the write is not stored as believed but held for a reviewer
(reason ``scan_incomplete``), never dropped and never let through unscanned.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .. import common as c
from ..types import StoreResult

SCAN_WHOLE = 4096
SCAN_WINDOW = 2048
SCAN_OVERLAP = 256
SCAN_BUDGET_S = 0.05


@dataclass(frozen=True)
class ScanVerdict:
    blocked: bool
    rules: tuple[str, ...] = ()
    score: int = 0
    incomplete: str = ""  # why the scan stopped early: the write is held for review

    @property
    def hold_reason(self) -> str:
        return f"scan_incomplete: {self.incomplete}" if self.incomplete else ""


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
        return ScanVerdict(result.blocked, tuple(result.rules), result.score)
    parts = windows(text)
    families: list[str] = []
    started = time.thread_time()
    for k, part in enumerate(parts):
        if k and budget is not None and time.thread_time() - started > budget:
            seen = min(len(text), k * (SCAN_WINDOW - SCAN_OVERLAP) + SCAN_OVERLAP)
            return ScanVerdict(
                False, tuple(families), _score(families, WEIGHTS), f"scanned {seen} of {len(text)} characters"
            )
        result = scan_injection(part)
        families += [f for f in result.rules if f not in families]
        if result.blocked:
            break
    score = _score(families, WEIGHTS)
    blocked = score >= BLOCK_THRESHOLD or any(f in BLOCKS_ALONE for f in families)
    return ScanVerdict(blocked, tuple(families), score)


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
    """A blocked write: dropped (never stored) and audited (SPEC P4)."""
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="prompt_injection",
        subject=subject,
        reason="dropped: " + ", ".join(verdict.rules),
        rules=list(verdict.rules),
        score=verdict.score,
        origin=origin,
        snippet=content[:200],
    )
    return StoreResult(None, "dropped", reason="prompt_injection: " + ", ".join(verdict.rules))


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
    """Scan a write whose text is too short to be windowed (distilled facts); a blocked one is dropped and
    audited, else None."""
    verdict = scan_write(content, subject, predicate, obj)
    if not verdict.blocked:
        return None
    return record_drop(
        verdict, agent_id=agent_id, actor=actor, content=content, subject=subject, origin=origin
    )
