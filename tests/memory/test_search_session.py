"""Issue 17 (b): session-neighbourhood expansion of search hits, and that it reduces to the R2 ranking when off."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import engine
from memory.engine import common as c
from memory.engine import retrieval
from memory.engine.types import RetrievalWeights

pytestmark = pytest.mark.django_db

A = "session-agent"
B = "other-agent"
OFF = RetrievalWeights(w_session=0.0)
ON = RetrievalWeights(w_session=0.5)


def ids(hits):
    return [h.id for h in hits]


def _conversation(agent=A, session="s1"):
    before = engine.store(agent_id=agent, content="Good morning, how are you?", session_id=session)
    hit = engine.store(
        agent_id=agent, content="I adopted a kitten from the shelter last week.", session_id=session
    )
    after = engine.store(
        agent_id=agent, content="Her name is Luna and she sleeps all day.", session_id=session
    )
    far = engine.store(agent_id=agent, content="Also I repainted the fence.", session_id=session)
    return before, hit, after, far


def test_the_turns_around_a_hit_join_the_ranking_only_when_on():
    before, hit, after, far = _conversation()
    assert ids(engine.search(agent_id=A, query="kitten", touch=False, weights=OFF)) == [hit.id]
    got = engine.search(agent_id=A, query="kitten", touch=False, weights=ON)
    assert got[0].id == hit.id and set(ids(got)) == {hit.id, before.id, after.id}
    assert far.id not in ids(got)  # only the adjacent turns
    assert all(h.fts_position is None for h in got[1:])


def test_neighbours_come_from_the_same_session_of_the_same_agent_and_are_current():
    engine.store(agent_id=A, content="unrelated words in another session", session_id="s0")
    before, hit, after, _ = _conversation()
    engine.store(agent_id=A, content="trailing words in another session", session_id="s2")
    # another agent's rows with the same session id, written in between, are never neighbours
    _conversation(agent=B)
    got = ids(engine.search(agent_id=A, query="kitten", touch=False, weights=ON))
    assert set(got) == {hit.id, before.id, after.id}
    engine.invalidate_by_origin(agent_id=A, origin="unattributed")  # retracts every row of A
    assert engine.search(agent_id=A, query="kitten", touch=False, weights=ON) == []


def test_a_retracted_or_quarantined_neighbour_is_skipped_for_the_next_current_turn():
    first = engine.store(agent_id=A, content="Luna is the name", session_id="s1")
    gone = engine.store(agent_id=A, content="poisoned turn", session_id="s1", origin="channel:bad")
    hit = engine.store(agent_id=A, content="I adopted a kitten", session_id="s1")
    engine.invalidate_by_origin(agent_id=A, origin="channel:bad")
    got = ids(engine.search(agent_id=A, query="kitten", touch=False, weights=ON))
    assert got == [hit.id, first.id] and gone.id not in got


def test_layer_and_tag_filters_apply_to_neighbours():
    engine.store(agent_id=A, content="Her name is Luna", session_id="s1", layer="semantic")
    hit = engine.store(agent_id=A, content="I adopted a kitten", session_id="s1")
    assert ids(engine.search(agent_id=A, query="kitten", layer="episodic", touch=False, weights=ON)) == [
        hit.id
    ]


def test_rows_without_a_session_are_not_expanded():
    engine.store(agent_id=A, content="Good morning")
    hit = engine.store(agent_id=A, content="I adopted a kitten")
    engine.store(agent_id=A, content="Her name is Luna")
    assert ids(engine.search(agent_id=A, query="kitten", touch=False, weights=ON)) == [hit.id]


def test_a_ranked_neighbour_gains_the_bonus_on_top_of_its_score():
    a = engine.store(agent_id=A, content="kitten kitten kitten food", session_id="s1")
    b = engine.store(agent_id=A, content="kitten toy", session_id="s1")
    off = {h.id: h.score for h in engine.search(agent_id=A, query="kitten", touch=False, weights=OFF)}
    on = {h.id: h.score for h in engine.search(agent_id=A, query="kitten", touch=False, weights=ON)}
    assert on[a.id] > off[a.id] and on[b.id] > off[b.id]


WORDS = ["alpha", "beta", "gamma", "delta", "kitten", "luna", "fence", "report", "老闆", "台北"]


def _reference(agent, query, w):
    """Today's R2 ranking: FTS candidates (bm25 order), scored by R2, ties by FTS position."""
    at = c.now()
    cands = retrieval._fts_candidates(agent, query, 30, at, None, [])
    scored = sorted(
        ((retrieval.score(m, p, at, w), p, m) for p, m in enumerate(cands)), key=lambda t: (-t[0], t[1])
    )
    return [m.id for _, _, m in scored[:10]]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
            st.sampled_from([None, "s1", "s2"]),
            st.integers(min_value=0, max_value=10),
        ),
        min_size=1,
        max_size=25,
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
def test_with_session_and_graph_off_the_ranking_is_the_r2_ranking(rows, query):
    agent = f"prop-{c.new_memory_id()}"
    t0 = datetime(2026, 3, 1, tzinfo=UTC)
    for k, (words, session, importance) in enumerate(rows):
        with time_machine.travel(t0 + timedelta(hours=k), tick=False):  # recency differs from row to row
            engine.store(agent_id=agent, content=" ".join(words), session_id=session, importance=importance)
    q = " ".join(query)
    with time_machine.travel(
        t0 + timedelta(days=3), tick=False
    ):  # one instant for the search and the reference
        for w in (replace(OFF, w_graph=0.0), replace(OFF, w_graph=0.0, w_feedback=0.0)):
            got = engine.search(agent_id=agent, query=q, touch=False, weights=w)
            assert ids(got) == _reference(agent, q, w)
