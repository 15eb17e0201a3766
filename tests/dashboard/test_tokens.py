"""Agent tokens page (SPEC A2, D8): admins of the agent's team list, create and revoke tokens.

The secret is shown once, in the create response, and nowhere else (no URL, redirect, cookie or log line).
"""

from __future__ import annotations

import json
import logging
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from memory import engine
from memory.models import Agent, AgentToken, AuditEvent
from tests.conftest import login, make_user
from tests.dashboard.conftest import assert_login_redirect, assert_same_404

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
SECRET_RE = re.compile(r'<input[^>]*id="token-secret"[^>]*value="([^"]+)"')


def url(agent_id: str) -> str:
    return reverse("dashboard:tokens", args=[agent_id])


def revoke_url(agent_id: str, token_id: int) -> str:
    return reverse("dashboard:token_revoke", args=[agent_id, token_id])


def row_ids(html: str) -> list[str]:
    return re.findall(r'<tr id="token-(\d+)"', html)


def secret_in(html: str) -> str:
    match = SECRET_RE.search(html)
    assert match, "no secret on the page"
    return match.group(1)


@pytest.fixture
def admin(client, team_admin):
    return login(client, team_admin)


@pytest.fixture
def token(agent):
    """An existing token (row, secret), made through the engine."""
    return engine.token_create(
        agent_id=agent.agent_id, scopes=["memory:read"], name="reader", actor="user:ada"
    )


def create(client, agent_id: str, **data):
    payload = {"name": "prod bot", "scopes": ["memory:read", "memory:write"], **data}
    return client.post(url(agent_id), payload)


# --- access ----------------------------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, agent, token):
    assert_login_redirect(client, url(agent.agent_id))
    response = client.post(revoke_url(agent.agent_id, token[0].id))
    assert response.status_code == 302 and response["Location"].startswith("/login/?next=")
    response = create(client, agent.agent_id)
    assert response.status_code == 302 and response["Location"].startswith("/login/?next=")
    assert AgentToken.objects.count() == 1
    assert engine.authenticate(token[1]).agent_id == agent.agent_id  # still valid


def test_outsider_gets_the_same_404_as_a_missing_agent(client, outsider, agent, token):
    # outsider is an admin, but of another team
    login(client, outsider)
    assert_same_404(client, url(agent.agent_id), url("no-such-agent"))
    assert create(client, agent.agent_id).status_code == 404
    assert client.post(revoke_url(agent.agent_id, token[0].id)).status_code == 404
    assert AgentToken.objects.count() == 1
    assert AgentToken.objects.get().revoked_at is None


@pytest.mark.parametrize("member", ["viewer", "reviewer", "curator"])
def test_members_who_are_not_admins_get_an_admins_only_page(
    client, request, member, team_admin, agent, token
):
    login(client, request.getfixturevalue(member))
    response = client.get(url(agent.agent_id))
    assert response.status_code == 403
    html = response.content.decode()
    assert "admins only" in html and "<html" in html  # a real page, with the navigation
    assert f"Your role is <strong>{member}</strong>" in html
    assert "<strong>ada</strong>" in html  # who to ask
    assert "reader" not in html and token[0].prefix not in html  # nothing about the tokens


@pytest.mark.parametrize("member", ["viewer", "curator"])
def test_members_who_are_not_admins_cannot_create_or_revoke(client, request, member, agent, token):
    login(client, request.getfixturevalue(member))
    assert create(client, agent.agent_id).status_code == 403
    assert client.post(revoke_url(agent.agent_id, token[0].id)).status_code == 403
    assert client.post(revoke_url(agent.agent_id, token[0].id), headers=HTMX).status_code == 403
    assert AgentToken.objects.count() == 1
    assert engine.authenticate(token[1]).token_id == token[0].id


def test_admin_gets_the_page(admin, agent):
    response = admin.get(url(agent.agent_id))
    assert response.status_code == 200
    assert 'id="token-form"' in response.content.decode()


def test_superuser_may_manage_tokens_of_unassigned_agents(client, db):
    stray = Agent.objects.create(agent_id="stray-bot")
    login(client, make_user("root", None, is_superuser=True))
    assert client.get(url(stray.agent_id)).status_code == 200
    assert create(client, stray.agent_id).status_code == 201


