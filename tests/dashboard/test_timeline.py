"""Timeline of a key: engine.get_history as a list with each row's fate, and the "as of" control."""

from __future__ import annotations

import re

import pytest
import time_machine
from django.urls import reverse

from memory import engine
from tests.conftest import dt, login
from tests.dashboard.conftest import assert_login_redirect, assert_same_404, quarantine_fact

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
KEY = "?subject=alice&predicate=lives_in"


def url(agent_id: str, query: str = KEY) -> str:
    return reverse("dashboard:timeline", args=[agent_id]) + query


def rows(html: str) -> list[tuple[str, str]]:
    return re.findall(
        r'<li id="row-[^"]+" class="timeline-row[^"]*" data-status="(\w+)" data-id="([^"]+)"', html
    )


def row_html(html: str, memory_id: str) -> str:
    start = html.index(f'<li id="row-{memory_id}"')
    return html[start : html.index("</ul>", html.index('<ul class="fate', start))]


@pytest.fixture
def member(client, viewer):
    return login(client, viewer)


@pytest.fixture
def story(agent):
    """Written at known record times: Lisbon, then Berlin, then a poisoned Atlantis, then its purge."""
    a = agent.agent_id
    key = {"agent_id": a, "subject": "alice", "predicate": "lives_in"}
    with time_machine.travel(dt("2024-01-01"), tick=False):
        lisbon = engine.store_temporal(
            **key, content="Lives in Lisbon", object="Lisbon", valid_from=dt("2020-01-01")
        )
    with time_machine.travel(dt("2024-02-01"), tick=False):
        berlin = engine.store_temporal(
            **key,
            content="Moved to Berlin",
            object="Berlin",
            valid_from=dt("2023-06-01"),
            source_event="chat-2",
        )
    with time_machine.travel(dt("2024-03-01"), tick=False):
        poison = engine.store_temporal(
            **key,
            content="Moved to Atlantis",
            object="Atlantis",
            valid_from=dt("2024-02-15"),
            origin="channel:spam",
        )
    with time_machine.travel(dt("2024-04-01"), tick=False):
        engine.invalidate_by_origin(agent_id=a, origin="channel:spam", actor="user:ada")
    return {"lisbon": lisbon.id, "berlin": berlin.id, "poison": poison.id}


# --- access ----------------------------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, agent):
    assert_login_redirect(client, url(agent.agent_id))
    assert_login_redirect(client, url(agent.agent_id, ""))


def test_outsider_gets_404(client, outsider, agent, story):
    login(client, outsider)
    assert client.get(url(agent.agent_id)).status_code == 404
    assert client.get(url(agent.agent_id, "")).status_code == 404


def test_other_teams_agent_is_the_same_404_as_a_missing_one(member, agent, other_agent):
    engine.store_temporal(agent_id=other_agent.agent_id, content="x", subject="alice", predicate="lives_in")
    assert_same_404(member, url(other_agent.agent_id), url("no-such-agent"))
    assert_same_404(member, url(other_agent.agent_id, ""), url("no-such-agent", ""))


def test_member_gets_the_page(member, agent, story):
    assert member.get(url(agent.agent_id)).status_code == 200


# --- key picker ------------------------------------------------------------------------------------------


def test_without_a_key_the_agents_keys_are_offered(member, agent, story):
    engine.store_temporal(
        agent_id=agent.agent_id, content="Bob likes tea", subject="bob", predicate="likes", object="tea"
    )
    html = member.get(url(agent.agent_id, "")).content.decode()
    keys = html[html.index('id="keys-table"') :]
    assert "?subject=alice&amp;predicate=lives_in" in keys and "?subject=bob&amp;predicate=likes" in keys
    assert '<td class="num" data-label="Rows">3</td>' in keys  # alice/lives_in has three rows


