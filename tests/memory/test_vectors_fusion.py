"""Fusion (issue 17): with vectors off (no embedder, or w_vec = w_vec_rank = 0) and w_graph = 0, search ranks
exactly as the full-text R2 ranking did before vectors existed: a property test over random corpora."""

from __future__ import annotations

import itertools

import pytest
import time_machine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import engine
from memory.engine import embeddings as emb
from memory.engine import retrieval
from memory.engine.types import RetrievalWeights
from memory.models import Memory
from tests.conftest import dt
from tests.memory.test_vectors import ThemeEmbedder

pytestmark = pytest.mark.django_db

WORDS = ["cat", "dog", "car", "tea", "red", "blue", "alpha", "beta", "gamma", "delta", "猫", "東京"]
_agents = itertools.count()

memories = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
        st.floats(min_value=0, max_value=10, allow_nan=False),
        st.booleans(),  # a fact (subject/predicate) rather than a plain memory
    ),
    min_size=1,
    max_size=25,
)
queries = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)


def reference(agent: str, query: str, limit: int, w: RetrievalWeights) -> list[str]:
    """The ranking before vectors: full-text candidates scored by R2, ties by full-text position."""
    at = retrieval.c.now()
    cands = retrieval._fts_candidates(agent, query, max(limit * 3, 30), at, None, [])
    ranked = sorted(
        ((retrieval.score(m, pos, at, w), pos, m.id) for pos, m in enumerate(cands)),
        key=lambda t: (-t[0], t[1]),
    )
    return [mid for _, _, mid in ranked[:limit]]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    corpus=memories,
    query=queries,
    limit=st.integers(min_value=1, max_value=12),
    w_vec=st.sampled_from([0.0, 0.15, 0.5]),
)
def test_without_vectors_and_graph_the_ranking_is_the_full_text_one(corpus, query, limit, w_vec):
    agent = f"fusion-{next(_agents)}"
    with time_machine.travel(dt("2026-06-01T12:00:00"), tick=False):
        emb.set_memory_embedder(ThemeEmbedder())  # rows get vectors: "off" must come from the search side
        for k, (text, importance, is_fact) in enumerate(corpus):
            if is_fact:
                engine.store_temporal(
                    agent_id=agent, content=text, subject=f"s{k % 3}", predicate="p", object=text.split()[0],
                    importance=importance,
                )  # fmt: skip
            else:
                engine.store(agent_id=agent, content=text, importance=importance)
    with time_machine.travel(dt("2026-06-03T12:00:00"), tick=False):
        off = RetrievalWeights(w_graph=0.0, w_vec=0.0, w_vec_rank=0.0)
        expected = reference(agent, query, limit, off)
        # vectors off by weights, with an embedder attached and every row embedded
        assert [
            h.id for h in engine.search(agent_id=agent, query=query, limit=limit, weights=off, touch=False)
        ] == expected
        # vectors off by having no embedder, whatever the vector weights say
        emb.set_memory_embedder(None)
        w = RetrievalWeights(w_graph=0.0, w_vec=w_vec, w_vec_rank=w_vec)
        assert [
            h.id for h in engine.search(agent_id=agent, query=query, limit=limit, weights=w, touch=False)
        ] == expected


def test_vectors_on_change_the_ranking_in_the_property_test_corpus():
    """The property above is not vacuous: the same kind of corpus ranks differently once vectors count."""
    agent = "fusion-on"
    emb.set_memory_embedder(ThemeEmbedder())
    lexical = engine.store(agent_id=agent, content="tea tea red", importance=9).id
    near = engine.store(agent_id=agent, content="kitten", importance=1).id
    on = RetrievalWeights(w_graph=0.0, w_vec=0.5, w_vec_rank=0.5)
    off = RetrievalWeights(w_graph=0.0, w_vec=0.0, w_vec_rank=0.0)
    assert [h.id for h in engine.search(agent_id=agent, query="cat tea", weights=off, touch=False)] == [
        lexical
    ]
    assert near in [h.id for h in engine.search(agent_id=agent, query="cat tea", weights=on, touch=False)]


