"""The shared prompt-injection detector (SPEC P4): one scan for every distilled write and auto wiki page.

API: ``scan_injection(text) -> ScanResult`` and ``scan_fact(content, subject, predicate, object)`` (the content
and the ``"s p o"`` string scanned together). A result says ``.blocked`` (drop the write), ``.suspicious``
(quarantine it with reason ``possible_injection``) or neither (store it), with ``.score`` and ``.rules`` from
the rules, ``.probability`` from the classifier (None when the model is unavailable: ``.model_error`` says why,
and the verdict is then at least suspicious), and ``.to_audit()`` for the audit event.

Layers (one module each): ``normalise`` (NFKC, look-alikes, wrappers, zero-width), ``views`` (de-obfuscation),
``rules.toml`` + ``ruleset`` (the rules as data), ``compiler`` and ``matcher`` (phrase rules), ``registry``,
``clause``, ``intent`` and ``detectors`` (rules written as functions), ``features`` and ``classifier`` (the
trained model in ``model/``), ``training`` (``manage.py train_injection_model``), ``scan`` (the verdict).
"""

from __future__ import annotations

from collections.abc import Iterable

from .classifier import ModelUnavailable
from .result import QUARANTINE_REASON, RuleMatch, ScanResult
from .scan import (
    BLOCK_THRESHOLD,
    BLOCKS_ALONE,
    FAMILIES,
    MAX_SCAN_CHARS,
    RULESET_VERSION,
    SUSPICIOUS_SCORE,
    WEIGHTS,
    ZERO_WIDTH_LIMIT,
    _as_text,
    scan_text,
)


def scan_injection(text: str) -> ScanResult:
    """Scan one text with the rules and the classifier (SPEC P4), thresholds from ``memdesk.toml``."""
    from memory.config import injection_settings

    settings = injection_settings()
    return scan_text(
        text, block_threshold=settings.block_threshold, review_threshold=settings.review_threshold
    )


def scan_fact(content: str, subject: str = "", predicate: str = "", object: str | None = None) -> ScanResult:
    """Scan a fact's content and its ``"s p o"`` string together (SPEC P4): one combined result.

    Both parts go through one scan, joined by a newline, so an instruction split between the content and the
    triple is still seen, and families found in either part count once.
    """
    spo = " ".join(p for p in (_as_text(subject), _as_text(predicate), _as_text(object)) if p)
    parts: Iterable[str] = (p for p in (_as_text(content), spo) if p)
    return scan_injection("\n".join(parts))


__all__ = [
    "BLOCKS_ALONE",
    "BLOCK_THRESHOLD",
    "FAMILIES",
    "MAX_SCAN_CHARS",
    "ModelUnavailable",
    "QUARANTINE_REASON",
    "RULESET_VERSION",
    "RuleMatch",
    "SUSPICIOUS_SCORE",
    "ScanResult",
    "WEIGHTS",
    "ZERO_WIDTH_LIMIT",
    "scan_fact",
    "scan_injection",
    "scan_text",
]
