"""SPEC R4: batch fetch by id."""

from __future__ import annotations

import pytest

from memory import engine
from memory.engine.temporal import check_fact, write_fact
from tests.memory.conftest import A

pytestmark = pytest.mark.django_db


def test_request_order_missing_ids_and_counts():
    a = engine.store(agent_id=A, content="one").id
    b = engine.store(agent_id=A, content="two").id
    out = engine.get_by_ids(agent_id=A, ids=[b, "m_nope", a])
    assert [m.id for m in out["memories"]] == [b, a]
    assert out["missing_ids"] == ["m_nope"]
    assert (out["total_found"], out["total_missing"]) == (2, 1)


def test_other_agents_ids_look_exactly_like_unknown_ids():
    theirs = engine.store(agent_id="someone-else", content="private").id
    out = engine.get_by_ids(agent_id=A, ids=[theirs, "m_unknown"])
    assert out == {"memories": [], "missing_ids": [theirs, "m_unknown"], "total_found": 0, "total_missing": 2}
    with pytest.raises(engine.EngineError) as e1:
        engine.get_memory(agent_id=A, memory_id=theirs)
    with pytest.raises(engine.EngineError) as e2:
        engine.get_memory(agent_id=A, memory_id="m_unknown")
    assert e1.value.as_dict() == e2.value.as_dict() and e1.value.code == "not_found"


def test_one_query_for_a_full_batch(django_assert_num_queries):
    wanted = [engine.store(agent_id=A, content=f"row {i}").id for i in range(100)]
    with django_assert_num_queries(1):
        out = engine.get_by_ids(agent_id=A, ids=list(reversed(wanted)))
    assert [m.id for m in out["memories"]] == list(reversed(wanted))


def test_more_than_100_ids_is_rejected_before_reading(django_assert_num_queries):
    with django_assert_num_queries(0), pytest.raises(engine.EngineError) as err:
        engine.get_by_ids(agent_id=A, ids=[f"m_{i}" for i in range(101)])
    assert err.value.code == "too_many_ids"


@pytest.mark.parametrize("bad", ["m_1", None, [1, 2], [""], {"a": 1}])
def test_bad_ids_argument(bad):
    with pytest.raises(engine.EngineError) as err:
        engine.get_by_ids(agent_id=A, ids=bad)
    assert err.value.code == "invalid_argument"


def test_quarantined_rows_only_for_reviewers_and_retracted_never():
    q = write_fact(
        check_fact(agent_id=A, content="held back", subject="s", predicate="p", object="o"), quarantine=True
    ).id
    bad = engine.store(agent_id=A, content="poison", origin="channel:x").id
    engine.invalidate_by_origin(agent_id=A, origin="channel:x")
    assert engine.get_by_ids(agent_id=A, ids=[q, bad])["missing_ids"] == [q, bad]
    reviewer_view = engine.get_by_ids(agent_id=A, ids=[q, bad], include_quarantined=True)
    assert [m.id for m in reviewer_view["memories"]] == [q]


def test_duplicate_ids_are_returned_once():
    a = engine.store(agent_id=A, content="one").id
    out = engine.get_by_ids(agent_id=A, ids=[a, a])
    assert out["total_found"] == 1 and out["missing_ids"] == []


def test_superseded_rows_are_fetchable_with_their_status():
    old = engine.store_temporal(
        agent_id=A, content="v1", subject="k", predicate="v", object="1", valid_from="2026-01-01T00:00:00Z"
    ).id
    engine.store_temporal(
        agent_id=A, content="v2", subject="k", predicate="v", object="2", valid_from="2026-02-01T00:00:00Z"
    )
    rec = engine.get_by_ids(agent_id=A, ids=[old])["memories"][0]
    assert rec.superseded_by is not None and rec.to_dict()["valid_until"] == "2026-02-01T00:00:00Z"
