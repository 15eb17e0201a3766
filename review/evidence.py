"""What a review item's evidence card draws, computed on the server: a word diff of the old and new text, the
triple's differences, and both valid intervals on one small time axis (inline SVG, no chart library).

Pure functions over the item's payload: no query. The sides and the axis are built as HTML here (with
``format_html``: every stored value is escaped), because a page shows twenty cards and the template engine
would spend most of the page's time on them.
"""

from __future__ import annotations

import difflib
import functools
import html
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode

from django.urls import get_script_prefix, reverse
from django.utils.html import conditional_escape
from django.utils.http import RFC3986_SUBDELIMS
from django.utils.safestring import SafeString, mark_safe

from memory.engine import origin_class

# CJK characters diff one by one (Chinese has no spaces between words); words, spaces and marks as units
TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]|\w+|\s+|[^\w\s]")
TRIPLE = ("subject", "predicate", "object")


@dataclass(frozen=True)
class Segment:
    """A run of text on one side of a diff: ``same``, ``del`` (only in the old text) or ``ins`` (only new)."""

    text: str
    op: str


def text_diff(old: str, new: str) -> tuple[list[Segment], list[Segment]]:
    """The old text with what the new one drops marked ``del``, and the new text with what it adds marked
    ``ins``: word by word (character by character in CJK runs)."""
    a, b = TOKEN.findall(old or ""), TOKEN.findall(new or "")
    left: list[Segment] = []
    right: list[Segment] = []
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        # a lone space between two changes belongs to the change: "<del>Cloudflare Workers</del>"
        inner = 0 < k < len(ops) - 1
        if tag == "equal" and not (inner and "".join(a[i1:i2]).isspace()):
            _add(left, "".join(a[i1:i2]), "same")
            _add(right, "".join(b[j1:j2]), "same")
            continue
        if i2 > i1:
            _add(left, "".join(a[i1:i2]), "del")
        if j2 > j1:
            _add(right, "".join(b[j1:j2]), "ins")
    return left, right


def _add(out: list[Segment], text: str, op: str) -> None:
    if not text:
        return
    if out and out[-1].op == op:
        out[-1] = Segment(out[-1].text + text, op)
    else:
        out.append(Segment(text, op))


def triple_changes(old: dict[str, Any], new: dict[str, Any]) -> set[str]:
    """The parts of the triple (subject, predicate, object) that differ between the two sides."""
    return {k for k in TRIPLE if (old.get(k) or None) != (new.get(k) or None)}


# --- the time axis ---------------------------------------------------------------------------------------------

WIDTH, LEFT, RIGHT = 560, 44, 12
ROW, TOP = 22, 8
BAR = 12


@dataclass(frozen=True)
class Bar:
    """One side's valid interval on the axis, in SVG units."""

    label: str
    y: int
    x: float
    width: float
    open_end: bool  # valid until further notice: drawn to "now" and marked open
    starts: datetime | None
    ends: datetime | None
    css: str

    @property
    def text_y(self) -> int:
        return self.y + BAR - 2

    @property
    def end_x(self) -> float:
        return round(self.x + self.width, 1)

    @property
    def arrow_points(self) -> str:
        """A small arrowhead after an open interval's end (it goes on past now)."""
        x, y = self.end_x, self.y
        return f"{x},{y} {round(x + 7, 1)},{y + BAR / 2} {x},{y + BAR}"


@dataclass(frozen=True)
class Tick:
    x: float
    text: str
    anchor: str


@dataclass(frozen=True)
class Axis:
    bars: list[Bar]
    ticks: list[Tick]
    now_x: float | None
    height: int
    width: int = WIDTH
    left: int = LEFT
    bar: int = BAR

    @property
    def baseline_y(self) -> int:
        return self.height - 18

    @property
    def tick_text_y(self) -> int:
        return self.height - 4

    @property
    def right_x(self) -> int:
        return self.width - RIGHT


