"""The scan's verdict (SPEC P4): what the rules matched, what the classifier said, and the decision."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = Literal["block", "suspicious", "store"]

# the quarantine reason the write path gives a suspicious verdict (SPEC P4, P8)
QUARANTINE_REASON = "possible_injection"


@dataclass(frozen=True)
class RuleMatch:
    """One matched rule, for the audit trail: ``rule`` id, its ``family``, the ``view`` it matched in and a
    short ``snippet`` of the (normalised) text it matched."""

    rule: str
    family: str
    view: str
    snippet: str


@dataclass(frozen=True)
class ScanResult:
    """``blocked``: drop the write. ``suspicious`` (never with ``blocked``): quarantine it with reason
    ``possible_injection``. Neither: store it.

    ``score`` and ``rules`` are the rule layer's (family weights, matched families); ``probability`` is the
    classifier's, None when the model could not be used: then ``model_error`` says why and the verdict is at
    least suspicious (fail closed)."""

    blocked: bool
    score: int
    rules: list[str] = field(default_factory=list)  # matched family names, in family order
    matches: tuple[RuleMatch, ...] = ()
    zero_width: int = 0  # zero-width / invisible characters counted in the input
    probability: float | None = None
    suspicious: bool = False
    model_error: str | None = None
    truncated: bool = False  # longer than the scan reads (then at least suspicious)
    binary: bool = False  # control characters: binary data, only its start scanned (then at least suspicious)
    ruleset: str = ""
    model: str = ""  # the classifier's version (sha256 prefix of its weights)
    block_threshold: float | None = None
    review_threshold: float | None = None

    @property
    def rule_ids(self) -> list[str]:
        return sorted({m.rule for m in self.matches})

    @property
    def verdict(self) -> Verdict:
        return "block" if self.blocked else ("suspicious" if self.suspicious else "store")

    @property
    def model_available(self) -> bool:
        return self.model_error is None

    def to_audit(self) -> dict[str, Any]:
        """A JSON-ready payload for the ``prompt_injection`` audit event (and the quarantine's payload)."""
        return {
            "ruleset": self.ruleset,
            "model": self.model,
            "verdict": self.verdict,
            "blocked": self.blocked,
            "suspicious": self.suspicious,
            "score": self.score,
            "rules": list(self.rules),
            "probability": None if self.probability is None else round(self.probability, 4),
            "block_threshold": self.block_threshold,
            "review_threshold": self.review_threshold,
            "model_error": self.model_error,
            "truncated": self.truncated,
            "binary": self.binary,
            "zero_width": self.zero_width,
            "matches": [
                {"rule": m.rule, "family": m.family, "view": m.view, "snippet": m.snippet}
                for m in self.matches
            ],
        }
