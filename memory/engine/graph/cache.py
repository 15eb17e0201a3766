"""The per-agent graph cache (SPEC G5) and the query entry point ``graph_scores``.

A cached graph is reused while the agent's generation and world time allow; after writes it is brought forward
by their delta (``delta``: the change log, then only the changed rows) when the log covers the way and the
delta is small, else rebuilt."""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import datetime
from typing import Any

from django.db import connection

from .. import common as c
from ..types import InvalidArgument
from . import delta
from .build import Graph, build_graph, load_graph
from .embed_seed import embed_seeds
from .ppr import GraphScores, rank

GRAPH_CACHE_MIN_TRIPLES = 500


CACHE_AGENTS = 16  # graphs kept in one process (least recently used dropped first)


_cache: OrderedDict[str, Graph] = OrderedDict()


_cache_lock = threading.Lock()


stats = {"builds": 0, "hits": 0, "deltas": 0}


def delta_limit(graph: Graph) -> int:
    """The most changed rows a delta takes; beyond, a rebuild is cheaper."""
    return max(5_000, graph.triples // 10)


def clear_cache() -> None:
    from .view_cache import clear_view_cache

    with _cache_lock:
        _cache.clear()
    clear_view_cache()


def _generation_key(agent_id: str) -> Any:
    """The generation row (T9) as the cache key: its counter, when it last moved and the token of its bump (a
    restored or rolled-back database can repeat a counter value, not all three)."""
    with connection.cursor() as cur:  # one plain statement on every search (the ORM query costs more)
        cur.execute(
            "SELECT generation, updated_at, substr(changes, 1, 48) FROM graph_generation WHERE agent_id = %s",
            [agent_id],
        )
        row = cur.fetchone()
    if not row:
        return (0, None, None)
    return (int(row[0]), row[1], delta.head_token(int(row[0]), row[2]))


def _advanced(agent_id: str, cached: Graph, generation: Any, at: datetime) -> Graph | None:
    """``cached`` brought to ``generation`` by the writes' delta, or None when only a rebuild can tell."""
    changed = delta.changed_ids(agent_id, cached.generation, generation)
    if changed is None or len(changed) > delta_limit(cached):
        return None
    return delta.advance(cached, changed, delta.read_rows(agent_id, changed, at), generation=generation)


def agent_graph(*, agent_id: str, at: datetime | None = None) -> Graph:
    """The agent's graph: the cached one while its generation (read from the database) and world time still
    match; after writes, the cached one brought forward by their delta; else a fresh build. Kept only above
    ``GRAPH_CACHE_MIN_TRIPLES`` current triples."""
    at = at or c.now()
    generation = _generation_key(agent_id)
    with _cache_lock:
        cached = _cache.get(agent_id)
        if (
            cached is not None
            and cached.generation == generation
            and (cached.expires is None or at < cached.expires)
        ):
            _cache.move_to_end(agent_id)
            stats["hits"] += 1
            return cached
    if generation[0] == 0:  # no triple (and no alias) was ever written for this agent: nothing to read
        return build_graph([], {}, generation=generation)
    graph = None
    if cached is not None and (cached.expires is None or at < cached.expires):
        graph = _advanced(agent_id, cached, generation, at)
    built = graph is None
    if graph is None:
        graph = load_graph(agent_id=agent_id, at=at, generation=generation)
    with _cache_lock:
        stats["builds" if built else "deltas"] += 1
        if graph.triples > GRAPH_CACHE_MIN_TRIPLES:
            _cache[agent_id] = graph
            _cache.move_to_end(agent_id)
            while len(_cache) > CACHE_AGENTS:
                _cache.popitem(last=False)
        else:
            _cache.pop(agent_id, None)
    return graph


def graph_scores(
    *, agent_id: str, query: str, at: datetime | None = None, method: str = "push"
) -> GraphScores | None:
    """PPR memory scores for ``query``, or None when the agent has no triples or the query names no entity
    (then search is FTS-only, unchanged)."""
    agent_id = c.check_agent_id(agent_id)
    if not isinstance(query, str):
        raise InvalidArgument("query must be a string", field="query")
    graph = agent_graph(agent_id=agent_id, at=at)
    if graph.triples == 0:
        return None
    seeds = graph.seeds(query)
    seeds = embed_seeds(agent_id=agent_id, graph=graph, query=query, seeds=seeds)
    if not seeds:
        return None
    return rank(graph, seeds, method=method)