def fused(agent: str, query: str, limit: int, w: RetrievalWeights, top: int | None, slack: float = 0.0):
    """``_fuse``'s entries as (id, score, order), the dense side as search computes it."""
    at = retrieval.c.now()
    cands = retrieval._fts_candidates(agent, query, max(limit * 3, 30), at, None, [])
    dense = retrieval._dense(agent, query, w, max(limit * 3, 30))
    entries = retrieval._fuse(agent, cands, None, at, w, None, [], dense, top=top, time_slack=slack)
    return [(e[3].id, e[0], e[1]) for e in entries], entries


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    corpus=memories,
    query=st.lists(st.sampled_from([*WORDS, "feline", "kitten", "puppy"]), min_size=1, max_size=3).map(
        " ".join
    ),
    limit=st.integers(min_value=1, max_value=12),
    slack=st.sampled_from([0.0, 0.1, 1.0]),
)
def test_dense_rows_read_whole_only_when_they_can_reach_the_results(corpus, query, limit, slack):
    """Dense rows first read with the score's columns (``_settle``): the first ``limit`` entries, their scores
    and order are the ones reading every dense row whole gives, and those rows are whole."""
    agent = f"settle-{next(_agents)}"
    with time_machine.travel(dt("2026-06-01T12:00:00"), tick=False):
        emb.set_memory_embedder(ThemeEmbedder())
        for text, importance, _ in corpus:
            engine.store(agent_id=agent, content=text, importance=importance)
    w = RetrievalWeights(w_graph=0.0, w_vec=0.15, w_vec_rank=0.35)
    with time_machine.travel(dt("2026-06-03T12:00:00"), tick=False):
        full, whole = fused(agent, query, limit, w, None)
        settled, entries = fused(agent, query, limit, w, limit, slack)
    emb.set_memory_embedder(None)
    assert settled[:limit] == full[:limit]
    assert all(not e[3].get_deferred_fields() for e in entries)
    # what was left out could not have reached the first ``limit``, even with ``slack`` added
    kept = {mid for mid, _, _ in settled}
    floor = full[limit - 1][1] if len(full) >= limit else float("-inf")
    assert all(e[0] + slack * retrieval._trust_factor(e[3], w) < floor or e[3].id in kept for e in whole)


def test_dense_rows_that_cannot_reach_the_results_are_never_read_whole():
    agent = "settle-prune"
    emb.set_memory_embedder(ThemeEmbedder())
    lexical = [engine.store(agent_id=agent, content=f"cat tea {k}", importance=10).id for k in range(3)]
    for k in range(8):
        engine.store(agent_id=agent, content=f"kitten feline {k}", importance=0)
    w = RetrievalWeights(w_graph=0.0, w_vec=0.0, w_vec_rank=0.2)
    full, _ = fused(agent, "cat", 2, w, None)
    settled, _ = fused(agent, "cat", 2, w, 2)
    hits = engine.search(agent_id=agent, query="cat", limit=2, weights=w, touch=False)
    emb.set_memory_embedder(None)
    assert len(full) == 11  # the three full-text hits and every dense row
    assert len(settled) < len(full)  # the low-importance dense rows were left out
    assert [h.id for h in hits] == [mid for mid, _, _ in full[:2]]
    assert set(h.id for h in hits) <= set(lexical)


def test_score_rows_hold_the_values_the_orm_reads():
    """``ScoreRow`` comes from a plain cursor through the ORM's own converters: same values, same types."""
    agent = "settle-rows"
    with time_machine.travel(dt("2026-06-01T12:00:00"), tick=False):
        made = [engine.store(agent_id=agent, content=f"row {k}", importance=k / 3).id for k in range(4)]
        other = engine.store(agent_id="settle-other", content="row x").id
    with time_machine.travel(dt("2026-06-02T08:30:00"), tick=False):
        engine.search(agent_id=agent, query="row", limit=2)  # two rows get last_accessed and a count
        at = retrieval.c.now()
        rows = retrieval._score_rows([*reversed(made), other], agent, at, None)
    assert [r.id for r in rows] == list(reversed(made))  # dense order; another agent's id is absent
    for r in rows:
        m = Memory.objects.get(id=r.id)
        for name in retrieval.SCORE_COLUMNS:
            assert getattr(r, name) == getattr(m, name) and type(getattr(r, name)) is type(getattr(m, name))
    assert sum(r.access_count for r in rows) == 2 and any(r.last_accessed for r in rows)
