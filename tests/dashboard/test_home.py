"""Home: the user's agents with their counts, in a fixed number of queries."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from memory import engine
from memory.models import Agent
from tests.conftest import login, make_user
from tests.dashboard.conftest import assert_login_redirect, make_memories, quarantine_fact

pytestmark = pytest.mark.django_db
URL = "/"


def counts_of(html: str, agent_id: str) -> dict[str, int]:
    row = re.search(rf'<tr id="agent-\d+" data-agent="{re.escape(agent_id)}">(.*?)</tr>', html, re.S)
    assert row, f"no row for {agent_id}"
    return {
        k: int(re.sub(r"<[^>]+>", "", v))
        for k, v in re.findall(r'data-count="(\w+)">(.*?)</td>', row.group(1))
    }


def test_url_is_home():
    assert reverse("dashboard:home") == URL


def test_anonymous_is_sent_to_login(client):
    assert_login_redirect(client, URL)


def test_member_sees_own_agents_only(client, viewer, agent, other_agent):
    login(client, viewer)
    response = client.get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    assert reverse("dashboard:agent", args=[agent.agent_id]) in html
    assert other_agent.agent_id not in html


def test_outsider_does_not_see_the_team_agent(client, outsider, agent, other_agent):
    login(client, outsider)
    html = client.get(URL).content.decode()
    assert agent.agent_id not in html
    assert other_agent.agent_id in html


def test_user_without_team_gets_an_empty_state(client, db):
    login(client, make_user("loner"))
    html = client.get(URL).content.decode()
    assert "No agents yet" in html


def test_superuser_sees_unassigned_agents(client, team, agent):
    engine.store(agent_id="stray-bot", content="registered on first write")
    assert Agent.objects.get(agent_id="stray-bot").team is None
    login(client, make_user("root", is_superuser=True))
    html = client.get(URL).content.decode()
    assert "stray-bot" in html and "unassigned" in html
    assert agent.agent_id not in html  # not a member of that team


def test_counts_match_engine_summary(client, viewer, agent, history):
    make_memories(agent.agent_id, 3)
    quarantine_fact(
        agent.agent_id, content="Alice lives on Mars", subject="alice", predicate="lives_in", object="Mars"
    )
    login(client, viewer)
    counts = counts_of(client.get(URL).content.decode(), agent.agent_id)
    summary = engine.summarize(agent_id=agent.agent_id)
    assert counts == {
        "current": summary["current"],
        "facts": summary["current_facts"],
        "quarantined": summary["quarantined"],
        "retracted": summary["retracted"],
        "total": summary["total"],
    }
    assert counts["retracted"] == 1  # the purged poison write
    assert counts["facts"] == 3 + 1  # three customers and Alice
    assert counts["quarantined"] == 1


def test_agent_without_memories_shows_zeros(client, viewer, agent):
    login(client, viewer)
    counts = counts_of(client.get(URL).content.decode(), agent.agent_id)
    assert set(counts.values()) == {0}


def test_query_count_does_not_grow_with_agents_or_memories(client, team, viewer, django_assert_num_queries):
    for i in range(6):
        Agent.objects.create(agent_id=f"bot-{i}", team=team)
        make_memories(f"bot-{i}", 6)
    login(client, viewer)
    # session, user, agents (with team), their state stamps, counts of every agent in one aggregate, the next
    # moment a row starts or stops holding (2); then the kept counts (engine.state_memo_many): the stamps alone
    with django_assert_num_queries(7):
        response = client.get(URL)
    with django_assert_num_queries(4):
        response = client.get(URL)
    assert response.status_code == 200
    assert response.content.decode().count('data-agent="bot-') == 6
