"""Issue 19 item 9 on the review page: a fact derived from a purged source waits as a low-confidence item with
its reason in words; deciding it works like any item; one settled elsewhere says so."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from memory import engine
from memory.models import Memory, ReviewItem
from tests.conftest import login

pytestmark = pytest.mark.django_db


def card(html: str, item_id: int) -> str:
    match = re.search(rf'<article id="item-{item_id}".*?</article>', html, re.S)
    assert match, f"no card for item {item_id}"
    return match.group(0)


@pytest.fixture
def tainted(agent):
    aid = agent.agent_id
    src = engine.store(agent_id=aid, content="heard on the spam channel", origin="channel:spam").id
    fact = engine.store_temporal(agent_id=aid, content="Acme ships on Fridays", subject="acme", predicate="ships_on",
                                 object="Friday", origin="agent_derived", derived_from=[src]).id  # fmt: skip
    engine.invalidate_by_origin(agent_id=aid, origin="channel:spam", actor="user:ada")
    item = ReviewItem.objects.get(agent_id=aid, kind="low_confidence")
    return {"src": src, "fact": fact, "item": item}


def test_the_review_page_shows_the_tainted_fact_with_its_reason(client, reviewer, agent, tainted):
    login(client, reviewer)
    html = client.get(reverse("review:review", args=[agent.agent_id])).content.decode()
    c = card(html, tainted["item"].id)
    assert "derived from a purged source: channel:spam" in c
    assert "Acme ships on Fridays" in c and "tainted-effect" in c and "tainted-badge" in c
    assert reverse("dashboard:memory", args=[agent.agent_id, tainted["src"]]) in c  # the purged source links


def test_the_kind_filter_finds_it(client, reviewer, agent, tainted):
    login(client, reviewer)
    html = client.get(
        reverse("review:review", args=[agent.agent_id]) + "?kind=low_confidence"
    ).content.decode()
    assert f'id="item-{tainted["item"].id}"' in html


def test_approving_from_the_page_lifts_the_taint(csrf_client, reviewer, agent, tainted):
    login(csrf_client, reviewer)
    csrf_client.get(reverse("review:review", args=[agent.agent_id]))
    token = csrf_client.cookies["csrftoken"].value
    url = reverse("review:review_approve", args=[agent.agent_id, tainted["item"].id])
    response = csrf_client.post(url, {"csrfmiddlewaretoken": token, "reason": "verified"})
    assert response.status_code in (200, 302)
    assert ReviewItem.objects.get(id=tainted["item"].id).status == "approved"
    assert not engine.is_tainted(Memory.objects.get(id=tainted["fact"]))


def test_an_item_settled_elsewhere_says_why(client, reviewer, agent, tainted):
    engine.retract_fact(agent_id=agent.agent_id, memory_id=tainted["fact"], reason="wrong", actor="user:cur")
    login(client, reviewer)
    html = client.get(reverse("review:review", args=[agent.agent_id]) + "?status=all").content.decode()
    c = card(html, tainted["item"].id)
    assert "Resolved without a decision" in c and "the fact was retracted" in c
