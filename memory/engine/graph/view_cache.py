"""The curator's graph columns, kept per agent (issue 19: the graph page at 100k memories).

``graph_view`` reads every current fact row of the agent as columns (``scan._edge_columns``): ≈ 60 ms of SQL and
as much again of Arrow work at 100k memories, on every page load. The columns only change when a write moves
the agent's graph generation (SPEC T9: every triple write, alias, decision, retraction, purge, erasure) or when
world time reaches the next moment a fact row starts or ends. So they are kept, like the search graph
(``cache.agent_graph``), keyed on the generation row (read from the database on every call, so a write by any
process is seen by the next read) and the alias map they were resolved with, until that moment. The answer is
the same as reading the rows again; a test pins it. A page load then costs one query for the generation
instead of the scan; the first load after a change costs the scan and one query for the next moment.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from ..belief import not_retracted_sql
from .cache import _generation_key
from .scan import EdgeColumns, _as_datetime, _edge_columns

VIEW_CACHE_AGENTS = 8


@dataclass(frozen=True)
class _Entry:
    generation: Any
    aliases: dict[str, str]
    built_at: datetime
    expires: datetime | None
    edges: EdgeColumns


_cache: OrderedDict[str, _Entry] = OrderedDict()
_lock = threading.Lock()
stats = {"reads": 0, "hits": 0}


def clear_view_cache() -> None:
    with _lock:
        _cache.clear()
        _memo.clear()


def next_change(agent_id: str, at: datetime) -> datetime | None:
    """The first moment after ``at`` when a not-retracted fact row of the agent starts or stops holding (so the
    set ``_edge_columns`` reads changes with time alone), or None."""
    now = connection.ops.adapt_datetimefield_value(at)
    base = (
        f"FROM memories m WHERE m.agent_id = %s AND m.subject IS NOT NULL AND m.predicate IS NOT NULL"
        f" AND {not_retracted_sql('m')}"
    )
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT (SELECT MIN(m.valid_until) {base} AND m.valid_until > %s),"
            f" (SELECT MIN(m.valid_from) {base} AND m.valid_from > %s)",
            [agent_id, now, agent_id, now],
        )
        ends, starts = (_as_datetime(v) for v in cur.fetchone())
    found = [t for t in (ends, starts) if t is not None]
    return min(found) if found else None


def view_columns(agent_id: str, at: datetime, *, aliases: dict[str, str]) -> EdgeColumns:
    """``_edge_columns(agent_id, at, aliases=aliases)``, from the cache while the agent's generation, the alias
    map and world time allow."""
    generation = _generation_key(agent_id)
    with _lock:
        entry = _cache.get(agent_id)
        if (
            entry is not None
            and entry.generation == generation
            and entry.aliases == aliases
            and entry.built_at <= at
            and (entry.expires is None or at < entry.expires)
        ):
            _cache.move_to_end(agent_id)
            stats["hits"] += 1
            return entry.edges
    stats["reads"] += 1
    edges = _edge_columns(agent_id, at, aliases=aliases)
    keep = generation[0] > 0 and generation[2] is not None  # an agent with no triple yet: nothing to keep
    expires = next_change(agent_id, at) if keep else None
    with _lock:
        if keep:
            _cache[agent_id] = _Entry(generation, dict(aliases), at, expires, edges)
            _cache.move_to_end(agent_id)
            while len(_cache) > VIEW_CACHE_AGENTS:
                _cache.popitem(last=False)
        else:
            _cache.pop(agent_id, None)
    return edges


# --- other reads of an agent's facts that only writes change ------------------------------------------------

MEMO_ENTRIES = 256
_memo: OrderedDict[tuple[str, Any], tuple[Any, Any]] = OrderedDict()


def generation_memo(agent_id: str, key: Any, compute: Callable[[], Any]) -> Any:
    """``compute()``, kept under (agent, ``key``) while the agent's graph generation is the same: for a read
    of the agent's fact rows that depends on nothing but those rows (every fact row written, held, decided,
    retracted, rekeyed or erased moves the generation). ``key`` names the read and its arguments. The value is
    shared between callers: they must not change it."""
    generation = _generation_key(agent_id)
    with _lock:
        found = _memo.get((agent_id, key))
        if found is not None and found[0] == generation:
            _memo.move_to_end((agent_id, key))
            return found[1]
    value = compute()
    if generation[0] > 0 and generation[2] is not None:
        with _lock:
            _memo[(agent_id, key)] = (generation, value)
            _memo.move_to_end((agent_id, key))
            while len(_memo) > MEMO_ENTRIES:
                _memo.popitem(last=False)
    return value
