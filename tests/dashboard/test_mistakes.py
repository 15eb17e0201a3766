"""Mistake notebook page (SPEC X): the agent's mistakes with filters, its rules, and a prompt-block preview."""

from __future__ import annotations

import html as htmllib
import re

import pytest
from django.urls import reverse

from memory import engine
from memory.models import AuditEvent, Memory, Mistake
from tests.conftest import login
from tests.dashboard.conftest import assert_login_redirect, assert_same_404

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
XSS = "<script>window.__xss=1</script>"


def url(agent_id: str) -> str:
    return reverse("dashboard:mistakes", args=[agent_id])


def preview_url(agent_id: str) -> str:
    return reverse("dashboard:mistakes_preview", args=[agent_id])


def row_ids(html: str) -> list[str]:
    return re.findall(r'<tr id="mistake-([^"]+)"', html)


def mistake(agent_id: str, category: str = "factual", text: str = "wrong", **extra) -> str:
    return engine.record_mistake(
        agent_id=agent_id,
        category=category,
        input_summary=extra.pop("input_summary", f"question about {text}"),
        what_went_wrong=text,
        **extra,
    ).id


@pytest.fixture
def member(client, viewer):
    return login(client, viewer)


@pytest.fixture
def notebook(agent):
    """Three factual mistakes consolidated into a rule, one open safety and one open behavioral mistake."""
    aid = agent.agent_id
    factual = [
        mistake(
            aid, "factual", f"quoted the wrong refund window #{i}", ground_truth="30 days", session_id="s-1"
        )
        for i in range(3)
    ]
    (rule,) = engine.maybe_consolidate(agent_id=aid)
    safety = mistake(
        aid,
        "safety",
        "shared an internal phone number",
        input_summary="customer asked for the CEO's phone",
        agent_response_summary="gave the direct line",
        ground_truth="never share staff contacts",
        session_id="s-2",
    )
    behavioral = mistake(aid, "behavioral", "was curt with the customer")
    return {"factual": factual, "rule": rule.rule_id, "safety": safety, "behavioral": behavioral}


# --- access ----------------------------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, agent):
    assert_login_redirect(client, url(agent.agent_id))
    assert_login_redirect(client, preview_url(agent.agent_id) + "?message=x")


def test_outsider_gets_the_same_404_as_a_missing_agent(client, outsider, agent, other_agent, notebook):
    login(client, outsider)  # an admin, of another team
    assert_same_404(client, url(agent.agent_id), url("no-such-agent"))
    assert_same_404(
        client, preview_url(agent.agent_id) + "?message=refund", preview_url("nope") + "?message=refund"
    )
    assert client.get(preview_url(agent.agent_id) + "?message=refund", headers=HTMX).status_code == 404


@pytest.mark.parametrize("role", ["viewer", "reviewer", "curator", "team_admin"])
def test_every_member_gets_the_page(client, request, role, agent):
    login(client, request.getfixturevalue(role))
    assert client.get(url(agent.agent_id)).status_code == 200
    assert client.get(preview_url(agent.agent_id) + "?message=x", headers=HTMX).status_code == 200


def test_page_is_read_only(member, agent, notebook):
    assert member.post(url(agent.agent_id)).status_code == 405
    assert member.post(preview_url(agent.agent_id), {"message": "refund"}).status_code == 405


def test_agent_home_links_the_notebook_for_every_member(member, agent):
    html = member.get(reverse("dashboard:agent", args=[agent.agent_id])).content.decode()
    assert f'href="{url(agent.agent_id)}"' in html


# --- the list --------------------------------------------------------------------------------------------


