"""Feedback that counts (SPEC B9): verdicts move a per-memory weight ``w ← w + α(r − w)`` that enters the R2 score
as ``w_feedback · w``; access reinforcement stretches the recency half-life up to 10× and fades after 30 days."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
import time_machine

from memory import engine
from memory.engine import reinforce, retrieval
from memory.models import FeedbackWeight, Memory
from tests.conftest import dt
from tests.memory.conftest import A

pytestmark = pytest.mark.django_db

T0 = dt("2030-01-01T09:00:00Z")


def ids(hits) -> list[str]:
    return [h.id for h in hits]


def two_twins() -> tuple[str, str]:
    """Two memories with the same text, time, importance and trust: they differ only by full-text position
    (identical bm25, so the id decides), which is worth 0.35/1 − 0.35/2 = 0.175 (× trust) to the first."""
    with time_machine.travel(T0, tick=False):
        first = engine.store(agent_id=A, content="the wifi password is on the fridge").id
        second = engine.store(agent_id=A, content="the wifi password is on the fridge").id
    return first, second


def test_verdicts_on_a_memory_move_its_ranking_by_the_formula() -> None:
    first, second = two_twins()
    with time_machine.travel(T0 + timedelta(days=1), tick=False):
        before = {h.id: h for h in engine.search(agent_id=A, query="wifi password", touch=False)}
        top, low = ids(engine.search(agent_id=A, query="wifi password", touch=False))
        for _ in range(5):
            engine.feedback(agent_id=A, verdict="INCORRECT", memory_id=top)
        for _ in range(3):
            engine.feedback(agent_id=A, verdict="+", memory_id=low)
        after = {h.id: h for h in engine.search(agent_id=A, query="wifi password", touch=False)}
        ranked = ids(engine.search(agent_id=A, query="wifi password", touch=False))
    w_top, w_low = -(1 - 0.8**5), 1 - 0.8**3  # w ← w + 0.2(r − w) from 0, five times −1, three times +1
    assert FeedbackWeight.objects.get(memory_id=top).weight == pytest.approx(w_top)
    assert FeedbackWeight.objects.get(memory_id=low).weight == pytest.approx(w_low)
    assert after[top].feedback == pytest.approx(w_top) and after[low].feedback == pytest.approx(w_low)
    weights = engine.RetrievalWeights()
    trust = (1 - weights.w_trust) + weights.w_trust * Memory.objects.get(id=low).origin_trust
    assert after[top].score - before[top].score == pytest.approx(weights.w_feedback * w_top * trust)
    assert after[low].score - before[low].score == pytest.approx(weights.w_feedback * w_low * trust)
    assert ranked == [low, top]  # the verdicts turned the order around
    assert after[low].to_dict()["feedback"] == pytest.approx(w_low)


def test_incorrect_verdicts_on_searches_push_what_they_returned_down() -> None:
    with time_machine.travel(T0, tick=False):  # the second is more important: it almost beats the first
        first = engine.store(agent_id=A, content="the wifi password is on the fridge").id
        second = engine.store(agent_id=A, content="the wifi password is on the fridge", importance=9).id
    tops, weights = [], []
    with time_machine.travel(T0 + timedelta(days=1), tick=False):
        for _ in range(6):  # the agent searches, gets an answer, and says it was wrong
            found = engine.agent_search(agent_id=A, query="fridge", limit=1)
            result = engine.feedback(agent_id=A, verdict="-", query_id=found.query_id)
            assert list(result.weights) == [found.hits[0].id] and result.to_dict()["adjusted"] == 1
            tops.append(found.hits[0].id)
            weights.append(result.weights[found.hits[0].id])
    assert tops[0] == first  # the first full-text hit wins at first,
    flip = tops.index(second)  # until its INCORRECT verdicts push it below the other
    assert flip >= 1 and tops[:flip] == [first] * flip
    assert weights[:flip] == pytest.approx([-(1 - 0.8**k) for k in range(1, flip + 1)])


def test_a_search_verdict_moves_every_returned_memory() -> None:
    a = engine.store(agent_id=A, content="espresso machine descaling").id
    b = engine.store(agent_id=A, content="espresso beans order").id
    found = engine.agent_search(agent_id=A, query="espresso")
    engine.feedback(agent_id=A, verdict="CORRECT", query_id=found.query_id)
    engine.feedback(agent_id=A, verdict="AMBIGUOUS", query_id=found.query_id)
    weights = dict(FeedbackWeight.objects.values_list("memory_id", "weight"))
    assert weights == {a: pytest.approx(0.16), b: pytest.approx(0.16)}
    assert FeedbackWeight.objects.get(memory_id=a).verdicts == 2


def test_without_the_feedback_weight_the_ranking_is_as_before() -> None:
    first, second = two_twins()
    off = engine.RetrievalWeights(w_feedback=0)
    with time_machine.travel(T0 + timedelta(days=1), tick=False):
        before = {h.id: h.score for h in engine.search(agent_id=A, query="wifi password", touch=False)}
        engine.feedback(agent_id=A, verdict="-", memory_id=first)
        hits = {h.id: h for h in engine.search(agent_id=A, query="wifi password", touch=False, weights=off)}
    assert {i: h.score for i, h in hits.items()} == pytest.approx(before)
    assert hits[first].feedback == 0.0


def test_access_reinforcement_stretches_the_half_life_and_fades_after_30_days() -> None:
    at = dt("2030-06-01T00:00:00Z")
    assert reinforce.reinforcement(0, at, at) == 1.0
    assert reinforce.reinforcement(5, None, at) == 1.0
    fresh = reinforce.reinforcement(30, at - timedelta(days=10), at)
    assert fresh == pytest.approx(1 + 9 * (1 - math.exp(-3)))  # used within 30 days: the full multiplier
    assert reinforce.reinforcement(10_000, at, at) == pytest.approx(10.0)  # never more than 10x
    faded = reinforce.reinforcement(30, at - timedelta(days=60), at)
    assert faded == pytest.approx(1 + (fresh - 1) * math.exp(-1))
    assert reinforce.reinforcement(30, at - timedelta(days=400), at) == pytest.approx(1.0, abs=1e-4)


def test_reinforcement_enters_recency_with_frozen_time() -> None:
    with time_machine.travel(T0, tick=False):
        used = engine.store(agent_id=A, content="standup notes template").id
        idle = engine.store(agent_id=A, content="standup notes template").id
    for day in range(20):  # read back every day for 20 days
        with time_machine.travel(T0 + timedelta(days=day), tick=False):
            engine.search(agent_id=A, query="standup", limit=1)
            Memory.objects.filter(id=idle).update(access_count=0, last_accessed=None)  # keep one never read
    Memory.objects.filter(id=used).update(access_count=20)
    row = Memory.objects.get(id=used)
    s = retrieval.strength(20, 5.0)
    for days_later in (10, 45, 120):
        at = T0 + timedelta(days=19 + days_later)
        a = reinforce.reinforcement(20, row.last_accessed, at)
        expected = math.exp(-days_later / (s * a))
        assert retrieval.recency(row, at) == pytest.approx(expected)
    at = T0 + timedelta(days=19 + 10)
    assert retrieval.recency(row, at) > math.exp(-10 / s)  # reinforced: decays slower than R2 alone
    late = T0 + timedelta(days=19 + 300)
    assert reinforce.reinforcement(20, row.last_accessed, late) == pytest.approx(1.0, abs=1e-3)  # faded
    with time_machine.travel(at, tick=False):
        ranked = ids(engine.search(agent_id=A, query="standup", touch=False))
    assert ranked[0] == used


def test_feedback_on_a_memory_another_agent_owns_changes_nothing() -> None:
    theirs = engine.store(agent_id="agent-b", content="x").id
    with pytest.raises(engine.EngineError):
        engine.feedback(agent_id=A, verdict="+", memory_id=theirs)
    assert FeedbackWeight.objects.count() == 0
