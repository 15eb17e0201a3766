"""Entity aliases (SPEC G6): several names of one entity, flattened chains, per-agent cap."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.models import EntityAlias

from .. import common as c
from ..types import EngineError, InvalidArgument, iso
from .names import _check_alias_name, normalize_entity


@dataclass(frozen=True)
class AliasResult:
    canonical: str
    alias: str
    created: bool
    flattened: int  # aliases that pointed at ``alias`` and now point at ``canonical``

    def to_dict(self) -> dict[str, Any]:
        return {
            "canonical": self.canonical,
            "alias": self.alias,
            "created": self.created,
            "flattened": self.flattened,
        }


@dataclass(frozen=True)
class AliasRecord:
    canonical: str
    alias: str
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {"canonical": self.canonical, "alias": self.alias, "created_at": iso(self.created_at)}


MAX_ALIASES = 5_000  # per agent


def _alias_map(agent_id: str) -> dict[str, str]:
    return dict(EntityAlias.objects.filter(agent_id=agent_id).values_list("alias", "canonical"))


def _lock_aliases(agent_id: str) -> None:
    c._advisory_lock(f"alias\x1f{agent_id}")


@c.write_transaction
def alias_add(*, agent_id: str, canonical: str, alias: str, actor: str = "system") -> AliasResult:
    """Make ``alias`` another name of ``canonical`` (SPEC G6).

    Both sides are normalised; an empty side or a self-alias is rejected. Chains are flattened when stored:
    if ``canonical`` is itself an alias of ``c`` the row stored is ``alias → c``, and aliases that pointed at
    ``alias`` are re-pointed at the new canonical. Upsert on (agent, alias). Audited; bumps the generation.
    """
    agent_id = c.check_agent_id(agent_id)
    requested = _check_alias_name(canonical, field="canonical")
    name = _check_alias_name(alias, field="alias")
    actor = c.check_actor(actor)
    if requested == name:
        raise InvalidArgument("an entity cannot be an alias of itself", field="alias")
    _lock_aliases(agent_id)
    aliases = _alias_map(agent_id)
    target = aliases.get(requested, requested)
    if target == name:
        raise InvalidArgument(
            f"{requested!r} is already an alias of {name!r}; that would make {name!r} an alias of itself",
            field="alias",
        )
    t = c.now()
    previous = aliases.get(name)
    if previous == target:
        return AliasResult(canonical=target, alias=name, created=False, flattened=0)
    if previous is None and len(aliases) >= MAX_ALIASES:
        raise EngineError(
            f"this agent already has {len(aliases)} aliases, the most allowed is {MAX_ALIASES}",
            code="too_many_aliases",
            field="alias",
            limit=MAX_ALIASES,
        )
    flattened = EntityAlias.objects.filter(agent_id=agent_id, canonical=name).update(
        canonical=target, updated_at=t
    )
    if previous is None:
        EntityAlias.objects.create(
            agent_id=agent_id, canonical=target, alias=name, created_at=t, updated_at=t, actor=actor
        )
    else:
        EntityAlias.objects.filter(agent_id=agent_id, alias=name).update(
            canonical=target, updated_at=t, actor=actor
        )
    c.bump_generation(agent_id)
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="alias_add",
        subject=target,
        reason=f"alias {name} -> {target}",
        at=t,
        canonical=target,
        alias=name,
        requested_canonical=requested,
        previous_canonical=previous,
        flattened=flattened,
    )
    return AliasResult(canonical=target, alias=name, created=previous is None, flattened=flattened)


def alias_list(*, agent_id: str) -> list[AliasRecord]:
    agent_id = c.check_agent_id(agent_id)
    rows = EntityAlias.objects.filter(agent_id=agent_id).order_by("canonical", "alias")
    return [AliasRecord(r.canonical, r.alias, r.created_at) for r in rows]


def resolve_entity(*, agent_id: str, name: str) -> str:
    """The canonical form of ``name``: normalised, then alias-resolved (chains are flat, one lookup)."""
    agent_id = c.check_agent_id(agent_id)
    norm = normalize_entity(name)
    if not norm:
        return norm
    row = EntityAlias.objects.filter(agent_id=agent_id, alias=norm).values_list("canonical", flat=True)
    return row.first() or norm
