"""SPEC A2: scoped agent tokens, hashed at rest; daily quotas."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from memory import engine
from memory.models import AgentToken, AuditEvent, DailyCounter
from tests.conftest import dt
from tests.memory.conftest import A

pytestmark = pytest.mark.django_db


def test_create_shows_the_secret_once_and_stores_only_its_hash():
    token, secret = engine.token_create(agent_id=A, scopes=["memory:read", "memory:write"], name="laptop")
    row = AgentToken.objects.get(id=token.id)
    assert secret.startswith("mdk_") and secret not in row.token_hash and len(row.token_hash) == 64
    assert row.scopes == ["memory:read", "memory:write"] and row.prefix in secret
    p = engine.authenticate(secret)
    assert (p.agent_id, p.scopes, p.external, p.origin) == (
        A,
        frozenset({"memory:read", "memory:write"}),
        False,
        f"agent_derived:token-{token.id}",  # each token its own origin detail (SPEC A2, issue 15 item 8)
    )
    assert AuditEvent.objects.filter(action="token_create").count() == 1


def test_external_tokens_write_as_mcp_external():
    _, secret = engine.token_create(agent_id=A, scopes="memory:write", external=True)
    assert engine.authenticate(secret).origin.startswith("mcp_external")


@pytest.mark.parametrize("scopes", [[], ["memory:delete"], "nope", None])
def test_bad_scopes(scopes):
    with pytest.raises(engine.EngineError) as err:
        engine.token_create(agent_id=A, scopes=scopes)
    assert err.value.code == "invalid_argument"
    assert AgentToken.objects.count() == 0


def test_unknown_revoked_and_expired_tokens_fail_identically():
    token, secret = engine.token_create(agent_id=A, scopes=["memory:read"], expires_at=dt("2030-01-01"))
    errors = []
    for bad in ["mdk_nothing_here", "", None, secret + "x"]:
        with pytest.raises(engine.EngineError) as err:
            engine.authenticate(bad)
        errors.append(err.value.as_dict())
    with time_machine.travel(dt("2030-01-02"), tick=False), pytest.raises(engine.EngineError) as err:
        engine.authenticate(secret)
    errors.append(err.value.as_dict())
    engine.token_revoke(token_id=token.id, actor="user:ada")
    with pytest.raises(engine.EngineError) as err:
        engine.authenticate(secret)
    errors.append(err.value.as_dict())
    assert all(e == errors[0] for e in errors) and errors[0]["code"] == "unauthorized"


def test_last_used_is_recorded_coarsely():
    _, secret = engine.token_create(agent_id=A, scopes=["memory:read"])
    with time_machine.travel(dt("2026-01-01T00:00:00"), tick=False):
        engine.authenticate(secret)
    with time_machine.travel(dt("2026-01-01T00:00:30"), tick=False):
        engine.authenticate(secret)
    assert AgentToken.objects.get().last_used_at == dt("2026-01-01T00:00:00")
    with time_machine.travel(dt("2026-01-01T00:02:00"), tick=False):
        engine.authenticate(secret)
    assert AgentToken.objects.get().last_used_at == dt("2026-01-01T00:02:00")


def test_revoke_is_scoped_and_idempotent():
    token, _ = engine.token_create(agent_id=A, scopes=["admin"])
    with pytest.raises(engine.EngineError) as err:
        engine.token_revoke(token_id=token.id, agent_id="someone-else")
    assert err.value.code == "not_found"
    engine.token_revoke(token_id=token.id)
    first = AgentToken.objects.get().revoked_at
    engine.token_revoke(token_id=token.id)
    assert AgentToken.objects.get().revoked_at == first
    assert [t.id for t in engine.token_list(agent_id=A)] == [token.id]


def test_daily_quota_counts_and_refuses_past_the_limit():
    with time_machine.travel(dt("2026-01-01T10:00:00"), tick=False):
        assert [engine.consume_quota(agent_id=A, kind="memory_store", limit=3) for _ in range(3)] == [1, 2, 3]
        with pytest.raises(engine.EngineError) as err:
            engine.consume_quota(agent_id=A, kind="memory_store", limit=3)
        assert err.value.code == "rate_limited"
        assert DailyCounter.objects.get().count == 3  # the refused call counted nothing
    with time_machine.travel(dt("2026-01-01T10:00:00") + timedelta(days=1), tick=False):
        assert engine.consume_quota(agent_id=A, kind="memory_store", limit=3) == 1
