"""The timeline chart (SPEC D7): one key's rows drawn on world time (x, when the fact was true) against record time
(y, downwards: when we learned it and when we stopped believing the row as it was), as inline SVG geometry the
template renders on the server (no chart library, no CDN).

Each row is a rectangle: its valid interval across, its believed interval down. A row the engine closed when a
later write superseded it (``invalidated_at``) is drawn twice: dashed, open to the right, for the time it was
believed as first written; solid, with its final interval, from then on. Retracted rows end at their retraction;
held (quarantined) rows are dashed and were never believed. The as-of question is a crosshair: a vertical line at
the asked world time, a horizontal one at the asked record time; the row that answers it is marked.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

WIDTH, HEIGHT = 760, 320
LEFT, RIGHT, TOP, BOTTOM = 120, 24, 16, 44
MIN_SIZE = 4.0  # px: a zero-length interval still shows
TICKS = 5


@dataclass(frozen=True)
class Box:
    row_id: str
    x: float
    y: float
    w: float
    h: float
    kind: str  # believed | first | retracted | held
    status: str
    label: str
    open_right: bool
    answer: bool


@dataclass(frozen=True)
class Tick:
    pos: float
    text: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    left: int
    top: int
    plot_w: int
    plot_h: int
    boxes: list[Box]
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    cross_x: float | None
    cross_y: float | None
    cross_label: str
    title: str


class _Scale:
    def __init__(self, lo: datetime, hi: datetime, start: float, length: float) -> None:
        if hi <= lo:
            hi = lo + timedelta(hours=1)
        pad = (hi - lo) * 0.04
        self.lo, self.hi = lo - pad, hi + pad
        self.start, self.length = start, length

    def __call__(self, t: datetime) -> float:
        span = (self.hi - self.lo).total_seconds()
        return self.start + self.length * (t - self.lo).total_seconds() / span

    def ticks(self) -> list[Tick]:
        span = self.hi - self.lo
        fmt = "%Y-%m-%d" if span > timedelta(days=3) else "%m-%d %H:%M"
        return [
            Tick(self(self.lo + span * (k + 0.5) / TICKS), (self.lo + span * (k + 0.5) / TICKS).strftime(fmt))
            for k in range(TICKS)
        ]


def _when(t: datetime | None, default: str = "open") -> str:
    return t.strftime("%Y-%m-%d %H:%M UTC") if t is not None else default


def _box(
    row_id: str,
    status: str,
    answer: bool,
    kind: str,
    xa: float,
    xb: float,
    ya: float,
    yb: float,
    text: str,
    open_right: bool,
) -> Box:
    w, h = max(xb - xa, MIN_SIZE), max(yb - ya, MIN_SIZE)
    return Box(
        row_id, round(xa, 1), round(ya, 1), round(w, 1), round(h, 1), kind, status, text, open_right, answer
    )


def build(
    rows: list[Any], *, now: datetime, at: datetime, as_of: datetime | None, answer_ids: set[str]
) -> Chart | None:
    """The chart of ``rows`` (``selectors.TimelineRow``), or None when there is nothing to draw."""
    records = [r.record for r in rows if r.record.valid_from is not None and r.record.ingested_at is not None]
    if not records:
        return None
    asked = as_of or now
    world = [m.valid_from for m in records] + [m.valid_until for m in records if m.valid_until] + [at]
    record = (
        [m.ingested_at for m in records] + [m.invalidated_at for m in records if m.invalidated_at] + [asked]
    )
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    x = _Scale(min(world), max(world + [min(now, max(world) + timedelta(days=1))]), LEFT, plot_w)
    y = _Scale(min(record), max(record + [now]), TOP, plot_h)
    right_edge, bottom_edge = LEFT + plot_w, TOP + plot_h

    boxes: list[Box] = []
    for row in rows:
        m = row.record
        if m.valid_from is None or m.ingested_at is None:
            continue
        x0 = x(m.valid_from)
        x1 = x(m.valid_until) if m.valid_until else right_edge
        y0 = y(m.ingested_at)
        label = (
            f"{m.object or '(no object)'}: {row.status}. True {_when(m.valid_from)} to {_when(m.valid_until)}; "
            f"learned {_when(m.ingested_at)}"
        )
        box = functools.partial(_box, m.id, row.status, m.id in answer_ids)

        if m.retracted:
            end = y(m.invalidated_at) if m.invalidated_at else bottom_edge
            boxes.append(box("retracted", x0, x1, y0, end, f"{label}; retracted {_when(m.invalidated_at)}",
                             m.valid_until is None))  # fmt: skip
        elif m.quarantined:
            boxes.append(box("held", x0, x1, y0, bottom_edge, f"{label}; held for review, never believed",
                             m.valid_until is None))  # fmt: skip
        elif m.invalidated_at is not None and m.superseded_by and m.invalidated_at > m.ingested_at:
            changed = y(m.invalidated_at)
            boxes.append(box("first", x0, right_edge, y0, changed,
                             f"{label}; believed open-ended until {_when(m.invalidated_at)}", True))  # fmt: skip
            boxes.append(box("believed", x0, x1, changed, bottom_edge,
                             f"{label}; believed with its end since {_when(m.invalidated_at)}",
                             m.valid_until is None))  # fmt: skip
        else:
            boxes.append(box("believed", x0, x1, y0, bottom_edge, f"{label}; believed since",
                             m.valid_until is None))  # fmt: skip

    return Chart(
        width=WIDTH,
        height=HEIGHT,
        left=LEFT,
        top=TOP,
        plot_w=plot_w,
        plot_h=plot_h,
        boxes=boxes,
        x_ticks=x.ticks(),
        y_ticks=y.ticks(),
        cross_x=round(x(at), 1),
        cross_y=round(y(asked), 1),
        cross_label=f"as of {_when(asked)}, true at {_when(at)}",
        title=f"{len(records)} row{'s' if len(records) != 1 else ''}: world time across, record time down",
    )


def why_nothing(rows: list[Any], *, at: datetime, as_of: datetime | None) -> str:
    """Why ``get_at`` answered nothing for (``at``, ``as_of``): the first reason that applies, in words."""
    records = [r.record for r in rows]
    if not records:
        return "This key has no rows at all."
    learned = [m.ingested_at for m in records if m.ingested_at is not None]
    if as_of is not None and learned and as_of < min(learned):
        return (
            f"Nothing about this key had been learned yet on {_when(as_of)}: the first row was recorded "
            f"{_when(min(learned))}. Ask as of a later time."
        )
    starts = [m.valid_from for m in records if m.valid_from is not None]
    if starts and at < min(starts):
        return f"No value was true that early: the earliest row became true {_when(min(starts))}."
    covering = [
        m
        for m in records
        if m.valid_from is not None and m.valid_from <= at and (m.valid_until is None or at < m.valid_until)
    ]
    if covering and all(m.retracted for m in covering):
        return "The only rows for that time were retracted (by a purge, a rejection or a curator), so none is believed."
    if covering and all(m.quarantined for m in covering):
        return "The rows for that time are held for review (quarantined) and are not believed until approved."
    if covering and as_of is not None:
        return (
            f"Rows for that time exist, but none was believed on {_when(as_of)}: they were learned later, or had "
            "already been replaced by then."
        )
    return "No row's valid interval covers that time: it falls in a gap between values or after the last one ended."
