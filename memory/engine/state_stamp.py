"""Counts of an agent's rows, kept while nothing that moves them happened (issue 19: agents list, agent home).

Counting an agent's rows by state reads its whole state index (≈ 20 ms of SQL at 100k memories, on every load
of the agents list and the agent home). A count only changes when

- a row of the agent is inserted, deleted, or updated in a column the counts read: database triggers move the
  agent's ``memory_state_stamp`` row then (migration 0023), whatever code writes, in the writer's transaction;
- world time reaches the next moment a believed row of the agent starts (``valid_from``) or stops
  (``valid_until``) holding.

So a value is kept under (agent, key) with the stamp it was computed after and that next moment, and given back
while the stamp is the same and the time is in [computed at, next moment). The stamp is read before the counts,
so a value is never older than its stamp. A test compares it with a fresh count after every kind of write and
as time passes.

Cost on writes: one upsert of the stamp row per row written (no measurable difference per ``engine.store`` on
SQLite, whose writes are serialised anyway). On PostgreSQL the stamp row is locked until the writer commits,
so two transactions writing rows of the same agent take turns from their first row write on.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Min

from ..models import Memory
from .belief import BELIEVED

MEMO_ENTRIES = 512
_memo: OrderedDict[tuple[str, Any], tuple[Any, datetime, datetime | None, Any]] = OrderedDict()
_lock = threading.Lock()
stats = {"hits": 0, "misses": 0}


def clear_state_memo() -> None:
    with _lock:
        _memo.clear()
        _fts.clear()


def state_stamps(agent_ids: Iterable[str]) -> dict[str, tuple[int, int]]:
    """The agents' stamps (an agent with no row has none: its value is not kept). One query."""
    ids = list(dict.fromkeys(agent_ids))
    if not ids or connection.vendor not in ("sqlite", "postgresql"):
        return {}
    marks = ", ".join(["%s"] * len(ids))
    with connection.cursor() as cur:
        cur.execute(f"SELECT agent_id, stamp, token FROM memory_state_stamp WHERE agent_id IN ({marks})", ids)
        return {row[0]: (int(row[1]), int(row[2])) for row in cur.fetchall()}


def next_changes(agent_ids: Iterable[str], at: datetime) -> dict[str, datetime | None]:
    """Per agent, the first moment after ``at`` when a believed row starts or stops holding (None: never).
    Two index-only aggregates whatever the number of agents."""
    ids = list(dict.fromkeys(agent_ids))
    base = Memory.objects.filter(agent_id__in=ids).filter(BELIEVED).order_by().values("agent_id")
    found: dict[str, datetime | None] = dict.fromkeys(ids)
    for column in ("valid_from", "valid_until"):
        for row in base.filter(**{f"{column}__gt": at}).annotate(t=Min(column)):
            t = row["t"]
            current = found[row["agent_id"]]
            found[row["agent_id"]] = t if current is None or t < current else current
    return found


def state_memo_many(
    agent_ids: Iterable[str], key: Any, at: datetime, compute: Callable[[list[str]], dict[str, Any]]
) -> dict[str, Any]:
    """``compute(ids)`` (a value per agent of ``ids``) for the agents whose kept value under ``key`` is not
    valid at ``at``; the kept values for the others. The values are shared: callers must not change them."""
    ids = list(dict.fromkeys(agent_ids))
    stamps = state_stamps(ids)
    out: dict[str, Any] = {}
    with _lock:
        for aid in ids:
            entry = _memo.get((aid, key))
            if (
                entry is not None
                and aid in stamps
                and entry[0] == stamps[aid]
                and entry[1] <= at
                and (entry[2] is None or at < entry[2])
            ):
                _memo.move_to_end((aid, key))
                out[aid] = entry[3]
        stats["hits"] += len(out)
        stats["misses"] += len(ids) - len(out)
    missing = [aid for aid in ids if aid not in out]
    if not missing:
        return out
    computed = compute(missing)
    keep = [aid for aid in missing if aid in stamps]
    expires = next_changes(keep, at) if keep else {}
    with _lock:
        for aid in missing:
            out[aid] = computed[aid]
            if aid in stamps:
                _memo[(aid, key)] = (stamps[aid], at, expires[aid], computed[aid])
                _memo.move_to_end((aid, key))
        while len(_memo) > MEMO_ENTRIES:
            _memo.popitem(last=False)
    return out


def state_memo(agent_id: str, key: Any, at: datetime, compute: Callable[[], Any]) -> Any:
    """``compute()`` for one agent, kept as ``state_memo_many`` keeps it."""
    return state_memo_many([agent_id], key, at, lambda ids: {agent_id: compute()})[agent_id]


# --- SQLite's full-text ranking of a match (migration 0024) -------------------------------------------------

FTS_ENTRIES = 32
_fts: OrderedDict[tuple[str, int], tuple[tuple[int, int], tuple[tuple[Any, float], ...]]] = OrderedDict()
fts_stats = {"hits": 0, "misses": 0}


def fts_stamp() -> tuple[int, int] | None:
    """The full-text stamp (SQLite; None without the table: nothing is kept)."""
    with connection.cursor() as cur:
        cur.execute("SELECT stamp, token FROM memory_fts_stamp WHERE id = 1")
        row = cur.fetchone()
    return (int(row[0]), int(row[1])) if row else None


def fts_ranked(match: str, k: int, compute: Callable[[], list[Any]]) -> list[Any]:
    """``compute()`` (the best ``k`` full-text hits of ``match`` as (memory id, bm25) rows), kept while no
    indexed text of any row changed. A new list each time: callers may sort it."""
    stamp = fts_stamp()
    with _lock:
        found = _fts.get((match, k))
        if stamp is not None and found is not None and found[0] == stamp:
            _fts.move_to_end((match, k))
            fts_stats["hits"] += 1
            return list(found[1])
        fts_stats["misses"] += 1
    rows = [tuple(r) for r in compute()]
    if stamp is not None:
        with _lock:
            _fts[(match, k)] = (stamp, tuple(rows))  # type: ignore[arg-type]
            _fts.move_to_end((match, k))
            while len(_fts) > FTS_ENTRIES:
                _fts.popitem(last=False)
    return rows