def test_half_a_key_is_a_search_not_a_required_field_error(member, agent, story):
    engine.store_temporal(agent_id=agent.agent_id, content="Jordan works at Acme", subject="Jordan",
                          predicate="employer", object="Acme")  # fmt: skip
    html = member.get(url(agent.agent_id, "?subject=Jordan")).content.decode()
    assert "This field is required" not in html and "field-error" not in html
    keys = html[html.index('id="keys-table"') :]
    assert "predicate=employer" in keys and "lives_in" not in keys
    assert 'value="Jordan"' in html  # the box keeps what was typed


def key_rows(html: str) -> list[tuple[str, str]]:
    keys = html[html.index('id="keys-table"') :]
    return re.findall(r'<td data-label="Subject"><a [^>]*>([^<]*)</a></td>\s*'
                      r'<td data-label="Predicate"><a [^>]*>([^<]*)</a></td>', keys)  # fmt: skip


def test_the_picker_searches_subject_and_predicate_word_by_word(member, agent, story):
    a = agent.agent_id
    engine.store_temporal(agent_id=a, content="Jordan works at Acme", subject="Jordan", predicate="employer",
                          object="Acme")  # fmt: skip
    engine.store_temporal(agent_id=a, content="acme-web deploys to Workers", subject="acme-web",
                          predicate="deploy_target", object="Workers")  # fmt: skip
    assert key_rows(member.get(url(a, "?q=jordan")).content.decode()) == [("Jordan", "employer")]
    assert key_rows(member.get(url(a, "?q=DEPLOY")).content.decode()) == [("acme-web", "deploy_target")]
    assert key_rows(member.get(url(a, "?q=alice+lives")).content.decode()) == [("alice", "lives_in")]
    none = member.get(url(a, "?q=alice+employer")).content.decode()
    assert 'id="keys-none"' in none and "keys-table" not in none


def test_the_picker_lists_the_most_changed_keys_first(member, agent, story):
    a = agent.agent_id
    with time_machine.travel(dt("2025-01-01"), tick=False):  # written last, but one row only
        engine.store_temporal(
            agent_id=a, content="Bob likes tea", subject="bob", predicate="likes", object="tea"
        )
    assert key_rows(member.get(url(a, "")).content.decode()) == [("alice", "lives_in"), ("bob", "likes")]


def test_the_picker_answers_a_search_with_its_results_fragment_over_htmx(member, agent, story):
    response = member.get(url(agent.agent_id, "?q=alice"), headers=HTMX)
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="results"') and 'data-query="alice"' in html
    assert 'id="q"' not in html  # the box is not replaced while one types


def test_the_picker_bounds_what_it_lists_and_says_how_many_match(member, agent, monkeypatch):
    from dashboard import views

    monkeypatch.setattr(views, "KEY_PICKER_LIMIT", 3)
    for i in range(5):
        engine.store_temporal(agent_id=agent.agent_id, content=f"c{i}", subject=f"customer-{i}",
                              predicate="prefers", object="email")  # fmt: skip
    html = member.get(url(agent.agent_id, "?q=customer")).content.decode()
    assert len(key_rows(html)) == 3
    assert "The 3 most-changed of 5 keys" in html


def test_the_pickers_query_count_does_not_grow_with_the_keys(member, agent, django_assert_num_queries):
    def add(n: int, start: int = 0) -> None:
        for i in range(start, start + n):
            engine.store_temporal(agent_id=agent.agent_id, content=f"c{i}", subject=f"customer-{i}",
                                  predicate="prefers", object="email")  # fmt: skip

    add(2)
    member.get(url(agent.agent_id, "?q=customer"))  # warm the session (and the kept keys)
    with django_assert_num_queries(PICKER_QUERIES):
        member.get(url(agent.agent_id, "?q=customer"))
    add(30, 2)
    with django_assert_num_queries(PICKER_QUERIES_AFTER_WRITES):  # the writes moved the generation
        html = member.get(url(agent.agent_id, "?q=customer")).content.decode()
    assert len(key_rows(html)) == 32
    with django_assert_num_queries(PICKER_QUERIES):
        again = member.get(url(agent.agent_id, "?q=customer")).content.decode()
    assert len(key_rows(again)) == 32