def parse_time(value: Any) -> datetime | None:
    """A payload time (ISO string or datetime) as an aware UTC datetime, or None."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str) and value:
        try:
            moment = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
        except ValueError:
            return None
    else:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


def time_axis(sides: list[tuple[str, dict[str, Any]]], now: datetime) -> Axis | None:
    """Both sides' valid intervals ``[valid_from, valid_until)`` on one axis from the earliest start to the
    latest end (or ``now`` for an open interval). A side without ``valid_from`` starts at its ingestion.
    None when no side has a time to draw."""
    spans = []
    for label, side in sides:
        start = parse_time(side.get("valid_from")) or parse_time(side.get("ingested_at"))
        end = parse_time(side.get("valid_until"))
        if start is None:
            continue
        spans.append((label, start, end))
    if not spans:
        return None
    lo = min(s for _, s, _ in spans)
    hi = max([e or now for _, _, e in spans] + [s for _, s, _ in spans] + [now])
    if hi - lo < timedelta(days=1):
        hi = lo + timedelta(days=1)
    pad = (hi - lo) * 0.04
    lo, hi = lo - pad, hi + pad
    span = (hi - lo).total_seconds()
    usable = WIDTH - LEFT - RIGHT

    def x(moment: datetime) -> float:
        return round(LEFT + usable * (moment - lo).total_seconds() / span, 1)

    bars = []
    for k, (label, start, end) in enumerate(spans):
        x0 = x(start)
        x1 = x(end or max(now, start))
        bars.append(
            Bar(
                label=label,
                y=TOP + k * ROW,
                x=x0,
                width=max(2.0, round(x1 - x0, 1)),
                open_end=end is None,
                starts=start,
                ends=end,
                css=f"axis-bar axis-{label}",
            )
        )
    height = TOP + len(bars) * ROW + 22
    mid = lo + (hi - lo) / 2
    ticks = [
        Tick(float(LEFT), _date(lo + pad), "start"),
        Tick(x(mid), _date(mid), "middle"),
        Tick(float(WIDTH - RIGHT), _date(hi - pad), "end"),
    ]
    now_x = x(now) if lo <= now <= hi else None
    return Axis(bars=bars, ticks=ticks, now_x=now_x, height=height)


def _date(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d")


# --- as HTML: the card's heaviest parts, built here rather than in templates (a page shows 20 cards) -----------


def format_html(format_string: str, *args: Any) -> SafeString:
    """``django.utils.html.format_html`` with the same output (each argument as ``conditional_escape`` gives
    it: its ``__html__()`` when it has one, else ``html.escape`` of its text), without the lazy-argument
    wrappers around every escape: a review page calls it some 700 times (≈ 15 % of the page's time). A test
    pins it equal to Django's."""
    return SafeString(format_string.format(*[_escaped(a) for a in args]))


def _escaped(value: Any) -> str:
    as_html = getattr(value, "__html__", None)
    return str(as_html()) if as_html is not None else html.escape(str(value))


def _when(value: Any, empty: str = "—") -> SafeString:
    """A time as ``<time>`` (like the ``when`` filter), or ``empty``."""
    moment = parse_time(value)
    if moment is None:
        return format_html('<span class="muted">{}</span>', empty)
    return format_html(
        '<time datetime="{}">{}</time>', moment.isoformat(), moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    )


def _triple_part(side: dict[str, Any], name: str, changed: set[str]) -> SafeString:
    css = f"mono triple-{name}" + (" changed" if name in changed else "")
    return format_html('<span class="{}">{}</span>', css, side.get(name))


@dataclass(frozen=True)
class _AgentUrls:
    memory_prefix: str  # + the memory's id + "/"
    log: str
    timeline: str


@functools.lru_cache(maxsize=256)
def _urls(agent_id: str, script_prefix: str) -> _AgentUrls:
    """The links a side needs, reversed once per agent (a page draws twenty sides)."""
    memory = reverse("dashboard:memory", args=[agent_id, "0"])
    return _AgentUrls(
        memory_prefix=memory[: -len("0/")],
        log=reverse("review:review_log", args=[agent_id]),
        timeline=reverse("dashboard:timeline", args=[agent_id]),
    )


def side_html(
    agent_id: str,
    side: dict[str, Any],
    *,
    label: str,
    segments: list[Segment] | None = None,
    now_status: str = "",
    changed: set[str] | frozenset[str] = frozenset(),
) -> SafeString:
    """One side of the evidence (old, new, or a finding's fact): its text (with the diff marked), its triple
    with the parts that differ marked and a link to its timeline, its valid interval and its provenance; the
    memory's id links to the memory, and to the decisions about it. Every stored value is escaped."""
    memory_id = side.get("id") if isinstance(side.get("id"), str) else ""
    title = label.capitalize()
    head = format_html('<h3 class="side-head">{}', title)
    urls = _urls(agent_id, get_script_prefix())
    if memory_id:
        link = urls.memory_prefix + quote(memory_id, safe=RFC3986_SUBDELIMS + "~:@") + "/"
        log = urls.log + "?" + urlencode({"memory": memory_id})
        head += format_html(
            ' <a href="{}" class="mono side-link small">{}</a> <a href="{}" class="small side-log">decisions</a>',
            link,
            memory_id,
            log,
        )
    if now_status:
        head += format_html(
            ' <span class="badge status-{} side-now" title="What this memory is now">now {}</span>',
            now_status,
            now_status,
        )
    head += mark_safe("</h3>")
    if segments:
        text = mark_safe("".join(format_html(TAGS.get(s.op, "{}"), s.text) for s in segments))
    else:
        text = conditional_escape(side.get("content") or "")
    parts = [head, format_html('<p class="side-text">{}</p>', text)]
    if side.get("subject"):
        changed = set(changed)
        triple = (
            _triple_part(side, "subject", changed)
            + mark_safe(" · ")
            + _triple_part(side, "predicate", changed)
        )
        if side.get("object") is not None:
            triple += mark_safe(" · ") + _triple_part(side, "object", changed)
        timeline = (
            urls.timeline
            + "?"
            + urlencode({"subject": side.get("subject") or "", "predicate": side.get("predicate") or ""})
        )
        parts.append(
            format_html(
                '<p class="triple small">{} · <a href="{}" class="timeline-link">timeline</a></p>',
                triple,
                timeline,
            )
        )
    parts.append(
        format_html(
            '<p class="small side-valid"><span class="muted">Valid</span> {} → {}</p>',
            _when(side.get("valid_from")),
            _when(side.get("valid_until"), "open"),
        )
    )
    origin = side.get("origin") or ""
    provenance = format_html(
        '<span class="muted">From</span> <span class="mono side-origin">{}</span>', origin or "—"
    )
    if origin:
        provenance += format_html(" ({})", origin_class(str(origin)))
    trust = side.get("origin_trust")
    if isinstance(trust, int | float):
        provenance += format_html(" · trust {}", f"{trust:.2f}")
    provenance += format_html('<br><span class="muted">ingested</span> {}', _when(side.get("ingested_at")))
    if side.get("source_event"):
        provenance += format_html(
            ' · <span class="muted">event</span> <span class="mono">{}</span>', side["source_event"]
        )
    if side.get("session_id"):
        provenance += format_html(
            ' · <span class="muted">session</span> <span class="mono">{}</span>', side["session_id"]
        )
    parts.append(format_html('<p class="small provenance">{}</p>', provenance))
    aria = f"{title} {memory_id}".strip()
    return format_html(
        '<section class="side side-{}" aria-label="{}">{}</section>', label, aria, mark_safe("".join(parts))
    )


TAGS = {"del": "<del>{}</del>", "ins": "<ins>{}</ins>", "same": "{}"}


def axis_svg(axis: Axis, *, key: str, open_note: bool = True) -> SafeString:
    """The time axis as inline SVG, labelled for screen readers (a title and a description of each
    interval); ``key`` makes its ids unique on the page."""
    desc = " ".join(
        f"{b.label}: valid from {_date(b.starts) if b.starts else '?'} "
        + ("until further notice." if b.open_end else f"until {_date(b.ends) if b.ends else '?'}.")
        for b in axis.bars
    )
    body = [
        format_html('<title id="axis-{}-title">Valid intervals on one time axis</title>', key),
        format_html('<desc id="axis-{}-desc">{}</desc>', key, desc),
        format_html(
            '<line class="axis-line" x1="{}" x2="{}" y1="{}" y2="{}"></line>',
            axis.left,
            axis.right_x,
            axis.baseline_y,
            axis.baseline_y,
        ),
    ]
    for t in axis.ticks:
        body.append(
            format_html(
                '<text class="axis-tick" x="{}" y="{}" text-anchor="{}">{}</text>',
                t.x,
                axis.tick_text_y,
                t.anchor,
                t.text,
            )
        )
    for b in axis.bars:
        span = f"{b.starts:%Y-%m-%d %H:%M} → " + ("open" if b.open_end else f"{b.ends:%Y-%m-%d %H:%M}")
        bar = format_html(
            '<g class="{}" data-side="{}"><text class="axis-label" x="4" y="{}">{}</text>'
            '<rect x="{}" y="{}" width="{}" height="{}" rx="2"><title>{}: {}</title></rect>',
            b.css,
            b.label,
            b.text_y,
            b.label,
            b.x,
            b.y,
            b.width,
            axis.bar,
            b.label,
            span,
        )
        if b.open_end:
            bar += format_html('<polygon class="axis-open" points="{}"></polygon>', b.arrow_points)
        body.append(bar + mark_safe("</g>"))
    if axis.now_x is not None:
        body.append(
            format_html(
                '<line class="axis-now" x1="{}" x2="{}" y1="2" y2="{}"></line>',
                axis.now_x,
                axis.now_x,
                axis.baseline_y,
            )
        )
    caption = "World time, left to right; the dashed line is now"
    caption += "; an arrow means valid until further notice." if open_note else "."
    return format_html(
        '<figure class="time-axis"><svg viewBox="0 0 {} {}" width="100%" role="img" class="axis-svg" '
        'aria-labelledby="axis-{}-title axis-{}-desc">{}</svg>'
        '<figcaption class="small muted">{}</figcaption></figure>',
        axis.width,
        axis.height,
        key,
        key,
        mark_safe("".join(body)),
        caption,
    )
