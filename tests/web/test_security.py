"""Web hardening (issue 15 item 18): a Content-Security-Policy with no inline script, MEMDESK_HTTPS turning on
secure cookies, HSTS and the HTTPS redirect (``check --deploy`` clean), and login throttling."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from tests.conftest import PASSWORD, login

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def directives(response) -> dict[str, str]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.strip() for part in header.split(";") if part.strip()}


def test_every_page_carries_a_policy_that_admits_only_the_sites_own_scripts(client, viewer, agent):
    login(client, viewer)
    for path in ("/login/", "/", f"/agents/{agent.agent_id}/", f"/agents/{agent.agent_id}/graph/"):
        response = client.get(path, follow=True)
        policy = directives(response)
        assert policy["script-src"] == "script-src 'self'", path  # no inline, no eval, no other host
        assert (
            policy["object-src"] == "object-src 'none'"
            and policy["frame-ancestors"] == "frame-ancestors 'none'"
        )
        assert policy["default-src"] == "default-src 'self'"


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I)
INLINE_HANDLER = re.compile(r"\son[a-z]+\s*=", re.I)


def test_no_template_has_an_inline_script_or_handler():
    """The policy forbids them: a page that needed one would silently break."""
    found = []
    for path in REPO.glob("**/templates/**/*.html"):
        if ".venv" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(REPO)}: {m.group()}" for m in INLINE_SCRIPT.finditer(text)]
        found += [f"{path.relative_to(REPO)}: {m.group()}" for m in INLINE_HANDLER.finditer(text)]
        assert "javascript:" not in text, path
    assert found == []


# --- MEMDESK_HTTPS ------------------------------------------------------------------------------------------


def manage(*args: str, https: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "MEMDESK_HTTPS", "MEMDESK_DEBUG")}
    env.update(MEMDESK_SECRET_KEY=secrets.token_urlsafe(50), DJANGO_SETTINGS_MODULE="config.settings")
    if https:
        env["MEMDESK_HTTPS"] = "true"
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_https_setting_makes_check_deploy_clean():
    clean = manage("check", "--deploy", "--fail-level", "WARNING", https=True)
    assert clean.returncode == 0, clean.stderr + clean.stdout
    plain = manage("check", "--deploy", https=False)
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in plain.stderr + plain.stdout  # HSTS, redirect, secure cookies: off without it
    shown = manage(
        "shell",
        "-c",
        "from django.conf import settings as s; print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
        "s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS > 0)",
        https=True,
    )
    assert shown.stdout.strip().splitlines()[-1].split() == ["True", "True", "True", "True"], shown.stderr


# --- login throttling ---------------------------------------------------------------------------------------


def sign_in(client: Client, username: str, password: str, ip: str = "10.0.0.1"):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=ip)


def test_repeated_failed_sign_ins_lock_that_username_from_that_address(viewer, settings):
    client = Client()
    limit = settings.AXES_FAILURE_LIMIT
    for _ in range(limit - 1):
        assert sign_in(client, "vera", "wrong-password").status_code == 200  # the form again, with an error
    locked = sign_in(client, "vera", "wrong-password")
    assert locked.status_code == 429 and 'id="locked-out"' in locked.content.decode()
    # now even the right password is refused from that address, but not from another one
    assert sign_in(client, "vera", PASSWORD).status_code == 429
    assert sign_in(Client(), "vera", PASSWORD, ip="10.0.0.2").status_code == 302


def test_a_success_resets_the_count(viewer, settings):
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in(client, "vera", "wrong-password")
    assert sign_in(client, "vera", PASSWORD).status_code == 302
    client.post("/logout/")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in(client, "vera", "wrong-password").status_code == 200
