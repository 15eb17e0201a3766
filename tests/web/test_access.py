"""web.access: who sees which agent, role checks, and the login redirect for HTMX requests."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.urls import reverse

from memory.models import Agent, Membership, Role
from tests.conftest import login, make_user
from web.access import agent_access, visible_agents

pytestmark = pytest.mark.django_db


@pytest.fixture
def unassigned(db):
    return Agent.objects.create(agent_id="stray-bot", display_name="Stray")


def test_member_sees_only_agents_of_their_teams(viewer, agent, other_agent, unassigned):
    assert list(visible_agents(viewer)) == [agent]


def test_user_in_two_teams_sees_both(viewer, agent, other_agent, other_team):
    Membership.objects.create(team=other_team, user=viewer, role=Role.VIEWER)
    assert {a.agent_id for a in visible_agents(viewer)} == {agent.agent_id, other_agent.agent_id}


def test_superuser_also_sees_unassigned_agents(team, agent, other_agent, unassigned):
    root = make_user("root", team, Role.VIEWER, is_superuser=True, is_staff=True)
    assert {a.agent_id for a in visible_agents(root)} == {agent.agent_id, unassigned.agent_id}


def test_non_superuser_never_sees_unassigned_agents(team_admin, unassigned):
    assert list(visible_agents(team_admin)) == []
    with pytest.raises(Http404):
        agent_access(team_admin, unassigned.agent_id)


def test_inactive_and_anonymous_users_see_nothing(viewer, agent):
    from django.contrib.auth.models import AnonymousUser

    assert list(visible_agents(AnonymousUser())) == []
    viewer.is_active = False
    viewer.save()
    assert list(visible_agents(viewer)) == []


def test_other_teams_agent_is_the_same_404_as_a_missing_one(viewer, agent, other_agent):
    with pytest.raises(Http404) as hidden:
        agent_access(viewer, other_agent.agent_id)
    with pytest.raises(Http404) as missing:
        agent_access(viewer, "no-such-agent")
    assert str(hidden.value) == str(missing.value)


@pytest.mark.parametrize(
    ("role", "needed", "allowed"),
    [
        (Role.VIEWER, Role.REVIEWER, False),
        (Role.REVIEWER, Role.REVIEWER, True),
        (Role.REVIEWER, Role.CURATOR, False),
        (Role.CURATOR, Role.CURATOR, True),
        (Role.CURATOR, Role.ADMIN, False),
        (Role.ADMIN, Role.ADMIN, True),
        (Role.ADMIN, Role.VIEWER, True),
    ],
)
def test_role_checks_use_membership_rank(team, agent, role, needed, allowed):
    user = make_user(f"u-{role}", team, role)
    if allowed:
        access = agent_access(user, agent.agent_id, role=needed)
        assert access.has_role(needed)
        assert access.role == role
    else:
        with pytest.raises(PermissionDenied):
            agent_access(user, agent.agent_id, role=needed)


def test_superuser_passes_role_checks_on_unassigned_agent(unassigned):
    root = make_user("root", None, is_superuser=True)
    access = agent_access(root, unassigned.agent_id, role=Role.ADMIN)
    assert access.membership is None
    assert access.role == Role.ADMIN


def test_anonymous_htmx_request_gets_hx_redirect_to_login(client, agent):
    url = reverse("dashboard:memories", args=[agent.agent_id])
    response = client.get(
        url + "?q=x",
        headers={"HX-Request": "true", "HX-Current-URL": f"http://testserver{url}?q=x"},
    )
    assert response.status_code == 200
    assert response["HX-Redirect"].startswith(reverse("login") + "?next=")
    assert "memories" in response["HX-Redirect"]


def test_anonymous_htmx_redirect_ignores_foreign_current_url(client, agent):
    url = reverse("dashboard:agent", args=[agent.agent_id])
    response = client.get(url, headers={"HX-Request": "true", "HX-Current-URL": "https://evil.example/x"})
    assert "evil.example" not in response["HX-Redirect"]


def test_member_login_helper_works(client, viewer, agent):
    login(client, viewer)
    assert client.get(reverse("dashboard:agent", args=[agent.agent_id])).status_code == 200