# session, user, agent (with its membership and badges), the agent's graph generation: the keys and their
# count are kept while it stands (selectors.key_picker_keys); after a write, the keys and their count again
PICKER_QUERIES = 4
PICKER_QUERIES_AFTER_WRITES = PICKER_QUERIES + 2


def test_an_over_long_search_is_a_form_error_not_a_500(member, agent, story):
    response = member.get(url(agent.agent_id, "?q=" + "x" * 5000))
    assert response.status_code == 200
    assert "field-error" in response.content.decode()


# --- history with fates ----------------------------------------------------------------------------------


def test_rows_are_oldest_world_time_first_with_status(member, agent, story):
    html = member.get(url(agent.agent_id)).content.decode()
    assert rows(html) == [
        ("superseded", story["lisbon"]),
        ("current", story["berlin"]),
        ("retracted", story["poison"]),
    ]


def test_each_row_shows_both_time_axes(member, agent, story):
    lisbon = row_html(member.get(url(agent.agent_id)).content.decode(), story["lisbon"])
    assert '<time datetime="2020-01-01T00:00:00+00:00">' in lisbon  # world: from
    assert '<time datetime="2023-06-01T00:00:00+00:00">' in lisbon  # world: until
    assert 'ingested <time datetime="2024-01-01T00:00:00+00:00">' in lisbon  # record: learned
    assert 'invalidated <time datetime="2024-02-01T00:00:00+00:00">' in lisbon  # record: closed by Berlin


def test_fates_superseded_retracted_restored_reaffirmed(member, agent, story):
    with time_machine.travel(dt("2024-05-01"), tick=False):
        engine.store_temporal(
            agent_id=agent.agent_id,
            subject="alice",
            predicate="lives_in",
            content="Moved to Berlin",
            object="Berlin",
            valid_from=dt("2023-06-01"),
            origin="operator:crm",
            source_event="crm-7",
        )
    html = member.get(url(agent.agent_id)).content.decode()
    lisbon, berlin, poison = (row_html(html, story[k]) for k in ("lisbon", "berlin", "poison"))
    assert (
        f'Superseded by <a href="#row-{story["berlin"]}"' in lisbon
        and 'event <span class="mono">chat-2' in lisbon
    )
    assert f'Supersedes <a href="#row-{story["lisbon"]}"' in berlin
    assert "Restored on <time" in berlin and "channel:spam" in berlin and "user:ada" in berlin
    assert 'Reaffirmed by <span class="mono">operator:crm</span>' in berlin and "crm-7" in berlin
    assert 'Retracted by <span class="mono">origin_purge</span>' in poison
    assert 'purge of origin <span class="mono">channel:spam</span> by user:ada' in poison


def test_continuation_rows_are_marked(member, agent):
    a = agent.agent_id
    key = {"agent_id": a, "subject": "bob", "predicate": "city"}
    lisbon = engine.store_temporal(**key, content="Lisbon", object="Lisbon", valid_from=dt("2020-01-01")).id
    engine.store_temporal(
        **key, content="Berlin", object="Berlin", valid_from=dt("2022-01-01"), valid_until=dt("2023-01-01")
    )
    html = member.get(url(a, "?subject=bob&predicate=city")).content.decode()
    # Lisbon until Berlin, Berlin until Lisbon resumes on a continuation row
    assert [s for s, _ in rows(html)] == ["superseded", "superseded", "current"]
    assert f'Continuation of <a href="#row-{lisbon}"' in html


def test_quarantined_rows_are_marked(member, agent, story):
    held = quarantine_fact(
        agent.agent_id,
        content="On Mars",
        subject="alice",
        predicate="lives_in",
        object="Mars",
        valid_from=dt("2024-03-10"),
    )
    html = member.get(url(agent.agent_id)).content.decode()
    assert ("quarantined", held) in rows(html)
    assert "Quarantined: held for review" in row_html(html, held)
    assert '<strong class="mono">Berlin</strong>' in answer(html)  # inert: never the answer