def test_agent_home_links_tokens_for_admins_only(client, viewer, team_admin, agent):
    home = reverse("dashboard:agent", args=[agent.agent_id])
    html = login(client, team_admin).get(home).content.decode()
    assert f'href="{url(agent.agent_id)}"' in html
    html = login(client, viewer).get(home).content.decode()
    assert url(agent.agent_id) not in html


# --- listing ---------------------------------------------------------------------------------------------


def test_list_shows_every_field_but_never_the_hash(admin, agent, token):
    expiring, _ = engine.token_create(
        agent_id=agent.agent_id,
        scopes=["admin"],
        name="ops",
        external=True,
        expires_at=timezone.now() + timedelta(days=30),
    )
    revoked, _ = engine.token_create(agent_id=agent.agent_id, scopes=["memory:write"], name="old")
    engine.token_revoke(token_id=revoked.id)
    engine.authenticate(token[1])  # stamps last_used_at
    html = admin.get(url(agent.agent_id)).content.decode()
    assert row_ids(html) == [str(revoked.id), str(expiring.id), str(token[0].id)]  # newest first
    for t in AgentToken.objects.all():
        assert t.token_hash not in html
        assert f"mdk_{t.prefix}_…" in html
    row = re.search(rf'<tr id="token-{expiring.id}".*?</tr>', html, re.S).group(0)
    assert "ops" in row and "admin" in row and "external" in row and 'data-state="active"' in row
    assert expiring.expires_at.strftime("%Y-%m-%d") in row
    assert "never" in row  # never used
    reader = re.search(rf'<tr id="token-{token[0].id}".*?</tr>', html, re.S).group(0)
    assert "memory:read" in reader and "<time" in reader and "Revoke" in reader
    old = re.search(rf'<tr id="token-{revoked.id}".*?</tr>', html, re.S).group(0)
    assert 'data-state="revoked"' in old and "Revoke</button>" not in old


def test_expired_tokens_are_marked(admin, agent, time_machine):
    t, _ = engine.token_create(
        agent_id=agent.agent_id, scopes=["memory:read"], expires_at=timezone.now() + timedelta(hours=1)
    )
    time_machine.move_to(timezone.now() + timedelta(hours=2))
    html = admin.get(url(agent.agent_id)).content.decode()
    assert f'<tr id="token-{t.id}" class="token-row token-expired" data-state="expired">' in html


def test_only_this_agents_tokens_are_listed(admin, agent, other_agent, token):
    theirs, _ = engine.token_create(agent_id=other_agent.agent_id, scopes=["memory:read"], name="theirs")
    html = admin.get(url(agent.agent_id)).content.decode()
    assert row_ids(html) == [str(token[0].id)]
    assert theirs.prefix not in html


def test_token_names_are_escaped(admin, agent):
    engine.token_create(
        agent_id=agent.agent_id, scopes=["memory:read"], name="<script>window.__xss=1</script>"
    )
    html = admin.get(url(agent.agent_id)).content.decode()
    assert "<script>window.__xss" not in html
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in html


def test_pages_showing_tokens_are_never_cached(admin, agent, token):
    assert "no-store" in admin.get(url(agent.agent_id))["Cache-Control"]
    assert "no-store" in create(admin, agent.agent_id)["Cache-Control"]


def test_list_query_count_is_fixed(admin, agent, django_assert_num_queries):
    for i in range(12):
        engine.token_create(agent_id=agent.agent_id, scopes=["memory:read"], name=f"t{i}")
    # session, user, agent, membership (admin check), tokens
    with django_assert_num_queries(5):
        response = admin.get(url(agent.agent_id))
    assert len(row_ids(response.content.decode())) == 12


def test_admins_only_page_query_count_is_fixed(client, viewer, agent, django_assert_num_queries):
    login(client, viewer)
    # session, user, agent, membership (admin check), the team's admins
    with django_assert_num_queries(5):
        assert client.get(url(agent.agent_id)).status_code == 403


# --- create ----------------------------------------------------------------------------------------------


