"""Entity aliases (SPEC G6): several names of one entity, flattened chains, per-agent cap."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.models import AuditEvent, EntityAlias

from .. import common as c
from ..types import EngineError, InvalidArgument, NotFound, iso
from .names import _check_alias_name, normalize_entity


@dataclass(frozen=True)
class AliasResult:
    canonical: str
    alias: str
    created: bool
    flattened: int  # aliases that pointed at ``alias`` and now point at ``canonical``
    event_id: int | None = None  # the merge's audit event (what ``alias_undo`` takes back); None: no change

    def to_dict(self) -> dict[str, Any]:
        return {
            "canonical": self.canonical,
            "alias": self.alias,
            "created": self.created,
            "flattened": self.flattened,
            "event_id": self.event_id,
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
    flattened_aliases = sorted(
        EntityAlias.objects.filter(agent_id=agent_id, canonical=name).values_list("alias", flat=True)
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
    event = c.audit(
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
        flattened_aliases=flattened_aliases,  # what ``alias_undo`` points back at ``alias``
    )
    return AliasResult(
        canonical=target, alias=name, created=previous is None, flattened=flattened, event_id=event.id
    )


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


# --- undo a merge (issue 19 item 3) -------------------------------------------------------------------------


class AlreadyUndone(EngineError):
    code = "already_undone"


class MergeChanged(EngineError):
    """A later merge (or an erasure) changed what this merge wrote: undoing it would break that one."""

    code = "merge_changed"


@dataclass(frozen=True)
class MergeUndoResult:
    canonical: str  # the entity the merge kept
    alias: str  # the name that is its own entity again (or points where it did before the merge)
    restored_aliases: list[
        str
    ]  # names the merge had re-pointed at ``canonical``, pointing at ``alias`` again
    relinked: int  # plain memories written since the merge whose entity links were derived again
    event_id: int  # the ``merge_undone`` audit event
    merge_event_id: int  # the ``alias_add`` event taken back

    def to_dict(self) -> dict[str, Any]:
        return {
            "canonical": self.canonical,
            "alias": self.alias,
            "restored_aliases": list(self.restored_aliases),
            "relinked": self.relinked,
            "event_id": self.event_id,
            "merge_event_id": self.merge_event_id,
        }


def _event_id(event_id: Any) -> int:
    if isinstance(event_id, bool) or not isinstance(event_id, int | str):
        raise InvalidArgument("event_id must be an audit event id", field="event_id")
    text = str(event_id).strip()
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise InvalidArgument("event_id must be an audit event id", field="event_id")
    return int(text)


def merge_event(agent_id: str, event_id: Any) -> AuditEvent:
    """The agent's merge (``alias_add``) event ``event_id``; another agent's id is ``not_found`` like a
    missing one."""
    event = AuditEvent.objects.filter(id=_event_id(event_id), agent_id=agent_id, action="alias_add").first()
    if event is None:
        raise NotFound("no merge with that id", field="event_id")
    return event


def undone_merges(agent_id: str, event_ids: Any) -> set[int]:
    """Which of ``event_ids`` (merge events) have been undone (one query)."""
    ids = sorted({int(i) for i in event_ids})
    if not ids:
        return set()
    rows = AuditEvent.objects.filter(agent_id=agent_id, action="merge_undone").values_list(
        "details", flat=True
    )
    wanted = set(ids)
    undone = (d.get("merge_undo_of") for d in rows if isinstance(d, dict))
    return {i for i in undone if isinstance(i, int) and i in wanted}


def _undone(agent_id: str, event_id: int) -> AuditEvent | None:
    return (
        AuditEvent.objects.filter(agent_id=agent_id, action="merge_undone", details__merge_undo_of=event_id)
        .order_by("id")
        .first()
    )


def _check_unchanged(agent_id: str, event: AuditEvent, names: list[str], target: str) -> None:
    """Refuse (``merge_changed``) when the rows the merge wrote no longer say what it wrote, or a later merge
    that still stands named one of the merged names as the entity to keep (undoing would strand it) or wrote one
    of them again (undoing would take that merge's work with it): merges are undone newest first."""
    now_map = _alias_map_for(agent_id, names)
    moved = [n for n in names if now_map.get(n) != target]
    if moved:
        raise MergeChanged(
            f"“{moved[0]}” no longer points at “{target}”: a later merge (or an erasure) changed it; "
            "undo that merge first",
            field="event_id",
            names=moved[:20],
        )
    if target in _alias_map_for(agent_id, [target]):
        raise MergeChanged(
            f"“{target}” was merged into another entity since; undo that merge first", field="event_id"
        )
    later = AuditEvent.objects.filter(agent_id=agent_id, action="alias_add", id__gt=event.id).order_by("id")
    undone = undone_merges(agent_id, later.values_list("id", flat=True))
    for other in later:
        d = other.details or {}
        if other.id in undone:
            continue
        if d.get("requested_canonical") in names:
            raise MergeChanged(
                f"a later merge kept “{d.get('requested_canonical')}” as the name of “{d.get('alias')}”; "
                "undo that merge first",
                field="event_id",
                later_event_id=other.id,
            )
        # a later merge that wrote one of these names again (moved it away and back) must be undone first,
        # or undoing this one would silently take that merge's work with it
        rewritten = {d.get("alias"), *(d.get("flattened_aliases") or [])} & set(names)
        if rewritten:
            raise MergeChanged(
                f"a later merge also wrote “{sorted(rewritten)[0]}”; undo that merge first",
                field="event_id",
                later_event_id=other.id,
            )


def _alias_map_for(agent_id: str, names: list[str]) -> dict[str, str]:
    return dict(
        EntityAlias.objects.filter(agent_id=agent_id, alias__in=names).values_list("alias", "canonical")
    )


@c.write_transaction
def alias_undo(*, agent_id: str, event_id: Any, actor: str, reason: str = "") -> MergeUndoResult:
    """Take a merge back (issue 19 item 3): the alias row goes (or points where it pointed before the merge),
    the aliases the merge flattened point at the merged name again, the entity links of plain memories
    written since the merge are derived again (a turn naming the merged name was linked to the kept entity),
    the graph generation moves (caches rebuild) and a ``merge_undone`` event names the merge
    (``merge_undo_of``). Refused with ``already_undone`` (409) for a merge undone before, ``merge_changed``
    (409) when later merges depend on it, ``not_found`` (404) for an id that is not one of this agent's
    merges."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    if not isinstance(reason, str) or len(reason) > 2000:
        raise InvalidArgument("reason must be text of at most 2000 characters", field="reason")
    _lock_aliases(agent_id)
    event = merge_event(agent_id, event_id)
    if (done := _undone(agent_id, event.id)) is not None:
        raise AlreadyUndone(
            f"this merge was undone already, by {done.actor} at {done.created_at:%Y-%m-%d %H:%M} UTC",
            field="event_id",
            undo_event_id=done.id,
        )
    d = event.details or {}
    name, target = d.get("alias"), d.get("canonical")
    previous = d.get("previous_canonical")
    flattened = d.get("flattened_aliases")
    if not isinstance(name, str) or not isinstance(target, str):
        raise MergeChanged("this merge's record does not say what it changed", field="event_id")
    if flattened is None and d.get("flattened"):
        raise MergeChanged(
            "this merge was recorded before merges could be undone and re-pointed other names; "
            "merge those names by hand instead",
            field="event_id",
        )
    flattened = [f for f in flattened or [] if isinstance(f, str)]
    _check_unchanged(agent_id, event, [name, *flattened], target)
    if previous is not None and previous in _alias_map_for(agent_id, [previous]):
        raise MergeChanged(
            f"“{previous}”, which “{name}” named before the merge, was merged into another entity since",
            field="event_id",
        )
    t = c.now()
    if previous is None:
        EntityAlias.objects.filter(agent_id=agent_id, alias=name).delete()
    else:
        EntityAlias.objects.filter(agent_id=agent_id, alias=name).update(
            canonical=previous, updated_at=t, actor=actor
        )
    if flattened:
        EntityAlias.objects.filter(agent_id=agent_id, alias__in=flattened).update(
            canonical=name, updated_at=t
        )
    c.bump_generation(agent_id)
    from .links import relink_since

    relinked = relink_since(agent_id=agent_id, since=event.created_at)
    undo = c.audit(
        agent_id=agent_id,
        actor=actor,
        action="merge_undone",
        subject=target,
        reason=reason or f"undo merge of {name} into {target}",
        at=t,
        merge_undo_of=event.id,
        canonical=target,
        alias=name,
        previous_canonical=previous,
        restored_aliases=flattened,
        relinked=relinked,
    )
    return MergeUndoResult(
        canonical=target,
        alias=name,
        restored_aliases=flattened,
        relinked=relinked,
        event_id=undo.id,
        merge_event_id=event.id,
    )
