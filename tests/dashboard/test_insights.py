"""The insights page (SPEC D9): profile windows, snapshots with deltas, gaps, attitudes with versions and decayed
confidence, skills, tiers; access, escaping, HTMX partial and a pinned query count. Also the archive on a memory's
page (SPEC B9): curators read the full text of a tiered row."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from memory import engine
from memory.models import Role
from tests.conftest import login, make_user
from tests.dashboard.conftest import assert_login_redirect, assert_same_404

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
XSS = "<script>window.__xss=1</script>"


def url(agent_id: str, days: int | None = None) -> str:
    base = reverse("dashboard:insights", args=[agent_id])
    return f"{base}?days={days}" if days else base


@pytest.fixture
def member(client, viewer):
    return login(client, viewer)


@pytest.fixture
def activity(agent):
    """A week of an agent's use: searches and feedback (one gap), attitudes (one approved then replaced, one
    pending), skills, a snapshot, and an old row moved to cold."""
    aid = agent.agent_id
    now = timezone.now()
    engine.store_temporal(
        agent_id=aid, content="acme-web deploys to cloudflare", subject="acme-web", predicate="deploy_target",
        object="cloudflare",
    )  # fmt: skip
    with time_machine.travel(now - timedelta(days=200), tick=False):
        old = engine.store(agent_id=aid, content="An old meeting note. " * 40).id
    for k in range(3):
        engine.agent_search(
            agent_id=aid, query="where does acme-web deploy", at=now - timedelta(days=2, hours=k)
        )
    for k in range(2):
        found = engine.agent_search(
            agent_id=aid, query=f"refund window {XSS}", at=now - timedelta(hours=k + 1)
        )
        engine.feedback(agent_id=aid, verdict="INCORRECT", query_id=found.query_id)
    first = engine.attitude_propose(
        agent_id=aid, category="workflow", statement="Small pull requests", confidence=0.8
    )
    engine.review_decide(item_id=first.item_id, decision="approve", actor="user:rex", reason="ok")
    second = engine.attitude_propose(
        agent_id=aid, category="workflow", statement="Stacked pull requests", confidence=0.9
    )
    engine.review_decide(item_id=second.item_id, decision="approve", actor="user:rex", reason="ok")
    pending = engine.attitude_propose(
        agent_id=aid, category="safety", statement=f"Never paste secrets {XSS}", confidence=0.7
    )
    for _ in range(5):
        engine.skill_use(agent_id=aid, skill="kubernetes")
    engine.skill_use(agent_id=aid, skill="terraform")
    engine.profile_snapshot(agent_id=aid, day=(now - timedelta(days=2)).date())
    engine.profile_snapshot(agent_id=aid)
    engine.retier(agent_id=aid)
    return {"old": old, "pending": pending.item_id}


def test_members_see_every_section(member, agent, activity) -> None:
    response = member.get(url(agent.agent_id))
    assert response.status_code == 200
    page = response.content.decode()
    # the profile, 7 days by default: intents, entities, used memories, and a chart
    assert "<title>Insights · Support bot · memdesk</title>" in page
    assert 'data-days="7"' in page and 'id="intent-chart"' in page and "<svg" in page
    assert "where does acme-web deploy" in page and 'id="entity-chart"' in page
    assert re.search(r'data-count="queries">5<', page)
    # the open gap, escaped
    assert 'id="open-gaps"' in page and "failed 2×" in page
    assert XSS not in page and "&lt;script&gt;window.__xss=1&lt;/script&gt;" in page
    # attitudes: the current version, the earlier one kept, decayed confidence, the change waiting
    assert 'id="attitude-workflow"' in page and "Stacked pull requests" in page
    assert "1 earlier version" in page and "v1: Small pull requests" in page
    assert f'id="pending-attitude-{activity["pending"]}"' in page and "Never paste secrets" in page
    # skills with levels, snapshots with deltas, tiers
    assert 'data-skill="kubernetes" data-level="1"' in page and "change waiting for review" in page
    assert 'id="snapshot-chart"' in page and 'id="snapshot-table"' in page
    assert 'data-tier="cold">1<' in page and 'id="tier-chart"' in page
    assert 'id="nav-insights"' in page and 'aria-current="page">Insights' in page


def test_the_window_is_kept_in_the_url_and_swapped_by_htmx(member, agent, activity) -> None:
    full = member.get(url(agent.agent_id, 30)).content.decode()
    assert 'data-days="30"' in full and 'id="window-30" aria-current="true"' in full
    fragment = member.get(url(agent.agent_id, 90), headers=HTMX)
    html = fragment.content.decode()
    assert fragment.status_code == 200 and html.lstrip().startswith('<section class="card" id="profile"')
    assert 'data-days="90"' in html and "<html" not in html and 'id="gaps"' not in html
    assert "HX-Request" in fragment.headers["Vary"]
    assert 'data-days="7"' in member.get(url(agent.agent_id, 12)).content.decode()  # unknown window: default


def test_an_agent_with_nothing_yet(member, agent) -> None:
    page = member.get(url(agent.agent_id)).content.decode()
    assert "No searches in this window." in page and "No open gaps." in page
    assert "No reviewed attitudes yet." in page and "No skills used yet." in page
    assert "No snapshots yet" in page and 'data-tier="hot">0<' in page


def test_access(client, agent, other_agent, outsider, viewer) -> None:
    assert_login_redirect(client, url(agent.agent_id))
    login(client, outsider)
    assert_same_404(client, url(agent.agent_id), url("no-such-agent"))
    login(client, viewer)
    assert client.post(url(agent.agent_id)).status_code == 405  # reads only


def test_query_count_is_fixed(member, agent, activity, django_assert_num_queries) -> None:
    # session, user, agent; profile: journal, graph generation, facts and aliases (a small graph is built per
    # read), memories; snapshots; attitudes; gaps (open, resolved); pending attitude items; skills and their
    # pending items. (The tier counts are one raw statement the capture does not see.)
    with django_assert_num_queries(15):
        assert member.get(url(agent.agent_id)).status_code == 200


def test_curators_read_the_archived_text_of_a_tiered_row(client, team, agent, activity) -> None:
    old = activity["old"]
    detail = reverse("dashboard:memory", args=[agent.agent_id, old])
    login(client, make_user("cora2", team, Role.CURATOR))
    page = client.get(detail).content.decode()
    assert 'id="memory-tier"' in page and "Tier <strong>cold</strong>" in page
    assert 'id="memory-archive"' in page and page.count("An old meeting note.") > 10
    login(client, make_user("vic", team, Role.VIEWER))
    page = client.get(detail).content.decode()
    assert 'id="memory-archive"' not in page and "Curators can read the archived full text." in page
