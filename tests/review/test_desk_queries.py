"""The desk's query count does not grow with the number of batches or of the agent's memories (issue 19, "pages
stay ≤ 50 ms with constant query counts"; the time itself is benchmarks/bench_desk_page.py), and the cards read
their rows by primary key without ever showing another agent's row."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dashboard.selectors import memories_by_id
from memory import engine
from tests.conftest import login, make_burst
from tests.dashboard.conftest import make_memories
from tests.review.test_quarantine import card_ids, url

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("guard_defaults")]
VIEWS = ("", "?sort=impact", "?sort=size", "?sort=origin", "?status=all", "?q=customer")


def queries(client, path: str) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path)
    assert response.status_code == 200
    return len(captured.captured_queries), response.content.decode()


def test_the_desk_reads_the_same_number_of_queries_at_one_batch_and_at_many(client, reviewer, agent):
    desk = login(client, reviewer)
    base = url(agent.agent_id)
    engine.store_temporal(
        agent_id=agent.agent_id, content="customer-0 plan basic", subject="customer-0", predicate="plan",
        object="basic", origin="user_direct",
    )  # fmt: skip
    make_burst(agent.agent_id, "customer-0", origin="channel:crm-0")
    small = {view: queries(desk, base + view)[0] for view in VIEWS}

    for b in range(1, 8):  # seven more batches, one decided, and a few hundred more memories
        batch = make_burst(agent.agent_id, f"customer-{b}", origin=f"channel:crm-{b % 3}")
        if b == 3:
            engine.quarantine_reject(request_id=batch.id, actor="user:rex", reason="wrong")
    make_memories(agent.agent_id, 120)

    for view in VIEWS:
        count, html = queries(desk, base + view)
        assert count == small[view], (view, count, small[view])
        assert len(card_ids(html)) >= (8 if view == "?status=all" else 2), view


def test_cards_read_rows_by_key_and_never_another_agents(agent, other_agent):
    mine = engine.store(agent_id=agent.agent_id, content="mine", origin="user_direct").id
    theirs = engine.store(agent_id=other_agent.agent_id, content="theirs", origin="user_direct").id
    with CaptureQueriesContext(connection) as captured:
        rows = memories_by_id(agent.agent_id, [mine, theirs, "m_missing", mine])
    assert list(rows) == [mine]
    assert len(captured.captured_queries) == 1
    assert "agent_id" not in captured.captured_queries[0]["sql"].split("WHERE", 1)[1]  # by primary key alone
    assert memories_by_id(agent.agent_id, []) == {}
