"""The one owner of "believed" and "current" (SPEC 0).

A row is **believed** when it is neither quarantined nor retracted (its ``invalidated_by_event`` is one of
``RETRACT_EVENTS``). It is **current** at a moment ``at`` when it is believed and its world interval covers
``at`` (``valid_from <= at < valid_until``; NULL bounds are open).

Every layer asks the same question in its own language, so this module states the rule once per language:

* ``BELIEVED`` / ``NOT_RETRACTED`` / ``current_q(at)``: Django ``Q`` objects for the ORM;
* ``believed_sql()`` / ``current_sql()``: SQL fragments over a table alias, with the literal each database
  stores for a false boolean (SQLite ``0``, PostgreSQL ``false``), so a partial index whose WHERE repeats them
  can be proven to apply;
* ``is_believed(row)`` / ``is_current(row, at)``: Python predicates over anything with the row's attributes.

``approval_effects`` answers, for a page of held rows at once, what releasing each would do to the believed
timeline of its key (supersede a current value, reaffirm it, or add a new one): the quarantine desk's preview
and the engine's own ``approval_preview`` share it.

A property test (``tests/memory/test_belief.py``) checks the three forms agree on random rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from django.db import connection
from django.db.models import Q

from memory.models import RETRACT_EVENTS, Memory

__all__ = [
    "BELIEVED",
    "NOT_RETRACTED",
    "RETRACTED",
    "RETRACT_EVENTS",
    "ApprovalEffect",
    "approval_effects",
    "believed_sql",
    "current_q",
    "covers",
    "covers_q",
    "current_sql",
    "is_believed",
    "is_current",
    "is_retracted",
    "not_retracted_sql",
]


class _RowLike(Protocol):
    quarantined: bool
    invalidated_by_event: str | None
    valid_from: datetime | None
    valid_until: datetime | None


# --- Python --------------------------------------------------------------------------------------------------


def is_retracted(event: str | None) -> bool:
    """Whether a row closed by ``event`` is retracted (a purge, a reject, a curator's retraction)."""
    return event in RETRACT_EVENTS


def is_believed(row: Any) -> bool:
    return not row.quarantined and not is_retracted(row.invalidated_by_event)


def covers(row: Any, at: datetime) -> bool:
    """The row's world interval holds ``at`` (NULL bounds are open)."""
    return (row.valid_from is None or row.valid_from <= at) and (
        row.valid_until is None or row.valid_until > at
    )


def is_current(row: Any, at: datetime) -> bool:
    return is_believed(row) and covers(row, at)


# --- ORM -----------------------------------------------------------------------------------------------------

RETRACTED = Q(invalidated_by_event__in=RETRACT_EVENTS)
NOT_RETRACTED = Q(invalidated_by_event__isnull=True) | ~RETRACTED
BELIEVED = Q(quarantined=False) & NOT_RETRACTED

# Tainted (issue 19 item 9): a row still believed whose ``derived_from`` cites a purged or rejected source; the
# purge crushed its trust to ``TAINT_TRUST`` (SPEC P2), and a write derived from such a source gets no more.
TAINT_TRUST = 0.1
TAINTED = ~Q(derived_from=[]) & Q(origin_trust__lte=TAINT_TRUST) & NOT_RETRACTED


def is_tainted(row: Any) -> bool:
    """The Python twin of ``TAINTED``, for records and hits already loaded."""
    return (
        bool(getattr(row, "derived_from", None))
        and float(getattr(row, "origin_trust", 1.0)) <= TAINT_TRUST
        and not is_retracted(getattr(row, "invalidated_by_event", None))
    )


def covers_q(at: datetime) -> Q:
    return (Q(valid_from__isnull=True) | Q(valid_from__lte=at)) & (
        Q(valid_until__isnull=True) | Q(valid_until__gt=at)
    )


def current_q(at: datetime) -> Q:
    return BELIEVED & covers_q(at)


# --- SQL -----------------------------------------------------------------------------------------------------

_RETRACT_LIST = "(" + ", ".join(f"'{e}'" for e in RETRACT_EVENTS) + ")"


def _false() -> str:
    return "false" if connection.vendor == "postgresql" else "0"


def not_retracted_sql(alias: str = "m") -> str:
    """No parameters."""
    return f"({alias}.invalidated_by_event IS NULL OR {alias}.invalidated_by_event NOT IN {_RETRACT_LIST})"


def believed_sql(alias: str = "m") -> str:
    """No parameters; the boolean is this database's literal (partial indexes repeat it)."""
    return f"{alias}.quarantined = {_false()} AND {not_retracted_sql(alias)}"


def current_sql(alias: str = "m") -> str:
    """Parameters: ``at``, ``at`` (adapted for the database)."""
    return (
        f"{believed_sql(alias)} AND ({alias}.valid_from IS NULL OR {alias}.valid_from <= %s)"
        f" AND ({alias}.valid_until IS NULL OR {alias}.valid_until > %s)"
    )


# --- what releasing held rows would do -----------------------------------------------------------------------


@dataclass(frozen=True)
class ApprovalEffect:
    """What approving one held row would do: ``supersede`` the believed row ``other``, ``reaffirm`` it (same
    value), or add a ``new`` value."""

    row: Memory
    other: Memory | None

    @property
    def effect(self) -> str:
        if self.other is None:
            return "new"
        return "reaffirm" if (self.other.object or None) == (self.row.object or None) else "supersede"


def _covering(rows: Iterable[Memory], at: datetime, exclude: str) -> Memory | None:
    """The believed row covering ``at``, latest start first."""
    found = [r for r in rows if r.id != exclude and covers(r, at)]
    found.sort(key=lambda r: (r.valid_from is not None, r.valid_from or at), reverse=True)
    return found[0] if found else None


def approval_effects(agent_id: str, rows: Sequence[Memory]) -> dict[str, ApprovalEffect]:
    """For held fact rows of one agent, what releasing each would change, in one query for all of them: the
    believed row of its key covering its ``valid_from`` (or creation time). Plain memories (no triple) are
    ``new``."""
    facts = [m for m in rows if m.subject and m.predicate]
    believed: dict[tuple[str, str, str], list[Memory]] = {}  # per key (SPEC B3: with its value_key)
    if facts:
        earliest = min(m.valid_from or m.created_at for m in facts)
        candidates = Memory.objects.filter(
            agent_id=agent_id,
            subject__in=sorted({m.subject for m in facts if m.subject}),
            predicate__in=sorted({m.predicate for m in facts if m.predicate}),
        ).filter(BELIEVED & (Q(valid_until__isnull=True) | Q(valid_until__gt=earliest)))
        for m in candidates:
            believed.setdefault((m.subject or "", m.predicate or "", m.value_key), []).append(m)
    out: dict[str, ApprovalEffect] = {}
    for m in rows:
        other = None
        if m.subject and m.predicate:
            key = (m.subject, m.predicate, m.value_key)
            other = _covering(believed.get(key, []), m.valid_from or m.created_at, m.id)
        out[m.id] = ApprovalEffect(m, other)
    return out