def test_create_shows_the_secret_once_and_only_in_that_response(admin, agent, caplog):
    caplog.set_level(logging.DEBUG)
    response = create(admin, agent.agent_id, name="prod bot", external="on")
    assert response.status_code == 201
    assert "Location" not in response
    html = response.content.decode()
    secret = secret_in(html)
    assert html.count(secret) == 1
    assert "will not be shown again" in html and 'data-copy="#token-secret"' in html
    assert 'hx-history="false"' in html  # kept out of htmx's history cache
    principal = engine.authenticate(secret)
    assert principal.agent_id == agent.agent_id
    assert principal.scopes == {"memory:read", "memory:write"}
    assert principal.external is True
    token = AgentToken.objects.get()
    assert token.name == "prod bot" and secret.startswith(f"mdk_{token.prefix}_")
    assert row_ids(html) == [str(token.id)]  # the new row is listed below
    # nowhere else: not in cookies (no flash message), not on the next page, not in the audit log or logs
    assert secret not in str(response.cookies) and secret not in str(admin.cookies)
    later = admin.get(url(agent.agent_id)).content.decode()
    assert secret not in later and "token-secret" not in later
    assert f"mdk_{token.prefix}_…" in later
    assert secret not in caplog.text
    assert not any(secret in json.dumps(e.details) for e in AuditEvent.objects.all())
    event = AuditEvent.objects.get(action="token_create")
    assert event.actor == "user:ada" and event.agent_id == agent.agent_id


def test_htmx_create_swaps_the_panel(admin, agent):
    response = admin.post(url(agent.agent_id), {"name": "n", "scopes": ["admin"]}, headers=HTMX)
    assert response.status_code == 201
    html = response.content.decode()
    assert "<html" not in html and html.strip().startswith('<div id="tokens-panel">')
    secret = secret_in(html)
    assert html.count(secret) == 1
    assert engine.authenticate(secret).scopes == {"admin"}
    assert "HX-Request" in response["Vary"]


def test_create_form_posts_with_htmx_to_the_panel(admin, agent):
    html = admin.get(url(agent.agent_id)).content.decode()
    form = re.search(r'<form id="token-form"[^>]*>', html, re.S).group(0)
    assert 'method="post"' in form and f'hx-post="{url(agent.agent_id)}"' in form
    assert 'hx-target="#tokens-panel"' in form and 'hx-swap="outerHTML"' in form
    assert "csrfmiddlewaretoken" in html
    for scope in ("memory:read", "memory:write", "admin"):
        assert f'type="checkbox" name="scopes" value="{scope}"' in html


def test_expiry_is_passed_to_the_engine(admin, agent):
    response = create(admin, agent.agent_id, expires_at="2999-01-02T03:04:05")
    assert response.status_code == 201
    assert AgentToken.objects.get().expires_at.isoformat() == "2999-01-02T03:04:05+00:00"


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"scopes": []}, "scopes", "Pick at least one scope."),
        ({"scopes": ["root"]}, "scopes", "Select a valid choice."),
        ({"name": ""}, "name", "This field is required."),
        ({"name": "x" * 121}, "name", "at most 120 characters"),
        ({"expires_at": "tomorrow-ish"}, "expires_at", "Enter an ISO 8601 time in UTC"),
        (
            {"expires_at": "2001-01-01T00:00"},
            "expires_at",
            "expires_at must be in the future",
        ),  # the engine's
    ],
)
def test_bad_input_is_a_form_error_and_creates_nothing(admin, agent, data, field, message):
    response = create(admin, agent.agent_id, **data)
    assert response.status_code == 200
    html = response.content.decode()
    assert "field-error" in html and message in html
    assert "token-secret" not in html
    assert AgentToken.objects.count() == 0


def test_bad_input_keeps_what_was_typed(admin, agent):
    html = create(admin, agent.agent_id, name="keep me", scopes=[], external="on").content.decode()
    assert 'value="keep me"' in html
    assert re.search(r'name="external" id="id_external" checked', html)


def test_get_on_revoke_is_not_allowed(admin, agent, token):
    assert admin.get(revoke_url(agent.agent_id, token[0].id)).status_code == 405


# --- revoke ----------------------------------------------------------------------------------------------


