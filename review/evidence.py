"""What a review item's evidence card draws, computed on the server: a word diff of the old and new text, the
triple's differences, and both valid intervals on one small time axis (inline SVG, no chart library).

Pure functions over the item's payload: no query. Templates escape every piece of text they are given.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

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
