"""Template helpers of the queue component (``{% load queue %}``). Everything returned is escaped."""

from __future__ import annotations

import functools
import re
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


_BURST = re.compile(
    r"^burst: (?P<count>\d+) (?:facts about '(?P<subject>.*)'|plain memories) from (?P<who>.+) "
    r"within (?P<secs>\d+) s \(limit (?P<limit>\d+)\)$",
    re.S,
)
_LOW_TRUST = re.compile(
    r"^low_trust_override: a write at trust (?P<trust>[\d.]+) would supersede (?P<row>\S+) "
    r"\((?P<origin>[^,]+), trust (?P<other>[\d.]+)\); the margin is (?P<margin>[\d.]+)$",
    re.S,
)


def _span(secs: int) -> str:
    if secs % 3600 == 0:
        hours = secs // 3600
        return "1 hour" if hours == 1 else f"{hours} hours"
    if secs % 60 == 0:
        minutes = secs // 60
        return "1 minute" if minutes == 1 else f"{minutes} minutes"
    return f"{secs} seconds"


@register.filter
def guard_words(reason: Any) -> str:
    """Why the guard held a batch, as a sentence ("6 facts about “alice” in 1 hour; the limit is 5") instead of
    the code the engine records; an unknown reason is returned as it is."""
    text = str(reason or "").strip()
    if not text:
        return "The burst guard held it back."
    if m := _BURST.match(text):
        what = f"facts about “{m['subject']}”" if m["subject"] is not None else "plain memories"
        return (
            f"{m['count']} {what} from {m['who']} in {_span(int(m['secs']))}; the limit is {m['limit']}, so a "
            "person decides."
        )
    if m := _LOW_TRUST.match(text):
        return (
            f"A source trusted {m['trust']} would replace what {m['origin']} (trusted {m['other']}) said: a "
            f"source less trusted by {m['margin']} or more may not override it without a person."
        )
    if text == "guard_unavailable":
        return "The burst guard could not count this write, so it was held to be safe."
    if text.startswith("possible_injection"):
        return "The injection scan found it suspicious, so it was held for a person."
    return text
