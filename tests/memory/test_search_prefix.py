"""The two-step SQLite candidate path (rank FTS hits alone, then filter a prefix) must give exactly the
one-statement join's answer (SPEC R1/R2: best full-text rank first, ties by id), whatever crowds the
prefix: other agents' rows, superseded history, quarantined rows, tie groups straddling the cut."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from memory import engine
from memory.engine import common as c
from memory.engine import retrieval
from memory.engine.temporal import check_fact, write_fact
from tests.memory.conftest import OTHER, A

# SQLite-only path: PostgreSQL runs its GIN query in one statement (deselected there, see tests/conftest.py)
pytestmark = pytest.mark.sqlite_only

WORDS = ["deploy", "target", "coffee", "tea", "london", "paris", "alpha", "beta", "gamma", "delta"]
QUERIES = [
    "deploy",
    "coffee tea",
    "london",
    "alpha beta gamma",
    "target",
    "部署",
    "zzz",
    "deploy target london",
]


def join_only(monkeypatch, *args):
    with monkeypatch.context() as m:
        m.setattr(retrieval, "_sqlite_ranked_prefix", lambda *a, **k: None)
        return [x.id for x in retrieval._fts_candidates(*args)]


@pytest.fixture
def crowded(db, monkeypatch):
    rng = random.Random(5)
    # Ids in random order, so FTS rowid order (insertion) disagrees with id order inside tie groups.
    fresh = iter(rng.sample(range(10**6, 10**7), 2000))
    monkeypatch.setattr(c, "new_memory_id", lambda: f"m_{next(fresh)}")
    for i in range(120):  # agent A: plain memories (varied), identical texts (ties), another agent's rows
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 8)))
        engine.store(agent_id=A, content=words + (" 项目部署" if i % 9 == 0 else ""), layer="episodic")
        engine.store(agent_id=A, content="deploy target london", layer="semantic")
        engine.store(agent_id=OTHER, content="deploy target london coffee", layer="episodic")
    for i in range(40):  # superseded history: same text again and again
        for obj in ("london", "paris", "london"):
            engine.store_temporal(
                agent_id=A,
                content=f"deploy target {obj}",
                subject=f"svc:{i}",
                predicate="deploy_target",
                object=obj,
                valid_from=datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=len(obj) + i),
            )
    for i in range(10):  # quarantined rows are inert
        fact = check_fact(
            agent_id=A, content="deploy target london", subject=f"q:{i}", predicate="p", object="x"
        )
        write_fact(fact, quarantine=True)


@pytest.mark.parametrize("prefix_min", [1, 4, 16, 512])
def test_two_step_path_equals_the_join(crowded, monkeypatch, prefix_min):
    monkeypatch.setattr(retrieval, "PREFIX_MIN", prefix_min)
    monkeypatch.setattr(retrieval, "PREFIX_PER_CANDIDATE", 1 if prefix_min < 512 else 16)
    at = c.now()
    used = {"prefix": 0, "fallback": 0}
    real = retrieval._sqlite_ranked_prefix

    def spy(*args):
        out = real(*args)
        used["fallback" if out is None else "prefix"] += 1
        return out

    monkeypatch.setattr(retrieval, "_sqlite_ranked_prefix", spy)
    for query in QUERIES:
        for n in (1, 3, 10, 30, 100):
            for layer in (None, "semantic", "episodic"):
                got = [m.id for m in retrieval._fts_candidates(A, query, n, at, layer, [])]
                want = join_only(monkeypatch, A, query, n, at, layer, [])
                assert got == want, (query, n, layer)
    assert used["prefix"] > 0
    if prefix_min < 512:
        assert used["fallback"] > 0  # small prefixes really were starved and fell back


def test_search_results_are_unchanged_by_the_two_step_path(crowded, monkeypatch):
    with time_machine.travel(c.now() + timedelta(seconds=1), tick=False):  # same recency on both sides
        for query in QUERIES:
            fast = [(h.id, h.score) for h in engine.search(agent_id=A, query=query, touch=False)]
            with monkeypatch.context() as m:
                m.setattr(retrieval, "_sqlite_ranked_prefix", lambda *a, **k: None)
                slow = [(h.id, h.score) for h in engine.search(agent_id=A, query=query, touch=False)]
            assert fast == slow, query
