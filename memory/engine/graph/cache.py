"""The per-agent graph cache (SPEC G5) and the query entry point ``graph_scores``."""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import datetime
from typing import Any

from django.db import connection

from .. import common as c
from ..types import InvalidArgument
from .build import Graph, build_graph, load_graph
from .embed_seed import embed_seeds
from .ppr import GraphScores, rank

GRAPH_CACHE_MIN_TRIPLES = 500


CACHE_AGENTS = 16  # graphs kept in one process (least recently used dropped first)


_cache: OrderedDict[str, Graph] = OrderedDict()


_cache_lock = threading.Lock()


stats = {"builds": 0, "hits": 0}


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


def _generation_key(agent_id: str) -> Any:
    """The generation row (T9) as the cache key: its counter and when it last moved (a restored or rolled-back
    database can repeat a counter value, not both)."""
    with connection.cursor() as cur:  # one plain statement on every search (the ORM query costs more)
        cur.execute("SELECT generation, updated_at FROM graph_generation WHERE agent_id = %s", [agent_id])
        row = cur.fetchone()
    return (int(row[0]), row[1]) if row else (0, None)


def agent_graph(*, agent_id: str, at: datetime | None = None) -> Graph:
    """The agent's graph: the cached one while its generation (read from the database) and world time still
    match, else a fresh build (kept only above ``GRAPH_CACHE_MIN_TRIPLES`` current triples)."""
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
    graph = load_graph(agent_id=agent_id, at=at, generation=generation)
    with _cache_lock:
        stats["builds"] += 1
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