def test_revoke_button_asks_for_confirmation_and_swaps_the_row(admin, agent, token):
    html = admin.get(url(agent.agent_id)).content.decode()
    row = re.search(rf'<tr id="token-{token[0].id}".*?</tr>', html, re.S).group(0)
    form = re.search(r"<form[^>]*>", row, re.S).group(0)
    assert 'method="post"' in form
    assert f'hx-post="{revoke_url(agent.agent_id, token[0].id)}"' in form
    assert f'hx-target="#token-{token[0].id}"' in form and 'hx-swap="outerHTML"' in form
    assert 'hx-confirm="Revoke the token “reader”' in form


def test_htmx_revoke_returns_the_row_and_a_toast_and_the_token_stops_working(admin, agent, token):
    row, secret = token
    assert engine.authenticate(secret).token_id == row.id
    response = admin.post(revoke_url(agent.agent_id, row.id), headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.strip().startswith(
        f'<tr id="token-{row.id}" class="token-row token-revoked" data-state="revoked">'
    )
    assert "<html" not in html and "Revoke</button>" not in html
    assert "Token “reader” revoked." in html  # inline note
    trigger = json.loads(response["HX-Trigger"])
    assert trigger["memdesk:toast"] == {"text": "Token “reader” revoked.", "level": "success"}
    with pytest.raises(engine.Unauthorized):
        engine.authenticate(secret)
    event = AuditEvent.objects.get(action="token_revoke")
    assert event.actor == "user:ada" and event.details["token_id"] == row.id


def test_plain_revoke_redirects_with_a_message(admin, agent, token):
    response = admin.post(revoke_url(agent.agent_id, token[0].id))
    assert response.status_code == 302 and response["Location"] == url(agent.agent_id)
    html = admin.get(url(agent.agent_id)).content.decode()
    assert "Token “reader” revoked." in html  # toast on the next page
    assert f'id="token-{token[0].id}" class="token-row token-revoked"' in html
    with pytest.raises(engine.Unauthorized):
        engine.authenticate(token[1])


def test_revoking_twice_says_so(admin, agent, token):
    admin.post(revoke_url(agent.agent_id, token[0].id), headers=HTMX)
    response = admin.post(revoke_url(agent.agent_id, token[0].id), headers=HTMX)
    assert response.status_code == 200
    assert "already revoked" in json.loads(response["HX-Trigger"])["memdesk:toast"]["text"]
    assert AuditEvent.objects.filter(action="token_revoke").count() == 1


def test_another_agents_token_cannot_be_revoked_through_this_agent(admin, agent, other_agent):
    theirs, secret = engine.token_create(agent_id=other_agent.agent_id, scopes=["memory:read"])
    assert admin.post(revoke_url(agent.agent_id, theirs.id), headers=HTMX).status_code == 404
    assert admin.post(revoke_url(agent.agent_id, 999999)).status_code == 404
    assert engine.authenticate(secret).agent_id == other_agent.agent_id


# --- CSRF ------------------------------------------------------------------------------------------------


def csrf_token(client, agent_id: str) -> str:
    html = client.get(url(agent_id)).content.decode()
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)


def test_create_without_csrf_token_is_refused(csrf_client, team_admin, agent):
    login(csrf_client, team_admin)
    response = csrf_client.post(url(agent.agent_id), {"name": "x", "scopes": ["memory:read"]})
    assert response.status_code == 403
    assert AgentToken.objects.count() == 0
    ok = csrf_client.post(
        url(agent.agent_id),
        {
            "name": "x",
            "scopes": ["memory:read"],
            "csrfmiddlewaretoken": csrf_token(csrf_client, agent.agent_id),
        },
    )
    assert ok.status_code == 201 and AgentToken.objects.count() == 1


def test_revoke_without_csrf_token_is_refused(csrf_client, team_admin, agent, token):
    login(csrf_client, team_admin)
    assert csrf_client.post(revoke_url(agent.agent_id, token[0].id), headers=HTMX).status_code == 403
    assert engine.authenticate(token[1]).token_id == token[0].id
    # htmx sends the token in a header (hx-headers on <body>)
    header = {**HTMX, "X-CSRFToken": csrf_token(csrf_client, agent.agent_id)}
    assert csrf_client.post(revoke_url(agent.agent_id, token[0].id), headers=header).status_code == 200
    with pytest.raises(engine.Unauthorized):
        engine.authenticate(token[1])
