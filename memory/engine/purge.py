"""Provenance purges (SPEC P2, P3): retract by origin with timeline re-derivation, expire by subject."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q

from memory.models import FactWrite, Memory

from . import common as c
from .belief import NOT_RETRACTED, RETRACTED, TAINT_TRUST, current_q
from .provenance import check_origin
from .taint import resolve_tainted
from .taint_review import propose_tainted
from .temporal import rederive_key
from .types import InvalidArgument, PurgeResult

CRUSHED_TRUST = TAINT_TRUST  # a row citing a purged id is tainted (belief.TAINTED)


def _ids_of_keys(agent_id: str, keys: set[tuple[str, str]], cond: Q) -> set[str]:
    """Ids of the rows of ``keys`` matching ``cond``, in chunks so the SQL stays small."""
    ordered = sorted(keys)
    ids: set[str] = set()
    for i in range(0, len(ordered), 200):
        q = Q(pk__in=[])
        for subject, predicate in ordered[i : i + 200]:
            q |= Q(subject=subject, predicate=predicate)
        ids |= set(
            Memory.objects.filter(agent_id=agent_id).filter(q).filter(cond).values_list("id", flat=True)
        )
    return ids


@c.write_transaction
def invalidate_by_origin(
    *, agent_id: str, origin: str, since: datetime | str | None = None, actor: str = "system"
) -> PurgeResult:
    """Retract everything one origin wrote (exact match), restore what it had superseded, crush derived trust."""
    agent_id = c.check_agent_id(agent_id)
    if not isinstance(origin, str) or not origin.strip():
        raise InvalidArgument("origin must be a non-empty string", field="origin")
    origin = check_origin(origin)
    since_dt = c.parse_time(since, field="since")
    actor = c.check_actor(actor)
    c.lock_origin(agent_id, origin)  # before reading: an undo restoring this origin's writes finishes first
    t = c.now()

    writes = FactWrite.objects.filter(agent_id=agent_id, origin=origin).exclude(
        state=FactWrite.STATE_RETRACTED
    )
    if since_dt is not None:
        writes = writes.filter(ingested_at__gte=since_dt)
    keys = set(writes.values_list("subject", "predicate"))
    for subject, predicate in sorted(keys):
        c.lock_key(agent_id, subject, predicate)
    retracted_q = RETRACTED
    before = _ids_of_keys(agent_id, keys, current_q(t))
    retracted_before = _ids_of_keys(agent_id, keys, retracted_q)
    writes.update(state=FactWrite.STATE_RETRACTED, believed_until=t)
    changed: set[str] = set()
    for subject, predicate in sorted(keys):
        changed |= rederive_key(agent_id, subject, predicate, at=t, retract_event="origin_purge")

    # plain memories (no key) from the same origin
    plain = Memory.objects.filter(agent_id=agent_id, origin=origin, subject__isnull=True).filter(
        NOT_RETRACTED
    )
    if since_dt is not None:
        plain = plain.filter(ingested_at__gte=since_dt)
    plain_ids = set(plain.values_list("id", flat=True))
    Memory.objects.filter(id__in=plain_ids).update(invalidated_by_event="origin_purge", invalidated_at=t)

    retracted_now = _ids_of_keys(agent_id, keys, retracted_q)
    newly_retracted = (retracted_now - retracted_before) | plain_ids
    after = _ids_of_keys(agent_id, keys, current_q(t))
    restored = after - before
    crushed, tainted = _crush_derived(agent_id, newly_retracted)
    # the review queue (issue 19 item 9): items about facts this purge retracted are settled; new taint is asked
    resolve_tainted(agent_id=agent_id, t=t, ids=newly_retracted)
    proposed = propose_tainted(
        agent_id=agent_id, tainted=tainted, purged=newly_retracted, origin=origin, t=t, actor=actor
    )
    if keys or crushed:  # crushed trust re-weights graph edges too (SPEC T9, G1)
        c.bump_generation(agent_id, changed | newly_retracted | set(crushed))
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="origin_purge",
        reason=f"invalidate_by_origin {origin}",
        at=t,
        origin=origin,
        since=since_dt.isoformat() if since_dt else None,
        retracted=sorted(newly_retracted),
        restored=sorted(restored),
        trust_crushed=crushed,
        review_items=proposed,
    )
    return PurgeResult(origin, since_dt, len(newly_retracted), len(restored), len(crushed))


def _crush_derived(agent_id: str, purged: set[str]) -> tuple[list[str], dict[str, float]]:
    """Rows whose derived_from cites a purged id get origin_trust = min(trust, 0.1). Returns the rows crushed
    and every row citing a purged id (tainted now) with its trust before."""
    if not purged:
        return [], {}
    crushed: list[str] = []
    tainted: dict[str, float] = {}
    candidates = (
        Memory.objects.filter(agent_id=agent_id)
        .exclude(derived_from=[])
        .values_list("id", "derived_from", "origin_trust")
    )
    for mid, derived, trust in candidates.iterator():
        if isinstance(derived, list) and purged.intersection(derived):
            if mid not in purged:
                tainted[mid] = float(trust)
            if trust > CRUSHED_TRUST:
                crushed.append(mid)
    if crushed:
        Memory.objects.filter(id__in=crushed).update(origin_trust=CRUSHED_TRUST)
        FactWrite.objects.filter(
            agent_id=agent_id, memory_id__in=crushed, origin_trust__gt=CRUSHED_TRUST
        ).update(origin_trust=CRUSHED_TRUST)
    return crushed, tainted


@c.write_transaction
def expire_by_subject(*, agent_id: str, subject: str, reason: str, actor: str = "system") -> int:
    """End every current row about ``subject`` (exact) now, stamped with ``reason`` (SPEC P3)."""
    agent_id = c.check_agent_id(agent_id)
    subj = c.check_text(subject, field="subject", required=True) or ""
    if not isinstance(reason, str) or not reason.strip() or len(reason) > 256:
        raise InvalidArgument("reason must be a non-empty string", field="reason")
    actor = c.check_actor(actor)
    t = c.now()
    current = list(Memory.objects.filter(agent_id=agent_id, subject=subj).filter(current_q(t)))
    keys = sorted({(subj, m.predicate) for m in current if m.predicate})
    for _, predicate in keys:
        c.lock_key(agent_id, subj, predicate)
    changed: set[str] = set()
    for _, predicate in keys:
        # Truncate every believed write that still covers now, so later re-derivations keep the end.
        for w in FactWrite.objects.filter(
            agent_id=agent_id,
            subject=subj,
            predicate=predicate,
            state=FactWrite.STATE_BELIEVED,
            req_from__lte=t,
        ):
            if w.req_until is None or w.req_until > t:
                FactWrite.objects.filter(id=w.id).update(req_until=t)
        changed |= rederive_key(agent_id, subj, predicate, at=t)
    ids = [m.id for m in current]
    Memory.objects.filter(id__in=ids).update(
        valid_until=t, invalidated_by_event=reason.strip(), invalidated_at=t
    )
    if ids:
        c.bump_generation(agent_id, changed | set(ids))
        c.audit(
            agent_id=agent_id,
            actor=actor,
            action="expire_by_subject",
            subject=subj,
            reason=reason,
            at=t,
            ids=ids,
        )
    return len(ids)
