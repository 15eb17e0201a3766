"""Login and logout pages, the base layout (navigation, toasts, htmx), and CSRF on every POST."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.conftest import PASSWORD, login

pytestmark = pytest.mark.django_db


def test_login_page_renders_form_with_csrf(client):
    response = client.get(reverse("login"))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'name="csrfmiddlewaretoken"' in html
    assert 'name="username"' in html and 'name="password"' in html


def test_login_with_password_lands_on_home_with_a_toast(client, viewer, agent):
    response = client.post(reverse("login"), {"username": "vera", "password": PASSWORD}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("dashboard:home")
    html = response.content.decode()
    assert 'id="toasts"' in html
    assert "Signed in as vera." in html
    assert agent.display_name in html


def test_login_keeps_next(client, viewer, agent):
    url = reverse("dashboard:agent", args=[agent.agent_id])
    response = client.post(
        reverse("login") + f"?next={url}", {"username": "vera", "password": PASSWORD, "next": url}
    )
    assert response.status_code == 302
    assert response["Location"] == url


def test_wrong_password_shows_an_error(client, viewer):
    response = client.post(reverse("login"), {"username": "vera", "password": "nope-nope-nope"})
    assert response.status_code == 200
    assert "form-errors" in response.content.decode()


def test_signed_in_user_visiting_login_goes_home(client, viewer):
    login(client, viewer)
    response = client.get(reverse("login"))
    assert response.status_code == 302
    assert response["Location"] == reverse("dashboard:home")


def test_logout_is_a_post_and_says_so(client, viewer):
    login(client, viewer)
    response = client.post(reverse("logout"), follow=True)
    assert response.redirect_chain[-1][0] == reverse("login")
    assert "You are signed out." in response.content.decode()
    assert client.get(reverse("dashboard:home")).status_code == 302


def test_login_post_without_csrf_token_is_rejected(csrf_client, viewer):
    response = csrf_client.post(reverse("login"), {"username": "vera", "password": PASSWORD})
    assert response.status_code == 403
    assert "_auth_user_id" not in csrf_client.session


def test_logout_post_without_csrf_token_is_rejected(csrf_client, viewer):
    login(csrf_client, viewer)
    response = csrf_client.post(reverse("logout"))
    assert response.status_code == 403
    assert csrf_client.get(reverse("dashboard:home")).status_code == 200  # still signed in


def test_logout_with_the_pages_token_works(csrf_client, viewer):
    login(csrf_client, viewer)
    page = csrf_client.get(reverse("dashboard:home")).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    response = csrf_client.post(reverse("logout"), {"csrfmiddlewaretoken": token})
    assert response.status_code == 302


def test_base_layout_has_nav_htmx_and_csrf_header(client, viewer, agent):
    login(client, viewer)
    html = client.get(reverse("dashboard:agent", args=[agent.agent_id])).content.decode()
    body = re.search(r"<body hx-headers='\{\"x-csrftoken\": \"([^\"]+)\"\}'>", html)
    assert body is not None and len(body.group(1)) >= 32
    assert '<script src="/static/django_htmx/htmx-2.min.js"' in html
    assert "/static/css/memdesk.css" in html
    assert not re.search(r"""(src|href)=["']https?://""", html)  # nothing from a CDN
    nav = html[html.index("<nav") : html.index("</nav>")]
    for name in ("home", "agent", "memories", "timeline"):
        args = [] if name == "home" else [agent.agent_id]
        assert f'href="{reverse(f"dashboard:{name}", args=args)}"' in nav
    assert 'action="/logout/"' in nav


def test_static_files_are_served_locally(client):
    for path in ("/static/django_htmx/htmx-2.min.js", "/static/css/memdesk.css", "/static/js/memdesk.js"):
        response = client.get(path)
        assert response.status_code == 200, path
        b"".join(response.streaming_content)
