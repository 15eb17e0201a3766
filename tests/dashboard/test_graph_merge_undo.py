"""Issue 19 item 3: a curator undoes a graph merge after the fact, from the merge's audit log row or the graph
page's Merged panel (POST ``graph/merges/<event_id>/undo/``): roles, CSRF, team isolation, and refusals (an
undone merge, one later merges depend on) that say why with a 409, never a 500."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from memory import engine
from tests.conftest import login
from tests.dashboard.conftest import assert_login_redirect

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def undo_url(agent_id: str, event_id: int) -> str:
    return reverse("dashboard:graph_merge_undo", args=[agent_id, event_id])


def audit_url(agent_id: str) -> str:
    return reverse("dashboard:audit", args=[agent_id])


def aliases(agent_id: str) -> list[tuple[str, str]]:
    return sorted((a.alias, a.canonical) for a in engine.alias_list(agent_id=agent_id))


@pytest.fixture
def merge(agent) -> engine.AliasResult:
    a = agent.agent_id
    engine.store_temporal(agent_id=a, content="Bob works at Initech", subject="Bob", predicate="works_at",
                          object="Initech", origin="user_direct")  # fmt: skip
    engine.alias_add(agent_id=a, canonical="Bob", alias="Bobby")
    return engine.alias_add(agent_id=a, canonical="Robert", alias="Bob", actor="user:cora")


def test_a_curator_undoes_a_merge_from_its_audit_log_row(client, curator, agent, merge):
    a = agent.agent_id
    login(client, curator)
    log = client.get(audit_url(a)).content.decode()
    row = log[log.index(f'id="audit-{merge.event_id}"') :]
    row = row[: row.index("</tr>")]
    assert f'id="merge-undo-button-{merge.event_id}"' in row and "Undo merge" in row
    response = client.post(undo_url(a, merge.event_id), {"next": audit_url(a)}, **HTMX)
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith(f'<div class="merge-undo" id="merge-undo-{merge.event_id}"')
    note = (
        "Undid the merge of “bob” into “robert”: “bob” is its own name again. “bobby” points at “bob” again."
    )
    assert note in body
    triggers = json.loads(response["HX-Trigger"])
    assert triggers["memdesk:toast"]["text"] == note and "memdesk:graph-changed" in triggers
    assert aliases(a) == [("bobby", "bob")]
    log = client.get(audit_url(a)).content.decode()
    assert "Merge undone" in log and 'data-action="merge_undone"' in log
    row = log[log.index(f'id="audit-{merge.event_id}"') :]
    row = row[: row.index("</tr>")]
    assert "merge-undone" in row and "merge-undo-button" not in row  # undone: no button any more
    assert f'href="#audit-{merge.event_id}"' in log  # the undo names the merge it took back
    # before → after in words: the merge joined the names, the undo parted them
    undo_row = log[log.index('data-action="merge_undone"') :]
    undo_row = undo_row[: undo_row.index("</tr>")]
    assert '“bob” = “robert”</span> → <strong class="after">“bob” on its own' in undo_row


def test_the_merged_panel_offers_the_undo(client, curator, agent):
    a = agent.agent_id
    engine.store_temporal(agent_id=a, content="Dana leads Lantern", subject="Dana", predicate="leads",
                          object="Lantern", origin="user_direct")  # fmt: skip
    login(client, curator)
    merged = client.post(
        reverse("dashboard:graph_merge", args=[a]), {"canonical": "Dana", "alias": "D."}, **HTMX
    )
    body = merged.content.decode()
    event_id = int(re.search(r'id="merge-undo-button-(\d+)"', body).group(1))
    assert 'id="merge-done"' in body and "Undo merge" in body and "Not the same entity after all?" in body
    undone = client.post(undo_url(a, event_id), **HTMX)
    assert undone.status_code == 200 and "“d.” is its own name again" in undone.content.decode()
    assert "Not the same entity after all?" not in undone.content.decode()  # the swapped part drops the hint
    assert aliases(a) == []


def test_without_javascript_the_undo_redirects_back_with_a_message(client, curator, agent, merge):
    a = agent.agent_id
    login(client, curator)
    response = client.post(undo_url(a, merge.event_id), {"next": audit_url(a)})
    assert response.status_code == 302 and response["Location"] == audit_url(a)
    page = client.get(response["Location"]).content.decode()
    assert "Undid the merge of “bob” into “robert”" in page
    # a "next" off the site is never followed
    again = engine.alias_add(agent_id=a, canonical="Robert", alias="Bob")
    off_site = client.post(undo_url(a, again.event_id), {"next": "https://evil.example/"})
    assert off_site.status_code == 302 and off_site["Location"] == reverse("dashboard:graph", args=[a])


def test_refusals_say_why_with_a_409(client, curator, agent, merge):
    a = agent.agent_id
    login(client, curator)
    assert client.post(undo_url(a, merge.event_id), **HTMX).status_code == 200
    again = client.post(undo_url(a, merge.event_id), **HTMX)
    assert again.status_code == 409
    assert "this merge was undone already, by user:" in again.content.decode()
    page = client.post(undo_url(a, merge.event_id))  # without JavaScript: a page that says so
    assert page.status_code == 409 and "<html" in page.content.decode()
    assert "undone already" in page.content.decode()
    first = engine.alias_add(agent_id=a, canonical="Robert", alias="Bob")
    engine.alias_add(agent_id=a, canonical="Roberto", alias="Robert")
    changed = client.post(undo_url(a, first.event_id), **HTMX)
    assert changed.status_code == 409 and "undo that merge first" in changed.content.decode()
    assert aliases(a) == [("bob", "roberto"), ("bobby", "roberto"), ("robert", "roberto")]  # unchanged


def test_viewers_and_reviewers_cannot_undo_and_reviewers_see_no_button(
    client, viewer, reviewer, agent, merge
):
    a = agent.agent_id
    for user in (viewer, reviewer):
        login(client, user)
        assert client.post(undo_url(a, merge.event_id)).status_code == 403
    log = client.get(audit_url(a)).content.decode()  # the reviewer reads the log
    assert f'id="audit-{merge.event_id}"' in log and "merge-undo-button" not in log
    assert aliases(a) == [("bob", "robert"), ("bobby", "robert")]


def test_anonymous_and_csrf(client, csrf_client, curator, agent, merge):
    a = agent.agent_id
    assert_login_redirect(client, undo_url(a, merge.event_id))
    login(csrf_client, curator)
    assert csrf_client.post(undo_url(a, merge.event_id), **HTMX).status_code == 403
    assert aliases(a) == [("bob", "robert"), ("bobby", "robert")]


def test_another_teams_merge_is_a_404_like_a_missing_one(
    client, curator, outsider, agent, other_agent, merge
):
    theirs = engine.alias_add(agent_id=other_agent.agent_id, canonical="Robert", alias="Bob")
    login(client, curator)
    hidden = client.post(undo_url(agent.agent_id, theirs.event_id))
    missing = client.post(undo_url(agent.agent_id, 987654321))
    assert hidden.status_code == missing.status_code == 404 and hidden.content == missing.content
    assert client.post(undo_url(other_agent.agent_id, theirs.event_id)).status_code == 404
    login(client, outsider)  # their curator-less outsider cannot reach our agent's merge either
    assert client.post(undo_url(agent.agent_id, merge.event_id)).status_code == 404
    assert aliases(other_agent.agent_id) == [("bob", "robert")]
    assert aliases(agent.agent_id) == [("bob", "robert"), ("bobby", "robert")]
