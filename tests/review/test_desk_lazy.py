"""The desk's compact list at volume (issue 19 item 1): one line per batch, only the open batch's full card;
another's body comes from ``?batch=<id>&card=1`` over HTMX when it is opened (queue.js), and the line's link
(``?status=all&batch=<id>``) shows it alone without JavaScript."""

from __future__ import annotations

import re

import pytest

from tests.conftest import login, make_burst, make_user
from tests.review.test_quarantine import HTMX, card, card_ids, url

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("guard_defaults")]


@pytest.fixture
def desk(client, reviewer):
    return login(client, reviewer)


def batches(agent_id: str, n: int) -> list[int]:
    return [make_burst(agent_id, f"subject-{i}").id for i in range(n)]


def test_only_the_open_batch_renders_its_facts_the_others_load_when_opened(desk, agent):
    aid = agent.agent_id
    batches(aid, 3)
    html = desk.get(url(aid)).content.decode()
    first, *rest = card_ids(html)
    assert len(rest) == 2
    assert "batch-facts" in card(html, first) and "decide-form" in card(html, first)
    for rid in rest:
        line = card(html, rid)
        # the line still says what it is (subject, facts, impact) and carries what the keys read
        assert "batch-subject" in line and "line-facts" in line and 'data-status="pending"' in line
        assert "batch-facts" not in line and "decide-form" not in line
        lazy = re.search(r'data-lazy-url="([^"]+)"', line)
        assert lazy, "a closed line says where its body is"
        assert f"batch={rid}" in lazy.group(1)
        body = desk.get(lazy.group(1).replace("&amp;", "&"), headers=HTMX)
        assert body.status_code == 200
        opened = body.content.decode()
        assert card_ids(opened) == [rid] and "is-open" in opened
        assert "batch-facts" in opened and "decide-form" in opened and "fact-pick" in opened
        assert "data-lazy-url" not in opened


def test_the_line_link_shows_the_batch_alone_without_javascript(desk, agent):
    aid = agent.agent_id
    ids = batches(aid, 2)
    html = desk.get(url(aid), {"status": "all", "batch": ids[1]}).content.decode()
    assert card_ids(html) == [ids[1]] and "batch-facts" in card(html, ids[1])
    assert "<html" in desk.get(url(aid), {"status": "all", "batch": ids[1], "card": "1"}).content.decode()


def test_another_agents_batch_or_a_bad_id_is_not_found(desk, agent, other_agent, team):
    mine = batches(agent.agent_id, 1)[0]
    theirs = make_burst(other_agent.agent_id, "theirs").id
    assert desk.get(url(agent.agent_id), {"batch": theirs, "card": "1"}, headers=HTMX).status_code == 404
    assert desk.get(url(agent.agent_id), {"batch": "x", "card": "1"}, headers=HTMX).status_code == 404
    assert desk.get(url(agent.agent_id), {"batch": mine, "card": "1"}, headers=HTMX).status_code == 200


def test_a_viewer_is_refused_the_card_as_the_desk(client, agent, team):
    rid = batches(agent.agent_id, 1)[0]
    login(client, make_user("vic", team, "viewer"))
    response = client.get(url(agent.agent_id), {"batch": rid, "card": "1"}, headers=HTMX)
    assert response.status_code == 403 and "batch-facts" not in response.content.decode()
