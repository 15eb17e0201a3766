"""Read-only queries of the review queue (SPEC D2, B7) and its decision cards.

Nothing here writes: decisions go through ``memory.engine.review_*``. A page of cards costs a fixed number of
queries whatever the number of items: the items (paged), then the memories they are about, in one query.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from django.db.models import (
    Case,
    Count,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.utils.safestring import SafeString

from dashboard.selectors import memories_by_id
from memory import engine
from memory.models import AuditEvent, DreamRun, ReviewItem

from .evidence import (
    Axis,
    Segment,
    axis_svg,
    parse_time,
    side_html,
    text_diff,
    time_axis,
    triple_changes,
)
from .forms import VERDICT_CHOICES
from .queue import QueueCard

REVIEW_LABELS = {
    "pending": "pending",
    "approved": "approved",
    "rejected": "rejected",
    "applied": "applied automatically",
    "stale": "stale",
}
KIND_NAMES = {
    "conflict": "conflict",
    "lint": "lint finding",
    "low_confidence": "low-confidence fact",
    "attitude": "attitude change",
    "skill": "skill change",
}
DECIDED = ("applied", "approved", "rejected", "stale")
HIGH_IMPACT = engine.REVIEW_IMPACT_THRESHOLD
LOG_PREFIX = "review_"


# --- counts -----------------------------------------------------------------------------------------------------


def pending_items() -> QuerySet[ReviewItem]:
    return ReviewItem.objects.filter(status=ReviewItem.PENDING)


def pending_review_expr() -> Coalesce:
    """The number of pending review items of the outer query's agent, as a subquery (the navigation badge:
    annotated on the agent, so it costs no query of its own)."""
    counts = (
        pending_items()
        .filter(agent_id=OuterRef("agent_id"))
        .order_by()
        .values("agent_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(counts, output_field=IntegerField()), Value(0))


def pending_review_count(agent_id: str) -> int:
    """Pending review items of one agent: one COUNT on the (agent_id, status, kind) index."""
    return pending_items().filter(agent_id=agent_id).count()


def pending_by_kind(agent_id: str) -> dict[str, int]:
    """Pending items per kind (the kind filter's counts), one query on the index."""
    rows = (
        pending_items()
        .filter(agent_id=agent_id)
        .order_by()
        .values("kind")
        .annotate(n=Count("id"))
        .values_list("kind", "n")
    )
    return dict(rows)


def recent_runs(agent_id: str, limit: int = 20) -> list[tuple[int, datetime, bool]]:
    """The agent's latest dream runs (the run filter's options): (id, started, dry run), one query."""
    return list(
        DreamRun.objects.filter(agent_id=agent_id)
        .order_by("-started_at", "-id")
        .values_list("id", "started_at", "dry_run")[:limit]
    )


# --- the list ---------------------------------------------------------------------------------------------------


def review_item(agent_id: str, item_id: int) -> ReviewItem | None:
    """One item of this agent (another agent's id, or a dry run's proposal, is simply not found)."""
    return (
        ReviewItem.objects.filter(agent_id=agent_id, id=item_id)
        .exclude(status=ReviewItem.DRY)
        .order_by()
        .first()
    )


def text_q(q: str) -> Q:
    """``q`` as a case-insensitive substring of the title (the dream loop names the subject and both values
    there), the reason it waits, or the judge's name. Plain columns only: a JSON search over 10k payloads would
    cost more than the whole page."""
    return Q(title__icontains=q) | Q(reason__icontains=q) | Q(judge__icontains=q)


ORDERS = {
    "confidence": ("confidence", "expires_at", "id"),
    "expiry": ("expires_at", "confidence", "id"),
    "impact": ("-impact", "confidence", "expires_at", "id"),
}


def review_items(agent_id: str, filters: dict[str, Any], *, status: str) -> QuerySet[ReviewItem]:
    """The agent's items matching ``filters`` (``ReviewFilterForm.filters()``) in the order of
    ``filters["sort"]``; ``status`` "all" lists pending items first."""
    qs = ReviewItem.objects.filter(agent_id=agent_id)
    if status == "decided":
        qs = qs.filter(status__in=DECIDED)
    elif status == "all":
        qs = qs.exclude(status=ReviewItem.DRY)
    else:
        qs = qs.filter(status=status)
    if filters.get("kind"):
        qs = qs.filter(kind=filters["kind"])
    if filters.get("conf_min") is not None:
        qs = qs.filter(confidence__gte=filters["conf_min"])
    if filters.get("conf_max") is not None:
        qs = qs.filter(confidence__lte=filters["conf_max"])
    if filters.get("impact") == "high":
        qs = qs.filter(impact__gte=HIGH_IMPACT)
    elif filters.get("impact") == "low":
        qs = qs.filter(impact__lt=HIGH_IMPACT)
    if filters.get("run") is not None:
        qs = qs.filter(run_id=filters["run"])
    if filters.get("q"):
        qs = qs.filter(text_q(filters["q"]))
    if filters.get("item") is not None:
        qs = qs.filter(id=filters["item"])
    sort = filters.get("sort") or "confidence"
    if sort == "recent":
        order: list[Any] = [F("decided_at").desc(nulls_last=True), "-id"]
    else:
        order = list(ORDERS.get(sort, ORDERS["confidence"]))
    if status == "all":
        qs = qs.annotate(
            decided=Case(When(status=ReviewItem.PENDING, then=Value(0)), default=Value(1)),
        )
        order.insert(0, "decided")
    return qs.order_by(*order)


class IdsFirst:
    """Sorted items the paginator slices by id first: the sort carries only the sort columns, then one page of
    whole rows (payloads included) is read by id. Two queries a page, whatever the number of items (sorting
    10k payloads would cost more than the page)."""

    def __init__(self, qs: QuerySet[ReviewItem]) -> None:
        self.qs = qs

    def count(self) -> int:
        return self.qs.count()

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, index: slice) -> list[ReviewItem]:
        ids = list(self.qs.values_list("id", flat=True)[index])
        rows = {r.id: r for r in ReviewItem.objects.filter(id__in=ids)} if ids else {}
        return [rows[i] for i in ids if i in rows]


