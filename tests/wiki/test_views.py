"""Wiki curation pages (SPEC D5, W5): the ``auto/`` browser, the page view, and the curator's edit / promote /
remove. Pages are made through ``wiki.services`` (the agent-facing write path), never the ORM; the checks read
the services' results back from the database.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from memory import engine
from memory.models import AuditEvent, Memory
from tests.conftest import login, make_user
from tests.dashboard.conftest import assert_login_redirect, assert_same_404
from wiki import services
from wiki.models import WikiPage, WikiRevision

from .conftest import publish as publish_result

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
SCRIPT = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'

SOP_TEXT = (
    "## Steps\n\n1. Check the purchase date: refunds within **30 days** only.\n"
    "2. Over $500 a team lead approves.\n3. Refund from the billing console.\n"
)


def publish(agent_id: str, title: str, *, doc_type: str = "sop", text: str = SOP_TEXT, **kw) -> WikiPage:
    return services.publish_auto(
        agent_id=agent_id,
        doc_type=doc_type,
        title=title,
        summary=kw.pop("summary", f"How to handle {title.lower()}."),
        original_text=text,
        **kw,
    )


def list_url(agent_id: str) -> str:
    return reverse("wiki:list", args=[agent_id])


def page_url(agent_id: str, page: WikiPage | int) -> str:
    return reverse("wiki:page", args=[agent_id, getattr(page, "id", page)])


def action_url(action: str, agent_id: str, page: WikiPage) -> str:
    return reverse(f"wiki:{action}", args=[agent_id, page.id])


def fresh(page: WikiPage) -> WikiPage:
    return WikiPage.objects.get(id=page.id)


def pointer(page: WikiPage) -> Memory:
    return Memory.objects.get(id=fresh(page).pointer_id)


def toast(response) -> str:  # noqa: ANN001
    return json.loads(response["HX-Trigger"])["memdesk:toast"]["text"]


@pytest.fixture
def sop(agent) -> WikiPage:
    return publish(agent.agent_id, "Refunds over 500 dollars", slug="refund-over-500", tags=["billing"])


@pytest.fixture
def curator_client(client, curator):
    return login(client, curator)


# --- who may see and do what -----------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, agent, sop):
    assert_login_redirect(client, list_url(agent.agent_id))
    assert_login_redirect(client, page_url(agent.agent_id, sop))
    response = client.post(action_url("promote", agent.agent_id, sop), {"promote-reason": "ok"})
    assert response.status_code == 302 and response["Location"].startswith("/login/?next=")
    assert fresh(sop).namespace == "auto"


def test_an_agent_of_another_team_is_a_404_like_a_missing_one(client, outsider, agent, sop):
    login(client, outsider)
    assert_same_404(client, list_url(agent.agent_id), list_url("no-such-agent"))
    assert_same_404(client, page_url(agent.agent_id, sop), page_url("no-such-agent", sop))
    response = client.post(action_url("promote", agent.agent_id, sop), {"promote-reason": "mine now"})
    assert response.status_code == 404
    assert fresh(sop).namespace == "auto"


def test_a_page_of_another_agent_is_a_404_like_a_missing_one(client, curator, agent, other_agent):
    theirs = publish(other_agent.agent_id, "Their secret SOP")
    login(client, curator)
    assert_same_404(client, page_url(agent.agent_id, theirs), page_url(agent.agent_id, theirs.id + 999))
    for action in ("edit", "promote", "remove"):
        data = {"promote-reason": "x", "remove-reason": "x", "title": "Mine", "reason": "x"}
        assert client.post(action_url(action, agent.agent_id, theirs), data).status_code == 404
    theirs = fresh(theirs)
    assert (theirs.namespace, theirs.removed_at, theirs.title) == ("auto", None, "Their secret SOP")


@pytest.mark.parametrize("role_fixture", ["viewer", "reviewer"])
def test_viewers_and_reviewers_read_but_see_no_buttons_and_cannot_post(
    request, client, agent, sop, role_fixture
):
    login(client, request.getfixturevalue(role_fixture))
    listing = client.get(list_url(agent.agent_id))
    assert listing.status_code == 200 and "Refunds over 500 dollars" in listing.content.decode()
    html = client.get(page_url(agent.agent_id, sop)).content.decode()
    assert "Refunds over 500 dollars" in html and 'id="wiki-frontmatter"' in html
    assert (
        'id="wiki-actions"' not in html and "wiki-promote-form" not in html and "wiki-remove-form" not in html
    )
    assert "Only curators" in html
    before = WikiRevision.objects.filter(page=sop).count()
    assert (
        client.post(action_url("promote", agent.agent_id, sop), {"promote-reason": "ok"}).status_code == 403
    )
    assert client.post(action_url("remove", agent.agent_id, sop), {"remove-reason": "ok"}).status_code == 403
    edit = {"title": "Hijacked", "summary": "", "original_text": "", "tags": "", "reason": "mine"}
    assert client.post(action_url("edit", agent.agent_id, sop), edit, headers=HTMX).status_code == 403
    sop = fresh(sop)
    assert (sop.namespace, f"{sop.trust:.3f}", sop.removed_at, sop.title) == (
        "auto",
        "0.300",
        None,
        "Refunds over 500 dollars",
    )
    assert WikiRevision.objects.filter(page=sop).count() == before


def test_curators_see_the_actions(curator_client, agent, sop):
    html = curator_client.get(page_url(agent.agent_id, sop)).content.decode()
    for marker in (
        'id="wiki-actions"',
        'id="wiki-promote-form"',
        'id="wiki-edit-form"',
        'id="wiki-remove-form"',
    ):
        assert marker in html
    forms = re.findall(r"<form method=\"post\".*?</form>", html, re.S)
    assert forms and all('name="csrfmiddlewaretoken"' in f for f in forms)


def test_posts_need_the_csrf_token(csrf_client, curator, agent, sop):
    login(csrf_client, curator)
    target = action_url("promote", agent.agent_id, sop)
    assert csrf_client.post(target, {"promote-reason": "checked"}).status_code == 403
    assert csrf_client.post(target, {"promote-reason": "checked"}, headers=HTMX).status_code == 403
    assert fresh(sop).namespace == "auto"
    html = csrf_client.get(page_url(agent.agent_id, sop)).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    response = csrf_client.post(target, {"promote-reason": "checked"}, headers={**HTMX, "X-CSRFToken": token})
    assert response.status_code == 200
    assert fresh(sop).namespace == "curated"


def test_page_views_are_get_only(curator_client, agent, sop):
    assert curator_client.post(page_url(agent.agent_id, sop)).status_code == 405
    assert curator_client.post(list_url(agent.agent_id)).status_code == 405
    assert curator_client.get(action_url("promote", agent.agent_id, sop)).status_code == 405


# --- the browser -----------------------------------------------------------------------------------------


def test_list_shows_labelled_pages_with_trust_and_links(curator_client, agent, sop):
    policy = publish(agent.agent_id, "Data retention", doc_type="policy", slug="data-retention")
    services.promote(page=policy, actor="user:cora", reason="checked with legal")
    html = curator_client.get(list_url(agent.agent_id)).content.decode()
    assert 'id="nav-wiki"' in html and 'aria-current="page">Wiki</a>' in html
    sop_row = re.search(rf'<tr id="wiki-row-{sop.id}".*?</tr>', html, re.S).group(0)
    assert "auto/sop/refund-over-500" in sop_row and "0.300" in sop_row and "raw_dialogue" in sop_row
    assert 'class="badge wiki-auto"' in sop_row and page_url(agent.agent_id, sop) in sop_row
    policy_row = re.search(rf'<tr id="wiki-row-{policy.id}".*?</tr>', html, re.S).group(0)
    assert "curated/policy/data-retention" in policy_row and "0.800" in policy_row
    assert 'class="badge wiki-curated"' in policy_row and "user_statement" in policy_row


def row_ids(html: str) -> list[int]:
    return [int(i) for i in re.findall(r'<tr id="wiki-row-(\d+)"', html)]


def test_filters_by_namespace_doc_type_and_age_live_in_the_url(curator_client, agent):
    aid = agent.agent_id
    with time_machine.travel(timezone.now() - timedelta(days=40), tick=False):
        old = publish(aid, "Old charter", doc_type="charter", slug="old-charter")
    sop = publish(aid, "Escalation steps", slug="escalation")
    ref = publish(aid, "Office contacts", doc_type="reference", slug="office")
    services.promote(page=ref, actor="user:cora", reason="verified")
    url = list_url(aid)
    assert set(row_ids(curator_client.get(url).content.decode())) == {old.id, sop.id, ref.id}
    assert row_ids(curator_client.get(url, {"namespace": "auto", "doc_type": "sop"}).content.decode()) == [
        sop.id
    ]
    assert row_ids(curator_client.get(url, {"namespace": "curated"}).content.decode()) == [ref.id]
    assert set(row_ids(curator_client.get(url, {"namespace": "auto"}).content.decode())) == {old.id, sop.id}
    assert set(row_ids(curator_client.get(url, {"age": "7"}).content.decode())) == {sop.id, ref.id}
    assert row_ids(curator_client.get(url, {"age": "90", "doc_type": "charter"}).content.decode()) == [old.id]
    # a bad value falls back to the default instead of failing
    assert len(row_ids(curator_client.get(url, {"doc_type": "novel", "age": "x"}).content.decode())) == 3
    # the form keeps the filter (bookmarkable: the same URL shows the same list)
    html = curator_client.get(url, {"namespace": "curated"}).content.decode()
    assert '<option value="curated" selected>' in html and 'hx-push-url="true"' in html


def test_search_ranks_curated_above_an_equally_relevant_auto_page(curator_client, agent):
    aid = agent.agent_id
    text = "Rotate the webhook signing secret every ninety days and tell the customer."
    first = publish(aid, "Webhook secret rotation", slug="webhook-rotation-a", text=text, summary="Rotation.")
    second = publish(aid, "Webhook secret rotation", doc_type="reference", slug="webhook-rotation-b",
                     text=text, summary="Rotation.")  # fmt: skip
    html = curator_client.get(list_url(aid), {"q": "webhook signing secret"}).content.decode()
    assert set(row_ids(html)[:2]) == {first.id, second.id}
    services.promote(page=second, actor="user:cora", reason="checked")
    html = curator_client.get(list_url(aid), {"q": "webhook signing secret"}).content.decode()
    assert row_ids(html)[:2] == [second.id, first.id]
    scores = [float(s) for s in re.findall(r'wiki-score">([\d.]+)<', html)]
    assert scores[0] > scores[1] > 0
    # the namespace filter applies to ranked results too
    ranked_auto = curator_client.get(list_url(aid), {"q": "webhook signing secret", "namespace": "auto"})
    assert row_ids(ranked_auto.content.decode()) == [first.id]


def test_removed_pages_leave_the_default_list_and_show_under_their_filter(curator_client, agent, sop):
    other = publish(agent.agent_id, "Password resets", slug="password-resets")
    services.remove(page=other, actor="user:cora", reason="duplicate")
    url = list_url(agent.agent_id)
    assert row_ids(curator_client.get(url).content.decode()) == [sop.id]
    assert row_ids(curator_client.get(url, {"status": "removed"}).content.decode()) == [other.id]
    assert set(row_ids(curator_client.get(url, {"status": "all"}).content.decode())) == {sop.id, other.id}


def test_htmx_gets_the_results_fragment_and_other_requests_the_whole_page(curator_client, agent, sop):
    url = list_url(agent.agent_id)
    fragment = curator_client.get(url, {"q": "refunds"}, headers=HTMX)
    body = fragment.content.decode()
    assert body.lstrip().startswith('<section id="wiki-results"') and "<html" not in body
    assert "HX-Request" in fragment["Vary"]
    full = curator_client.get(url, {"q": "refunds"}).content.decode()
    assert "<html" in full and 'id="wiki-filters"' in full and 'id="wiki-results"' in full
    boosted = curator_client.get(url, headers={**HTMX, "HX-Boosted": "true"}).content.decode()
    assert "<html" in boosted
    page_fragment = curator_client.get(page_url(agent.agent_id, sop), headers=HTMX).content.decode()
    assert page_fragment.lstrip().startswith('<section id="wiki-page"') and "<html" not in page_fragment


def test_pagination_reuses_the_pager(curator_client, agent):
    noon = timezone.now().replace(hour=12, minute=0) - timedelta(days=1)
    for i in range(27):  # at most 20 new auto pages a day: spread over two days
        with time_machine.travel(noon - timedelta(days=1 - i // 14, minutes=-i), tick=False):
            publish(agent.agent_id, f"Reference card {i}", doc_type="reference", slug=f"card-{i}")
    first = curator_client.get(list_url(agent.agent_id)).content.decode()
    assert len(row_ids(first)) == 25 and "Page 1 of 2" in first and 'rel="next"' in first
    second = curator_client.get(list_url(agent.agent_id), {"page": 2}, headers=HTMX).content.decode()
    assert len(row_ids(second)) == 2 and 'hx-target="#wiki-results"' in second


def test_list_query_count_is_fixed(curator_client, agent, django_assert_num_queries):
    for i in range(3):
        publish(agent.agent_id, f"Runbook {i}", slug=f"runbook-{i}")
    with django_assert_num_queries(LIST_QUERIES):
        curator_client.get(list_url(agent.agent_id))
    for i in range(3, 12):
        publish(agent.agent_id, f"Runbook {i}", slug=f"runbook-{i}")
    with django_assert_num_queries(LIST_QUERIES):
        assert len(row_ids(curator_client.get(list_url(agent.agent_id)).content.decode())) == 12


def test_ranked_list_query_count_is_fixed(curator_client, agent, django_assert_num_queries):
    for i in range(3):
        publish(agent.agent_id, f"Runbook {i}", slug=f"runbook-{i}")
    with django_assert_num_queries(RANKED_QUERIES):
        curator_client.get(list_url(agent.agent_id), {"q": "runbook"})
    for i in range(3, 12):
        publish(agent.agent_id, f"Runbook {i}", slug=f"runbook-{i}")
    with django_assert_num_queries(RANKED_QUERIES):
        html = curator_client.get(list_url(agent.agent_id), {"q": "runbook"}).content.decode()
    assert len(row_ids(html)) == 12


LIST_QUERIES = 5  # session, user, agent (+ badge), count, page of rows
RANKED_QUERIES = 4  # session, user, agent (+ badge), the ranked search (one SQL query)
PAGE_QUERIES = (
    7  # session, user, agent, page, revisions (the diff reads them too), membership (curator?), pointer
)


def test_page_query_count_is_fixed(curator_client, agent, sop, django_assert_num_queries):
    with django_assert_num_queries(PAGE_QUERIES):
        curator_client.get(page_url(agent.agent_id, sop))
    for i in range(6):
        services.revise(page=fresh(sop), actor="user:cora", title=f"Refunds v{i}", reason="tidy")
    with django_assert_num_queries(PAGE_QUERIES):
        html = curator_client.get(page_url(agent.agent_id, sop)).content.decode()
    assert html.count('class="revision') == 7


# --- the page view ---------------------------------------------------------------------------------------


def test_page_shows_frontmatter_provenance_body_and_revisions(curator_client, agent, sop):
    html = curator_client.get(page_url(agent.agent_id, sop)).content.decode()
    page = fresh(sop)
    fm = re.search(r'<section class="card" id="wiki-frontmatter".*?</section>', html, re.S).group(0)
    for expected in ("Refunds over 500 dollars", "auto-distill", "0.300", "raw_dialogue", "billing", "never"):
        assert expected in fm
    assert page.created.strftime("%Y-%m-%d") in fm
    assert 'id="wiki-auto-banner"' in html and "Auto page." in html and 'class="badge wiki-auto"' in html
    # rendered markdown: a heading, an ordered list, bold text
    body = re.search(r'<div class="wiki-md" id="wiki-text">(.*?)</div>', html, re.S).group(1)
    assert "<h2>Steps</h2>" in body and "<ol>" in body and "<strong>30 days</strong>" in body
    # provenance: the pointer row, its memory page and its timeline
    prov = re.search(r'<section class="card" id="wiki-provenance".*?</section>', html, re.S).group(0)
    row = pointer(page)
    assert row.subject == "wiki:auto/sop/refund-over-500" and row.predicate == "documented_in"
    assert reverse("dashboard:memory", args=[agent.agent_id, row.id]) in prov
    assert "/timeline/?subject=wiki%3Aauto%2Fsop%2Frefund-over-500&amp;predicate=documented_in" in prov
    assert "0.300" in prov and "channel" in prov
    assert re.search(r'<tr id="rev-1" class="revision">', html)
    # the diff: nothing accepted yet and one revision only: nothing to compare (never "everything added")
    assert "Nothing has been accepted yet, and revision 1 is the only one" in html
    assert 'id="wiki-diff"' not in html and "diff-add" not in html


def test_stored_markup_renders_as_text_never_as_html(curator_client, agent):
    page = publish(
        agent.agent_id,
        f"Title {SCRIPT}",
        slug="markup",
        summary=f"Summary {IMG}",
        text=f"Text {SCRIPT} and {IMG} and [a link](javascript:alert(3)).",
        tags=[f"tag{SCRIPT}"],
    )
    for url in (page_url(agent.agent_id, page), list_url(agent.agent_id)):
        html = curator_client.get(url).content.decode()
        assert "<script>alert(1)" not in html
        assert not re.search(r"<img\b", html)  # the dashboard has no images: any <img> is the payload
        assert not re.search(r"<[^>]+\sonerror\s*=", html)
        assert 'href="javascript:' not in html
    html = curator_client.get(page_url(agent.agent_id, page)).content.decode()
    assert "Title &lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown, as text
    assert "&lt;img src=x onerror=" in html


# --- curator actions -------------------------------------------------------------------------------------


def test_promote_with_a_reason_over_htmx(curator_client, agent, sop):
    response = curator_client.post(
        action_url("promote", agent.agent_id, sop),
        {"promote-reason": "checked against the handbook"},
        headers=HTMX,
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="wiki-page"') and "<html" not in body
    page = fresh(sop)
    assert (page.namespace, f"{page.trust:.3f}", page.source_type) == ("curated", "0.800", "user_statement")
    assert pointer(page).origin_trust == pytest.approx(0.8)
    assert "trust is now 0.800" in toast(response) and "pointer row" in toast(response)
    assert 'id="wiki-outcome"' in body and "trust is now 0.800" in body
    assert 'data-namespace="curated"' in body and 'id="wiki-curated-banner"' in body
    assert 'id="wiki-promote-form"' not in body  # nothing left to promote
    assert WikiRevision.objects.get(page=page, number=1).accepted
    assert "No changes since the accepted revision." in body
    event = AuditEvent.objects.filter(agent_id=agent.agent_id, actor="user:cora").latest("id")
    assert "checked against the handbook" in event.reason


def test_promote_without_a_reason_is_refused_inline(curator_client, agent, sop):
    response = curator_client.post(
        action_url("promote", agent.agent_id, sop), {"promote-reason": "  "}, headers=HTMX
    )
    assert response.status_code == 422
    body = response.content.decode()
    assert "A reason is required" in body and 'id="wiki-error"' in body
    assert re.search(r'<details class="wiki-action" id="wiki-promote" open>', body)
    page = fresh(sop)
    assert (page.namespace, f"{page.trust:.3f}") == ("auto", "0.300")


def test_a_plain_post_redirects_with_a_message(curator_client, agent, sop):
    response = curator_client.post(action_url("promote", agent.agent_id, sop), {"promote-reason": "ok by me"})
    assert response.status_code == 302 and response["Location"] == page_url(agent.agent_id, sop)
    html = curator_client.get(response["Location"]).content.decode()
    assert "trust is now 0.800" in html and 'class="toast toast-success"' in html
    refused = curator_client.post(action_url("remove", agent.agent_id, sop), {"remove-reason": ""})
    assert refused.status_code == 422 and "<html" in refused.content.decode()
    assert fresh(sop).removed_at is None


def test_edit_before_promote_makes_a_revision(curator_client, agent, sop):
    data = {
        "title": "Refunds over $500",
        "summary": "Refunds above $500 need a lead.",
        "original_text": SOP_TEXT.replace("30 days", "45 days"),
        "tags": "billing, refunds, billing",
        "reason": "policy changed to 45 days",
    }
    response = curator_client.post(action_url("edit", agent.agent_id, sop), data, headers=HTMX)
    assert response.status_code == 200, response.content.decode()
    assert "Saved revision 2" in toast(response)
    page = fresh(sop)
    assert page.title == "Refunds over $500" and page.tags == ["billing", "refunds"]
    assert "45 days" in page.original_text and page.namespace == "auto"
    latest = WikiRevision.objects.filter(page=page).latest("number")
    assert (latest.number, latest.actor, latest.reason, latest.accepted) == (
        2,
        "user:cora",
        "policy changed to 45 days",
        False,
    )
    body = response.content.decode()
    assert "policy changed to 45 days" in body  # the revision list
    # nothing accepted yet: the edit against the page as first published (issue 19 item 15), not everything new
    diff = re.search(r'<pre class="wiki-diff" id="wiki-diff".*?</pre>', body, re.S).group(0)
    assert re.search(r'<span class="diff-line diff-del">-[^<]*<mark class="diff-word">30</mark> days', diff)
    assert re.search(r'<span class="diff-line diff-add">\+[^<]*<mark class="diff-word">45</mark> days', diff)
    assert '<span class="diff-line diff-context"> ## Original text</span>' in diff
    assert "against revision 1, the page as first published" in body
    assert "<strong>45 days</strong>" in body  # the page shows the edit
    # promoting accepts the edited revision
    curator_client.post(action_url("promote", agent.agent_id, page), {"promote-reason": "ok"}, headers=HTMX)
    assert WikiRevision.objects.get(page=page, number=2).accepted
    assert not WikiRevision.objects.get(page=page, number=1).accepted


def test_diff_since_the_accepted_revision_shows_what_the_agent_changed(curator_client, agent, sop):
    services.promote(page=sop, actor="user:cora", reason="first look")
    publish(agent.agent_id, "Refunds over 500 dollars", slug="refund-over-500", tags=["billing"],
            text=SOP_TEXT.replace("30 days", "45 days"))  # fmt: skip
    html = curator_client.get(page_url(agent.agent_id, sop)).content.decode()
    assert re.search(
        r"Revision 2 \(by <span class=\"mono\">system</span>\) against revision 1, the last accepted", html
    )
    assert "The page still shows revision 1" in html
    assert re.search(
        r'<span class="diff-line diff-del">-1\. Check the purchase date: refunds within \*\*<mark class="diff-word">30</mark> days',
        html,
    )
    assert re.search(r'<span class="diff-line diff-add">\+[^<]*<mark class="diff-word">45</mark> days', html)
    assert re.search(r'<span class="diff-line diff-hunk">@@', html)
    # the curated text is what the page (and the agents) still show
    body = re.search(r'<div class="wiki-md" id="wiki-text">(.*?)</div>', html, re.S).group(1)
    assert "30 days" in body and "45 days" not in body


def test_edit_form_errors_stay_in_the_form(curator_client, agent, sop):
    url = action_url("edit", agent.agent_id, sop)
    missing = curator_client.post(url, {"title": "", "reason": ""}, headers=HTMX)
    assert missing.status_code == 422
    body = missing.content.decode()
    assert "A reason is required" in body and "This field is required." in body
    assert re.search(r'<details class="wiki-action" id="wiki-edit" open>', body)
    # an engine error (the text is over 64 KB in UTF-8 though under the form's character limit) is a form
    # error on its field, never a 500
    big = "退" * 30000
    too_large = curator_client.post(
        url,
        {"title": "Big", "summary": "", "original_text": big, "tags": "", "reason": "paste"},
        headers=HTMX,
    )
    assert too_large.status_code == 422
    assert 'id="wiki-error"' in too_large.content.decode()
    assert (
        WikiRevision.objects.filter(page=sop).count() == 1 and fresh(sop).title == "Refunds over 500 dollars"
    )


def test_a_300_character_title_and_50_tags_go_through_the_curator_form(client, agent, curator):
    page = publish_result(agent_id=agent.agent_id).page
    login(client, curator)
    tags = [f"t{i}" for i in range(50)]
    response = client.post(
        reverse("wiki:edit", args=[agent.agent_id, page.id]),
        {
            "title": "T" * 300,
            "summary": page.summary,
            "original_text": page.original_text,
            "tags": ", ".join(tags),
            "reason": "long title",
        },
    )
    assert response.status_code in (200, 302)
    page.refresh_from_db()
    assert page.title == "T" * 300 and page.tags == tags


def test_remove_expires_only_the_pointer_row(curator_client, agent, sop):
    aid = agent.agent_id
    keep = publish(aid, "Shift handover", doc_type="charter", slug="handover")
    note = engine.store(agent_id=aid, content="The customer prefers email", origin="channel")
    fact = engine.store_temporal(
        agent_id=aid, content="Acme is on the Pro plan", subject="acme", predicate="plan", object="Pro",
        origin="channel",
    )  # fmt: skip
    response = curator_client.post(action_url("remove", aid, sop), {"remove-reason": "superseded by the handbook"},
                                   headers=HTMX)  # fmt: skip
    assert response.status_code == 200
    assert "Removed auto/sop/refund-over-500" in toast(response)
    body = response.content.decode()
    assert 'id="wiki-removed-banner"' in body and "superseded by the handbook" in body
    assert 'id="wiki-actions"' not in body
    page = fresh(sop)
    assert page.removed_at is not None and page.removed_reason == "superseded by the handbook"
    assert pointer(page).valid_until is not None
    now = timezone.now()
    assert engine.get_at(agent_id=aid, subject="acme", predicate="plan", at=now).id == fact.id
    assert Memory.objects.get(id=note.id).valid_until is None
    assert Memory.objects.get(id=fresh(keep).pointer_id).valid_until is None
    # a second remove is refused in place, not a 500
    again = curator_client.post(action_url("remove", aid, sop), {"remove-reason": "again"}, headers=HTMX)
    assert again.status_code == 409 and "removed already" in again.content.decode()


def test_superuser_outside_the_team_is_a_404_too(client, agent, sop):
    login(client, make_user("root", None, is_superuser=True))
    # a superuser sees unassigned agents only; this agent belongs to a team they are not in
    assert client.get(page_url(agent.agent_id, sop)).status_code == 404


def test_a_curator_can_start_an_edit_from_the_agents_proposal(curator_client, agent, sop):
    services.promote(page=sop, actor="user:cora", reason="first look")
    proposal = SOP_TEXT.replace("30 days", "45 days")
    publish(
        agent.agent_id, "Refunds over 500 dollars", slug="refund-over-500", tags=["billing"], text=proposal
    )
    html = curator_client.get(page_url(agent.agent_id, sop)).content.decode()
    assert 'href="?from=2#wiki-edit"' in html
    textarea = re.search(r'<textarea name="original_text"[^>]*>(.*?)</textarea>', html, re.S).group(1)
    assert "30 days" in textarea and 'id="wiki-edit-from"' not in html  # by default: the page's text
    html = curator_client.get(page_url(agent.agent_id, sop), {"from": 2}).content.decode()
    textarea = re.search(r'<textarea name="original_text"[^>]*>(.*?)</textarea>', html, re.S).group(1)
    assert "45 days" in textarea and "Starting from revision 2" in html
    assert re.search(r'<details class="wiki-action" id="wiki-edit" open>', html)
    # a viewer gets neither the link nor the form
    curator_client.force_login(make_user("vic", agent.team))
    html = curator_client.get(page_url(agent.agent_id, sop), {"from": 2}).content.decode()
    assert "wiki-edit-from-latest" not in html and "wiki-edit-form" not in html


@pytest.mark.parametrize("value", ["²", "١٢", "1" * 5000, "-1", "+2", " 2", "2.0", "1e3"])
def test_a_revision_number_that_is_not_ascii_digits_is_ignored_not_a_500(client, agent, viewer, value):
    page = publish_result(agent_id=agent.agent_id).page
    publish_result(agent_id=agent.agent_id, summary="A second edition.")
    login(client, viewer)
    client.raise_request_exception = False
    response = client.get(reverse("wiki:page", args=[agent.agent_id, page.id]), {"from": value})
    assert response.status_code == 200
    assert b"Deploy runbook" in response.content


def test_an_ascii_revision_number_still_starts_the_edit_form_from_it(client, agent, curator):
    page = publish_result(agent_id=agent.agent_id).page
    publish_result(agent_id=agent.agent_id, summary="The second edition's summary.")
    login(client, curator)
    url = reverse("wiki:page", args=[agent.agent_id, page.id])
    first = client.get(url, {"from": "1"}).content.decode()
    second = client.get(url, {"from": "2"}).content.decode()
    assert "How we ship a release safely." in first.split('id="wiki-edit"', 1)[1]
    assert "The second edition&#x27;s summary." in second.split('id="wiki-edit"', 1)[1]
