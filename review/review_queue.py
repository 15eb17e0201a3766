"""The review queue (SPEC D2, B7) as a queue kind: what the background track must not decide alone (conflict
verdicts, lint findings, low-confidence facts, attitude and skill changes), decided through
``engine.review_*``. Reviewers decide, edit conflicts before approving them and revert applied items; viewers
read. Its parts (intro, filters, the evidence card, the edit form) are in templates/review/_review.html.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.urls import reverse

from memory import engine
from memory.models import ReviewItem, Role

from . import review_selectors as selectors
from .forms import REVIEW_KIND_LABELS, REVIEW_SORTS, EditForm, ReviewFilterForm, review_reasons
from .queue import Outcome, QueueCard, QueueKind

APPROVE_EFFECT = {
    "conflict": "applied (the judge's verdict)",
    "lint": "fixed as proposed",
    "low_confidence": "confirmed",
}
REJECT_EFFECT = {
    "conflict": "dismissed (nothing changes; never proposed again)",
    "lint": "dismissed",
    "low_confidence": "retracted",
}


def _label(item: Any) -> str:
    title = (item.title or REVIEW_KIND_LABELS.get(item.kind, item.kind)).strip()
    return f"#{item.id} “{title[:120]}”"


class ReviewQueue(QueueKind):
    name = "review"
    title = "review queue"
    short_title = "Review"
    noun, nouns = "item", "items"
    dom = "item"
    parts = "review/_review.html"
    count_template = "review/_review_count.html"
    nav_count = "pending_review"
    filter_form = ReviewFilterForm
    item_filter = "item"
    bulk_keys = ("kind", "conf_min", "conf_max", "impact", "run", "q", "item")
    card_class = selectors.ReviewCard
    read_role = Role.VIEWER
    page_size = 10
    edit_form = EditForm
    revertable = True
    expiry_decides = False
    claim_secs = engine.REVIEW_CLAIM_SECS
    undo_secs = engine.REVIEW_UNDO_SECS
    bulk_max = engine.REVIEW_MAX_BULK
    order_text = "lowest confidence first"
    expiry_outcome = "A reminder goes out (it stays pending)"
    expired_text = "overdue: reminder sent"
    approve_effect = "approved (each applied as proposed)"
    reject_effect = "rejected (conflicts and findings dismissed, low-confidence facts retracted)"
    high_impact_text = "of high impact"
    log_text = "Decision log"
    sort_texts = REVIEW_SORTS
    ttl_days = engine.REVIEW_TTL_DAYS
    high_impact_at = selectors.HIGH_IMPACT
    kind_names = selectors.KIND_NAMES

    # reads -------------------------------------------------------------------------------------------------

    def items(self, agent_id: str, filters: dict[str, Any], *, now: datetime) -> Any:
        return selectors.IdsFirst(selectors.review_items(agent_id, filters, status=filters["status"]))

    def item(self, agent_id: str, item_id: int) -> ReviewItem | None:
        return selectors.review_item(agent_id, item_id)

    def cards(
        self, agent_id: str, items: Iterable[ReviewItem], *, now: datetime, actor: str
    ) -> list[QueueCard]:
        return list(selectors.review_cards(agent_id, items, now=now, actor=actor))

    def pending_count(self, agent_id: str) -> int:
        return selectors.pending_review_count(agent_id)

    def bulk_items(self, agent_id: str, filters: dict[str, Any], *, now: datetime) -> list[ReviewItem]:
        return selectors.decidable_items(agent_id, filters)

    def high_impact(
        self, agent_id: str, items: list[ReviewItem], *, decision: str, now: datetime
    ) -> list[tuple[int, int]]:
        """Items whose impact reaches the policy's threshold are decided one by one, whichever the decision
        (a rejection retracts low-confidence facts)."""
        return [(i.id, i.impact) for i in items if i.impact >= selectors.HIGH_IMPACT]

    def page_context(self, agent_id: str) -> dict[str, Any]:
        by_kind = selectors.pending_by_kind(agent_id)
        runs = selectors.recent_runs(agent_id)
        return {
            "kind_choices": [(k, label, by_kind.get(k, 0)) for k, label in REVIEW_KIND_LABELS.items()],
            "runs": runs,
            "run_ids": [r[0] for r in runs],
            "sorts": list(REVIEW_SORTS.items()),
        }

    def reasons(self, decision: str) -> list[tuple[str, str]]:
        return review_reasons(decision)

    def log_url(self, agent_id: str, item_id: int | None = None) -> str:
        url = reverse("review:review_log", args=[agent_id])
        return url if item_id is None else f"{url}?item={item_id}"

    # changes, through the engine -----------------------------------------------------------------------------

    def _fresh(self, record: engine.ReviewRecord) -> ReviewItem:
        item = self.item(record.agent_id, record.id)
        assert item is not None  # the engine just returned it
        return item

    def decide(self, item: ReviewItem, *, decision: str, actor: str, reason: str) -> ReviewItem:
        record = engine.review_decide(
            item_id=item.id, decision=decision, actor=actor, reason=reason, agent_id=item.agent_id
        )
        return self._fresh(record)

    def approve_edited(
        self, item: ReviewItem, *, actor: str, reason: str, edited: dict[str, Any]
    ) -> ReviewItem:
        record = engine.review_decide(
            item_id=item.id,
            decision="approve",
            actor=actor,
            reason=reason,
            edited=edited,
            agent_id=item.agent_id,
        )
        return self._fresh(record)

    def claim(self, item: ReviewItem, *, actor: str) -> ReviewItem:
        return self._fresh(engine.review_claim(item_id=item.id, actor=actor, agent_id=item.agent_id))

    def release(self, item: ReviewItem, *, actor: str) -> ReviewItem:
        return self._fresh(engine.review_release(item_id=item.id, actor=actor, agent_id=item.agent_id))

    def undo(self, item: ReviewItem, *, actor: str) -> ReviewItem:
        return self._fresh(engine.review_undo(item_id=item.id, actor=actor, agent_id=item.agent_id))

    def revert(self, item: ReviewItem, *, actor: str, reason: str) -> ReviewItem:
        record = engine.review_revert(item_id=item.id, actor=actor, reason=reason, agent_id=item.agent_id)
        return self._fresh(record)

    def bulk(self, agent_id: str, ids: list[int], *, decision: str, actor: str, reason: str) -> list[Outcome]:
        outcomes = engine.review_bulk(
            agent_id=agent_id, item_ids=ids, decision=decision, actor=actor, reason=reason
        )
        return [
            Outcome(o.item_id, o.outcome, selectors.REVIEW_LABELS.get(o.outcome, o.outcome), o.code, o.holder)
            for o in outcomes
        ]

    # words -------------------------------------------------------------------------------------------------------

    def decided_note(self, item: ReviewItem, decision: str, parts: list[str] | None = None) -> str:
        if decision == "approve":
            effect = APPROVE_EFFECT.get(item.kind, "approved")
            if item.kind == "conflict":
                verdict = (item.payload or {}).get("action", {}).get("verdict") or "the verdict"
                effect = f"{verdict} applied"
            return f"Approved {_label(item)}: {effect}."
        return f"Rejected {_label(item)}: {REJECT_EFFECT.get(item.kind, 'dismissed')}."

    def edited_note(self, item: ReviewItem) -> str:
        edited = item.edited or {}
        note = f"Approved {_label(item)} with your edit: {edited.get('verdict') or 'the verdict'} applied"
        if edited.get("content"):
            note += f", the value corrected to “{str(edited.get('object') or edited['content'])[:120]}”"
        return note + "."

    def undone_note(self, item: ReviewItem) -> str:
        return f"Undone: {_label(item)} is pending again, claimed by you."

    def reverted_note(self, item: ReviewItem) -> str:
        return f"Reverted {_label(item)}: what it changed is restored (a new decision, on record)."

    def undo_text(self, item: Any, decision: str) -> str:
        return f"Undo the {'approval' if decision == 'approve' else 'rejection'} of item #{item.id}"


QUEUE = ReviewQueue()