def test_unknown_key_says_so(member, agent):
    html = member.get(url(agent.agent_id, "?subject=nobody&predicate=nothing")).content.decode()
    assert "No rows for this key." in html


# --- as of -----------------------------------------------------------------------------------------------


def answer(html: str) -> str:
    return html[html.index('<section id="asof"') : html.index("</section>", html.index('<section id="asof"'))]


def test_default_answer_is_the_current_value(member, agent, story):
    html = member.get(url(agent.agent_id)).content.decode()
    assert '<strong class="mono">Berlin</strong>' in answer(html)
    assert "(now)" in answer(html) and "as believed now" in answer(html)


@pytest.mark.parametrize(
    ("at", "as_of", "expected"),
    [
        ("2021-01-01T00:00", "", "Lisbon"),
        ("2024-03-01T00:00", "", "Berlin"),  # the purge restored Berlin
        ("2024-03-01T00:00", "2024-03-15T00:00", "Atlantis"),  # what we believed before the purge
        ("2024-03-01T00:00", "2024-01-15T00:00", "Lisbon"),  # before we heard of Berlin
        ("2019-01-01T00:00:00", "", None),
    ],
)
def test_as_of_control_calls_get_at(member, agent, story, at, as_of, expected):
    html = member.get(url(agent.agent_id, f"{KEY}&at={at}&as_of={as_of}")).content.decode()
    got = answer(html)
    if expected is None:
        assert "Nothing was believed for that time." in got
    else:
        assert f'<strong class="mono">{expected}</strong>' in got
    assert (
        f'value="{at if len(at) == 19 else at + ":00"}Z"' in html
    )  # the control keeps its value, ISO 8601 UTC


def test_datetime_local_values_are_read_as_utc(member, agent, story):
    # Berlin starts 2023-06-01T00:00 UTC. A wall time without offset is UTC; an explicit offset is honoured.
    html = member.get(url(agent.agent_id, f"{KEY}&at=2023-06-01T00:30")).content.decode()
    assert '<strong class="mono">Berlin</strong>' in answer(html)
    html = member.get(url(agent.agent_id, f"{KEY}&at=2023-05-31T23:59:59")).content.decode()
    assert '<strong class="mono">Lisbon</strong>' in answer(html)
    html = member.get(url(agent.agent_id, f"{KEY}&at=2023-06-01T01:30:00%2B02:00")).content.decode()
    assert '<strong class="mono">Lisbon</strong>' in answer(html)  # 2023-05-31T23:30 UTC


def test_bad_time_is_a_form_error(member, agent, story):
    response = member.get(url(agent.agent_id, f"{KEY}&at=yesterday"))
    assert response.status_code == 200
    assert "Enter an ISO 8601 time in UTC" in response.content.decode()


@pytest.mark.parametrize("edge", ["9999-12-31T23:00:00-05:00", "0001-01-01T01:00:00%2B05:00"])
@pytest.mark.parametrize("field", ["at", "as_of"])
def test_a_time_near_the_calendars_ends_is_a_form_error_not_a_500(member, agent, story, edge, field):
    """Issue 15 item 14: these overflowed once in UTC (a 500 on ?as_of=)."""
    response = member.get(url(agent.agent_id, f"{KEY}&{field}={edge.replace('-05:00', '-05%3A00')}"))
    assert response.status_code == 200
    assert "between the years 1 and 9999" in response.content.decode()


def test_as_of_form_swaps_only_the_answer_over_htmx(member, agent, story):
    page = member.get(url(agent.agent_id)).content.decode()
    form = re.search(r'<form id="asof-form"[^>]*>', page, re.S).group(0)
    assert 'hx-target="#asof"' in form and 'hx-push-url="true"' in form and 'method="get"' in form
    response = member.get(url(agent.agent_id, f"{KEY}&at=2021-01-01T00:00"), headers=HTMX)
    html = response.content.decode()
    assert "<html" not in html and 'class="timeline"' not in html
    assert html.strip().startswith('<section id="asof"')
    assert '<strong class="mono">Lisbon</strong>' in html


