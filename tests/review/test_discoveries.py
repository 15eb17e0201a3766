"""The discovery inbox page (SPEC D4, UX "Every queue"): who may read and act, CSRF, the list and its filters in
the URL, partial vs full page, the card's evidence and "open in graph", pin / dismiss / snooze through HTMX with
the navigation badge swapped out of band, errors in place, another agent's item a 404, a pinned query count."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from memory import engine
from tests.conftest import login
from tests.dashboard.conftest import assert_login_redirect, assert_same_404
from tests.memory.dream.office import office

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def url(agent_id: str) -> str:
    return reverse("review:discoveries", args=[agent_id])


def act_url(agent_id: str, item_id: int, action: str) -> str:
    return reverse("review:discovery_act", args=[agent_id, item_id, action])


@pytest.fixture
def found(agent):
    office(agent.agent_id)
    out = engine.discover(agent_id=agent.agent_id)
    items = {(i.entity_a, i.entity_b): i for i in out.items}
    return items


def aiko(found) -> engine.InboxRecord:
    return found[("aiko tanaka", "osaka office")]


def test_anonymous_outsider_and_viewer(client, agent, other_agent, outsider, viewer, found):
    a = agent.agent_id
    item = aiko(found)
    assert_login_redirect(client, url(a))
    login(client, outsider)
    assert_same_404(client, url(a), url("no-such-agent"))
    assert client.post(act_url(a, item.id, "pin")).status_code == 404
    login(client, viewer)
    page = client.get(url(a)).content.decode()
    assert "Aiko Tanaka" in page and 'id="nav-discoveries"' in page
    assert "curators act" in page and 'data-action="pin"' not in page  # viewers read
    assert client.post(act_url(a, item.id, "pin"), **HTMX).status_code == 403
    assert engine.inbox_get(agent_id=a, item_id=item.id).status == "open"


def test_the_card_explains_and_shows_the_evidence(client, agent, curator, found):
    a = agent.agent_id
    item = aiko(found)
    login(client, curator)
    html = client.get(url(a)).content.decode()
    card = html[html.index(f'id="discovery-{item.id}"') :]
    card = card[: card.index("</article>")]
    assert (
        "Aiko Tanaka and Osaka office share 4 neighbours and appear together in 4 sessions, but no fact links them"
        in card
    )
    assert "Bridge between communities" in card and 'data-status="open"' in card
    for who in ("Ben", "Chie", "Daisuke", "Emi"):
        assert f'<li data-entity="{who.lower()}">{who}</li>' in card
    assert '<li class="mono">s0</li>' in card and "Shared sessions (4)" in card
    for fact in item.evidence["facts"]:
        assert reverse("dashboard:memory", args=[a, fact["id"]]) in card
    assert f'id="path-data-{item.id}"' in card and f'id="path-canvas-{item.id}"' in card
    assert 'data-signal="embedding" class="muted"' in card  # no embedder: the signal is missing
    graph = reverse("dashboard:graph", args=[a]) + "?entity=aiko+tanaka&amp;pair=osaka+office"
    assert f'href="{graph}"' in card
    for action in ("pin", "dismiss", "snooze"):
        assert f'data-action="{action}"' in card
    assert 'type="date" name="until"' in card


def test_filters_live_in_the_url_and_htmx_gets_the_list_only(client, agent, viewer, found):
    a = agent.agent_id
    login(client, viewer)
    full = client.get(url(a) + "?kind=knowledge_gap")
    body = full.content.decode()
    assert '<option value="knowledge_gap" selected>' in body and 'hx-push-url="true"' in body
    kinds = set(re.findall(r'data-kind="(\w+)" aria-labelledby', body))
    assert kinds == {"knowledge_gap"}
    partial = client.get(url(a) + "?kind=cross_community", **HTMX).content.decode()
    assert "<html" not in partial and 'id="inbox-filters"' not in partial
    assert partial.count('<section id="inbox"') == 1 and "Aiko Tanaka" in partial
    none = client.get(url(a) + "?status=dismissed").content.decode()
    assert 'id="inbox-empty"' in none and "No discovery matches these filters" in none
    assert "HX-Request" in full["Vary"]


def test_pin_dismiss_and_snooze_through_htmx(client, agent, curator, found):
    a = agent.agent_id
    login(client, curator)
    open_before = engine.inbox_counts(agent_id=a)["open"]
    item = aiko(found)
    pinned = client.post(act_url(a, item.id, "pin"), **HTMX)
    body = pinned.content.decode()
    assert pinned.status_code == 200 and "<html" not in body
    assert f'id="discovery-{item.id}"' in body and 'data-status="pinned"' in body
    assert 'id="discovery-count" class="nav-count has-pending" hx-swap-oob="true"' in body
    assert f'data-count="{open_before - 1}"' in body
    assert "memdesk:toast" in pinned["HX-Trigger"] and "Pinned: Aiko Tanaka" in pinned["HX-Trigger"]
    assert 'data-action="unpin"' in body
    others = [i for i in found.values() if i.id != item.id]
    gone = client.post(act_url(a, others[0].id, "dismiss"), **HTMX)
    assert (
        'data-status="dismissed"' in gone.content.decode() and 'data-action="reopen"' in gone.content.decode()
    )
    day = (timezone.now() + timedelta(days=5)).date()
    later = client.post(act_url(a, others[1].id, "snooze"), {"until": day.isoformat()}, **HTMX)
    assert later.status_code == 200 and f"until {day:%Y-%m-%d}" in later.content.decode()
    assert engine.inbox_get(agent_id=a, item_id=others[1].id).status == "snoozed"
    counts = engine.inbox_counts(agent_id=a)
    assert counts["pinned"] == counts["dismissed"] == counts["snoozed"] == 1
    nav = client.get(url(a)).content.decode()
    assert f'id="discovery-count" class="nav-count has-pending" data-count="{open_before - 3}"' in nav


def test_errors_in_place(client, agent, curator, found):
    a = agent.agent_id
    login(client, curator)
    item = aiko(found)
    past = client.post(act_url(a, item.id, "snooze"), {"until": "2001-02-03"}, **HTMX)
    assert past.status_code == 422 and "snooze until a time in the future" in past.content.decode()
    missing = client.post(act_url(a, item.id, "snooze"), {}, **HTMX)
    assert missing.status_code == 422 and "Pick the date to snooze until" in missing.content.decode()
    client.post(act_url(a, item.id, "dismiss"), **HTMX)
    refused = client.post(act_url(a, item.id, "pin"), **HTMX)
    assert refused.status_code == 409 and "cannot pin an item that is dismissed" in refused.content.decode()
    assert client.post(act_url(a, item.id, "approve"), **HTMX).status_code == 404
    # without HTMX: a redirect to the list showing the item, with the message
    plain = client.post(act_url(a, item.id, "reopen"))
    assert plain.status_code == 302 and plain["Location"].endswith(f"?status=all&item={item.id}")
    assert engine.inbox_get(agent_id=a, item_id=item.id).status == "open"


def test_another_agents_item_is_a_404_like_a_missing_one(client, agent, other_agent, curator, outsider):
    office(other_agent.agent_id)
    theirs = engine.discover(agent_id=other_agent.agent_id).items[0]
    login(client, curator)
    a = agent.agent_id
    hidden = client.post(act_url(a, theirs.id, "pin"), **HTMX)
    missing = client.post(act_url(a, 999_999, "pin"), **HTMX)
    assert hidden.status_code == missing.status_code == 404 and hidden.content == missing.content
    assert engine.inbox_get(agent_id=other_agent.agent_id, item_id=theirs.id).status == "open"


def test_csrf_is_required(csrf_client, agent, curator, found):
    login(csrf_client, curator)
    item = aiko(found)
    assert csrf_client.post(act_url(agent.agent_id, item.id, "pin"), **HTMX).status_code == 403
    assert engine.inbox_get(agent_id=agent.agent_id, item_id=item.id).status == "open"


def test_query_count_is_constant(client, agent, curator, found, django_assert_num_queries):
    a = agent.agent_id
    login(client, curator)
    # session, user, agent (+ badges), membership; count, page of items; counts, last run
    with django_assert_num_queries(8):
        assert client.get(url(a)).status_code == 200
    engine.inbox_store(
        agent_id=a,
        findings=[
            engine.Finding("cross_community", f"p{i}", f"q{i}", 0.5, "p and q", {"facts": []})
            for i in range(40)
        ],
    )
    with django_assert_num_queries(8):
        assert client.get(url(a)).status_code == 200
    with django_assert_num_queries(6):
        assert client.get(url(a) + "?page=2", **HTMX).status_code == 200


def test_the_inbox_before_any_run(client, agent, viewer):
    login(client, viewer)
    html = client.get(url(agent.agent_id)).content.decode()
    assert "Nothing open in the inbox" in html and "Discovery has not run" in html
    assert f"manage.py discover --agent {agent.agent_id}" in html