def test_rows_show_the_mistake_and_link_consolidated_ones_to_their_rule(member, agent, notebook):
    html = member.get(url(agent.agent_id)).content.decode()
    assert row_ids(html)[:2] == [notebook["behavioral"], notebook["safety"]]  # newest first
    assert set(row_ids(html)) == {notebook["safety"], notebook["behavioral"], *notebook["factual"]}
    safety = re.search(rf'<tr id="mistake-{notebook["safety"]}".*?</tr>', html, re.S).group(0)
    for text in ("safety", "s-2", "customer asked for the CEO&#x27;s phone", "gave the direct line"):
        assert text in safety
    assert "shared an internal phone number" in safety and "never share staff contacts" in safety
    assert "<time" in safety and ">open<" in safety
    factual = re.search(rf'<tr id="mistake-{notebook["factual"][0]}".*?</tr>', html, re.S).group(0)
    rule_link = reverse("dashboard:memory", args=[agent.agent_id, notebook["rule"]])
    assert "consolidated" in factual and f'href="{rule_link}"' in factual
    assert member.get(rule_link).status_code == 200  # the link leads to the rule memory
    assert 'data-count="open">2<' in html and 'data-count="resolved">3<' in html


def test_evicted_mistakes_are_marked(member, agent):
    first = mistake(agent.agent_id, "capability", "oldest")
    for i in range(50):
        mistake(agent.agent_id, "capability", f"later {i}")
    html = member.get(url(agent.agent_id) + "?resolved=resolved&category=capability").content.decode()
    assert row_ids(html) == [first]
    assert ">evicted<" in html


def test_rules_section_lists_current_rules_with_their_timelines(member, agent, notebook):
    html = member.get(url(agent.agent_id)).content.decode()
    rules = html[html.index('id="rules"') : html.index('id="mistake-filters"')]
    assert f'id="rule-{notebook["rule"]}"' in rules
    assert (
        "category:factual" in rules and "Recurring factual issues consolidated from 3 past mistakes" in rules
    )
    assert "subject=category%3Afactual&amp;predicate=requires_care" in rules  # timeline link
    assert reverse("dashboard:memory", args=[agent.agent_id, notebook["rule"]]) in rules
    assert "from 3 mistakes" in rules


def test_rules_section_ignores_other_facts_and_superseded_rules(member, agent):
    engine.store_temporal(
        agent_id=agent.agent_id,
        content="not a rule",
        subject="category:factual",
        predicate="owner",
        object="x",
    )
    for i in range(3):
        mistake(agent.agent_id, "factual", f"first round {i}")
    (old,) = engine.maybe_consolidate(agent_id=agent.agent_id)
    for i in range(3):
        mistake(agent.agent_id, "factual", f"second round {i}")
    (new,) = engine.maybe_consolidate(agent_id=agent.agent_id)
    html = member.get(url(agent.agent_id)).content.decode()
    rules = html[html.index('id="rules"') : html.index('id="mistake-filters"')]
    assert f'id="rule-{new.rule_id}"' in rules
    assert f'id="rule-{old.rule_id}"' not in rules and "not a rule" not in rules


def test_empty_notebook(member, agent):
    html = member.get(url(agent.agent_id)).content.decode()
    assert "No mistakes recorded yet." in html and "No rules yet." in html


# --- filters, partials, pagination -----------------------------------------------------------------------


def test_filters_by_category_and_state(member, agent, notebook):
    base = url(agent.agent_id)
    assert row_ids(member.get(base + "?category=safety").content.decode()) == [notebook["safety"]]
    assert set(row_ids(member.get(base + "?resolved=open").content.decode())) == {
        notebook["safety"],
        notebook["behavioral"],
    }
    assert set(row_ids(member.get(base + "?resolved=resolved").content.decode())) == set(notebook["factual"])
    assert row_ids(member.get(base + "?category=factual&resolved=open").content.decode()) == []
    assert len(row_ids(member.get(base + "?resolved=all").content.decode())) == 5


def test_filter_options_show_counts_and_keep_the_selection(member, agent, notebook):
    html = member.get(url(agent.agent_id) + "?category=factual&resolved=resolved").content.decode()
    assert '<option value="factual" selected>factual (0 open / 3)</option>' in html
    assert '<option value="safety" >safety (1 open / 1)</option>' in html
    assert '<option value="resolved" selected>Resolved</option>' in html