def decidable_items(agent_id: str, filters: dict[str, Any]) -> list[ReviewItem]:
    """The pending items matching ``filters`` (what a bulk decision may act on), in the page's order, without
    their payloads: one query."""
    qs = review_items(agent_id, {**filters, "sort": filters.get("sort") or "confidence"}, status="pending")
    return list(qs.defer("payload", "undo_state", "edited"))


# --- cards ------------------------------------------------------------------------------------------------------


@dataclass
class ReviewCard(QueueCard):
    """The review queue's decision card: one item, its evidence (from the payload, as proposed) and the
    memories it is about as they are now (``rows``); ``changed`` when they differ from what was proposed."""

    rows: dict[str, engine.MemoryRecord] = field(default_factory=dict)
    changed: bool = False

    status_labels: ClassVar[dict[str, str]] = REVIEW_LABELS
    warn_before_secs: ClassVar[int] = 24 * 3600  # flagged on its last day before the reminder

    @property
    def kind(self) -> str:
        return self.item.kind

    @functools.cached_property
    def kind_name(self) -> str:
        return KIND_NAMES.get(self.kind, self.kind)

    @functools.cached_property
    def payload(self) -> dict[str, Any]:
        return self.item.payload if isinstance(self.item.payload, dict) else {}

    @functools.cached_property
    def expired(self) -> bool:
        """Review items are never decided by time: past their TTL they are reminded about and stay pending."""
        return False

    @functools.cached_property
    def overdue(self) -> bool:
        due = self.due
        return self.pending and due is not None and due <= self.now

    @functools.cached_property
    def stale(self) -> bool:
        return self.item.status == ReviewItem.STALE or (self.pending and self.changed)

    @functools.cached_property
    def editable(self) -> bool:
        return self.kind == "conflict" and self.decidable

    @functools.cached_property
    def revertable(self) -> bool:
        return self.item.status in (ReviewItem.APPROVED, ReviewItem.APPLIED) and not self.undoable

    @functools.cached_property
    def high_impact(self) -> bool:
        return self.item.impact >= HIGH_IMPACT

    # conflicts: two sides --------------------------------------------------------------------------------------

    @functools.cached_property
    def action(self) -> dict[str, Any]:
        action = self.payload.get("action")
        return action if isinstance(action, dict) else {}

    @functools.cached_property
    def verdict(self) -> str:
        return str(self.action.get("verdict") or "")

    @functools.cached_property
    def old(self) -> dict[str, Any]:
        return _side(self.payload.get("old"))

    @functools.cached_property
    def new(self) -> dict[str, Any]:
        return _side(self.payload.get("new") or self.payload.get("fact"))

    @functools.cached_property
    def is_fact(self) -> bool:
        """The sides are facts (a triple): their value may be corrected; plain memories' may not."""
        return bool(self.new.get("subject") or self.old.get("subject"))

    @functools.cached_property
    def diff(self) -> tuple[list[Segment], list[Segment]]:
        return text_diff(str(self.old.get("content") or ""), str(self.new.get("content") or ""))

    @functools.cached_property
    def triple_changed(self) -> set[str]:
        return triple_changes(self.old, self.new)

    @functools.cached_property
    def axis(self) -> Axis | None:
        sides = [(label, side) for label, side in (("old", self.old), ("new", self.new)) if side]
        return time_axis(sides, self.now)

    @property
    def verdict_choices(self) -> list[tuple[str, str]]:
        return VERDICT_CHOICES

    @property
    def old_html(self) -> SafeString:
        return side_html(
            self.item.agent_id,
            self.old,
            label="old",
            segments=self.diff[0],
            now_status=self.old_now,
            changed=self.triple_changed,
        )

    @property
    def new_html(self) -> SafeString:
        return side_html(
            self.item.agent_id,
            self.new,
            label="new",
            segments=self.diff[1],
            now_status=self.new_now,
            changed=self.triple_changed,
        )

    @property
    def fact_html(self) -> SafeString:
        """The one fact of a low-confidence item."""
        return side_html(self.item.agent_id, self.new, label="fact", now_status=self.new_now)

    @property
    def facts_html(self) -> list[SafeString]:
        """The facts a lint finding (or another kind) is about, with what each is now."""
        return [
            side_html(self.item.agent_id, f, label="fact", now_status=self.status_now(f.get("id")))
            for f in self.facts
        ]

    @property
    def axis_html(self) -> SafeString:
        axis = self.axis
        return axis_svg(axis, key=str(self.id), open_note=self.pending) if axis else SafeString("")

    @property
    def judge_reason(self) -> str:
        return str(self.payload.get("judge_reason") or "")

    @property
    def rule(self) -> str:
        return str(self.payload.get("rule") or "")

    @functools.cached_property
    def old_now(self) -> str:
        return self.status_now(self.old.get("id"))

    @functools.cached_property
    def new_now(self) -> str:
        return self.status_now(self.new.get("id"))

    def status_now(self, memory_id: Any) -> str:
        """What the memory is now (current, superseded, retracted, …), or "gone"."""
        record = self.rows.get(memory_id) if isinstance(memory_id, str) else None
        return record.status_at(self.now) if record is not None else "gone"

    # lint and low confidence ---------------------------------------------------------------------------------

    @property
    def finding(self) -> str:
        return str(self.payload.get("finding") or self.item.title or "")

    @property
    def fix(self) -> dict[str, Any]:
        fix = self.payload.get("fix")
        return fix if isinstance(fix, dict) else {}

    @functools.cached_property
    def facts(self) -> list[dict[str, Any]]:
        """The memories a lint finding or another kind is about, as proposed."""
        facts = self.payload.get("facts")
        if isinstance(facts, list):
            return [_side(f) for f in facts if isinstance(f, dict)]
        return [s for s in (self.old, self.new) if s]

    @property
    def why(self) -> str:
        return str(self.payload.get("why") or self.item.reason or "")

    @property
    def tainted(self) -> bool:
        """A fact derived from a purged source (issue 19 item 9), proposed by the purge."""
        return self.item.kind == "low_confidence" and self.payload.get("rule") == engine.TAINT_RULE

    @property
    def resolved(self) -> str:
        """Why the item needed no person in the end (settled by the engine), or ""."""
        if self.item.status == ReviewItem.STALE and self.item.decided_by == engine.TAINT_ACTOR:
            return self.item.decision_reason.removeprefix("resolved: ")
        return ""

    @property
    def extra(self) -> list[tuple[str, Any]]:
        """The payload's other entries (attitudes, skills): shown as they are, escaped."""
        skip = {"old", "new", "fact", "facts", "action", "fix", "finding", "why", "rule", "judge_reason"}
        skip.add("verdict_type")
        return [(k, v) for k, v in sorted(self.payload.items()) if k not in skip]


