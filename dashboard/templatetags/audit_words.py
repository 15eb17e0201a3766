"""The audit log in people's words (issue 19 item 14, ``{% load audit_words %}``): "Rejected", not
``quarantine_denied``; what changed, before and after. The stored action code stays in the row's
``data-action`` and the badge's title, so filters and scripts keep working."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()

ACTION_WORDS = {
    "knowledge_quarantined": "Held for review",
    "quarantine_approved": "Approved",
    "quarantine_denied": "Rejected",
    "quarantine_expired": "Rejected automatically (time ran out)",
    "quarantine_undo": "Undid a decision",
    "quarantine_reverted": "Reverted a decision",
    "quarantine_claimed": "Claimed",
    "quarantine_released": "Released a claim",
    "quarantine_taken_over": "Took over a claim",
    "prompt_injection": "Dropped a prompt injection",
    "origin_purge": "Purged an origin",
    "token_create": "Created a token",
    "token_revoke": "Revoked a token",
    "import": "Imported",
    "curator_retract": "Retracted",
    "curator_restore": "Restored a fact",
    "alias_add": "Merged entities",
    "merge_undone": "Merge undone",
    "review_proposed": "Proposed for review",
    "review_approved": "Approved",
    "review_rejected": "Rejected",
    "review_applied": "Applied automatically",
    "review_undo": "Undid a decision",
    "review_reverted": "Reverted a decision",
    "review_claimed": "Claimed",
    "review_released": "Released a claim",
    "review_reminded": "Reminded",
    "review_restore": "Restored",
    "verdict_undo": "Undid a verdict",
    "wiki_promote": "Promoted a wiki page",
    "wiki_remove": "Removed a wiki page",
    "wiki_restore": "Restored a wiki page",
    "wiki_revise": "Revised a wiki page",
    "wiki_publish": "Published a wiki page",
    "wiki_propose": "Proposed a wiki page",
    "dream_run": "Ran a dream pass",
    "dream_mode_set": "Changed the dream mode",
    "mistake_recorded": "Recorded a mistake",
    "expire_by_subject": "Expired facts about a subject",
}

STATUS_WORDS = {
    "pending": "pending",
    "approved": "approved",
    "denied": "rejected",
    "expired": "rejected (time ran out)",
    "rejected": "rejected",
    "applied": "applied",
}


@register.filter
def action_words(action: Any) -> str:
    """An audit action as people say it; an unknown code becomes a sentence of its words."""
    code = str(action or "")
    return ACTION_WORDS.get(code) or code.replace("_", " ").capitalize()


@register.filter
def before_after(event: Any) -> tuple[str, str] | None:
    """What the event changed, as (before, after) in words, for the decisions and claims that say so."""
    action, d = event.action, event.details or {}
    if action.startswith("quarantine_") and action[11:] in ("approved", "denied", "expired"):
        after = STATUS_WORDS[action[11:]]
        if d.get("rejected_ids"):
            after = f"{len(d.get('approved_ids') or [])} approved, {len(d['rejected_ids'])} rejected"
        return ("pending", after)
    if action == "quarantine_undo":
        return (STATUS_WORDS.get(d.get("undone", ""), d.get("undone", "")), "pending")
    if action == "quarantine_reverted":
        return (STATUS_WORDS.get(d.get("reverted", ""), ""), STATUS_WORDS.get(d.get("status", ""), ""))
    if action == "quarantine_taken_over":
        return (f"claimed by {d.get('taken_from', '')}", f"claimed by {event.actor}")
    if action == "knowledge_quarantined":
        return ("—", "held")
    if action in ("alias_add", "merge_undone") and d.get("alias") and d.get("canonical"):
        alone = f"“{d['alias']}” on its own"
        if d.get("previous_canonical"):
            alone = f"“{d['alias']}” = “{d['previous_canonical']}”"
        merged = f"“{d['alias']}” = “{d['canonical']}”"
        return (alone, merged) if action == "alias_add" else (merged, alone)
    if action == "curator_restore":
        return ("retracted", "believed")
    if action == "origin_purge":
        return (f"{len(d.get('retracted') or [])} believed", f"{len(d.get('retracted') or [])} retracted")
    return None
