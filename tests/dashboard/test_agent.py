"""Agent home: counts, recent memories, recently written keys, links; guarded like every agent page."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from memory import engine
from tests.conftest import login
from tests.dashboard.conftest import assert_login_redirect, assert_same_404, make_memories

pytestmark = pytest.mark.django_db


def url(agent_id: str) -> str:
    return reverse("dashboard:agent", args=[agent_id])


def test_anonymous_is_sent_to_login(client, agent):
    assert_login_redirect(client, url(agent.agent_id))


def test_outsider_gets_404(client, outsider, agent):
    login(client, outsider)
    assert client.get(url(agent.agent_id)).status_code == 404


def test_other_teams_agent_is_the_same_404_as_a_missing_one(client, viewer, agent, other_agent):
    login(client, viewer)
    assert_same_404(client, url(other_agent.agent_id), url("no-such-agent"))


def test_member_sees_counts_recent_memories_and_links(client, viewer, agent, history):
    engine.store(agent_id=agent.agent_id, content="Remember to send the invoice")
    login(client, viewer)
    response = client.get(url(agent.agent_id))
    assert response.status_code == 200
    html = response.content.decode()
    summary = engine.summarize(agent_id=agent.agent_id)
    counts = dict(re.findall(r'data-count="(\w+)">(\d+)<', html))
    assert counts == {
        "current": str(summary["current"]),
        "facts": str(summary["current_facts"]),
        "quarantined": str(summary["quarantined"]),
        "retracted": str(summary["retracted"]),
        "total": str(summary["total"]),
    }
    recent = html[html.index('id="recent-memories"') :]
    assert "Remember to send the invoice" in recent
    assert reverse("dashboard:memory", args=[agent.agent_id, history["berlin"]]) in recent
    assert "Alice lives in Atlantis" not in recent  # retracted rows are not recent memories
    assert "subject=alice&amp;predicate=lives_in" in html  # the key's timeline
    assert reverse("dashboard:memories", args=[agent.agent_id]) in html


def test_stored_text_is_escaped(client, viewer, agent):
    engine.store(agent_id=agent.agent_id, content="<script>window.__xss=1</script>")
    login(client, viewer)
    html = client.get(url(agent.agent_id)).content.decode()
    assert "<script>window.__xss" not in html
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in html


def test_query_count_is_fixed(client, viewer, agent, django_assert_num_queries):
    make_memories(agent.agent_id, 20)
    login(client, viewer)
    # session, user, agent, membership (is the tokens link shown?); the state stamp, the counts (2,
    # agent_summary) and the next moment a row starts or stops holding (2); engine.list_recent (1); recent keys
    # (2: the newest rows, then those keys' row counts). Then the kept counts: the stamp alone.
    with django_assert_num_queries(12):
        assert client.get(url(agent.agent_id)).status_code == 200
    with django_assert_num_queries(8):
        assert client.get(url(agent.agent_id)).status_code == 200
