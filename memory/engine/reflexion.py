"""The mistake notebook (SPEC X1–X3): record mistakes, recall them into prompts, consolidate repeats into rules."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db import connection

from memory.models import CATEGORIES, Mistake

from . import common as c
from .temporal import check_fact, write_fact
from .types import InvalidArgument, StoreResult

MAX_UNRESOLVED = 50
DEFAULT_CONSOLIDATE_THRESHOLD = 3
RECALL_LIMIT = 3
MAX_KEYWORDS = 12
PRIORITY = {cat: rank for rank, cat in enumerate(CATEGORIES)}  # lower = more important
BLOCK_HEADER = "## Past Mistakes to Avoid"
RULE_ORIGIN = "agent_derived"
_SUMMARY_LIMIT = 4000


def normalise_category(category: Any) -> str:
    cat = str(category or "").strip().lower()
    return cat if cat in PRIORITY else "behavioral"


def _summary(value: Any, *, field: str, required: bool) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise InvalidArgument(f"{field} is required", field=field)
        return None
    if not isinstance(value, str):
        raise InvalidArgument(f"{field} must be a string", field=field)
    if len(value) > _SUMMARY_LIMIT or "\x00" in value:
        raise InvalidArgument(f"{field} must be at most {_SUMMARY_LIMIT} characters of text", field=field)
    return value.strip()


@c.write_transaction
def record_mistake(
    *,
    agent_id: str,
    category: str,
    input_summary: str,
    what_went_wrong: str,
    agent_response_summary: str = "",
    ground_truth: str | None = None,
    session_id: str | None = None,
    actor: str = "system",
) -> Mistake:
    """Add a mistake; past 50 unresolved, the oldest is evicted. Consolidation is a separate step."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    mistake = Mistake.objects.create(
        id=c.new_memory_id().replace("m_", "x_", 1),
        agent_id=agent_id,
        timestamp=c.now(),
        category=normalise_category(category),
        session_id=c.check_session(session_id),
        input_summary=_summary(input_summary, field="input_summary", required=True) or "",
        agent_response_summary=_summary(
            agent_response_summary, field="agent_response_summary", required=False
        )
        or "",
        what_went_wrong=_summary(what_went_wrong, field="what_went_wrong", required=True) or "",
        ground_truth=_summary(ground_truth, field="ground_truth", required=False),
    )
    c.ensure_agent(agent_id, bump_generation=False)
    open_ids = list(
        Mistake.objects.filter(agent_id=agent_id, resolved=False)
        .order_by("-timestamp", "-id")
        .values_list("id", flat=True)
    )
    if len(open_ids) > MAX_UNRESOLVED:
        Mistake.objects.filter(id__in=open_ids[MAX_UNRESOLVED:]).update(resolved=True, resolution="evicted")
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="mistake_recorded",
        reason=mistake.category,
        mistake_id=mistake.id,
    )
    return mistake


def keywords(message: str) -> list[str]:
    """Whitespace-separated words of at least 3 characters, lower-cased, at most 12 (SPEC X2)."""
    out: list[str] = []
    for word in (message or "").split():
        w = word.strip(".,;:!?\"'()[]{}<>").lower()
        if len(w) >= 3 and w not in out:
            out.append(w)
        if len(out) >= MAX_KEYWORDS:
            break
    return out


def _by_priority(mistakes: list[Mistake]) -> list[Mistake]:
    newest_first = sorted(mistakes, key=lambda m: (m.timestamp, m.id), reverse=True)
    return sorted(newest_first, key=lambda m: PRIORITY.get(m.category, len(PRIORITY)))


