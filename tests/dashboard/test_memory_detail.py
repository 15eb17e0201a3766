"""Memory detail: content, triple, both time axes, status, provenance, chain links, link to the timeline."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory import engine
from tests.conftest import dt, login
from tests.dashboard.conftest import assert_login_redirect, assert_same_404

pytestmark = pytest.mark.django_db


def url(agent_id: str, memory_id: str) -> str:
    return reverse("dashboard:memory", args=[agent_id, memory_id])


@pytest.fixture
def member(client, viewer):
    return login(client, viewer)


@pytest.fixture
def note(agent):
    return engine.store(agent_id=agent.agent_id, content="plain note").id


def test_anonymous_is_sent_to_login(client, agent, note):
    assert_login_redirect(client, url(agent.agent_id, note))


def test_outsider_gets_404(client, outsider, agent, note):
    login(client, outsider)
    assert client.get(url(agent.agent_id, note)).status_code == 404


def test_other_teams_agent_is_the_same_404_as_a_missing_one(member, agent, other_agent):
    theirs = engine.store(agent_id=other_agent.agent_id, content="not yours").id
    assert_same_404(member, url(other_agent.agent_id, theirs), url("no-such-agent", theirs))


def test_memory_of_another_agent_under_my_agent_is_the_same_404_as_a_missing_id(member, agent, other_agent):
    theirs = engine.store(agent_id=other_agent.agent_id, content="not yours").id
    assert_same_404(member, url(agent.agent_id, theirs), url(agent.agent_id, "m_does_not_exist"))


def test_member_gets_the_page(member, agent, note):
    response = member.get(url(agent.agent_id, note))
    assert response.status_code == 200
    assert "plain note" in response.content.decode()


def test_fact_shows_triple_time_axes_status_and_chain(member, agent, history):
    html = member.get(url(agent.agent_id, history["lisbon"])).content.decode()
    assert "badge status-superseded" in html
    for text in ("Alice lives in Lisbon", ">alice<", ">lives_in<", ">Lisbon<"):
        assert text in html
    assert '<time datetime="2020-01-01T00:00:00+00:00">' in html  # valid_from
    assert '<time datetime="2023-06-01T00:00:00+00:00">' in html  # valid_until = Berlin's start
    assert "Ingested" in html and "Invalidated" in html and ">chat-2<" in html  # closed by Berlin's event
    berlin_link = url(agent.agent_id, history["berlin"])
    chain = html[html.index('id="memory-chain"') :]
    assert f'href="{berlin_link}"' in chain  # superseded by
    timeline = reverse("dashboard:timeline", args=[agent.agent_id]) + "?subject=alice&amp;predicate=lives_in"
    assert f'href="{timeline}"' in html


def test_current_row_shows_supersedes_and_reaffirmations(member, agent, history):
    html = member.get(url(agent.agent_id, history["berlin"])).content.decode()
    assert "badge status-current" in html
    assert f'href="{url(agent.agent_id, history["lisbon"])}"' in html  # supersedes
    reaffirmed = html[html.index('id="reaffirmed-by"') :]
    assert "operator:crm" in reaffirmed and "crm-sync-7" in reaffirmed


def test_retracted_row_is_shown_and_marked(member, agent, history):
    html = member.get(url(agent.agent_id, history["poison"])).content.decode()
    assert "badge status-retracted" in html
    assert "origin_purge" in html and "channel:spam" in html


def test_provenance_fields_and_derived_from_links(member, agent, history):
    derived = engine.store_temporal(
        agent_id=agent.agent_id,
        content="Alice is in Europe",
        subject="alice",
        predicate="continent",
        object="Europe",
        derived_from=[history["berlin"]],
        origin="agent_derived:reflect",
        source_event="reflect-9",
        session_id="sess-42",
        confidence=0.7,
        metadata={"why": "Berlin is in Europe"},
        tags=["geo"],
        valid_from=dt("2023-06-01"),
    ).id
    html = member.get(url(agent.agent_id, derived)).content.decode()
    prov = html[html.index('id="memory-provenance"') :]
    for text in (
        "agent_derived:reflect",
        "class agent_derived",
        "reflect-9",
        "sess-42",
        "0.70",
        "0.60",
        "geo",
    ):
        assert text in prov, text
    assert (
        f'href="{url(agent.agent_id, history["berlin"])}"'
        in prov[: prov.index("</dd>", prov.index("derived-from"))]
    )
    assert "Berlin is in Europe" in html[html.index('id="memory-metadata"') :]


def test_derived_from_id_of_another_agent_is_not_revealed(member, agent, other_agent):
    theirs = engine.store(agent_id=other_agent.agent_id, content="other team's secret").id
    mine = engine.store_temporal(
        agent_id=agent.agent_id, content="x", subject="s", predicate="p", object="o", derived_from=[theirs]
    ).id
    html = member.get(url(agent.agent_id, mine)).content.decode()
    assert "other team&#x27;s secret" not in html and "other team's secret" not in html
    assert "not found for this agent" in html


def test_continuation_rows_link_both_ways(member, agent):
    # Lisbon [2020, open); Berlin [2022, 2023) inserted inside it → Lisbon continues after 2023.
    a = agent.agent_id
    lisbon = engine.store_temporal(
        agent_id=a,
        content="Bob in Lisbon",
        subject="bob",
        predicate="city",
        object="Lisbon",
        valid_from=dt("2020-01-01"),
    ).id
    engine.store_temporal(
        agent_id=a,
        content="Bob in Berlin",
        subject="bob",
        predicate="city",
        object="Berlin",
        valid_from=dt("2022-01-01"),
        valid_until=dt("2023-01-01"),
    )
    history = engine.get_history(agent_id=a, subject="bob", predicate="city")
    continuation = next(r for r in history if r.metadata.get("continuation_of") == lisbon)
    html = member.get(url(a, lisbon)).content.decode()
    assert "Continued by" in html and f'href="{url(a, continuation.id)}"' in html
    html = member.get(url(a, continuation.id)).content.decode()
    assert "Continuation of" in html and f'href="{url(a, lisbon)}"' in html


def test_stored_text_is_escaped(member, agent):
    m = engine.store_temporal(
        agent_id=agent.agent_id,
        content="<script>window.__xss=1</script>",
        subject="<img src=x onerror=alert(1)>",
        predicate="p",
        object="<b>bold</b>",
        metadata={"html": "<i>meta</i>"},
        source_event="<u>ev</u>",
    ).id
    html = member.get(url(agent.agent_id, m)).content.decode()
    for raw in ("<script>window.__xss", "<img src=x", "<b>bold</b>", "<i>meta</i>", "<u>ev</u>"):
        assert raw not in html, raw
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in html


def test_query_count_is_fixed(member, agent, history, django_assert_num_queries):
    # session, user, agent, the row, its related rows (one query), its tier and archive (one query)
    with django_assert_num_queries(6):
        assert member.get(url(agent.agent_id, history["berlin"])).status_code == 200
