"""The conflict judge (SPEC B2): ``judge(old, new, context)`` -> MERGE | SUPERSEDE | COEXIST | UNSURE.

``old`` and ``new`` are dicts or records with ``content`` and optionally ``subject predicate object valid_from
valid_until origin origin_trust``; ``old`` is the one learned first. ``context`` may say the subjects are one
entity (``same_subject``: the candidate generator resolved their aliases) or give an ``aliases`` map
(alias -> canonical); the rest of it goes to the LLM as data.

The heuristic judge (the default; no network) reads normalised equality, character and token similarity
(rapidfuzz), the predicate registry's cardinality and synonyms, negation and change cues (English, Chinese) and
the valid times and trust of both sides. With an ``llm`` client the LLM judges instead: a reply below 0.7
confidence escalates once to the strong model, and one still below becomes UNSURE. Any LLM failure gives the
heuristic's verdict marked ``fallback`` and ``needs_review`` (never applied). UNSURE always needs review.

Nothing here writes; applying a verdict is the engine's business. This module must not import the engine (the
engine re-exports ``judge``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from .registry import Registry, get_registry
from .text import (
    NEAR_TEXT,
    cues,
    digits,
    near_equal,
    near_predicate,
    normalize_predicate,
    normalize_text,
    overlap,
    proper_names,
    similarity,
    tokens,
    value_key,
)

__all__ = [
    "ESCALATE_BELOW",
    "JUDGE_SCHEMA",
    "OVERRIDE_MARGIN",
    "VERDICTS",
    "JudgeInputError",
    "Verdict",
    "heuristic_judge",
    "judge",
]

VERDICTS = ("MERGE", "SUPERSEDE", "COEXIST", "UNSURE")
ESCALATE_BELOW = 0.7
OVERRIDE_MARGIN = 0.4  # a source this much less trusted never replaces a value on its own (as SPEC P5a)
HIGH_OVERLAP = 0.5  # token overlap that, with a change cue on one side only, reads as a change
CUE_SIMILARITY = 0.75  # or this character similarity
MAX_CONTENT = 4000  # characters of each side's content sent to the LLM

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["verdict", "confidence", "reason"],
    "properties": {
        "verdict": {"enum": list(VERDICTS)},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string", "maxLength": 500},
    },
}

INSTRUCTIONS = """You are the conflict judge of a long-term memory store. You compare two memories about the same \
subject: "old" (learned first) and "new" (learned later), each with its text, optional triple (subject, \
predicate, object), the world interval it holds for (valid_from, valid_until; null means open), its origin and \
its origin_trust (0..1). "predicate" describes the relation: cardinality "single" means one value at a time, \
"multi" means values coexist. Decide one verdict:
- MERGE: both say the same thing (same value, wording aside); the later one only reaffirms the earlier.
- SUPERSEDE: the new one replaces the old (the value changed; the old stopped holding when the new began).
- COEXIST: both hold (different things, different periods, or a multi-valued relation).
- UNSURE: you cannot tell from the data.
A less trusted source must not replace a better trusted fact without evidence: prefer UNSURE then.
confidence is your probability (0..1) that the verdict is right; reason is one short sentence."""


class JudgeInputError(ValueError):
    """``old`` or ``new`` is not something the judge can read."""

    code = "invalid_argument"


@dataclass(frozen=True)
class Verdict:
    """A judgement. ``judge`` is ``"heuristic"`` or ``"llm:<model>"``; ``needs_review`` sends it to people
    (UNSURE, or a heuristic verdict standing in for a failed LLM: ``fallback``, with the failure's code in
    ``error``); ``rule`` names the heuristic rule that decided."""

    verdict: str
    confidence: float
    reason: str
    judge: str = "heuristic"
    needs_review: bool = False
    fallback: bool = False
    escalated: bool = False
    error: str = ""
    rule: str = ""


@dataclass(frozen=True)
class _Side:
    content: str
    subject: str | None
    predicate: str | None
    object: str | None
    valid_from: datetime | None
    valid_until: datetime | None
    origin: str | None
    origin_trust: float | None

    @property
    def is_fact(self) -> bool:
        return bool(self.subject) and bool(self.predicate)

    def as_data(self) -> dict[str, Any]:
        return {
            "content": self.content[:MAX_CONTENT],
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "valid_from": self.valid_from.isoformat() if self.valid_from else None,
            "valid_until": self.valid_until.isoformat() if self.valid_until else None,
            "origin": self.origin,
            "origin_trust": self.origin_trust,
        }


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def _time(value: Any, name: str) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError as exc:
            raise JudgeInputError(f"{name} is not an ISO-8601 time") from exc
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise JudgeInputError(f"{name} must be a timezone-aware time")
    return value


def _text(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise JudgeInputError(f"{name} must be text")
    return value.strip() or None


def _side(item: Any, which: str) -> _Side:
    if item is None:
        raise JudgeInputError(f"{which} is missing")
    content = _field(item, "content")
    if not isinstance(content, str) or not content.strip():
        raise JudgeInputError(f"{which}.content must be non-empty text")
    trust = _field(item, "origin_trust")
    if trust is not None and (
        isinstance(trust, bool) or not isinstance(trust, int | float) or not 0 <= trust <= 1
    ):
        raise JudgeInputError(f"{which}.origin_trust must be a number from 0 to 1")
    return _Side(
        content=content,
        subject=_text(_field(item, "subject"), f"{which}.subject"),
        predicate=_text(_field(item, "predicate"), f"{which}.predicate"),
        object=_text(_field(item, "object"), f"{which}.object"),
        valid_from=_time(_field(item, "valid_from"), f"{which}.valid_from"),
        valid_until=_time(_field(item, "valid_until"), f"{which}.valid_until"),
        origin=_text(_field(item, "origin"), f"{which}.origin"),
        origin_trust=None if trust is None else float(trust),
    )


def _v(verdict: str, confidence: float, reason: str, rule: str) -> Verdict:
    return Verdict(verdict, round(confidence, 3), reason, needs_review=verdict == "UNSURE", rule=rule)


# --- the heuristic judge -------------------------------------------------------------------------------------


def heuristic_judge(
    old: Any, new: Any, context: Mapping[str, Any] | None = None, *, registry: Registry | None = None
) -> Verdict:
    """The rule-based verdict (no network)."""
    a, b = _side(old, "old"), _side(new, "new")
    registry = registry or get_registry()
    if a.is_fact and b.is_fact:
        return _judge_facts(a, b, dict(context or {}), registry)
    return _judge_plain(a, b)


def _entity(name: str | None, aliases: Mapping[str, str]) -> str:
    norm = normalize_text(name)
    return aliases.get(norm, norm)


def _judge_facts(a: _Side, b: _Side, context: dict[str, Any], registry: Registry) -> Verdict:
    aliases = {normalize_text(k): normalize_text(v) for k, v in dict(context.get("aliases") or {}).items()}
    same_subject = bool(context.get("same_subject")) or _entity(a.subject, aliases) == _entity(
        b.subject, aliases
    )
    if not same_subject:
        return _v("COEXIST", 0.9, "different subjects", "subjects_differ")
    pa, pb = registry.canonical(a.predicate or ""), registry.canonical(b.predicate or "")
    if pa != pb and not near_predicate(pa, pb):
        return _v("COEXIST", 0.85, f"different predicates ({pa} vs {pb})", "predicates_differ")
    predicate = pa if registry.spec(pa) is not None or registry.spec(pb) is None else pb
    how_pred = "" if normalize_predicate(a.predicate) == normalize_predicate(b.predicate) else f" ({pa}/{pb})"
    if not a.object and not b.object:
        plain = _judge_plain(a, b)
        return replace(plain, reason=f"{plain.reason} (facts without objects)")
    vtype = registry.value_type(predicate)
    cardinality = registry.cardinality(predicate)
    oa, ob = _entity(a.object, aliases), _entity(b.object, aliases)
    same, how = near_equal(oa, ob, vtype)
    new_cues, old_cues = cues(b.content), cues(a.content)
    if same:
        if "negation" in new_cues - old_cues:
            return _v("UNSURE", 0.4, "same value, but the new text negates it", "same_value_negated")
        confidence = {"equal": 0.95, "key": 0.9}.get(how, 0.8)
        why = {"equal": "equal after normalisation", "key": "the same value written differently"}.get(
            how, "near-equal values"
        )
        return _v("MERGE", confidence, f"{why}: {a.object!r} / {b.object!r}{how_pred}", f"merge_{how}")
    if cardinality == "multi":
        mentions_old = bool(oa) and value_key(oa, vtype) in value_key(b.content, vtype)
        if new_cues and mentions_old:
            return _v(
                "SUPERSEDE",
                0.7,
                f"the new text retracts {a.object!r} ({predicate} is multi-valued)",
                "multi_retract",
            )
        return _v("COEXIST", 0.9, f"{predicate} is multi-valued: both values hold", "multi_valued")
    return _single_valued(a, b, predicate, new_cues - old_cues)


def _single_valued(a: _Side, b: _Side, predicate: str, new_cues: frozenset[str]) -> Verdict:
    values = f"{a.object!r} -> {b.object!r}"
    if a.valid_until is not None and b.valid_from is not None and a.valid_until <= b.valid_from:
        return _v("COEXIST", 0.85, f"successive periods of {predicate}: {values}", "successive_periods")
    if b.valid_until is not None and a.valid_from is not None and b.valid_until <= a.valid_from:
        return _v("COEXIST", 0.85, f"the new value {b.object!r} held before the old one", "earlier_period")
    trust_a = 1.0 if a.origin_trust is None else a.origin_trust
    trust_b = 1.0 if b.origin_trust is None else b.origin_trust
    if trust_a - trust_b >= OVERRIDE_MARGIN - 1e-9:
        return _v(
            "UNSURE",
            0.4,
            f"a less trusted source ({trust_b:.2f} vs {trust_a:.2f}) contradicts {predicate}: {values}",
            "low_trust_override",
        )
    if a.valid_from is not None and b.valid_from is not None and b.valid_from != a.valid_from:
        if b.valid_from > a.valid_from:
            return _v(
                "SUPERSEDE",
                0.9,
                f"{predicate} is single-valued and the new value is later: {values}",
                "later_valid_from",
            )
        return _v(
            "COEXIST",
            0.75,
            f"the new value {b.object!r} is history: it starts before the old one",
            "earlier_valid_from",
        )
    if new_cues:
        return _v(
            "SUPERSEDE",
            0.75,
            f"change cue ({', '.join(sorted(new_cues))}) on single-valued {predicate}: {values}",
            "change_cue",
        )
    return _v(
        "UNSURE", 0.35, f"two different values of single-valued {predicate} at once: {values}", "two_values"
    )


def _judge_plain(a: _Side, b: _Side) -> Verdict:
    na, nb = normalize_text(a.content).rstrip(" .!。！"), normalize_text(b.content).rstrip(" .!。！")
    if na == nb:
        return _v("MERGE", 0.95, "the same text after normalisation", "merge_equal")
    names_a, names_b = proper_names(a.content), proper_names(b.content)
    if names_a - names_b and names_b - names_a:  # e.g. the same template filled for two customers
        only = ", ".join(sorted(names_a - names_b)[:3]) + " / " + ", ".join(sorted(names_b - names_a)[:3])
        return _v("COEXIST", 0.85, f"they are about different named things ({only})", "different_names")
    sim = similarity(na, nb)
    shared = overlap(tokens(na), tokens(nb))
    flipped = cues(na) ^ cues(nb)
    if flipped and (shared >= HIGH_OVERLAP or sim >= CUE_SIMILARITY):
        confidence = min(0.85, 0.55 + 0.3 * max(shared, sim))
        return _v(
            "SUPERSEDE",
            confidence,
            f"high overlap ({shared:.2f}) and a change cue ({', '.join(sorted(flipped))})",
            "overlap_change_cue",
        )
    if sim >= NEAR_TEXT:
        if digits(na) != digits(nb):
            return _v(
                "UNSURE", 0.4, f"near-identical text ({sim:.2f}) but the numbers differ", "numbers_differ"
            )
        return _v(
            "MERGE",
            min(0.9, 0.8 + (sim - NEAR_TEXT)),
            f"near-duplicate text ({sim:.2f})",
            "merge_near_duplicate",
        )
    return _v(
        "UNSURE",
        0.2 + 0.1 * max(sim, shared),
        f"no rule applies (similarity {sim:.2f}, overlap {shared:.2f})",
        "no_rule",
    )


# --- the LLM judge ---------------------------------------------------------------------------------------------


def _llm_data(a: _Side, b: _Side, context: Mapping[str, Any] | None, registry: Registry) -> dict[str, Any]:
    data: dict[str, Any] = {"old": a.as_data(), "new": b.as_data()}
    predicate = b.predicate or a.predicate
    if predicate:
        spec = registry.spec(predicate)
        data["predicate"] = {
            "name": registry.canonical(predicate),
            "cardinality": registry.cardinality(predicate),
            "value_type": registry.value_type(predicate),
            "known": spec is not None,
        }
    if context:
        data["context"] = dict(context)
    return data


def _from_reply(reply: Any) -> Verdict:
    data = reply.data
    return Verdict(
        verdict=data["verdict"],
        confidence=round(float(data["confidence"]), 3),
        reason=" ".join(str(data["reason"]).split())[:500],
        judge=f"llm:{reply.model}",
    )


def judge(
    old: Any,
    new: Any,
    context: Mapping[str, Any] | None = None,
    *,
    llm: Any = None,
    registry: Registry | None = None,
) -> Verdict:
    """Judge two memories (see the module docstring). ``llm`` is a ``memory.llm.LLMClient`` or None."""
    registry = registry or get_registry()
    heuristic = heuristic_judge(old, new, context, registry=registry)
    if llm is None:
        return heuristic
    from memory.llm import LLMFailure

    data = _llm_data(_side(old, "old"), _side(new, "new"), context, registry)
    try:
        verdict = _from_reply(llm.complete_json(instructions=INSTRUCTIONS, data=data, schema=JUDGE_SCHEMA))
        if verdict.confidence < ESCALATE_BELOW:
            reply = llm.complete_json(instructions=INSTRUCTIONS, data=data, schema=JUDGE_SCHEMA, strong=True)
            verdict = replace(_from_reply(reply), escalated=True)
    except LLMFailure as exc:
        return replace(
            heuristic,
            reason=f"LLM failed ({exc.code}); heuristic: {heuristic.reason}",
            needs_review=True,
            fallback=True,
            error=exc.code,
        )
    if verdict.confidence < ESCALATE_BELOW and verdict.verdict != "UNSURE":
        verdict = replace(
            verdict, verdict="UNSURE", reason=f"low confidence ({verdict.confidence:.2f}): {verdict.reason}"
        )
    # A less trusted source replacing a better trusted value is never applied on the LLM's word alone (P5a).
    risky = verdict.verdict == "SUPERSEDE" and heuristic.rule == "low_trust_override"
    return replace(verdict, needs_review=verdict.verdict == "UNSURE" or risky)
