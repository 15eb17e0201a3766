"""Issue 19 item 15: the wiki diff. The base of "changes since the last accepted revision" (the first revision
when nothing was accepted, never an empty page), the changed words inside a changed line, any two revisions
compared from the history, and the editor's live preview."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.conftest import login
from wiki import diff, services
from wiki.models import WikiRevision

from .test_views import HTMX, SCRIPT, SOP_TEXT, action_url, fresh, page_url, publish

pytestmark = pytest.mark.django_db


def diff_url(agent_id: str, page, query: str = "") -> str:  # noqa: ANN001
    return reverse("wiki:diff", args=[agent_id, page.id]) + query


@pytest.fixture
def sop(agent):
    return publish(agent.agent_id, "Refunds over 500 dollars", slug="refund-over-500", tags=["billing"])


@pytest.fixture
def three(agent, sop):
    """r1 as published, r2 a curator's edit (45 days), r3 another (the lead line)."""
    services.revise(page=fresh(sop), actor="user:cora", original_text=SOP_TEXT.replace("30 days", "45 days"),
                    reason="policy")  # fmt: skip
    services.revise(page=fresh(sop), actor="user:cora",
                    original_text=SOP_TEXT.replace("30 days", "45 days").replace("team lead", "manager"),
                    reason="roles")  # fmt: skip
    return fresh(sop)


# --- the diff module ------------------------------------------------------------------------------------------


def rev(number: int, text: str, *, accepted: bool = False) -> diff.Draft:
    r = diff.Draft(title="T", summary="S", original_text=text, tags=[])
    object.__setattr__(r, "number", number)
    object.__setattr__(r, "accepted", accepted)
    return r


def test_the_base_is_the_last_accepted_revision_else_the_first():
    revs = [rev(1, "a"), rev(2, "b", accepted=True), rev(3, "c"), rev(4, "d", accepted=True), rev(5, "e")]
    assert diff.base_of(revs).number == 4
    assert diff.base_of([rev(3, "c"), rev(1, "a"), rev(2, "b")]).number == 1
    assert diff.base_of([]) is None
    lines = diff.since_accepted([rev(1, "one\ntwo"), rev(2, "one\n2")])
    assert lines[:2] == ["--- r1 (first published)", "+++ r2"]
    assert "-two" in lines and "+2" in lines and " one" in lines  # only the changed line, never all added
    assert diff.since_accepted([rev(1, "x")]) == []


def test_changed_words_are_marked_inside_a_changed_line():
    rows = diff.rows(
        ["--- a", "+++ b", "@@ -1 +1 @@", "-refunds within 30 days only", "+refunds within 45 days only"]
    )
    assert [r.kind for r in rows] == ["file", "file", "hunk", "del", "add"]
    assert [s.text for s in rows[3].segments if s.changed] == ["30"]
    assert [s.text for s in rows[4].segments if s.changed] == ["45"]
    assert "".join(s.text for s in rows[4].segments) == "refunds within 45 days only"


def test_a_very_long_line_pair_is_not_marked_word_by_word():
    long_a, long_b = "-" + "a " * 3000, "+" + "b " * 3000
    rows = diff.rows([long_a, long_b])
    assert rows[0].segments == [] and rows[1].segments == []


# --- the page's diff since accepted -------------------------------------------------------------------------------


def test_an_auto_page_edit_shows_only_what_changed(client, curator, agent, three):
    login(client, curator)
    html = client.get(page_url(agent.agent_id, three)).content.decode()
    assert (
        'revision 3 (by <span class="mono">user:cora</span>) against revision 1, the page as first published'
        in html
    )
    block = re.search(r'<pre class="wiki-diff" id="wiki-diff".*?</pre>', html, re.S).group(0)
    assert block.count('class="diff-line diff-add"') == 2 and block.count('class="diff-line diff-del"') == 2
    assert '<mark class="diff-word">45</mark>' in block and '<mark class="diff-word">manager</mark>' in block
    assert "+# Refunds over 500 dollars" not in block  # the unchanged title is context, not added


# --- any two revisions -------------------------------------------------------------------------------------------


def test_any_two_revisions_can_be_compared_in_either_order(client, viewer, agent, three):
    login(client, viewer)  # reading a diff needs no curator
    for query in ("?a=1&b=3", "?a=3&b=1"):
        html = client.get(diff_url(agent.agent_id, three, query)).content.decode()
        compare = re.search(r'<div id="wiki-compare".*?</div>', html, re.S).group(0)
        assert "Revision 1 → revision 3" in compare
        assert (
            '<mark class="diff-word">30</mark>' in compare
            and '<mark class="diff-word">manager</mark>' in compare
        )
        assert 'id="cmp-a-1" aria-label="Compare from revision 1" checked' in html


