"""Restoring a retracted fact from the dashboard (issue 19 item 3): the graph page's fact panel and the memory's
page offer *Restore* (curators and above, a required reason, CSRF); another team's fact is a 404 like a missing
one; a refusal (not retracted, retracted by a purge) is a 409 with its message; the audit log says "Restored a
fact" with a link to the memory."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from memory import engine
from memory.models import AuditEvent, Memory
from tests.conftest import dt, login

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
KEY = {"subject": "Dana Whitfield", "predicate": "role"}


def url(agent_id: str, name: str, *args: str) -> str:
    return reverse(f"dashboard:{name}", args=[agent_id, *args])


def fact(agent_id: str, obj: str, **kw) -> str:
    return engine.store_temporal(
        agent_id=agent_id, content=f"Dana Whitfield role {obj}", object=obj, origin="user_direct", **KEY, **kw
    ).id


def role_now(agent_id: str) -> str | None:
    r = engine.get_at(agent_id=agent_id, at=dt("2025-01-01"), **KEY)
    return r.object if r else None


@pytest.fixture
def retracted(agent) -> str:
    """Dana's role: Tier 2 engineer, then Team lead, which a curator retracted."""
    a = agent.agent_id
    fact(a, "Tier 2 engineer", valid_from=dt("2024-01-01"))
    lead = fact(a, "Team lead", valid_from=dt("2024-06-01"))
    engine.retract_fact(agent_id=a, memory_id=lead, reason="wrong", actor="user:cora")
    assert role_now(a) == "Tier 2 engineer"
    return lead


