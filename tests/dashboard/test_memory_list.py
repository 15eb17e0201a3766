"""Memory search and list: ranked search over current rows, history listing, filters, pagination, partials."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.urls import reverse

from memory import engine
from memory.models import Memory
from tests.conftest import dt, login
from tests.dashboard.conftest import assert_login_redirect, assert_same_404, make_memories, quarantine_fact

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


def url(agent_id: str) -> str:
    return reverse("dashboard:memories", args=[agent_id])


def row_ids(html: str) -> list[str]:
    return re.findall(r'<tr id="mem-([^"]+)"', html)


def statuses(html: str) -> dict[str, str]:
    return dict(re.findall(r'<tr id="mem-([^"]+)" class="row-(\w+)"', html))


@pytest.fixture
def member(client, viewer):
    return login(client, viewer)


# --- access ----------------------------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, agent):
    assert_login_redirect(client, url(agent.agent_id))


def test_outsider_gets_404(client, outsider, agent):
    login(client, outsider)
    assert client.get(url(agent.agent_id)).status_code == 404
    assert client.get(url(agent.agent_id), headers=HTMX).status_code == 404


def test_other_teams_agent_is_the_same_404_as_a_missing_one(member, agent, other_agent):
    engine.store(agent_id=other_agent.agent_id, content="secret of the other team")
    assert_same_404(member, url(other_agent.agent_id), url("no-such-agent"))
    assert_same_404(member, url(other_agent.agent_id) + "?q=secret", url("no-such-agent") + "?q=secret")


def test_member_gets_the_page(member, agent):
    assert member.get(url(agent.agent_id)).status_code == 200


# --- full page vs partial --------------------------------------------------------------------------------


def test_normal_request_renders_the_whole_page(member, agent, history):
    response = member.get(url(agent.agent_id))
    html = response.content.decode()
    assert html.lstrip().startswith("<!doctype html>")
    assert "<html" in html and 'id="memory-filters"' in html and 'id="results"' in html
    assert "HX-Request" in response["Vary"]


def test_htmx_request_renders_only_the_results_partial(member, agent, history):
    response = member.get(url(agent.agent_id) + "?q=Berlin", headers=HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html and "memory-filters" not in html
    assert html.strip().startswith('<section id="results"')
    assert history["berlin"] in html
    assert "HX-Request" in response["Vary"]


@pytest.mark.parametrize("header", ["HX-Boosted", "HX-History-Restore-Request"])
def test_boosted_and_history_restore_requests_get_the_whole_page(member, agent, header):
    html = member.get(url(agent.agent_id), headers={**HTMX, header: "true"}).content.decode()
    assert "<html" in html and 'id="memory-filters"' in html


def test_search_box_searches_as_you_type_and_keeps_filters_in_the_url(member, agent):
    html = member.get(url(agent.agent_id)).content.decode()
    box = re.search(r'<input type="search" id="q"[^>]*>', html, re.S).group(0)
    # `input` events: typing, paste, IME commit, autofill (issue 19 item 8); Enter is the form's submit alone
    assert 'hx-trigger="input changed delay:300ms"' in box
    assert f'hx-get="{url(agent.agent_id)}"' in box
    assert 'hx-push-url="true"' in box and 'hx-target="#results"' in box
    assert 'hx-include="#memory-filters"' in box
    form = re.search(r'<form id="memory-filters"[^>]*>', html, re.S).group(0)
    assert 'method="get"' in form and 'hx-push-url="true"' in form


# --- ranked search (current rows) ------------------------------------------------------------------------


def test_query_uses_the_engines_ranked_search_over_current_rows(member, agent, history):
    html = member.get(url(agent.agent_id) + "?q=Alice").content.decode()
    assert row_ids(html) == [history["berlin"]]  # Lisbon is superseded, Atlantis retracted
    assert "Score" in html and "best first" in html


def test_browsing_does_not_bump_access_counts(member, agent, history):
    before = Memory.objects.get(id=history["berlin"]).access_count
    member.get(url(agent.agent_id) + "?q=Berlin")
    member.get(url(agent.agent_id) + "?q=Berlin", headers=HTMX)
    after = Memory.objects.get(id=history["berlin"])
    assert after.access_count == before
    assert after.last_accessed is None


def test_query_text_is_never_fts_syntax(member, agent, history):
    for q in ['"', "Berlin OR", "(", "NEAR(a b)", "*", "x" * 499]:
        assert member.get(url(agent.agent_id), {"q": q}).status_code == 200


def test_too_long_query_is_a_form_error_not_a_500(member, agent):
    response = member.get(url(agent.agent_id), {"q": "x" * 600})
    assert response.status_code == 200
    assert "field-error" in response.content.decode()


def test_ranked_search_honours_layer_and_origin_filters(member, agent):
    a = engine.store(agent_id=agent.agent_id, content="parcel arrived", origin="channel:telegram-1").id
    b = engine.store(agent_id=agent.agent_id, content="parcel lost", origin="channel:telegram-2").id
    c = engine.store(
        agent_id=agent.agent_id, content="parcel sent", origin="user_direct", layer="semantic"
    ).id
    base = url(agent.agent_id) + "?q=parcel"
    assert set(row_ids(member.get(base).content.decode())) == {a, b, c}
    assert row_ids(member.get(base + "&origin=channel:telegram-1").content.decode()) == [a]
    assert set(row_ids(member.get(base + "&origin_class=channel").content.decode())) == {a, b}
    assert row_ids(member.get(base + "&layer=semantic").content.decode()) == [c]


# --- listing with filters --------------------------------------------------------------------------------


def test_current_listing_is_newest_first_and_hides_history(member, agent, history):
    note = engine.store(agent_id=agent.agent_id, content="a later note").id
    ids = row_ids(member.get(url(agent.agent_id)).content.decode())
    assert ids[0] == note
    assert history["berlin"] in ids
    assert history["lisbon"] not in ids and history["poison"] not in ids


def test_all_rows_include_history_clearly_marked(member, agent, history):
    held = quarantine_fact(
        agent.agent_id, content="Alice on Mars", subject="alice", predicate="lives_in", object="Mars"
    )
    assert held not in row_ids(member.get(url(agent.agent_id)).content.decode())
    assert held not in row_ids(member.get(url(agent.agent_id) + "?q=Mars").content.decode())
    html = member.get(url(agent.agent_id) + "?status=all").content.decode()
    marked = statuses(html)
    assert marked[held] == "quarantined"
    assert marked[history["lisbon"]] == "superseded"
    assert marked[history["berlin"]] == "current"
    assert marked[history["poison"]] == "retracted"
    assert "badge status-retracted" in html and "history included" in html


def test_all_rows_with_query_match_substrings_of_history(member, agent, history):
    html = member.get(url(agent.agent_id) + "?status=all&q=lisb").content.decode()
    assert row_ids(html) == [history["lisbon"]]


def test_origin_filter_is_exact_and_origin_class_matches_the_class(member, agent):
    a = engine.store(agent_id=agent.agent_id, content="one", origin="channel:telegram-1").id
    b = engine.store(agent_id=agent.agent_id, content="two", origin="channel:telegram-10").id
    c = engine.store(agent_id=agent.agent_id, content="three", origin="channel").id
    d = engine.store(agent_id=agent.agent_id, content="four", origin="user").id
    base = url(agent.agent_id)
    assert row_ids(member.get(base + "?origin=channel:telegram-1").content.decode()) == [a]
    assert set(row_ids(member.get(base + "?origin_class=channel").content.decode())) == {a, b, c}
    assert row_ids(member.get(base + "?origin_class=user_direct").content.decode()) == [d]  # alias
    html = member.get(base).content.decode()
    options = re.search(r'<select id="origin" name="origin">(.*?)</select>', html, re.S).group(1)
    assert 'value="channel:telegram-10"' in options
    classes = re.search(r'<select id="origin_class" name="origin_class">(.*?)</select>', html, re.S).group(1)
    assert 'value="channel"' in classes and 'value="user_direct"' in classes


def test_layer_filter(member, agent):
    e = engine.store(agent_id=agent.agent_id, content="episode", layer="episodic").id
    p = engine.store(agent_id=agent.agent_id, content="how to", layer="procedural").id
    assert row_ids(member.get(url(agent.agent_id) + "?layer=procedural").content.decode()) == [p]
    assert row_ids(member.get(url(agent.agent_id) + "?layer=episodic").content.decode()) == [e]


def test_invalid_filters_fall_back_without_error(member, agent):
    engine.store(agent_id=agent.agent_id, content="still listed")
    response = member.get(url(agent.agent_id) + "?layer=bogus&status=weird&page=999")
    assert response.status_code == 200
    assert "still listed" in response.content.decode()


def test_future_rows_are_marked(member, agent):
    f = engine.store_temporal(
        agent_id=agent.agent_id,
        content="Alice starts at Acme",
        subject="alice",
        predicate="works_at",
        object="Acme",
        valid_from=dt("2999-01-01"),
    ).id
    assert statuses(member.get(url(agent.agent_id) + "?status=all").content.decode())[f] == "future"


# --- pagination and query counts -------------------------------------------------------------------------


def test_pagination_is_htmx_swapped_and_keeps_filters(member, agent):
    make_memories(agent.agent_id, 20)  # 40 rows
    first = member.get(url(agent.agent_id) + "?status=all").content.decode()
    assert len(row_ids(first)) == 25 and "Page 1 of 2" in first
    link = re.search(r'<a href="([^"]+)" hx-get="([^"]+)" rel="next">', first)
    assert link.group(1) == link.group(2) == "?status=all&amp;page=2"
    pager = re.search(r'<nav class="pager"[^>]*>', first).group(0)
    assert 'hx-target="#results"' in pager and 'hx-push-url="true"' in pager
    second = member.get(url(agent.agent_id) + "?status=all&page=2", headers=HTMX).content.decode()
    assert "<html" not in second and "Page 2 of 2" in second
    assert len(row_ids(second)) == 15
    assert not set(row_ids(first)) & set(row_ids(second))


def test_ranked_results_paginate_too(member, agent):
    make_memories(agent.agent_id, 30, word="zebra")  # 60 matching rows
    html = member.get(url(agent.agent_id) + "?q=zebra&page=3").content.decode()
    assert "Page 3 of 3" in html and len(row_ids(html)) == 10


def test_list_query_count_is_fixed(member, agent, django_assert_num_queries):
    make_memories(agent.agent_id, 20)  # 40 rows
    # session, user, agent, count, page, distinct origins
    with django_assert_num_queries(6):
        response = member.get(url(agent.agent_id) + "?status=all")
    assert len(row_ids(response.content.decode())) == 25
    # the partial skips the filter options
    with django_assert_num_queries(5):
        response = member.get(url(agent.agent_id) + "?status=all&page=2", headers=HTMX)
    assert len(row_ids(response.content.decode())) == 15


def test_search_query_count_is_fixed(member, agent, django_assert_num_queries):
    make_memories(agent.agent_id, 20)
    # session, user, agent, engine.search (no access-count update): on SQLite four statements (the full-text
    # stamp, FTS candidates, the believed ids among them, then the rows); on PostgreSQL one GIN query; plus the
    # graph (SPEC G1-G5): the generation row, the agent's current facts and its aliases (below 500 triples the
    # graph is built per query). Again with nothing written: SQLite's ranking is kept (migration 0024).
    with django_assert_num_queries(10 if connection.vendor == "sqlite" else 7):
        response = member.get(url(agent.agent_id) + "?q=weekly", headers=HTMX)
    with django_assert_num_queries(9 if connection.vendor == "sqlite" else 7):
        response = member.get(url(agent.agent_id) + "?q=weekly", headers=HTMX)
    assert len(row_ids(response.content.decode())) == 20


def test_stored_text_is_escaped(member, agent):
    engine.store(agent_id=agent.agent_id, content="<script>window.__xss=1</script>", origin='x"><b>o</b>')
    html = member.get(url(agent.agent_id) + "?status=all").content.decode()
    assert "<script>window.__xss" not in html and "<b>o</b>" not in html
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in html


def test_matches_are_highlighted_and_stored_markup_stays_text(client, viewer, agent):
    """Issue 19 item 8: the predicate is searched, and each query word is wrapped in <mark>, escaped."""
    from memory import engine as _engine

    _engine.store_temporal(
        agent_id=agent.agent_id, content="<b>acme</b> deploys to Workers", subject="acme-web",
        predicate="deploy_target", object="Workers",
    )  # fmt: skip
    login(client, viewer)
    from django.urls import reverse as _reverse

    html = client.get(
        _reverse("dashboard:memories", args=[agent.agent_id]) + "?q=deploy_target"
    ).content.decode()
    assert "&lt;b&gt;acme&lt;/b&gt; <mark>deploy</mark>s to Workers" in html
    assert "<mark>deploy</mark>_<mark>target</mark>" in html


def test_facts_derived_from_a_purged_source_are_marked_tainted_and_filterable(client, viewer, agent):
    """Issue 19 item 9: the list, the detail and the agent home mark tainted rows; the filter lists them."""
    from django.urls import reverse as _reverse

    from memory import engine as _engine

    aid = agent.agent_id
    source = _engine.store(agent_id=aid, content="rumour from the spam channel", origin="channel:spam").id
    derived = _engine.store_temporal(
        agent_id=aid, content="Acme plans a price rise", subject="acme", predicate="plans", object="price rise",
        derived_from=[source], origin="agent_derived",
    ).id  # fmt: skip
    clean = _engine.store(agent_id=aid, content="an ordinary note", origin="user_direct").id
    base = _reverse("dashboard:memories", args=[aid])
    login(client, viewer)
    assert 'data-tainted="true"' not in client.get(base).content.decode()

    _engine.invalidate_by_origin(agent_id=aid, origin="channel:spam")

    listed = client.get(base).content.decode()
    row = listed[listed.index(f'id="mem-{derived}"') :]
    assert 'data-tainted="true"' in row[: row.index("</tr>")]
    tainted = client.get(base + "?status=tainted").content.decode()
    assert derived in tainted and clean not in tainted and source not in tainted
    assert "1 tainted row" in tainted
    detail = client.get(_reverse("dashboard:memory", args=[aid, derived])).content.decode()
    assert 'data-tainted="true"' in detail
    home = client.get(_reverse("dashboard:agent", args=[aid])).content.decode()
    assert 'data-tainted="true"' in home
