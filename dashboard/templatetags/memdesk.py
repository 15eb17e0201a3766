"""Small presentation helpers. Everything returned here is escaped; stored text is never marked safe."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils.html import format_html

from memory.engine import origin_class as _origin_class

register = template.Library()

STATUS_HELP = {
    "current": "Believed and valid now.",
    "superseded": "Replaced by a later row of the same key.",
    "expired": "Its valid interval has ended.",
    "future": "Valid from a time that has not come yet.",
    "quarantined": "Held for review; invisible to agents until a verdict.",
    "retracted": "Removed from belief by a purge or a reject; kept in history.",
}


def _as_datetime(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


@register.filter
def when(value: Any, empty: str = "—") -> str:
    """A UTC timestamp as ``<time>``; ISO strings (from JSON columns) are accepted too."""
    moment = _as_datetime(value)
    if moment is None:
        return format_html("<span class='muted'>{}</span>", value if value not in (None, "") else empty)
    moment = moment.astimezone(UTC)
    return format_html(
        '<time datetime="{}">{}</time>', moment.isoformat(), moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    )


@register.filter
def isoutc(value: Any) -> str:
    """A datetime as ISO 8601 in UTC (``2024-05-01T12:00:00Z``): the value of the ISO time inputs."""
    moment = _as_datetime(value)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else ""


@register.filter
def dtlocal(value: Any) -> str:
    """A datetime as the value of an ``<input type="datetime-local">`` (UTC)."""
    moment = _as_datetime(value)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S") if moment else ""


@register.filter
def origin_class(value: Any) -> str:
    return _origin_class(str(value or ""))


@register.filter
def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


@register.filter
def status_help(status: str) -> str:
    return STATUS_HELP.get(status, "")


@register.simple_tag
def timeline_url(agent_id: str, subject: str | None, predicate: str | None, **extra: Any) -> str:
    params = {"subject": subject or "", "predicate": predicate or ""}
    params.update({k: v for k, v in extra.items() if v})
    return reverse("dashboard:timeline", args=[agent_id]) + "?" + urlencode(params)


@register.inclusion_tag("dashboard/_status.html")
def status_badge(status: str) -> dict[str, str]:
    return {"status": status, "help": STATUS_HELP.get(status, "")}


@register.filter
def status_at(record: Any, now: datetime) -> str:
    """``MemoryRecord.status_at(now)`` for templates."""
    return str(record.status_at(now))


@register.filter
def get_related(related: Any, memory_id: Any) -> Any:
    """``RelatedRows.get(id)`` for templates."""
    return related.get(memory_id) if related is not None and isinstance(memory_id, str) else None


CONSOLIDATED_PREFIX = "consolidated:"


@register.filter
def consolidated_into(resolution: Any) -> str:
    """The rule memory id of a mistake resolved by consolidation (``consolidated:<id>``), else ""."""
    text = str(resolution or "")
    return text[len(CONSOLIDATED_PREFIX) :] if text.startswith(CONSOLIDATED_PREFIX) else ""


@register.filter
def token_state(token: Any, now: datetime) -> str:
    """``revoked``, ``expired`` or ``active``."""
    if token.revoked_at is not None:
        return "revoked"
    if token.expires_at is not None and token.expires_at <= now:
        return "expired"
    return "active"


# --- times for scripts ------------------------------------------------------------------------------------


@register.filter
def iso(value: Any) -> str:
    """A datetime as ISO 8601 in UTC (for ``data-*`` attributes read by scripts)."""
    moment = _as_datetime(value)
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z") if moment else ""


# --- dream run reports (operations page) -------------------------------------------------------------------


def _plain(value: Any) -> str:
    if isinstance(value, dict):
        return " · ".join(f"{k} {_plain(v)}" for k, v in value.items()) or "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "—"
    return str(value)


@register.filter
def report_counts(counts: Any) -> list[tuple[str, str]]:
    """A phase report's counts as (label, text) pairs; nested counts read "a 1 · b 0"."""
    if not isinstance(counts, dict):
        return []
    return [(str(k).replace("_", " "), _plain(v)) for k, v in counts.items()]


@register.filter
def report_item(item: Any) -> str:
    """One item of a phase report as one line of text (escaped by the template)."""
    if not isinstance(item, dict):
        return str(item)
    kind = item.get("type", "")
    rest = {k: v for k, v in item.items() if k not in ("type", "fix", "kind")}
    if kind == "insight":
        return str(item.get("text", ""))
    if "title" in rest:
        return f"{kind}: {rest['title']} ({rest.get('outcome', '')}; {rest.get('routing', '')})"
    return f"{kind}: " + ", ".join(f"{k} {_plain(v)}" for k, v in rest.items())


@register.filter
def phase_of(phases: Any, name: str) -> Any:
    """A run's report of phase ``name`` (None until the phase has run)."""
    return phases.get(name) if isinstance(phases, dict) else None


_HIGHLIGHT_TERMS = 12


@register.filter
def highlight(text: Any, query: Any) -> str:
    """``text`` escaped, with each word of the search ``query`` (2+ characters; ``_`` splits words, as in the
    index) wrapped in ``<mark>``, case-insensitively (issue 19 item 8)."""
    import re

    from django.utils.html import escape
    from django.utils.safestring import mark_safe

    value = "" if text is None else str(text)
    words = sorted(
        {w for w in re.findall(r"[^\W_]+", str(query or "")) if len(w) >= 2}, key=len, reverse=True
    )[:_HIGHLIGHT_TERMS]
    if not words:
        return escape(value)
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    out, last = [], 0
    for match in pattern.finditer(value):
        out.append(escape(value[last : match.start()]))
        out.append(f"<mark>{escape(match.group())}</mark>")
        last = match.end()
    out.append(escape(value[last:]))
    return mark_safe("".join(out))  # noqa: S308 - every piece above is escaped


@register.simple_tag
def tainted_badge(row: Any) -> str:
    """A "tainted" badge for a row derived from a purged source (issue 19 item 9), else nothing."""
    from memory.engine import is_tainted

    if not is_tainted(row):
        return ""
    return format_html(
        '<span class="badge status-retracted" data-tainted="true" title="{}">tainted</span>',
        "Derived from a purged or rejected source: its trust was crushed; check it before relying on it.",
    )


@register.simple_tag
def iso_pattern() -> str:
    """The ``pattern`` of the ISO 8601 time inputs (dashboard.forms.ISO_PATTERN)."""
    from dashboard.forms import ISO_PATTERN

    return ISO_PATTERN
