"""Agent tokens (SPEC A2): scoped, stored as SHA-256 hashes, shown once, with expiry and revocation."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError

from memory.models import Agent, AgentToken

from . import common as c
from .types import EngineError, InvalidArgument, NotFound

SCOPES = ("memory:read", "memory:write", "admin")
TOKEN_PREFIX = "mdk_"
LAST_USED_RESOLUTION = timedelta(seconds=60)


class Unauthorized(EngineError):
    code = "unauthorized"


@dataclass(frozen=True)
class Principal:
    """Who is calling: the agent namespace and scopes come from the token, never from arguments."""

    token_id: int
    agent_id: str
    scopes: frozenset[str]
    external: bool

    @property
    def actor(self) -> str:
        return f"token:{self.token_id}"

    @property
    def origin(self) -> str:
        """SPEC P1/A2: each token writes under its own origin detail (``agent_derived:token-N``, or
        ``mcp_external:token-N`` for external tokens), so one compromised token can be purged alone."""
        kind = "mcp_external" if self.external else "agent_derived"
        return f"{kind}:token-{self.token_id}"

    def has(self, scope: str) -> bool:
        return scope in self.scopes or "admin" in self.scopes


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def check_scopes(scopes: Any) -> list[str]:
    if isinstance(scopes, str):
        scopes = [s for s in scopes.replace(" ", ",").split(",") if s]
    if not isinstance(scopes, list | tuple) or not scopes:
        raise InvalidArgument(f"scopes must be a non-empty list of {', '.join(SCOPES)}", field="scopes")
    out = []
    for s in scopes:
        if s not in SCOPES:
            raise InvalidArgument(f"unknown scope {s!r}; use {', '.join(SCOPES)}", field="scopes")
        if s not in out:
            out.append(s)
    return out


@c.write_transaction
def token_create(
    *,
    agent_id: str,
    scopes: Any,
    name: str = "",
    external: bool = False,
    expires_at: datetime | str | None = None,
    actor: str = "system",
) -> tuple[AgentToken, str]:
    """Create a token; returns the row and the secret, which is never stored and cannot be shown again."""
    agent_id = c.check_agent_id(agent_id)
    scope_list = check_scopes(scopes)
    expiry = c.parse_time(expires_at, field="expires_at")
    if expiry is not None and expiry <= c.now():
        raise InvalidArgument("expires_at must be in the future", field="expires_at")
    if not isinstance(name, str) or len(name) > 120:
        raise InvalidArgument("name must be at most 120 characters", field="name")
    actor = c.check_actor(actor)
    agent, _ = Agent.objects.get_or_create(agent_id=agent_id)
    c.ensure_agent(agent_id, bump_generation=False)
    for _ in range(3):
        prefix = secrets.token_hex(4)
        secret = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
        try:
            token = AgentToken.objects.create(
                agent=agent,
                name=name.strip(),
                prefix=prefix,
                token_hash=hash_secret(secret),
                scopes=scope_list,
                external=bool(external),
                expires_at=expiry,
            )
            break
        except IntegrityError:  # pragma: no cover - a 256-bit collision
            continue
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="token_create",
        token_id=token.id,
        scopes=scope_list,
        external=bool(external),
        name=token.name,
    )
    return token, secret


@c.write_transaction
def token_revoke(*, token_id: Any, actor: str = "system", agent_id: str | None = None) -> AgentToken:
    """Revoke a token (idempotent). ``agent_id`` restricts the lookup to one agent's tokens."""
    actor = c.check_actor(actor)
    try:
        tid = int(token_id)
    except (TypeError, ValueError):
        raise NotFound("no such token", field="token_id") from None
    qs = AgentToken.objects.select_related("agent").filter(id=tid)
    if agent_id is not None:
        qs = qs.filter(agent__agent_id=agent_id)
    token = qs.first()
    if token is None:
        raise NotFound("no such token", field="token_id")
    if token.revoked_at is None:
        token.revoked_at = c.now()
        AgentToken.objects.filter(id=token.id, revoked_at__isnull=True).update(revoked_at=token.revoked_at)
        c.audit(agent_id=token.agent.agent_id, actor=actor, action="token_revoke", token_id=token.id)
    return token


def token_list(*, agent_id: str) -> list[AgentToken]:
    agent_id = c.check_agent_id(agent_id)
    return list(
        AgentToken.objects.filter(agent__agent_id=agent_id).select_related("agent").order_by("-created_at")
    )


def authenticate(secret: Any) -> Principal:
    """Resolve a bearer secret to a principal, or raise ``unauthorized`` (same message for every failure)."""
    if not isinstance(secret, str) or not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
        raise Unauthorized("missing, unknown, expired or revoked token")
    token = AgentToken.objects.select_related("agent").filter(token_hash=hash_secret(secret.strip())).first()
    t = c.now()
    if (
        token is None
        or token.revoked_at is not None
        or (token.expires_at is not None and token.expires_at <= t)
    ):
        raise Unauthorized("missing, unknown, expired or revoked token")
    if token.last_used_at is None or t - token.last_used_at > LAST_USED_RESOLUTION:
        AgentToken.objects.filter(id=token.id).update(last_used_at=t)
    return Principal(token.id, token.agent.agent_id, frozenset(token.scopes), token.external)


def check_quota(*, agent_id: str, kind: str, limit: int) -> None:
    """Raise ``rate_limited`` if ``limit`` uses of today's quota are already counted (a read: a call refused
    here costs no work; ``consume_quota`` counts the use in the write's transaction)."""
    from memory.models import DailyCounter

    from .types import RateLimited

    used = (
        DailyCounter.objects.filter(agent_id=agent_id, day=c.now().date(), kind=kind)
        .values_list("count", flat=True)
        .first()
    )
    if used is not None and used >= limit:
        raise RateLimited(
            f"daily limit of {limit} {kind.split(':')[0]} calls reached; try again tomorrow (UTC)",
            limit=limit,
        )


@c.write_transaction
def consume_quota(*, agent_id: str, kind: str, limit: int) -> int:
    """Count one use of a daily quota; raise ``rate_limited`` (and count nothing) past ``limit``."""
    from django.db.models import F

    from memory.models import DailyCounter

    from .types import RateLimited

    day = c.now().date()
    DailyCounter.objects.get_or_create(agent_id=agent_id, day=day, kind=kind)
    DailyCounter.objects.filter(agent_id=agent_id, day=day, kind=kind).update(count=F("count") + 1)
    used = (
        DailyCounter.objects.filter(agent_id=agent_id, day=day, kind=kind)
        .values_list("count", flat=True)
        .get()
    )
    if used > limit:
        raise RateLimited(
            f"daily limit of {limit} {kind.split(':')[0]} calls reached; try again tomorrow (UTC)",
            limit=limit,
        )
    return used
