"""A curator's restore of a fact they (or another curator) retracted (SPEC D6; UX "every action can be reversed").

``retract_fact`` retracts every write supporting a row (``believed_until`` = the retract's time). The restore
believes those same writes again from its own record time, as copies that rank in ingestion order as the
writes they copy (``FactWrite.ranks_as``), then re-derives the key (SPEC T2): a write that arrived since the
retract keeps its place exactly as if the retract had never happened. The originals keep their belief interval,
so ``get_at(as_of=…)`` between the retract and the restore still answers without the fact.

Only a curator's retract is restored here: an origin purge and a quarantine reject have their own paths.
"""

from __future__ import annotations

from datetime import datetime

from memory.models import FactWrite, Memory

from . import common as c
from . import rawsql
from .belief import BELIEVED, current_q, is_retracted
from .taint import resolve_tainted
from .temporal import CONTINUATION_KEY, curated_fact, rederive_key
from .types import EngineError, MemoryRecord

RESTORE_EVENT = "curator_restore"
RETRACT_EVENT = "curator_retract"

_OTHER_PATHS = {
    "origin_purge": (
        "an origin purge retracted this fact, and a purge is not taken back one fact at a time: "
        "store the fact again to believe it"
    ),
    "quarantine_reject": (
        "a reviewer rejected this fact on the quarantine desk: revert that decision on the desk instead"
    ),
}


class NotRetracted(EngineError):
    code = "not_retracted"


class NotRestorable(EngineError):
    code = "not_restorable"


def restore_refusal(invalidated_by_event: str | None) -> str:
    """Why a row retracted by ``invalidated_by_event`` cannot be restored here (its own path), or "" when a
    curator's restore applies (or the row is not retracted at all)."""
    event = invalidated_by_event or ""
    if not is_retracted(event) or event == RETRACT_EVENT:
        return ""
    return _OTHER_PATHS.get(event, "this fact was not retracted by a curator")


def _check_restorable(row: Memory) -> None:
    if not is_retracted(row.invalidated_by_event):
        raise NotRetracted("this fact is not retracted", field="memory_id")
    refusal = restore_refusal(row.invalidated_by_event)
    if refusal:
        raise NotRestorable(refusal, field="memory_id")


def _key_current(row: Memory, t: datetime) -> set[str]:
    return set(
        Memory.objects.filter(agent_id=row.agent_id, subject=row.subject, predicate=row.predicate)
        .filter(current_q(t))
        .values_list("id", flat=True)
    )


def _believe_again(row: Memory, primary: str, t: datetime) -> int:
    """Copy the writes the retract retracted, believed from ``t``; returns how many."""
    retracted = list(
        FactWrite.objects.filter(
            agent_id=row.agent_id,
            subject=row.subject,
            predicate=row.predicate,
            memory_id=primary,
            state=FactWrite.STATE_RETRACTED,
            believed_until=row.invalidated_at,
        ).order_by("id")
    )
    for w in retracted:
        values = {
            f.attname: getattr(w, f.attname) for f in FactWrite._meta.concrete_fields if not f.primary_key
        }
        values.update(state=FactWrite.STATE_BELIEVED, believed_from=t, believed_until=None, ranks_as=w.order)
        rawsql.insert(FactWrite, values, returning_id=True)
    return len(retracted)


def _restore_row_without_writes(row: Memory) -> None:
    """A row no write speaks for (imported without history) was retracted as a row: un-retract it, unless a
    believed row now holds its key open (the one-open-row rule, SPEC M2)."""
    if row.valid_until is None:
        held = (
            Memory.objects.filter(
                agent_id=row.agent_id,
                subject=row.subject,
                predicate=row.predicate,
                value_key=row.value_key,
                valid_until__isnull=True,
            )
            .filter(BELIEVED)
            .exclude(id=row.id)
        )
        if held.exists():
            raise NotRestorable("another fact holds this key now; retract or end it first", field="memory_id")
    Memory.objects.filter(id=row.id).update(invalidated_by_event=None, invalidated_at=None)


@c.write_transaction
def restore_fact(*, agent_id: str, memory_id: str, actor: str, reason: str) -> MemoryRecord:
    """Take back a curator's retract of one fact (see the module docstring). Audited (``curator_restore``);
    bumps the generation. Errors: ``not_found`` (unknown or another agent's id, alike), ``not_retracted``,
    ``not_restorable`` (retracted by a purge or a reject: the message names their own path)."""
    agent_id, actor, reason, row = curated_fact(
        agent_id=agent_id, memory_id=memory_id, reason=reason, actor=actor
    )
    assert row.subject is not None and row.predicate is not None  # curated_fact checked both
    subject, predicate = row.subject, row.predicate
    _check_restorable(row)
    primary_id = (row.metadata or {}).get(CONTINUATION_KEY) or row.id
    if primary_id != row.id:  # a continuation row: the retract was of the primary row's writes
        primary = Memory.objects.filter(agent_id=agent_id, id=primary_id).first()
        if primary is not None and primary.invalidated_by_event == RETRACT_EVENT:
            row = primary
    t = c.now()
    before = _key_current(row, t)
    n_writes = _believe_again(row, primary_id, t)
    changed = {row.id}
    if n_writes:
        changed |= rederive_key(agent_id, subject, predicate, at=t, value_key=row.value_key)
    elif FactWrite.objects.filter(agent_id=agent_id, memory_id=primary_id).exists():
        raise NotRestorable("nothing this fact's retract took away is left to restore", field="memory_id")
    else:
        _restore_row_without_writes(row)
    after = _key_current(row, t)
    c.bump_generation(agent_id, changed)
    resolve_tainted(agent_id=agent_id, t=t)  # a restored source settles an item about a fact citing it
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action=RESTORE_EVENT,
        memory_id=memory_id,
        subject=subject,
        reason=reason,
        at=t,
        predicate=predicate,
        writes=n_writes,
        ended=sorted(before - after),
    )
    return MemoryRecord.from_model(Memory.objects.get(id=memory_id))
