"""SQLite's kept full-text ranking (issue 19: the memory search for a common word; migration 0024): a search
answers exactly as it does with nothing kept, after writes to this agent's rows and to another agent's (bm25
reads the whole index), after content cuts and plain SQL updates; a search with nothing changed does not rank
again."""

from __future__ import annotations

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from memory import engine
from memory.engine import state_stamp
from memory.models import Memory

pytestmark = pytest.mark.django_db

A, B = "kept-rank-a", "kept-rank-b"


def hits(query: str, agent_id: str = A, **kw) -> list[tuple[str, float]]:
    return [
        (h.id, round(h.score, 9)) for h in engine.search(agent_id=agent_id, query=query, touch=False, **kw)
    ]


def assert_kept_equals_fresh(query: str, **kw) -> None:
    kept = hits(query, **kw)
    engine.clear_state_memo()
    fresh = hits(query, **kw)
    assert kept == fresh
    assert hits(query, **kw) == fresh  # and kept again


def test_kept_ranking_answers_like_a_fresh_one():
    with time_machine.travel(timezone.now(), tick=False):
        for i in range(30):
            engine.store(agent_id=A, content=f"deploy note {i} " + "about the pipeline " * (i % 4))
            engine.store(agent_id=B, content=f"deploy other {i}")
        engine.store_temporal(
            agent_id=A,
            content="the deploy target is blue",
            subject="svc",
            predicate="deploy_target",
            object="blue",
        )
        engine.clear_state_memo()
        first = hits("deploy")
        assert len(first) == 10
        misses = state_stamp.fts_stats["misses"]
        assert hits("deploy") == first
        assert hits("deploy", limit=10) == first
        if connection.vendor == "sqlite":  # PostgreSQL ranks through its GIN index: nothing kept there
            assert state_stamp.fts_stats["misses"] == misses
        assert_kept_equals_fresh("deploy")
        assert_kept_equals_fresh("deploy", limit=100)
        assert_kept_equals_fresh("deploy", layer="episodic")
        hits("pipeline")
        engine.store(agent_id=A, content="deploy deploy deploy")  # a new best match
        assert_kept_equals_fresh("deploy")
        assert hits("deploy")[0][0] == Memory.objects.get(content="deploy deploy deploy").id
        hits("deploy")
        engine.store(agent_id=B, content="deploy " + "padding words " * 40)  # another agent: bm25's averages
        assert_kept_equals_fresh("deploy")
        hits("deploy")
        best = hits("deploy")[0][0]
        Memory.objects.filter(id=best).update(content="nothing to see")  # plain SQL update of the text
        assert_kept_equals_fresh("deploy")
        assert best not in {h for h, _ in hits("deploy")}
        hits("pipeline")
        Memory.objects.filter(agent_id=A, content__contains="pipeline").delete()
        assert_kept_equals_fresh("pipeline")
        assert hits("pipeline") == []
        assert len(hits("blue")) == 1
        engine.erase(agent_id=A, subject="svc", reason="asked", actor="user:rex")
        assert_kept_equals_fresh("blue")
        assert hits("blue") == []


def test_the_stamp_moves_with_indexed_text_only():
    if connection.vendor != "sqlite":  # PostgreSQL ranks through its GIN index and keeps nothing
        assert "memory_fts_stamp" not in connection.introspection.table_names()
        return
    engine.store(agent_id=A, content="deploy one")
    before = state_stamp.fts_stamp()
    Memory.objects.filter(agent_id=A).update(access_count=3, importance=9.0)  # not indexed
    assert state_stamp.fts_stamp() == before
    Memory.objects.filter(agent_id=A).update(content="deploy two")
    assert state_stamp.fts_stamp() != before
