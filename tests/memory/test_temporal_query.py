"""Issue 17 (item 5): time expressions in queries, and search ranking by the time they name."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import engine
from memory.engine import common as c
from memory.engine import timeparse as tp
from memory.engine.types import RetrievalWeights

NOW = datetime(2023, 5, 30, 12, 0, tzinfo=UTC)  # a Tuesday


def spans(query, now=NOW):
    return [(i.start.date().isoformat(), i.end.date().isoformat()) for i in tp.parse(query, now)]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Where did I go last June?", [("2022-06-01", "2022-07-01")]),
        ("what did I do in March", [("2023-03-01", "2023-04-01")]),
        ("in March 2022", [("2022-03-01", "2022-04-01")]),
        ("the trip in 2021", [("2021-01-01", "2022-01-01")]),
        ("What charity event did I join a month ago?", [("2023-04-21", "2023-05-08")]),
        ("two weeks ago", [("2023-05-12", "2023-05-20")]),
        ("who did I meet last Tuesday", [("2023-05-22", "2023-05-25")]),
        ("yesterday", [("2023-05-29", "2023-05-30")]),
        ("the past three months", [("2023-02-27", "2023-05-31")]),
        ("2023年3月我去了哪里", [("2023-03-01", "2023-04-01")]),
        ("去年6月", [("2022-06-01", "2022-07-01")]),
        ("2021年的旅行", [("2021-01-01", "2022-01-01")]),
        ("三天前", [("2023-05-26", "2023-05-29")]),
        ("十二天前", [("2023-05-16", "2023-05-20")]),
        ("上周我见了谁", [("2023-05-21", "2023-05-25")]),
    ],
)
def test_time_expressions_become_intervals(query, expected):
    assert spans(query) == expected


@pytest.mark.parametrize(
    "query",
    ["How many weeks ago did I start?", "I may go", "before the move", "call me at 2023456", "", "🙂" * 5],
)
def test_text_without_a_date_names_no_time(query):
    assert tp.parse(query, NOW) == []


@given(st.text(max_size=300), st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2090, 1, 1)))
def test_any_text_parses_to_well_formed_intervals(text, now):
    got = tp.parse(text, now.replace(tzinfo=UTC))
    assert len(got) <= tp.MAX_INTERVALS
    assert all(i.start < i.end and i.start.tzinfo is not None for i in got)


@given(st.integers(min_value=1, max_value=12), st.integers(min_value=1, max_value=60))
def test_n_units_ago_contains_that_day(n, days_back):
    now = NOW + timedelta(days=days_back)
    for unit, size in (("day", 1), ("week", 7), ("month", 30.44)):
        (iv,) = tp.parse(f"{n} {unit}s ago", now)
        target = now - timedelta(days=n * size)
        assert iv.start <= target <= iv.end


def test_a_memorys_time_is_its_session_date_then_a_facts_valid_from_then_its_write_time():
    written = datetime(2026, 1, 1, tzinfo=UTC)
    assert tp.memory_time({"date": "2023/05/24 (Wed) 17:25"}, written, None, written) == datetime(
        2023, 5, 24, 17, 25, tzinfo=UTC
    )
    assert tp.memory_time({"session_date": "2022-12-25"}, written, None, written) == datetime(
        2022, 12, 25, tzinfo=UTC
    )
    valid = datetime(2020, 3, 1, tzinfo=UTC)
    assert tp.memory_time({"date": "soon"}, valid, "bob", written) == valid
    assert tp.memory_time({}, written, None, written) == written
    assert tp.closeness(datetime(2023, 3, 5, tzinfo=UTC), tp.parse("in March", NOW)) == 1.0
    assert 0 < tp.closeness(datetime(2023, 4, 15, tzinfo=UTC), tp.parse("in March", NOW)) < 1.0
    assert tp.closeness(None, tp.parse("in March", NOW)) == 0.0


A = "time-agent"
TIME = RetrievalWeights(w_time=0.5)


@pytest.mark.django_db
@time_machine.travel(NOW, tick=False)
def test_search_ranks_the_memory_of_the_named_time_first_only_when_on():
    march = engine.store(
        agent_id=A,
        content="We went hiking in the hills with the whole family and the dog",
        metadata={"date": "2023/03/12"},
    )
    april = engine.store(
        agent_id=A,
        content="Hiking, hiking and more hiking: we went hiking in the hills",
        metadata={"date": "2023/04/20"},
    )
    off = [h.id for h in engine.search(agent_id=A, query="where did we go hiking in March", touch=False)]
    on = [
        h.id
        for h in engine.search(agent_id=A, query="where did we go hiking in March", touch=False, weights=TIME)
    ]
    assert set(off) == set(on) == {march.id, april.id}
    assert off[0] == april.id and on[0] == march.id  # the text saying hiking more wins on words alone
    plain = [
        h.id for h in engine.search(agent_id=A, query="where did we go hiking", touch=False, weights=TIME)
    ]
    assert plain == [h.id for h in engine.search(agent_id=A, query="where did we go hiking", touch=False)]


@pytest.mark.django_db
@time_machine.travel(NOW, tick=False)
def test_facts_are_placed_by_their_valid_time():
    oslo = engine.store_temporal(agent_id=A, content="trip trip to Oslo", subject="oslo trip", predicate="happened",
                                 valid_from="2021-06-01T00:00:00Z")  # fmt: skip
    rome = engine.store_temporal(agent_id=A, content="trip to Rome", subject="rome trip", predicate="happened",
                                 valid_from="2022-06-01T00:00:00Z")  # fmt: skip
    query = "my trip in 2022"
    assert [h.id for h in engine.search(agent_id=A, query=query, touch=False)] == [oslo.id, rome.id]
    assert [h.id for h in engine.search(agent_id=A, query=query, touch=False, weights=TIME)] == [
        rome.id,
        oslo.id,
    ]


WORDS = ["alpha", "beta", "kitten", "march", "hiking", "luna", "台北", "2023年", "last", "week"]


@pytest.mark.django_db
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
            st.dates(date(2020, 1, 1), date(2023, 5, 29)),
        ),
        min_size=1,
        max_size=15,
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
def test_a_query_naming_no_time_ranks_as_with_time_off(rows, query):
    agent = f"tprop-{c.new_memory_id()}"
    with time_machine.travel(NOW, tick=False):
        for words, day in rows:
            engine.store(agent_id=agent, content=" ".join(words), metadata={"date": day.isoformat()})
        q = " ".join(query)
        on = engine.search(agent_id=agent, query=q, touch=False, weights=RetrievalWeights(w_time=0.5))
        off = engine.search(agent_id=agent, query=q, touch=False, weights=RetrievalWeights(w_time=0.0))
        if not tp.parse(q, NOW):
            assert [(h.id, h.score) for h in on] == [(h.id, h.score) for h in off]
        else:
            assert len(on) >= len(off)  # a deeper pool, never fewer rows
