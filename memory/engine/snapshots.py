"""Snapshots of keys before a curation change, and their exact restore (SPEC B2, B7; UX "every action can be
reversed"): the rows of the keys (their derived fields, reaffirmations and confidence), the plain rows named,
and the keys' write log. ``restore_snapshot`` puts the writes back, retracts the writes the change created,
re-derives the keys and restores the rows as they were, so every read returns what it returned before. It
refuses (``undo_conflict``) once a newer write has reached one of the keys: decide again instead.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memory.models import FactWrite, Memory

from . import common as c
from .taint import resolve_tainted
from .temporal import DERIVED_FIELDS, rederive_key
from .types import EngineError, InvalidArgument

ROW_FIELDS = (*DERIVED_FIELDS, "reaffirmed_by", "confidence", "origin_trust")
WRITE_FIELDS = (
    "subject",
    "predicate",
    "value_key",
    "memory_id",
    "is_reaffirm",
    "state",
    "believed_from",
    "believed_until",
    "origin_trust",  # a confirmed tainted fact's writes get their trust back (issue 19 item 9); an undo crushes it
)
_TIME_FIELDS = {"valid_from", "valid_until", "invalidated_at", "believed_from", "believed_until"}


class UndoConflict(EngineError):
    code = "undo_conflict"


def _from_iso(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


# --- snapshots -------------------------------------------------------------------------------------------


def keys_of(rows: list[Memory]) -> list[tuple[str, str]]:
    return sorted({(m.subject, m.predicate) for m in rows if m.subject and m.predicate})


def key_snapshot(agent_id: str, keys: list[tuple[str, str]], plain: list[str]) -> dict[str, Any]:
    row_ids = set(plain)
    writes: dict[str, dict[str, Any]] = {}
    max_write = 0
    for subject, predicate in keys:
        row_ids |= set(
            Memory.objects.filter(agent_id=agent_id, subject=subject, predicate=predicate).values_list(
                "id", flat=True
            )
        )
        for w in FactWrite.objects.filter(agent_id=agent_id, subject=subject, predicate=predicate):
            writes[str(w.id)] = {f: _jsonable(getattr(w, f)) for f in WRITE_FIELDS}
            max_write = max(max_write, w.id)
    rows = {
        r["id"]: {k: _jsonable(v) for k, v in r.items() if k != "id"}
        for r in Memory.objects.filter(id__in=row_ids).values("id", *ROW_FIELDS)
    }
    return {
        "keys": [list(k) for k in keys],
        "rows": rows,
        "writes": writes,
        "max_write": max_write,
        "new": [],
    }


def _jsonable(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def _restore(value: Any, name: str) -> Any:
    return _from_iso(value) if name in _TIME_FIELDS else value


@c.write_transaction
def restore_snapshot(
    *, agent_id: str, undo: dict[str, Any], actor: str, reason: str, action: str, **details: Any
) -> int:
    """Put back what a change recorded in ``undo`` (``key_snapshot`` plus the ids of the writes it created, in
    ``undo["new"]``); audited as ``action`` with ``details``. Returns the number of rows restored."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    if not isinstance(undo, dict) or "rows" not in undo:
        raise InvalidArgument("nothing to undo", field="undo")
    keys = [tuple(k) for k in undo.get("keys", [])]
    for subject, predicate in keys:
        c.lock_key(agent_id, subject, predicate)
    created = [int(i) for i in undo.get("new", [])]
    newer = FactWrite.objects.filter(agent_id=agent_id, id__gt=int(undo.get("max_write", 0))).exclude(
        id__in=created
    )
    for subject, predicate in keys:
        if newer.filter(subject=subject, predicate=predicate).exists():
            raise UndoConflict(
                f"{subject} / {predicate} has been written since; decide it again instead", field="undo"
            )
    t = c.now()
    FactWrite.objects.filter(agent_id=agent_id, id__in=created).update(
        state=FactWrite.STATE_RETRACTED, believed_until=t
    )
    for wid, fields in undo.get("writes", {}).items():
        FactWrite.objects.filter(agent_id=agent_id, id=int(wid)).update(
            **{k: _restore(v, k) for k, v in fields.items()}
        )
    for subject, predicate in keys:
        rederive_key(agent_id, subject, predicate, at=t)
    rows = undo["rows"]
    # rows that re-open last, so the one-open-row index holds after every statement
    for row_id in sorted(rows, key=lambda r: rows[r].get("valid_until") is None):
        Memory.objects.filter(agent_id=agent_id, id=row_id).update(
            **{k: _restore(v, k) for k, v in rows[row_id].items()}
        )
    c.bump_generation(agent_id)
    resolve_tainted(agent_id=agent_id, t=t)  # a restored source or retracted fact settles a tainted item
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action=action,
        reason=reason,
        at=t,
        rows=sorted(rows),
        **details,
    )
    return len(rows)