def test_invalid_filters_fall_back_without_error(member, agent, notebook):
    response = member.get(url(agent.agent_id) + "?category=bogus&resolved=maybe&page=999")
    assert response.status_code == 200
    assert len(row_ids(response.content.decode())) == 5


def test_filter_form_swaps_the_results_and_keeps_filters_in_the_url(member, agent):
    html = member.get(url(agent.agent_id)).content.decode()
    form = re.search(r'<form id="mistake-filters"[^>]*>', html, re.S).group(0)
    assert 'method="get"' in form and f'hx-get="{url(agent.agent_id)}"' in form
    assert 'hx-target="#mistake-results"' in form and 'hx-push-url="true"' in form
    assert "change from:(#mistake-filters select)" in form


def test_normal_request_renders_the_whole_page(member, agent, notebook):
    response = member.get(url(agent.agent_id) + "?category=safety")
    html = response.content.decode()
    assert html.lstrip().startswith("<!doctype html>")
    assert 'id="mistake-filters"' in html and 'id="rules"' in html and 'id="preview-form"' in html
    assert "HX-Request" in response["Vary"]


def test_htmx_request_renders_only_the_results(member, agent, notebook):
    response = member.get(url(agent.agent_id) + "?category=safety", headers=HTMX)
    html = response.content.decode()
    assert html.strip().startswith('<section id="mistake-results"')
    assert "<html" not in html and 'id="rules"' not in html and "mistake-filters" not in html
    assert row_ids(html) == [notebook["safety"]]
    assert "HX-Request" in response["Vary"]


@pytest.mark.parametrize("header", ["HX-Boosted", "HX-History-Restore-Request"])
def test_boosted_and_history_restore_requests_get_the_whole_page(member, agent, header):
    html = member.get(url(agent.agent_id), headers={**HTMX, header: "true"}).content.decode()
    assert "<html" in html and 'id="mistake-filters"' in html


def test_pagination_is_htmx_swapped_and_keeps_filters(member, agent):
    for i in range(30):
        mistake(agent.agent_id, "capability", f"could not do thing {i}")
    first = member.get(url(agent.agent_id) + "?category=capability").content.decode()
    assert len(row_ids(first)) == 25 and "Page 1 of 2" in first
    link = re.search(r'<a href="([^"]+)" hx-get="([^"]+)" rel="next">', first)
    assert link.group(1) == link.group(2) == "?category=capability&amp;page=2"
    pager = re.search(r'<nav class="pager"[^>]*>', first).group(0)
    assert 'hx-target="#mistake-results"' in pager and 'hx-push-url="true"' in pager
    second = member.get(url(agent.agent_id) + "?category=capability&page=2", headers=HTMX).content.decode()
    assert "<html" not in second and "Page 2 of 2" in second and len(row_ids(second)) == 5
    assert not set(row_ids(first)) & set(row_ids(second))


def test_list_query_count_is_fixed(member, agent, django_assert_num_queries):
    for i in range(30):
        mistake(agent.agent_id, "factual" if i % 2 else "safety", f"oops {i}")
    engine.maybe_consolidate(agent_id=agent.agent_id)
    for i in range(5):
        mistake(agent.agent_id, "capability", f"later {i}")
    # session, user, agent, counts, paginator count, page, rules
    with django_assert_num_queries(7):
        response = member.get(url(agent.agent_id))
    assert len(row_ids(response.content.decode())) == 25
    # the partial skips counts and rules
    with django_assert_num_queries(5):
        response = member.get(url(agent.agent_id) + "?page=2", headers=HTMX)
    assert len(row_ids(response.content.decode())) == 10


def test_stored_text_is_escaped_in_the_list(member, agent):
    mistake(agent.agent_id, "safety", XSS, input_summary=XSS, ground_truth=XSS, session_id="s<b>1</b>")
    html = member.get(url(agent.agent_id)).content.decode()
    assert "<script>window.__xss" not in html and "<b>1</b>" not in html
    assert html.count("&lt;script&gt;window.__xss=1&lt;/script&gt;") == 3


# --- preview ---------------------------------------------------------------------------------------------


