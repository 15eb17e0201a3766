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
