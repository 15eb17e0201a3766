"""The dream loop's prune (SPEC B1): end one current row now with reason ``dream_prune``; never delete it.

A plain memory's ``valid_until`` becomes now. A fact's key is ended the way ``expire_by_subject`` ends keys: every
believed write still covering now is truncated at now and the key re-derived, so no earlier value comes back;
the write log keeps every write, so a later re-derivation can restore it. One row per call, one transaction, one
audit event carrying the run's ``source_event`` (``dream:<run_id>:<memory_id>``).
"""

from __future__ import annotations

from django.db.models import Q

from memory.models import FactWrite, Memory

from . import common as c
from .belief import is_current
from .temporal import CONTINUATION_KEY, rederive_key
from .types import EngineError, InvalidArgument, NotFound

PRUNE_EVENT = "dream_prune"


@c.write_transaction
def prune_end(*, agent_id: str, memory_id: str, why: str, source_event: str, actor: str) -> bool:
    """End ``memory_id`` now (reason ``dream_prune``). False when it is no longer current (nothing written);
    another agent's id is ``not_found`` like a missing one."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    if not isinstance(why, str) or not why.strip():
        raise InvalidArgument("a reason is required", field="why")
    if not isinstance(source_event, str) or not source_event.strip() or len(source_event) > 256:
        raise InvalidArgument("source_event must be a non-empty string", field="source_event")
    if not isinstance(memory_id, str) or not memory_id or len(memory_id) > 64:
        raise NotFound("no memory with that id", field="memory_id")
    row = Memory.objects.filter(id=memory_id, agent_id=agent_id).first()
    if row is None:
        raise NotFound("no memory with that id", field="memory_id")
    if row.subject and row.predicate:
        c.lock_key(agent_id, row.subject, row.predicate)
        row.refresh_from_db()
    t = c.now()
    if not is_current(row, t):
        return False
    if row.subject and row.predicate:
        primary = (row.metadata or {}).get(CONTINUATION_KEY) or row.id
        for w in FactWrite.objects.filter(
            agent_id=agent_id,
            subject=row.subject,
            predicate=row.predicate,
            value_key=row.value_key,  # only this value of a multi-valued predicate ends (SPEC B3)
            state=FactWrite.STATE_BELIEVED,
            req_from__lte=t,
        ):
            if w.req_until is None or w.req_until > t:
                FactWrite.objects.filter(id=w.id).update(req_until=t)
        rederive_key(agent_id, row.subject, row.predicate, at=t, value_key=row.value_key)
        ended = [row.id, primary]
        c.bump_generation(agent_id)
    else:
        ended = [row.id]
    changed = (
        Memory.objects.filter(id__in=ended, agent_id=agent_id)
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gte=t))
        .update(valid_until=t, invalidated_by_event=PRUNE_EVENT, invalidated_at=t)
    )
    row.refresh_from_db()
    if is_current(row, t):
        raise EngineError("the row could not be ended", code="prune_failed", field="memory_id")
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="dream_prune",
        memory_id=row.id,
        subject=row.subject,
        reason=why.strip()[:2000],
        at=t,
        source_event=source_event,
        rows=changed,
    )
    return True