def test_the_graph_panel_offers_restore_and_swaps_the_fact_back_in_place(client, curator, agent, retracted):
    a = agent.agent_id
    login(client, curator)
    # retracting in the panel leaves the fact there, retracted, with its Restore form
    other = fact(a, "Manager", valid_from=dt("2024-09-01"))
    retract = client.post(url(a, "graph_retract", other), {"reason": "wrong"}, **HTMX).content.decode()
    assert "Retracted: no longer believed" in retract
    assert f'action="{url(a, "fact_restore", other)}"' in retract and 'name="from" value="graph"' in retract
    generation = engine.graph_generation(agent_id=a)
    missing = client.post(url(a, "fact_restore", retracted), {"from": "graph", "reason": ""}, **HTMX)
    assert missing.status_code == 422 and "A reason is required." in missing.content.decode()
    assert role_now(a) == "Tier 2 engineer"
    response = client.post(
        url(a, "fact_restore", retracted),
        {"from": "graph", "reason": "mistake", "note": "she accepted"},
        **HTMX,
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith(f'<li class="graph-fact fact-current" id="fact-{retracted}"')
    assert (
        f'action="{url(a, "graph_retract", retracted)}"' in html
    )  # current again: it may be retracted again
    trigger = json.loads(response["HX-Trigger"])
    assert (
        trigger["memdesk:toast"]["text"]
        == "Restored: “Dana Whitfield role Team lead” (mistake: she accepted)."
    )
    assert "memdesk:graph-changed" in trigger
    assert role_now(a) == "Team lead"
    assert engine.graph_generation(agent_id=a) > generation
    event = AuditEvent.objects.get(agent_id=a, action="curator_restore")
    assert (event.memory_id, event.reason, event.actor) == (retracted, "mistake: she accepted", "user:cora")
    # the audit log in people's words, with a link to the memory
    log = client.get(url(a, "audit")).content.decode()
    assert "Restored a fact" in log and f'href="{url(a, "memory", retracted)}"' in log
    # restoring again: a 409 with the engine's message, rendered in place
    again = client.post(url(a, "fact_restore", retracted), {"from": "graph", "reason": "mistake"}, **HTMX)
    assert again.status_code == 409 and "this fact is not retracted" in again.content.decode()


def test_the_memory_page_restores_with_and_without_htmx(client, curator, agent, retracted):
    a = agent.agent_id
    login(client, curator)
    page = client.get(url(a, "memory", retracted)).content.decode()
    assert 'id="memory-restore"' in page and f'action="{url(a, "fact_restore", retracted)}"' in page
    refused = client.post(url(a, "fact_restore", retracted), {"from": "memory", "reason": "other"})
    assert refused.status_code == 422 and "needs a note" in refused.content.decode()
    assert "<html" in refused.content.decode()  # the whole page, the form in place
    done = client.post(
        url(a, "fact_restore", retracted), {"from": "memory", "reason": "confirmed"}, follow=True
    )
    html = done.content.decode()
    assert done.redirect_chain[-1][0] == url(a, "memory", retracted)
    assert "Restored: “Dana Whitfield role Team lead” (confirmed)." in html
    assert 'id="memory-restore"' not in html  # believed again
    assert role_now(a) == "Team lead"
    engine.retract_fact(agent_id=a, memory_id=retracted, reason="wrong", actor="user:cora")
    swapped = client.post(url(a, "fact_restore", retracted), {"from": "memory", "reason": "mistake"}, **HTMX)
    assert swapped.status_code == 200 and swapped["HX-Redirect"] == url(a, "memory", retracted)
    assert role_now(a) == "Team lead"


def test_viewers_and_reviewers_are_refused_and_see_no_form(client, viewer, reviewer, agent, retracted):
    a = agent.agent_id
    for user in (viewer, reviewer):
        login(client, user)
        page = client.get(url(a, "memory", retracted)).content.decode()
        assert 'id="memory-restore"' in page and "a curator can restore it" in page
        assert url(a, "fact_restore", retracted) not in page
        response = client.post(url(a, "fact_restore", retracted), {"from": "memory", "reason": "mistake"})
        assert response.status_code == 403
    assert role_now(a) == "Tier 2 engineer"
    assert not AuditEvent.objects.filter(agent_id=a, action="curator_restore").exists()


def test_every_post_needs_the_csrf_token(csrf_client, curator, agent, retracted):
    a = agent.agent_id
    login(csrf_client, curator)
    refused = csrf_client.post(url(a, "fact_restore", retracted), {"from": "memory", "reason": "mistake"})
    assert refused.status_code == 403 and role_now(a) == "Tier 2 engineer"
    page = csrf_client.get(url(a, "memory", retracted)).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    done = csrf_client.post(
        url(a, "fact_restore", retracted),
        {"from": "memory", "reason": "mistake", "csrfmiddlewaretoken": token},
    )
    assert done.status_code == 302 and role_now(a) == "Team lead"


def test_another_teams_fact_is_a_404_like_a_missing_one(
    client, curator, outsider, agent, other_agent, retracted
):
    theirs = engine.store_temporal(
        agent_id=other_agent.agent_id,
        content="Other Co uses Jira",
        subject="Other Co",
        predicate="uses",
        object="Jira",
    ).id
    engine.retract_fact(agent_id=other_agent.agent_id, memory_id=theirs, reason="wrong", actor="user:otto")
    login(client, curator)
    a = agent.agent_id
    data = {"from": "graph", "reason": "mistake"}
    hidden = client.post(url(a, "fact_restore", theirs), data, **HTMX)
    missing = client.post(url(a, "fact_restore", "m_00000000000000000000000000"), data, **HTMX)
    assert hidden.status_code == missing.status_code == 404 and hidden.content == missing.content
    other_agent_url = client.post(url(other_agent.agent_id, "fact_restore", theirs), data, **HTMX)
    assert other_agent_url.status_code == 404
    assert Memory.objects.get(id=theirs).invalidated_by_event == "curator_retract"
    # the other team's admin: this team's fact is a 404 to them, their own restores
    login(client, outsider)
    assert client.post(url(a, "fact_restore", retracted), data, **HTMX).status_code == 404
    assert client.post(url(other_agent.agent_id, "fact_restore", theirs), data, **HTMX).status_code == 200


def test_a_purged_fact_says_where_to_go_instead(client, curator, agent):
    a = agent.agent_id
    rumour = engine.store_temporal(
        agent_id=a, content="Dana role CEO", object="CEO", origin="channel:tg-1", **KEY
    ).id
    engine.invalidate_by_origin(agent_id=a, origin="channel:tg-1")
    login(client, curator)
    page = client.get(url(a, "memory", rumour)).content.decode()
    assert 'id="restore-elsewhere"' in page and "origin purge" in page
    assert url(a, "fact_restore", rumour) not in page
    response = client.post(url(a, "fact_restore", rumour), {"from": "memory", "reason": "mistake"}, **HTMX)
    assert response.status_code == 409 and "origin purge" in response.content.decode()
    assert Memory.objects.get(id=rumour).invalidated_by_event == "origin_purge"
