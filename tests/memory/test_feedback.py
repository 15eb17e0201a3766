"""memory_feedback's engine half: ``engine.feedback_record`` (SPEC A3); and plain memories with a TTL."""

from __future__ import annotations

import pytest
import time_machine

from memory import engine
from memory.models import AuditEvent, Feedback
from tests.conftest import dt
from tests.memory.conftest import A

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("verdict", "stored"), [("+", "CORRECT"), ("-", "INCORRECT"), ("ambiguous", "AMBIGUOUS")]
)
def test_a_verdict_on_an_own_memory(verdict: str, stored: str) -> None:
    mid = engine.store(agent_id=A, content="the sky is green").id
    result = engine.feedback_record(
        agent_id=A, verdict=verdict, memory_id=mid, note=" wrong colour ", actor="token:3"
    )
    row = Feedback.objects.get(id=result.id)
    assert (row.agent_id, row.target_type, row.memory_id, row.query_id) == (A, "memory", mid, None)
    assert (row.verdict, row.note, row.actor) == (stored, "wrong colour", "token:3")
    assert result.to_dict()["target_id"] == mid and result.to_dict()["verdict"] == stored
    event = AuditEvent.objects.get(action="feedback")
    assert (event.memory_id, event.reason, event.actor) == (mid, stored, "token:3")


def test_a_verdict_on_a_search() -> None:
    qid = engine.agent_search(agent_id=A, query="anything").query_id
    result = engine.feedback_record(agent_id=A, verdict="CORRECT", query_id=qid)
    assert (result.target_type, result.target_id) == ("query", qid)
    assert Feedback.objects.get().query_id == qid


def test_a_query_id_no_search_was_journaled_under_is_not_found() -> None:
    with pytest.raises(engine.EngineError) as caught:
        engine.feedback_record(agent_id=A, verdict="CORRECT", query_id=engine.new_query_id())
    assert (caught.value.code, caught.value.field) == ("not_found", "query_id")
    assert Feedback.objects.count() == 0


def test_another_agents_memory_and_an_unknown_id_fail_identically() -> None:
    theirs = engine.store(agent_id="someone-else", content="private").id
    errors = []
    for mid in (theirs, "m_" + "0" * 26):
        with pytest.raises(engine.EngineError) as caught:
            engine.feedback_record(agent_id=A, verdict="+", memory_id=mid)
        errors.append(caught.value.as_dict())
    assert (
        errors[0]
        == errors[1]
        == {"code": "not_found", "message": "no memory with that id", "field": "memory_id"}
    )
    assert Feedback.objects.count() == 0


def test_retracted_memories_are_not_found() -> None:
    fact = engine.store_temporal(agent_id=A, content="x", subject="s", predicate="p", origin="tool_echo:bad")
    engine.invalidate_by_origin(agent_id=A, origin="tool_echo:bad")
    with pytest.raises(engine.EngineError) as caught:
        engine.feedback_record(agent_id=A, verdict="+", memory_id=fact.id)
    assert caught.value.code == "not_found"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"verdict": "maybe", "query_id": "q_" + "0" * 26}, "verdict"),
        ({"verdict": None, "query_id": "q_" + "0" * 26}, "verdict"),
        ({"verdict": "+"}, "memory_id"),
        ({"verdict": "+", "memory_id": "m_x", "query_id": "q_" + "0" * 26}, "memory_id"),
        ({"verdict": "+", "query_id": "m_" + "0" * 26}, "query_id"),
        ({"verdict": "+", "memory_id": ""}, "memory_id"),
        ({"verdict": "+", "query_id": "q_" + "0" * 26, "note": "n" * 2001}, "note"),
    ],
)
def test_bad_input_is_invalid_argument_and_writes_nothing(kwargs: dict, field: str) -> None:
    with pytest.raises(engine.EngineError) as caught:
        engine.feedback_record(agent_id=A, **kwargs)
    assert (caught.value.code, caught.value.field) == ("invalid_argument", field)
    assert Feedback.objects.count() == 0


def test_query_ids_are_opaque_and_unique() -> None:
    ids = {engine.new_query_id() for _ in range(50)}
    assert len(ids) == 50 and all(i.startswith("q_") and len(i) == 28 for i in ids)


def test_a_plain_memory_with_valid_until_stops_being_current() -> None:
    with time_machine.travel(dt("2030-01-01T00:00:00Z"), tick=False):
        mid = engine.store(agent_id=A, content="parking spot 42", valid_until="2030-01-03T00:00:00Z").id
        assert [m.id for m in engine.list_recent(agent_id=A)] == [mid]
    with time_machine.travel(dt("2030-01-04T00:00:00Z"), tick=False):
        assert engine.list_recent(agent_id=A) == []
        assert engine.search(agent_id=A, query="parking") == []
        assert engine.get_memory(agent_id=A, memory_id=mid).valid_until == dt("2030-01-03T00:00:00Z")


@pytest.mark.parametrize("until", ["2000-01-01T00:00:00Z", "2099-01-01T00:00:00"])
def test_valid_until_must_be_an_aware_future_time(until: str) -> None:
    with pytest.raises(engine.EngineError) as caught:
        engine.store(agent_id=A, content="x", valid_until=until)
    assert (caught.value.code, caught.value.field) == ("invalid_time", "valid_until")


def test_without_valid_until_a_plain_memory_stays_open() -> None:
    mid = engine.store(agent_id=A, content="no ttl").id
    assert engine.get_memory(agent_id=A, memory_id=mid).valid_until is None