def recall(*, agent_id: str, message: str, limit: int = RECALL_LIMIT) -> list[Mistake]:
    agent_id = c.check_agent_id(agent_id)
    if not isinstance(message, str):
        raise InvalidArgument("message must be a string", field="message")
    unresolved = list(Mistake.objects.filter(agent_id=agent_id, resolved=False))
    words = keywords(message)
    if words:
        scored = []
        for m in unresolved:
            haystack = " ".join([m.input_summary, m.what_went_wrong, m.ground_truth or ""]).lower()
            hits = sum(
                1 for w in words if re.search(r"(?<!\w)" + re.escape(w) + r"(?:s|es)?(?!\w)", haystack)
            )
            if hits:
                scored.append((hits, m))
        if scored:
            ranked = sorted(
                scored, key=lambda t: (-t[0], PRIORITY.get(t[1].category, 9), -t[1].timestamp.timestamp())
            )
            return [m for _, m in ranked[:limit]]
    return _by_priority(unresolved)[:limit]


_STRUCTURE = re.compile(r"([\\`*_#\[\]<>|])")


def escape(text: str | None) -> str:
    """One line of inert text: newlines folded, markdown/HTML structure characters escaped."""
    flat = " ".join((text or "").split())
    return _STRUCTURE.sub(r"\\\1", flat)


def render_block(mistakes: list[Mistake]) -> str:
    if not mistakes:
        return ""
    lines = [BLOCK_HEADER]
    for m in mistakes:
        lines.append(
            f"- [{m.category}] session {escape(m.session_id or 'n/a')}: input: {escape(m.input_summary)}; "
            f"issue: {escape(m.what_went_wrong)}; ground truth: {escape(m.ground_truth or 'n/a')}"
        )
    return "\n".join(lines) + "\n"


def reflexion_context(*, agent_id: str, message: str) -> str:
    """The prompt block for ``message`` (empty string when the notebook has nothing open)."""
    return render_block(recall(agent_id=agent_id, message=message))


@dataclass(frozen=True)
class Consolidation:
    category: str
    rule_id: str
    source_ids: list[str]


def rule_text(category: str, mistakes: list[Mistake]) -> str:
    lines: list[str] = []
    for m in sorted(mistakes, key=lambda m: (m.timestamp, m.id)):
        line = " ".join(m.what_went_wrong.split())
        if line and line not in lines:
            lines.append(line)
        if len(lines) >= 5:
            break
    head = f"Recurring {category} issues consolidated from {len(mistakes)} past mistakes. Apply extra care:"
    return head + "".join(f"\n- {line}" for line in lines)


def maybe_consolidate(
    *, agent_id: str, threshold: int = DEFAULT_CONSOLIDATE_THRESHOLD, actor: str = "system:reflexion"
) -> list[Consolidation]:
    """Turn every category with >= threshold unresolved mistakes into one semantic rule (SPEC X3)."""
    agent_id = c.check_agent_id(agent_id)
    out = []
    for category in CATEGORIES:
        try:
            result = _consolidate_category(agent_id, category, threshold, actor)
        except _Lost:
            continue
        if result is not None:
            out.append(result)
    return out


@c.write_transaction
def _consolidate_category(agent_id: str, category: str, threshold: int, actor: str) -> Consolidation | None:
    qs = Mistake.objects.filter(agent_id=agent_id, category=category, resolved=False).order_by(
        "timestamp", "id"
    )
    if connection.vendor == "postgresql":
        qs = qs.select_for_update()  # a second worker waits, then sees the rows resolved
    mistakes = list(qs)
    if len(mistakes) < threshold:
        return None
    ids = [m.id for m in mistakes]
    fact = check_fact(
        agent_id=agent_id,
        content=rule_text(category, mistakes),
        subject=f"category:{category}",
        predicate="requires_care",
        object=None,
        origin=RULE_ORIGIN,
        source_event="reflexion_consolidation",
        metadata={"source_mistake_ids": ids, "category": category},
        layer="semantic",
        importance=8.0,
    )
    result: StoreResult = write_fact(fact)
    claimed = Mistake.objects.filter(id__in=ids, resolved=False).update(
        resolved=True, resolution=f"consolidated:{result.id}"
    )
    if claimed != len(ids):  # someone else resolved them meanwhile: undo this rule
        raise _Lost()
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="reflexion_consolidated",
        memory_id=result.id,
        reason=category,
        mistake_ids=ids,
    )
    return Consolidation(category, str(result.id), ids)


class _Lost(Exception):
    pass