def test_stored_text_is_escaped(member, agent):
    engine.store_temporal(
        agent_id=agent.agent_id,
        content="<script>window.__xss=1</script>",
        subject="alice",
        predicate="lives_in",
        object="<b>x</b>",
        origin="<i>o</i>",
    )
    html = member.get(url(agent.agent_id)).content.decode()
    assert "<script>window.__xss" not in html and "<b>x</b>" not in html and "<i>o</i>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html


def test_query_count_is_fixed(member, agent, story, django_assert_num_queries):
    for i in range(30):
        with time_machine.travel(dt("2024-06-01") + i * (dt("2024-01-02") - dt("2024-01-01")), tick=False):
            engine.store_temporal(
                agent_id=agent.agent_id,
                subject="alice",
                predicate="lives_in",
                content=f"City {i}",
                object=f"City {i}",
                valid_from=dt("2024-06-01") + i * (dt("2024-01-02") - dt("2024-01-01")),
            )
    # session, user, agent, get_at, get_history, purge notes (audit log)
    with django_assert_num_queries(6):
        response = member.get(url(agent.agent_id))
    assert len(rows(response.content.decode())) == 33


def test_time_inputs_are_iso_8601_text_in_utc_and_take_an_offset(member, agent, history):
    html = member.get(url(agent.agent_id, f"{KEY}&at=2021-01-01T02:00:00%2B02:00")).content.decode()
    box = re.search(r'<input type="text" id="at"[^>]*>', html).group(0)
    assert 'value="2021-01-01T00:00:00Z"' in box and "pattern=" in box  # the offset was honoured
    assert 'type="datetime-local"' not in html
    assert '<strong class="mono">Lisbon</strong>' in html


@pytest.mark.parametrize(
    "query,why",
    [
        ("&at=2010-01-01T00:00:00Z", "No value was true that early: the earliest row became true 2020-01-01"),
        ("&as_of=2001-01-01T00:00:00Z", "Nothing about this key had been learned yet on 2001-01-01"),
    ],
)
def test_nothing_believed_is_explained(member, agent, history, query, why):
    html = member.get(url(agent.agent_id, KEY + query)).content.decode()
    assert "Nothing was believed for that time." in html
    assert why in html.split('id="why-nothing">', 1)[1]


# --- a multi-valued predicate (SPEC B3) ------------------------------------------------------------------


def test_a_multi_valued_key_lists_every_value_and_answers_with_all_current_ones(member, agent):
    a = agent.agent_id
    key = {"agent_id": a, "subject": "bob", "predicate": "likes"}
    tea = engine.store_temporal(**key, content="Bob likes tea", object="tea", valid_from=dt("2024-01-01"))
    coffee = engine.store_temporal(
        **key, content="Bob likes coffee", object="coffee", valid_from=dt("2024-02-01")
    )
    html = member.get(url(a, "?subject=bob&predicate=likes")).content.decode()
    assert rows(html) == [("current", tea.id), ("current", coffee.id)]  # neither supersedes the other
    answer = html[html.index('id="asof"') : html.index("</section>", html.index('id="asof"'))].split(
        "<figure"
    )[0]
    assert "multi-valued" in answer and "Values at" in answer
    assert f"#row-{tea.id}" in answer and f"#row-{coffee.id}" in answer
    early = member.get(url(a, "?subject=bob&predicate=likes&at=2024-01-15T00:00"), headers=HTMX)
    fragment = early.content.decode().split("<figure", 1)[0]  # the answer, not the chart of every row
    assert f"#row-{tea.id}" in fragment and f"#row-{coffee.id}" not in fragment
    single = member.get(url(a, "?subject=alice&predicate=lives_in")).content.decode()
    assert "multi-valued" not in single
