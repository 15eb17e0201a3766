"""Process side of ``test_graph_cache``: a long-lived reader that holds a graph cache, and a writer.

Spawned children import this module before Django is configured, so nothing here imports Django at module
level. Each child points the default connection at the SQLite file the parent names and reports either its
results or a formatted traceback.
"""

from __future__ import annotations

import traceback
from typing import Any

from tests.memory.concurrency_workers import setup_django


def seed_facts(agent_id: str, n: int) -> None:
    from django.db import transaction

    from memory import engine

    with transaction.atomic():
        for i in range(n):
            engine.store_temporal(
                agent_id=agent_id,
                content=f"person{i} likes thing{i % 50}",
                subject=f"person{i}",
                predicate="likes",
                object=f"thing{i % 50}",
            )


def reader(db_name: str, agent_id: str, n: int, commands: Any, replies: Any) -> None:
    """Seed ``n`` facts, then answer each query from ``commands`` with the cache's view of the graph."""
    try:
        setup_django(db_name)
        from memory import engine
        from memory.engine import graph as g
        from memory.engine.graph import cache as graph_cache

        seed_facts(agent_id, n)
        replies.put(("ready", None))
        while True:
            query = commands.get(timeout=120)
            if query is None:
                break
            scores = g.graph_scores(agent_id=agent_id, query=query)
            replies.put(
                (
                    "ok",
                    {
                        "top": scores.top if scores else [],
                        "builds": g.stats["builds"],
                        "deltas": g.stats["deltas"],
                        "cached": agent_id in graph_cache._cache,
                        "generation": engine.graph_generation(agent_id=agent_id),
                    },
                )
            )
    except BaseException:  # noqa: BLE001 - report, never vanish
        replies.put(("error", traceback.format_exc()))


def writer(db_name: str, agent_id: str, replies: Any) -> None:
    try:
        setup_django(db_name)
        from memory import engine

        result = engine.store_temporal(
            agent_id=agent_id, content="ada likes thing1", subject="ada", predicate="likes", object="thing1"
        )
        replies.put(("ok", result.id))
    except BaseException:  # noqa: BLE001
        replies.put(("error", traceback.format_exc()))
