"""``manage.py token create|list|revoke`` and ``manage.py mcp`` argument checks (SPEC A2, section 11)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory import engine
from memory.models import AgentToken

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_prints_the_token_alone_on_its_last_line() -> None:
    out, err = run("create", "--agent", "bot-1", "--scopes", "memory:read,memory:write", "--name", "laptop")
    secret = out.strip().splitlines()[-1]
    assert out.strip() == secret and secret.startswith("mdk_") and " " not in secret
    principal = engine.authenticate(secret)
    assert principal.agent_id == "bot-1" and principal.scopes == {"memory:read", "memory:write"}
    assert not principal.external and "cannot be shown again" in err
    token = AgentToken.objects.get()
    assert token.name == "laptop" and secret not in token.token_hash


def test_create_external_admin_token_with_expiry() -> None:
    out, _ = run(
        "create", "--agent", "bot-1", "--scopes", "admin", "--external", "--expires", "2099-01-01T00:00Z"
    )
    principal = engine.authenticate(out.strip())
    assert principal.external and principal.has("memory:write")
    assert AgentToken.objects.get().expires_at.year == 2099


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scopes", "memory:delete"], "unknown scope"),
        (["--scopes", ""], "scopes"),
        (["--scopes", "memory:read", "--expires", "2099-01-01T00:00:00"], "no timezone"),
        (["--scopes", "memory:read", "--expires", "2001-01-01T00:00:00Z"], "in the future"),
        (["--scopes", "memory:read", "--expires", "soon"], "expires_at"),
    ],
)
def test_create_rejects_bad_input_with_exit_code_2(args: list[str], message: str) -> None:
    with pytest.raises(CommandError) as caught:
        run("create", "--agent", "bot-1", *args)
    assert caught.value.returncode == 2 and message in str(caught.value)
    assert AgentToken.objects.count() == 0


def test_list_shows_tokens_but_never_their_secrets() -> None:
    first, _ = run("create", "--agent", "bot-1", "--scopes", "memory:read", "--name", "ci")
    run("create", "--agent", "bot-2", "--scopes", "memory:read")
    engine.authenticate(first.strip())
    table, _ = run("list", "--agent", "bot-1")
    header, *rows = table.strip().splitlines()
    assert header.split() == [
        "id",
        "name",
        "prefix",
        "scopes",
        "created",
        "last",
        "used",
        "expires",
        "revoked",
    ]
    assert len(rows) == 1 and "ci" in rows[0] and "memory:read" in rows[0] and "never" in rows[0]
    assert first.strip() not in table and first.strip()[:12] in table  # the prefix only
    listed = json.loads(run("list", "--agent", "bot-1", "--json")[0])
    assert [t["name"] for t in listed] == ["ci"] and listed[0]["last_used"] and listed[0]["revoked"] is None
    assert "secret" not in json.dumps(listed) and first.strip() not in json.dumps(listed)
    assert "no tokens" in run("list", "--agent", "nobody")[0]


def test_revoke_stops_the_token_and_is_idempotent() -> None:
    secret = run("create", "--agent", "bot-1", "--scopes", "memory:read")[0].strip()
    token = AgentToken.objects.get()
    out, _ = run("revoke", str(token.id))
    assert f"revoked token {token.id}" in out
    with pytest.raises(engine.EngineError):
        engine.authenticate(secret)
    run("revoke", str(token.id))
    assert json.loads(run("list", "--agent", "bot-1", "--json")[0])[0]["revoked"]


@pytest.mark.parametrize("token_id", ["999", "abc"])
def test_revoke_of_an_unknown_token_is_exit_code_2(token_id: str) -> None:
    with pytest.raises(CommandError) as caught:
        run("revoke", token_id)
    assert caught.value.returncode == 2 and "not_found" in str(caught.value)


def test_mcp_refuses_a_bad_token_before_serving(monkeypatch) -> None:
    monkeypatch.delenv("MEMDESK_MCP_TOKEN", raising=False)
    for kwargs in ({"token": "mdk_nope"}, {}):
        with pytest.raises(CommandError) as caught:
            call_command("mcp", **kwargs)
        assert caught.value.returncode == 2
