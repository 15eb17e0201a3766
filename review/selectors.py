"""Read-only queries of the quarantine desk (SPEC D3, P8), with their joins and aggregates baked in.

Nothing here writes: decisions go through ``memory.engine``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, ClassVar

from django.db.models import Case, Count, F, IntegerField, OuterRef, Q, QuerySet, Subquery, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from dashboard.selectors import memories_by_id, origin_class_q
from memory import engine
from memory.models import AgentToken, ApprovalRequest, AuditEvent, Memory

from .queue import QueueCard

APPROVAL_LABELS = {
    "pending": "pending",
    "approved": "approved",
    "denied": "rejected",
    "expired": "expired · rejected",
}


def pending_batches() -> QuerySet[ApprovalRequest]:
    return ApprovalRequest.objects.filter(
        action_kind=ApprovalRequest.KNOWLEDGE_QUARANTINE, status=ApprovalRequest.PENDING
    )


def pending_batches_expr() -> Coalesce:
    """The number of pending batches of the outer query's agent, as a subquery (for the navigation badge:
    annotated on the agent, so it costs no query of its own)."""
    counts = (
        pending_batches()
        .filter(agent_id=OuterRef("agent_id"))
        .order_by()
        .values("agent_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(counts, output_field=IntegerField()), Value(0))


def pending_batch_count(agent_id: str) -> int:
    """Pending batches of one agent: one COUNT on the (agent_id, status) index."""
    return pending_batches().filter(agent_id=agent_id).count()


def approval_request(agent_id: str, request_id: int) -> ApprovalRequest | None:
    """One batch of this agent (another agent's id is simply not found)."""
    return (
        ApprovalRequest.objects.filter(
            agent_id=agent_id, id=request_id, action_kind=ApprovalRequest.KNOWLEDGE_QUARANTINE
        )
        .order_by()
        .first()
    )


def approval_requests(
    agent_id: str,
    *,
    status: str = "pending",
    origin: str = "",
    batch: int | None = None,
    origin_class: str = "",
    q: str = "",
    expiring_hours: int | None = None,
    now: datetime | None = None,
    sort: str = "expiry",
) -> QuerySet[ApprovalRequest]:
    """The agent's batches. ``pending``: soonest expiry first; ``decided``: latest decision first; ``all``:
    pending ones (soonest expiry first) then decided ones (latest first). ``q`` is a case-insensitive
    substring of the subject; ``expiring_hours`` keeps pending batches whose TTL ends within that many hours.
    ``sort="origin"`` groups each of those by origin first (``sorted_requests`` sorts by size or impact)."""
    qs = ApprovalRequest.objects.filter(agent_id=agent_id, action_kind=ApprovalRequest.KNOWLEDGE_QUARANTINE)
    if status == "pending":
        qs = qs.filter(status=ApprovalRequest.PENDING)
    elif status == "decided":
        qs = qs.exclude(status=ApprovalRequest.PENDING)
    if origin:
        qs = qs.filter(origin=origin)
    if origin_class:
        qs = qs.filter(origin_class_q(origin_class))
    if q:
        qs = qs.filter(subject__icontains=q)
    if expiring_hours is not None:
        until = (now or timezone.now()) + timedelta(hours=expiring_hours)
        qs = qs.filter(status=ApprovalRequest.PENDING, expires_at__lte=until)
    if batch is not None:
        qs = qs.filter(id=batch)
    is_pending = Q(status=ApprovalRequest.PENDING)
    first = ("decided", "origin") if sort == "origin" else ("decided",)
    return qs.annotate(
        decided=Case(When(is_pending, then=Value(0)), default=Value(1), output_field=IntegerField()),
        due=Case(When(is_pending, then=F("expires_at")), default=None),
    ).order_by(*first, F("due").asc(nulls_last=True), F("decided_at").desc(nulls_last=True), "id")


SORTED_MAX = 1000  # sorting by size or impact reads this many batches at most (the rest follow by expiry)


def sorted_requests(
    agent_id: str, qs: QuerySet[ApprovalRequest], *, sort: str, now: datetime
) -> list[ApprovalRequest]:
    """``qs`` (in expiry order) sorted by ``size`` (most facts first) or ``impact`` (most current facts that
    approving would supersede first, then size), pending before decided: three queries whatever the count
    (the batches, their rows, the believed rows they would change)."""
    reqs = list(qs[:SORTED_MAX])
    rest = list(qs[SORTED_MAX:]) if len(reqs) == SORTED_MAX else []
    impact: dict[int, int] = {}
    if sort == "impact":
        impact = supersede_counts(agent_id, [r for r in reqs if r.status == ApprovalRequest.PENDING])

    def key(r: ApprovalRequest) -> tuple[int, int, int]:
        size = len((r.payload or {}).get("ids", []))
        return (r.status != ApprovalRequest.PENDING, -impact.get(r.id, 0), -size)

    return sorted(reqs, key=key) + rest  # a stable sort: ties keep the expiry order


def filtered_requests(
    agent_id: str, filters: dict[str, Any], *, status: str, now: datetime
) -> QuerySet[ApprovalRequest]:
    """``approval_requests`` for the desk's filters (``QuarantineFilterForm.filters()``)."""
    return approval_requests(
        agent_id,
        status=status,
        origin=filters.get("origin") or "",
        origin_class=filters.get("origin_class") or "",
        q=filters.get("q") or "",
        expiring_hours=filters.get("expiring"),
        batch=filters.get("batch"),
        now=now,
        sort=filters.get("sort") or "expiry",
    )


def decidable_requests(agent_id: str, filters: dict[str, Any], *, now: datetime) -> list[ApprovalRequest]:
    """The pending batches matching ``filters`` whose TTL has not run out (what a bulk decision may act on),
    soonest expiry first: one query."""
    return list(filtered_requests(agent_id, filters, status="pending", now=now).filter(expires_at__gt=now))


def approval_origins(agent_id: str) -> list[str]:
    """Every origin that has had a batch quarantined for this agent (filter options), one query."""
    return list(
        ApprovalRequest.objects.filter(agent_id=agent_id, action_kind=ApprovalRequest.KNOWLEDGE_QUARANTINE)
        .order_by("origin")
        .values_list("origin", flat=True)
        .distinct()
    )


@dataclass
class FactPreview:
    """One fact of a batch and, while the batch is pending, what approving it would change."""

    row: engine.MemoryRecord
    supersedes: engine.MemoryRecord | None = None
    reaffirms: engine.MemoryRecord | None = None

    @property
    def effect(self) -> str:
        """``supersede``, ``reaffirm`` or ``new``."""
        if self.supersedes is not None:
            return "supersede"
        return "reaffirm" if self.reaffirms is not None else "new"


@dataclass(frozen=True)
class OriginToken:
    """The token an MCP origin (``mcp_external:token-N``, ``agent_derived:token-N``) names, as the desk shows
    it: its name, who created it (the ``token_create`` audit entry), when, and when it was last used."""

    id: int
    name: str
    external: bool
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None
    owner: str


TOKEN_ORIGIN = re.compile(r"^(?:mcp_external|agent_derived):token-(\d{1,18})$")


def origin_tokens(agent_id: str, origins: Iterable[str]) -> dict[str, OriginToken]:
    """The tokens behind ``origins`` (only this agent's), by origin: two queries, none when no origin names a
    token."""
    wanted = {o: int(m.group(1)) for o in set(origins) if (m := TOKEN_ORIGIN.match(o or ""))}
    if not wanted:
        return {}
    tokens = {
        t.id: t
        for t in AgentToken.objects.filter(agent__agent_id=agent_id, id__in=sorted(set(wanted.values())))
    }
    owners: dict[int, str] = {}
    if tokens:
        for actor, details in AuditEvent.objects.filter(
            agent_id=agent_id, action="token_create", details__token_id__in=sorted(tokens)
        ).values_list("actor", "details"):
            token_id = (details or {}).get("token_id")
            if isinstance(token_id, int):
                owners.setdefault(token_id, actor)
    return {
        origin: OriginToken(
            t.id, t.name, t.external, t.created_at, t.last_used_at, t.revoked_at, owners.get(t.id, "")
        )
        for origin, token_id in wanted.items()
        if (t := tokens.get(token_id)) is not None
    }


@dataclass
class BatchCard(QueueCard):
    """The desk's decision card: one approval request, its facts, the token behind its origin, and the time
    left."""

    facts: list[FactPreview] = field(default_factory=list)
    missing_ids: list[str] = field(default_factory=list)
    token: OriginToken | None = None

    status_labels: ClassVar[dict[str, str]] = APPROVAL_LABELS

    @property
    def request(self) -> ApprovalRequest:
        return self.item

    @property
    def revertable(self) -> bool:
        """Decided, and past its decider's undo (a revert is a new decision by any reviewer)."""
        return not self.pending and not self.undoable

    @property
    def reason_optional(self) -> bool:
        """Approving supersedes no current fact, so it needs no reason (``QuarantineDesk.default_reason``)."""
        return self.decidable and not self.effects["supersede"]

    @property
    def effects(self) -> dict[str, int]:
        out = {"supersede": 0, "reaffirm": 0, "new": 0}
        for f in self.facts:
            out[f.effect] += 1
        return out


def effect_kind(effect: engine.ApprovalEffect | None) -> str:
    """What approving one held fact does: ``supersede`` a believed row, ``reaffirm`` it, or add a ``new`` one."""
    if effect is None or effect.other is None:
        return "new"
    return "reaffirm" if effect.effect == "reaffirm" else "supersede"


# what ``engine.approval_effects`` reads of a held row (its key and start, and its value for a reaffirmation)
EFFECT_FIELDS = ("subject", "predicate", "value_key", "object", "valid_from", "created_at")


def supersede_counts(agent_id: str, requests: Iterable[ApprovalRequest]) -> dict[int, int]:
    """For pending batches, how many believed rows approving each would supersede (its cards' ``effects``), in
    two queries and without building the cards (sorting by impact reads up to ``SORTED_MAX`` batches)."""
    reqs = list(requests)
    by_id = memories_by_id(
        agent_id, (i for r in reqs for i in (r.payload or {}).get("ids", [])), fields=EFFECT_FIELDS
    )
    effects = engine.approval_effects(agent_id, list(by_id.values()))
    return {
        r.id: sum(
            1
            for i in dict.fromkeys((r.payload or {}).get("ids", []))
            if i in by_id and effect_kind(effects.get(i)) == "supersede"
        )
        for r in reqs
    }


def batch_cards(
    agent_id: str, requests: Iterable[ApprovalRequest], *, now: datetime, actor: str = ""
) -> list[BatchCard]:
    """Cards for ``requests``: their rows in one query, and for the pending ones what approving would change
    in one more (the same answer as ``engine.approval_preview``, batched over the page instead of one query
    per fact)."""
    reqs = list(requests)
    wanted = {i for r in reqs for i in (r.payload or {}).get("ids", []) if isinstance(i, str)}
    by_id = memories_by_id(agent_id, wanted)
    pending_rows = [
        by_id[i]
        for r in reqs
        if r.status == ApprovalRequest.PENDING
        for i in (r.payload or {}).get("ids", [])
        if i in by_id
    ]
    effects = engine.approval_effects(agent_id, pending_rows)
    cards = []
    for r in reqs:
        ids = [i for i in (r.payload or {}).get("ids", []) if isinstance(i, str)]
        rows = sorted((by_id[i] for i in dict.fromkeys(ids) if i in by_id), key=_fact_order)
        facts = []
        for m in rows:
            preview = FactPreview(engine.MemoryRecord.from_model(m))
            effect = effects.get(m.id) if r.status == ApprovalRequest.PENDING else None
            kind = effect_kind(effect)
            if effect is not None and effect.other is not None:
                record = engine.MemoryRecord.from_model(effect.other)
                if kind == "reaffirm":
                    preview.reaffirms = record
                else:
                    preview.supersedes = record
            facts.append(preview)
        missing = [i for i in ids if i not in by_id]
        cards.append(BatchCard(r, now, actor=actor, facts=facts, missing_ids=missing))
    return cards


def _fact_order(m: Memory) -> tuple[datetime, str]:
    return (m.valid_from or m.created_at, m.id)