def _side(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    side = dict(value)
    for name in ("valid_from", "valid_until", "ingested_at"):
        side[name] = parse_time(side.get(name))
    return side


def review_cards(
    agent_id: str, items: Iterable[ReviewItem], *, now: datetime, actor: str = ""
) -> list[ReviewCard]:
    """Cards for ``items`` and the memories they are about, in one query; a pending item whose memories
    changed since it was proposed is ``changed`` (deciding it would be refused as stale)."""
    items = list(items)
    wanted = sorted({i for it in items for i in (it.memory_ids or []) if isinstance(i, str)})
    rows = memories_by_id(agent_id, wanted)
    cards = []
    for it in items:
        ids = [i for i in (it.memory_ids or []) if isinstance(i, str)]
        mine = [rows[i] for i in dict.fromkeys(ids) if i in rows]
        changed = bool(
            it.status == ReviewItem.PENDING
            and it.state
            and (len(mine) != len(it.memory_ids or []) or engine.state_fingerprint(mine) != it.state)
        )
        records = {m.id: engine.MemoryRecord.from_model(m) for m in mine}
        cards.append(ReviewCard(it, now, actor=actor, rows=records, changed=changed))
    return cards


# --- the decision log -------------------------------------------------------------------------------------------


def decision_log(agent_id: str, *, item_id: int | None = None, memory_id: str = "") -> QuerySet[AuditEvent]:
    """The review queue's audit events (proposals, decisions, claims, undos, reverts, reminders, threshold
    changes), newest first; with ``item_id``, one item's; with ``memory_id``, those of the items about that
    memory (either side of a conflict, a finding's fact, a doubtful fact)."""
    qs = AuditEvent.objects.filter(agent_id=agent_id, action__startswith=LOG_PREFIX)
    if item_id is not None:
        qs = qs.filter(details__item_id=item_id)
    if memory_id:
        about = ReviewItem.objects.filter(agent_id=agent_id).filter(
            Q(payload__old__id=memory_id)
            | Q(payload__new__id=memory_id)
            | Q(payload__fact__id=memory_id)
            | Q(payload__fix__memory_id=memory_id)
        )
        qs = qs.filter(details__item_id__in=list(about.values_list("id", flat=True)))
    return qs.order_by("-created_at", "-id")
