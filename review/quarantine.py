"""The quarantine desk (SPEC D3, P8) as a queue kind: batches the burst guard held back, decided through
``engine.quarantine_*``. Its parts (intro, filters, the evidence card) are in templates/review/_quarantine.html.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.urls import reverse
from django.utils import timezone

from dashboard.selectors import origin_classes
from memory import engine
from memory.config import guard_settings
from memory.models import ApprovalRequest

from . import selectors
from .forms import QuarantineFilterForm, quarantine_reasons
from .queue import Outcome, QueueCard, QueueKind

EXPIRING_CHOICES = (1, 2, 6, 12, 24)


def batch_facts(batch: ApprovalRequest) -> str:
    n = len(batch.payload.get("ids", []))
    return f"{n} fact{'s' if n != 1 else ''} about “{batch.subject}”"


class QuarantineDesk(QueueKind):
    name = "quarantine"
    title = "quarantine desk"
    short_title = "Quarantine"
    noun, nouns = "batch", "batches"
    dom = "batch"
    parts = "review/_quarantine.html"
    count_template = "review/_quarantine_count.html"
    nav_count = "pending_batches"
    filter_form = QuarantineFilterForm
    item_filter = "batch"
    bulk_keys = ("origin_class", "origin", "q", "expiring", "batch")
    claim_secs = engine.CLAIM_SECS
    undo_secs = engine.UNDO_SECS
    bulk_max = engine.MAX_BULK
    card_class = selectors.BatchCard
    order_text = "soonest expiry first"
    expiry_outcome = "Rejected automatically"
    expired_text = "expired — rejected automatically"
    approve_effect = "approved (released to the agent)"
    reject_effect = "rejected (retracted, trust crushed)"
    high_impact_text = "that would supersede current facts"

    per_fact = True
    lazy_bodies = True
    can_take_over = True
    revertable = True
    revert_text = (
        "Takes this decision back by the opposite one: an approval's facts are retracted, a rejection's are "
        "released (never facts an origin purge retracted since). A new decision, on record in the audit log."
    )

    def items(self, agent_id: str, filters: dict[str, Any], *, now: datetime) -> Any:
        qs = selectors.filtered_requests(agent_id, filters, status=filters["status"], now=now)
        if filters.get("sort") in ("size", "impact"):
            return selectors.sorted_requests(agent_id, qs, sort=filters["sort"], now=now)
        return qs

    def item(self, agent_id: str, item_id: int) -> ApprovalRequest | None:
        return selectors.approval_request(agent_id, item_id)

    def cards(
        self, agent_id: str, items: Iterable[ApprovalRequest], *, now: datetime, actor: str
    ) -> list[QueueCard]:
        cards = selectors.batch_cards(agent_id, items, now=now, actor=actor)
        tokens = selectors.origin_tokens(agent_id, (c.request.origin for c in cards))
        for c in cards:
            c.token = tokens.get(c.request.origin)
        return list(cards)

    def pending_count(self, agent_id: str) -> int:
        return selectors.pending_batch_count(agent_id)

    def bulk_items(self, agent_id: str, filters: dict[str, Any], *, now: datetime) -> list[ApprovalRequest]:
        return selectors.decidable_requests(agent_id, filters, now=now)

    def high_impact(
        self, agent_id: str, items: list[ApprovalRequest], *, decision: str, now: datetime
    ) -> list[tuple[int, int]]:
        """An approval that would supersede current facts is decided one by one; a rejection changes nothing
        agents read, so it never is high impact."""
        if decision != "approve":
            return []
        cards = selectors.batch_cards(agent_id, items, now=now)
        return [(c.id, c.effects["supersede"]) for c in cards if c.effects["supersede"]]

    def page_context(self, agent_id: str) -> dict[str, Any]:
        origins = selectors.approval_origins(agent_id)
        return {
            "origins": origins,
            "origin_classes": origin_classes(origins),
            "guard": guard_settings(),
            "expiring_choices": EXPIRING_CHOICES,
        }

    def reasons(self, decision: str) -> list[tuple[str, str]]:
        return quarantine_reasons(decision)

    def log_url(self, agent_id: str, item_id: int | None = None) -> str:
        url = reverse("dashboard:audit", args=[agent_id])
        return url if item_id is None else f"{url}?batch={item_id}"

    def approve_parts(
        self, item: ApprovalRequest, *, actor: str, reason: str, parts: list[str]
    ) -> ApprovalRequest:
        return engine.quarantine_approve(request_id=item.id, actor=actor, reason=reason, memory_ids=parts)

    def default_reason(self, item: ApprovalRequest, decision: str, parts: list[str] | None = None) -> str:
        """An approval that supersedes no current fact needs no reason (it is recorded as ``verified``); one
        that would replace what the agent believes now must say why. Rejections always do."""
        if decision != "approve" or item.status != ApprovalRequest.PENDING:
            return ""
        (card,) = selectors.batch_cards(item.agent_id, [item], now=timezone.now())
        chosen = set(parts) if parts is not None else None
        supersedes = any(f.effect == "supersede" for f in card.facts if chosen is None or f.row.id in chosen)
        return "" if supersedes else "verified"

    def decide(self, item: ApprovalRequest, *, decision: str, actor: str, reason: str) -> ApprovalRequest:
        act = engine.quarantine_approve if decision == "approve" else engine.quarantine_reject
        return act(request_id=item.id, actor=actor, reason=reason)

    def revert(self, item: ApprovalRequest, *, actor: str, reason: str) -> ApprovalRequest:
        return engine.quarantine_revert(request_id=item.id, actor=actor, reason=reason)

    def reverted_note(self, item: ApprovalRequest) -> str:
        verb = "released" if item.status == ApprovalRequest.APPROVED else "retracted"
        return f"Reverted batch #{item.id}: {batch_facts(item)} {verb}; a new decision, on record."

    def claim(self, item: ApprovalRequest, *, actor: str) -> ApprovalRequest:
        return engine.quarantine_claim(request_id=item.id, actor=actor)

    def take_over(self, item: ApprovalRequest, *, actor: str) -> ApprovalRequest:
        return engine.quarantine_claim(request_id=item.id, actor=actor, take_over=True)

    def release(self, item: ApprovalRequest, *, actor: str) -> ApprovalRequest:
        return engine.quarantine_release(request_id=item.id, actor=actor)

    def undo(self, item: ApprovalRequest, *, actor: str) -> ApprovalRequest:
        return engine.quarantine_undo(request_id=item.id, actor=actor)

    def bulk(self, agent_id: str, ids: list[int], *, decision: str, actor: str, reason: str) -> list[Outcome]:
        outcomes = engine.quarantine_bulk(
            agent_id=agent_id, request_ids=ids, decision=decision, actor=actor, reason=reason
        )
        return [
            Outcome(
                o.request_id, o.outcome, selectors.APPROVAL_LABELS.get(o.outcome, o.outcome), o.code, o.holder
            )
            for o in outcomes
        ]

    def decided_note(self, item: ApprovalRequest, decision: str, parts: list[str] | None = None) -> str:
        facts = batch_facts(item)
        n = len({*item.payload.get("ids", []), *item.payload.get("plain_ids", [])})
        if decision == "approve" and parts is not None and len(set(parts)) < n:
            kept = len(set(parts))
            return (
                f"Approved {kept} of {n} facts about “{item.subject}”: released to the agent; the other "
                f"{n - kept} rejected."
            )
        if decision == "approve":
            return f"Approved: {facts} released to the agent."
        return f"Rejected: {facts} retracted."

    def undone_note(self, item: ApprovalRequest) -> str:
        return f"Undone: {batch_facts(item)} are held again (batch #{item.id}, claimed by you)."


DESK = QuarantineDesk()
