"""Navigation by role (issue 19 item 13): each role sees the links it may use and none that would only refuse
it; Tokens and the mistake notebook are in the navigation for those allowed; count tiles are links."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from memory.models import Role
from tests.conftest import login, make_user

pytestmark = pytest.mark.django_db

REVIEWER_LINKS = ("nav-quarantine", "nav-audit", "nav-operations")
EVERYONE = ("nav-graph", "nav-insights", "nav-wiki", "nav-review", "nav-discoveries", "nav-mistakes")


def nav_ids(client, agent) -> set[str]:
    html = client.get(reverse("dashboard:agent", args=[agent.agent_id])).content.decode()
    nav = re.search(r'<nav class="nav".*?</nav>', html, re.S).group(0)
    return set(re.findall(r'<a id="(nav-[a-z]+)"', nav))


@pytest.mark.parametrize(
    ("role", "shown", "hidden"),
    [
        (Role.VIEWER, EVERYONE, (*REVIEWER_LINKS, "nav-tokens")),
        (Role.REVIEWER, (*EVERYONE, *REVIEWER_LINKS), ("nav-tokens",)),
        (Role.CURATOR, (*EVERYONE, *REVIEWER_LINKS), ("nav-tokens",)),
        (Role.ADMIN, (*EVERYONE, *REVIEWER_LINKS, "nav-tokens"), ()),
    ],
)
def test_each_role_sees_what_it_may_use(client, team, agent, role, shown, hidden):
    login(client, make_user(f"u-{role}", team, role))
    ids = nav_ids(client, agent)
    assert set(shown) <= ids and not (set(hidden) & ids)


def test_every_nav_link_a_role_sees_opens_for_it(client, team, agent):
    for role in (Role.VIEWER, Role.REVIEWER, Role.ADMIN):
        login(client, make_user(f"w-{role}", team, role))
        html = client.get(reverse("dashboard:agent", args=[agent.agent_id])).content.decode()
        nav = re.search(r'<nav class="nav".*?</nav>', html, re.S).group(0)
        for href in re.findall(r'<a id="nav-[a-z]+" href="([^"]+)"', nav):
            assert client.get(href).status_code == 200, (role, href)


def test_a_superuser_sees_the_admin_links_whatever_their_membership(client, team, agent):
    from django.contrib.auth import get_user_model

    from memory.models import Membership

    root = get_user_model().objects.create_superuser("root", password="pw-12345-long")
    Membership.objects.create(team=team, user=root, role=Role.VIEWER)  # a superuser passes every role check
    login(client, root)
    assert "nav-tokens" in nav_ids(client, agent)


def test_the_agent_homes_count_tiles_are_links(client, team, agent):
    login(client, make_user("vic", team, Role.VIEWER))
    html = client.get(reverse("dashboard:agent", args=[agent.agent_id])).content.decode()
    tiles = re.search(r'<section class="stats" id="agent-counts".*?</section>', html, re.S).group(0)
    assert tiles.count('<a class="stat stat-link" href="') == 5
    assert reverse("review:quarantine", args=[agent.agent_id]) not in tiles  # a viewer: the rows instead
    login(client, make_user("rho", team, Role.REVIEWER))
    html = client.get(reverse("dashboard:agent", args=[agent.agent_id])).content.decode()
    assert reverse("review:quarantine", args=[agent.agent_id]) in html.split('id="agent-counts"')[1]


def test_the_agents_list_counts_are_links(client, team, agent):
    login(client, make_user("vic", team, Role.VIEWER))
    html = client.get(reverse("dashboard:home")).content.decode()
    row = re.search(r'<tr id="agent-1".*?</tr>', html, re.S).group(0)
    assert row.count("<a href=") == 6  # the agent and its five counts
    assert f'href="{reverse("dashboard:memories", args=[agent.agent_id])}?status=all"' in row