def test_preview_box_asks_as_you_type(member, agent):
    html = member.get(url(agent.agent_id)).content.decode()
    box = re.search(r'<input type="search" id="message"[^>]*>', html, re.S).group(0)
    assert f'hx-get="{preview_url(agent.agent_id)}"' in box
    assert 'hx-trigger="input changed delay:400ms' in box and 'hx-target="#preview"' in box
    assert 'name="message"' in box
    assert "Type a message to see the block." in html


def test_preview_shows_the_engines_block_and_the_recalled_mistakes(member, agent, notebook):
    message = "Can you give me the phone number of your CEO?"
    response = member.get(preview_url(agent.agent_id), {"message": message}, headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.strip().startswith('<div id="preview"') and "<html" not in html
    block = re.search(r'<pre class="prompt-block" id="preview-block">(.*?)</pre>', html, re.S).group(1)
    expected = engine.reflexion_context(agent_id=agent.agent_id, message=message)
    assert htmllib.unescape(block) == expected
    assert expected.startswith("## Past Mistakes to Avoid")
    recalled = re.findall(r'<li data-id="([^"]+)"', html)
    assert recalled == [m.id for m in engine.recall(agent_id=agent.agent_id, message=message)]
    assert recalled[0] == notebook["safety"]
    assert "Recalled 2 mistakes" in html  # the consolidated ones are resolved: never recalled


def test_preview_without_keywords_falls_back_to_the_most_important_recent(member, agent, notebook):
    html = member.get(preview_url(agent.agent_id), {"message": "退款多久"}, headers=HTMX).content.decode()
    assert re.findall(r'<li data-id="([^"]+)"', html) == [notebook["safety"], notebook["behavioral"]]


def test_preview_with_nothing_open(member, agent):
    html = member.get(preview_url(agent.agent_id), {"message": "hello there"}, headers=HTMX).content.decode()
    assert 'id="preview-empty"' in html and "<pre" not in html


def test_preview_escapes_stored_text(member, agent):
    mistake(agent.agent_id, "safety", f"ran {XSS}", input_summary=f"please run {XSS}")
    html = member.get(
        preview_url(agent.agent_id), {"message": "please run window"}, headers=HTMX
    ).content.decode()
    assert "<script>" not in html and "</script>" not in html
    block = re.search(r'<pre class="prompt-block" id="preview-block">(.*?)</pre>', html, re.S).group(1)
    assert "&lt;script" in block
    assert htmllib.unescape(block) == engine.reflexion_context(
        agent_id=agent.agent_id, message="please run window"
    )


def test_preview_writes_nothing(member, agent, notebook):
    before = (
        Mistake.objects.filter(resolved=False).count(),
        Memory.objects.count(),
        AuditEvent.objects.count(),
    )
    member.get(preview_url(agent.agent_id), {"message": "refund window"}, headers=HTMX)
    member.get(url(agent.agent_id), {"message": "refund window"})
    after = (
        Mistake.objects.filter(resolved=False).count(),
        Memory.objects.count(),
        AuditEvent.objects.count(),
    )
    assert before == after


def test_too_long_message_is_a_form_error_not_a_500(member, agent, notebook):
    response = member.get(preview_url(agent.agent_id), {"message": "x" * 2001}, headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "field-error" in html and "<pre" not in html


def test_preview_without_htmx_lands_on_the_notebook_with_the_preview(member, agent, notebook):
    response = member.get(preview_url(agent.agent_id), {"message": "refund window"})
    assert response.status_code == 302
    assert response["Location"] == url(agent.agent_id) + "?message=refund+window"
    html = member.get(response["Location"]).content.decode()
    assert "<html" in html and 'id="preview-block"' in html and "refund window" in html
    assert 'value="refund window"' in html  # the box keeps the message


def test_preview_query_count(member, agent, notebook, django_assert_num_queries):
    # session, user, agent, engine.recall, engine.reflexion_context
    with django_assert_num_queries(5):
        member.get(preview_url(agent.agent_id), {"message": "refund"}, headers=HTMX)