def test_the_history_compares_the_latest_two_by_default(client, viewer, agent, three):
    login(client, viewer)
    html = client.get(page_url(agent.agent_id, three)).content.decode()
    assert (
        "Revision 2 → revision 3" in html
        and 'id="cmp-b-3" aria-label="Compare to revision 3" checked' in html
    )
    compare = re.search(r'<div id="wiki-compare".*?</div>', html, re.S).group(0)
    assert (
        '<mark class="diff-word">team lead</mark>' in compare
        and '<mark class="diff-word">manager</mark>' in compare
    )
    assert 'diff-word">45<' not in compare and 'diff-word">30<' not in compare  # r2→r3 leaves the days alone


def test_compare_over_htmx_answers_the_compare_region_only(client, viewer, agent, three):
    login(client, viewer)
    html = client.get(diff_url(agent.agent_id, three, "?a=1&b=2"), headers=HTMX).content.decode()
    assert html.lstrip().startswith('<div id="wiki-compare"') and "Revision 1 → revision 2" in html
    assert 'id="wiki-page"' not in html


@pytest.mark.parametrize(
    "query,message",
    [("?a=1&b=9", "no such revision"), ("?a=x&b=2", "Pick two revisions"), ("", "Pick two revisions"),
     ("?a=" + "9" * 50 + "&b=1", "Pick two revisions")],
)  # fmt: skip
def test_bad_revision_numbers_are_said_never_a_500(client, viewer, agent, three, query, message):
    login(client, viewer)
    response = client.get(diff_url(agent.agent_id, three, query))
    assert response.status_code == 200 and message in response.content.decode()


def test_the_same_revision_twice_is_said(client, viewer, agent, three):
    login(client, viewer)
    html = client.get(diff_url(agent.agent_id, three, "?a=2&b=2")).content.decode()
    assert "The same revision twice" in html


def test_another_teams_page_diff_is_a_404(client, outsider, agent, three):
    login(client, outsider)
    assert client.get(diff_url(agent.agent_id, three, "?a=1&b=2")).status_code == 404


# --- the editor: full width, live preview ------------------------------------------------------------------------------


def preview(client, agent, page, **data):  # noqa: ANN001
    fields = {
        "title": page.title,
        "summary": page.summary,
        "original_text": page.original_text,
        "tags": "billing",
    }
    fields.update(data)
    return client.post(action_url("preview", agent.agent_id, page), fields, headers=HTMX)


def test_the_editor_is_outside_the_side_column(client, curator, agent, sop):
    login(client, curator)
    html = client.get(page_url(agent.agent_id, sop)).content.decode()
    aside = re.search(r'<aside class="wiki-side">.*?</aside>', html, re.S).group(0)
    assert 'id="wiki-edit-form"' not in aside and 'id="wiki-editor"' in html
    assert 'id="wiki-preview"' in html


def test_the_preview_renders_the_draft_and_what_saving_would_change(csrf_client, curator, agent, sop):
    login(csrf_client, curator)
    csrf_client.get(page_url(agent.agent_id, sop))
    token = csrf_client.cookies["csrftoken"].value
    response = preview(csrf_client, agent, sop, csrfmiddlewaretoken=token,
                       original_text=SOP_TEXT.replace("30 days", "60 days") + f"\n{SCRIPT}\n")  # fmt: skip
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="wiki-preview"')
    assert "<strong>60 days</strong>" in html  # rendered markdown
    assert SCRIPT not in html  # stored markup never runs
    assert '<mark class="diff-word">60</mark>' in html and "your edit" in html
    assert WikiRevision.objects.filter(page=sop).count() == 1  # nothing saved


def test_the_preview_is_for_curators_and_needs_csrf(csrf_client, client, viewer, curator, agent, sop):
    login(client, viewer)
    assert preview(client, agent, sop).status_code == 403
    login(csrf_client, curator)
    assert preview(csrf_client, agent, sop).status_code == 403  # no CSRF token
    assert csrf_client.get(action_url("preview", agent.agent_id, sop)).status_code == 405


def test_an_over_long_preview_is_a_form_error_not_a_500(client, curator, agent, sop):
    login(client, curator)
    response = preview(client, agent, sop, title="x" * 5000)
    assert response.status_code == 422 and "field-error" in response.content.decode()
