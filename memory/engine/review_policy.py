"""Review policy (SPEC B7): when a proposal applies at once and when it waits for a person, what a change's
impact is, and how people's verdicts move the thresholds.

A proposal is applied at once when its confidence is above its verdict type's auto-apply threshold (default
0.8) and its impact is below ``IMPACT_THRESHOLD`` (5). It waits when the confidence is low, when verdicts on the
same rows disagree, when the run has already applied ``MAX_APPLIED_PER_RUN`` (20) items, or when it touches
attitudes or skills. Impact counts what would change: the current rows ended, the graph edges they carry, the
facts derived from them, and wiki pointers (ending one hides a page: alone it reaches the threshold).

Calibration: per verdict type, once 20 or more people's decisions have accumulated since the last calibration,
more than 20 % rejections raise the type's threshold by 0.05 and more than 95 % approvals lower it by 0.05,
within [0.7, 0.95]; every change is an audit event.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from memory.models import Memory, ReviewItem, ReviewPolicy

from . import common as c
from .claims import is_system

DEFAULT_AUTO_APPLY = 0.8
LOW, HIGH = 0.7, 0.95
STEP = 0.05
MIN_DECISIONS = 20
RAISE_ABOVE_REJECTED = 0.20
LOWER_ABOVE_APPROVED = 0.95
IMPACT_THRESHOLD = 5
MAX_APPLIED_PER_RUN = 20
ALWAYS_REVIEWED = ("attitude", "skill")
WIKI_POINTER_WEIGHT = IMPACT_THRESHOLD
POINTER_PREDICATE = "documented_in"


def threshold(verdict_type: str) -> float:
    row = ReviewPolicy.objects.filter(verdict_type=verdict_type).values_list(
        "auto_apply_confidence", flat=True
    )
    return float(row.first() or DEFAULT_AUTO_APPLY)


def thresholds() -> dict[str, float]:
    return dict(ReviewPolicy.objects.values_list("verdict_type", "auto_apply_confidence"))


@dataclass(frozen=True)
class Routing:
    auto_apply: bool
    why: str


def route(
    *,
    kind: str,
    verdict_type: str,
    confidence: float,
    impact: int,
    applied_in_run: int,
    disputed: bool = False,
) -> Routing:
    """Apply now, or queue for a person, and why (shown on the item and in the run's report)."""
    if kind in ALWAYS_REVIEWED:
        return Routing(False, f"{kind} changes are always reviewed")
    if disputed:
        return Routing(False, "verdicts on these memories disagree")
    limit = threshold(verdict_type)
    if confidence <= limit:
        return Routing(False, f"confidence {confidence:.2f} is not above {limit:.2f}")
    if impact >= IMPACT_THRESHOLD:
        return Routing(False, f"impact {impact} is not below {IMPACT_THRESHOLD}")
    if applied_in_run >= MAX_APPLIED_PER_RUN:
        return Routing(False, f"this run already applied {MAX_APPLIED_PER_RUN} items")
    return Routing(
        True, f"confidence {confidence:.2f} > {limit:.2f} and impact {impact} < {IMPACT_THRESHOLD}"
    )


@dataclass(frozen=True)
class ImpactIndex:
    """What the agent's rows depend on, read once per run: how many rows cite each id in ``derived_from``."""

    cited: dict[str, int]


def impact_index(agent_id: str) -> ImpactIndex:
    cited: dict[str, int] = {}
    rows = (
        Memory.objects.filter(agent_id=agent_id)
        .exclude(derived_from=[])
        .values_list("derived_from", flat=True)
    )
    for derived in rows.iterator(chunk_size=2000):
        if isinstance(derived, list):
            for i in set(derived):
                if isinstance(i, str):
                    cited[i] = cited.get(i, 0) + 1
    return ImpactIndex(cited)


def impact(index: ImpactIndex, ended: Iterable[Memory]) -> int:
    """How much ending ``ended`` would change: each current row ended (1), its graph edges (1 per side), the
    rows derived from it, and a wiki pointer (``WIKI_POINTER_WEIGHT``)."""
    n = 0
    for m in ended:
        n += 1 + index.cited.get(m.id, 0)
        if m.subject and m.predicate:
            n += 1 + (1 if m.object else 0)
            if m.predicate == POINTER_PREDICATE and m.subject.startswith("wiki:"):
                n += WIKI_POINTER_WEIGHT
    return n


def record_decision(*, agent_id: str, verdict_type: str, approved: bool, t: datetime) -> float | None:
    """Count a person's decision; recalibrate the type's threshold when enough have accumulated. Returns the
    new threshold when it moved."""
    decided = ReviewItem.objects.filter(
        payload__verdict_type=verdict_type, status__in=(ReviewItem.APPROVED, ReviewItem.REJECTED)
    ).exclude(decided_by__startswith="system")
    total = decided.count()
    policy, _ = ReviewPolicy.objects.get_or_create(
        verdict_type=verdict_type, defaults={"auto_apply_confidence": DEFAULT_AUTO_APPLY, "updated_at": t}
    )
    fresh = total - policy.decisions_seen
    if fresh < MIN_DECISIONS:
        return None
    recent = list(decided.order_by("-decided_at", "-id").values_list("status", "decided_by")[:fresh])
    people = [s for s, who in recent if not is_system(who)]
    rejected = sum(1 for s in people if s == ReviewItem.REJECTED) / max(1, len(people))
    before = policy.auto_apply_confidence
    after = before
    if rejected > RAISE_ABOVE_REJECTED:
        after = min(HIGH, round(before + STEP, 4))
    elif 1 - rejected > LOWER_ABOVE_APPROVED:
        after = max(LOW, round(before - STEP, 4))
    ReviewPolicy.objects.filter(verdict_type=verdict_type).update(
        auto_apply_confidence=after, decisions_seen=total, updated_at=t
    )
    if after == before:
        return None
    c.audit(
        agent_id=agent_id,
        actor="system:review-policy",
        action="review_threshold_changed",
        reason=f"{verdict_type}: {before:.2f} -> {after:.2f} after {len(people)} decisions "
        f"({rejected:.0%} rejected)",
        at=t,
        verdict_type=verdict_type,
        before=before,
        after=after,
        decisions=len(people),
        rejected_share=round(rejected, 4),
    )
    return after


@dataclass(frozen=True)
class PolicyInEffect:
    """What the routing reads now: the default and per-type auto-apply thresholds and the fixed limits."""

    default_auto_apply: float
    by_type: dict[str, float]
    impact_threshold: int
    max_applied_per_run: int
    always_reviewed: tuple[str, ...]
    bounds: tuple[float, float]


def policy_in_effect() -> PolicyInEffect:
    return PolicyInEffect(
        default_auto_apply=DEFAULT_AUTO_APPLY,
        by_type=dict(sorted(thresholds().items())),
        impact_threshold=IMPACT_THRESHOLD,
        max_applied_per_run=MAX_APPLIED_PER_RUN,
        always_reviewed=ALWAYS_REVIEWED,
        bounds=(LOW, HIGH),
    )
