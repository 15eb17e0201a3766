"""The timeline model of one key (SPEC T2): pure derivation of believed segments from writes.

Each believed write covers ``[start, end)`` (``end`` None = open). At world time *t* the value is the write
covering *t* with the greatest ``(start, order)``. ``derive`` sweeps the breakpoints once with a heap, so a key
with *n* writes costs O(n log n).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)


def _us(dt: datetime) -> int:
    return (dt - _EPOCH) // _US


@dataclass(frozen=True)
class WriteSpan:
    order: int  # ingestion order (FactWrite.id)
    start: datetime
    end: datetime | None
    row: str  # the primary memory row this write supports
    source_event: str = ""


@dataclass
class Segment:
    start: datetime
    end: datetime | None
    row: str
    first: WriteSpan  # the write that wins at ``start`` (its source_event stamps what it supersedes)


def derive(writes: list[WriteSpan]) -> list[Segment]:
    """Maximal world-time segments, oldest first; adjacent pieces won by writes of the same row are merged."""
    if not writes:
        return []
    points = sorted({w.start for w in writes} | {w.end for w in writes if w.end is not None})
    by_start = sorted(writes, key=lambda w: w.start)
    heap: list[tuple[int, int, int]] = []
    i = 0
    segments: list[Segment] = []
    for k, point in enumerate(points):
        while i < len(by_start) and by_start[i].start <= point:
            w = by_start[i]
            heapq.heappush(heap, (-_us(w.start), -w.order, i))
            i += 1
        while heap:
            top = by_start[heap[0][2]]
            if top.end is not None and top.end <= point:
                heapq.heappop(heap)
            else:
                break
        if not heap:
            continue
        winner = by_start[heap[0][2]]
        nxt = points[k + 1] if k + 1 < len(points) else None
        last = segments[-1] if segments else None
        if last is not None and last.row == winner.row and last.end == point:
            last.end = nxt
        else:
            segments.append(Segment(point, nxt, winner.row, winner))
    return segments


def value_at(writes: list[WriteSpan], at: datetime) -> WriteSpan | None:
    """Reference semantics, written independently of ``derive``: used by tests and ``as_of`` reads."""
    best: WriteSpan | None = None
    for w in writes:
        if w.start <= at and (w.end is None or w.end > at):
            if best is None or (w.start, w.order) > (best.start, best.order):
                best = w
    return best
