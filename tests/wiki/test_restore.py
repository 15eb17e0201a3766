"""Issue 19 item 3: a removed wiki page can be restored (``services.restore``, POST ``<page_id>/restore/``):
it comes back as it was, agents find it again through a new pointer row, the audit log says "Restored a wiki
page". Curators only, CSRF, another team's page is a 404; a page that is not removed is refused (409)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from memory.models import AuditEvent, Memory
from tests.conftest import login
from wiki import services
from wiki.models import WikiPage

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
TEXT = (
    "## Steps\n\n1. Check the purchase date: refunds within **30 days** only.\n2. Refund from the console.\n"
)


def publish(agent_id: str, title: str, slug: str) -> WikiPage:
    return services.publish_auto(
        agent_id=agent_id, doc_type="sop", title=title, summary=f"How to handle {title}.", original_text=TEXT,
        slug=slug,
    )  # fmt: skip


def restore_url(agent_id: str, page: WikiPage) -> str:
    return reverse("wiki:restore", args=[agent_id, page.id])


def fresh(page: WikiPage) -> WikiPage:
    return WikiPage.objects.get(id=page.id)


def found(agent_id: str, query: str = "refunds purchase date") -> list[int]:
    return [h.page.id for h in services.search(agent_id=agent_id, query=query)]


@pytest.fixture
def removed(agent) -> WikiPage:
    page = publish(agent.agent_id, "Refunds", "refunds")
    page = services.promote(page=page, actor="user:cora", reason="checked")
    return services.remove(page=page, actor="user:cora", reason="duplicate")


# --- the service ----------------------------------------------------------------------------------------


def test_restore_brings_the_page_back_as_it_was_and_agents_find_it_again(agent, removed):
    aid = agent.agent_id
    assert found(aid) == []
    old_pointer = removed.pointer_id
    page = services.restore(page=removed, actor="user:cora")
    page = fresh(page)
    assert page.removed_at is None and page.removed_reason == ""
    assert (page.namespace, page.path, f"{page.trust:.3f}") == ("curated", "curated/sop/refunds", "0.800")
    assert found(aid) == [page.id]
    pointer = Memory.objects.get(id=page.pointer_id)
    assert page.pointer_id != old_pointer and pointer.valid_until is None
    assert pointer.origin_trust == pytest.approx(0.8)
    assert Memory.objects.get(id=old_pointer).valid_until is not None  # the removed row stays in history
    event = AuditEvent.objects.filter(agent_id=aid, action="wiki_restore").get()
    assert event.actor == "user:cora" and event.details["removed_reason"] == "duplicate"
    assert event.memory_id == page.pointer_id and event.details["path"] == "curated/sop/refunds"


def test_restoring_a_page_that_is_not_removed_is_refused(agent, removed):
    services.restore(page=removed, actor="user:cora")
    with pytest.raises(services.PageNotRemoved) as err:
        services.restore(page=fresh(removed), actor="user:cora")
    assert err.value.code == "page_not_removed"
    assert AuditEvent.objects.filter(action="wiki_restore").count() == 1


def test_an_auto_page_comes_back_as_an_auto_page(agent):
    page = publish(agent.agent_id, "Returns", "returns")
    services.remove(page=page, actor="user:cora", reason="outdated")
    page = fresh(services.restore(page=fresh(page), actor="user:cora"))
    assert (page.namespace, f"{page.trust:.3f}") == ("auto", "0.300")
    assert found(agent.agent_id) == [page.id]


# --- the view -------------------------------------------------------------------------------------------


def test_a_curator_restores_from_the_page_with_htmx(client, curator, agent, removed):
    aid = agent.agent_id
    login(client, curator)
    body = client.get(reverse("wiki:page", args=[aid, removed.id])).content.decode()
    assert 'id="wiki-restore-form"' in body and "Restore this page" in body
    response = client.post(restore_url(aid, removed), headers=HTMX)
    assert response.status_code == 200
    assert "Restored curated/sop/refunds" in json.loads(response["HX-Trigger"])["memdesk:toast"]["text"]
    html = response.content.decode()
    assert 'id="wiki-removed-banner"' not in html and 'id="wiki-actions"' in html
    assert fresh(removed).removed_at is None
    # a second restore is refused in place with a clear message, not a 500
    again = client.post(restore_url(aid, removed), headers=HTMX)
    assert again.status_code == 409 and "not removed" in again.content.decode()


def test_the_removed_list_offers_restore_to_curators_only(client, curator, viewer, agent, removed):
    aid = agent.agent_id
    listing = reverse("wiki:list", args=[aid])
    login(client, viewer)
    assert (
        f'id="wiki-restore-{removed.id}"' not in client.get(listing, {"status": "removed"}).content.decode()
    )
    assert (
        'id="wiki-restore-form"'
        not in client.get(reverse("wiki:page", args=[aid, removed.id])).content.decode()
    )
    login(client, curator)
    body = client.get(listing, {"status": "removed"}).content.decode()
    assert f'id="wiki-restore-{removed.id}"' in body
    response = client.post(restore_url(aid, removed), follow=True)  # without JavaScript: back to the page
    assert response.status_code == 200 and "Restored curated/sop/refunds" in response.content.decode()
    assert f'id="wiki-restore-{removed.id}"' not in client.get(listing, {"status": "all"}).content.decode()


def test_viewers_and_reviewers_are_refused(client, viewer, reviewer, agent, removed):
    for user in (viewer, reviewer):
        login(client, user)
        assert client.post(restore_url(agent.agent_id, removed)).status_code == 403
    assert fresh(removed).removed_at is not None


def test_csrf_is_required(csrf_client, curator, agent, removed):
    login(csrf_client, curator)
    assert csrf_client.post(restore_url(agent.agent_id, removed)).status_code == 403
    assert fresh(removed).removed_at is not None


def test_another_teams_page_is_a_404_like_a_missing_one(client, curator, agent, other_agent):
    theirs = publish(other_agent.agent_id, "Refunds", "refunds")
    services.remove(page=theirs, actor="user:x", reason="gone")
    login(client, curator)
    # their page under our agent, our agent id with a page id that does not exist, and their agent
    assert client.post(reverse("wiki:restore", args=[agent.agent_id, theirs.id])).status_code == 404
    assert client.post(reverse("wiki:restore", args=[agent.agent_id, 999999])).status_code == 404
    assert client.post(restore_url(other_agent.agent_id, theirs)).status_code == 404
    assert fresh(theirs).removed_at is not None


def test_the_audit_log_says_restored_a_wiki_page(client, reviewer, agent, removed):
    services.restore(page=removed, actor="user:cora")
    login(client, reviewer)
    body = client.get(reverse("dashboard:audit", args=[agent.agent_id])).content.decode()
    assert "Restored a wiki page" in body and 'data-action="wiki_restore"' in body
