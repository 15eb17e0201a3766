"""Template helpers of the queue component (``{% load queue %}``). Everything returned is escaped."""

from __future__ import annotations

import functools
from typing import Any

from django import template
from django.utils.html import format_html_join
from django.utils.safestring import SafeString

from review.queue import QueueKind

register = template.Library()


@register.filter
def countdown(seconds: Any, expired: str = "expired") -> str:
    """Time left as a card's countdown shows it (static/js/queue.js keeps the same format); ``expired`` at
    zero (the queue's ``expired_text``)."""
    try:
        left = max(0, int(seconds))
    except (TypeError, ValueError):
        return ""
    if left <= 0:
        return expired
    hours, rest = divmod(left, 3600)
    minutes, secs = divmod(rest, 60)
    if hours >= 48:
        return f"{hours // 24} d {hours % 24} h left"
    if hours:
        return f"{hours} h {minutes:02d} min left"
    return f"{minutes} min {secs:02d} s left"


@register.filter
def part(kind: QueueKind, name: str) -> str:
    """The queue kind's partial ``name`` (its evidence card, filters, …), for ``{% include %}``."""
    return f"{kind.parts}#{name}"


@register.filter
def noun(count: Any, kind: QueueKind) -> str:
    """The kind's noun for ``count`` items: "batch" or "batches"."""
    return kind.noun if count == 1 else kind.nouns


@register.simple_tag
def queue_url(kind: QueueKind, action: str, agent_id: str, item_id: int | None = None) -> str:
    """``QueueKind.url``: the list, the bulk page, the decision log, or an item's action."""
    return kind.url(action, agent_id, item_id)


@register.filter
def lookup(mapping: Any, key: Any) -> Any:
    """``mapping[key]``, or "" when it has no such key."""
    try:
        return mapping.get(key, "")
    except AttributeError:
        return ""


@register.filter
def options(choices: Any) -> SafeString:
    """``<option>`` elements for (value, label) pairs, none selected: built once per list of choices (every
    card of a page offers the same reasons)."""
    return _options(tuple((str(v), str(label)) for v, label in choices))


@functools.lru_cache(maxsize=64)
def _options(choices: tuple[tuple[str, str], ...]) -> SafeString:
    return format_html_join("", '<option value="{}">{}</option>', choices)
