"""Applying the conflict judge's verdicts through the timeline (SPEC B2), and undoing them exactly.

A verdict is about two believed rows, ``old`` (the earlier) and ``new``:

* ``MERGE`` keeps the earlier row and turns the later into a reaffirmation of it. For facts, the later row's
  writes move onto the earlier row as reaffirming writes (T5 bookkeeping: both writes stay in the write log), the
  keys are re-derived, and the later row is closed at its own start (zero length, ``superseded_by`` the kept
  row). For plain memories the later row is closed the same way and the kept row records the reaffirmation.
* ``SUPERSEDE`` closes the old row at the new row's ``valid_from`` (T3). For facts of two keys (synonym
  predicates, aliased subjects) each believed write supporting the old row past that moment is replaced by a
  bounded copy (same origin, trust and source event, so a later purge of that origin still covers it): the
  original stops being believed at this record time, the copy starts being believed, and ``get_at(as_of=…)``
  answers both before and after. For plain memories the old row's ``valid_until`` is set.
* ``COEXIST`` (and ``UNSURE``) change nothing.

Every change is audited with ``source_event`` (``dream:<run>:<item>``) and returns an undo snapshot: the rows
and writes as they were. ``verdict_undo`` puts them back and re-derives the keys, so reads return exactly what
they returned before, unless a newer write has touched one of the keys since (``undo_conflict``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.models import FactWrite, Memory

from . import common as c
from . import rawsql
from .belief import is_believed
from .snapshots import key_snapshot, keys_of, restore_snapshot
from .temporal import CONTINUATION_KEY, reaffirm_entries, rederive_key
from .types import EngineError, InvalidArgument, NotFound

VERDICTS = ("MERGE", "SUPERSEDE", "COEXIST", "UNSURE")
CHANGING = ("MERGE", "SUPERSEDE")
MAX_EVENT = 256


class Stale(EngineError):
    """The rows a decision is about changed since it was proposed (or since it was applied, for an undo)."""

    code = "stale"


@dataclass(frozen=True)
class AppliedVerdict:
    verdict: str
    kept: str | None  # the row that stays (MERGE: the earlier; SUPERSEDE: the new)
    ended: str | None  # the row closed
    changed: bool
    undo: dict[str, Any]


@dataclass(frozen=True)
class _Reaffirm:  # what reaffirm_entries reads from a fact
    source_event: str
    origin: str


# --- reading the pair ------------------------------------------------------------------------------------


def _order(m: Memory) -> tuple[Any, ...]:
    return (m.valid_from or m.timestamp, m.ingested_at or m.timestamp, m.id)


def pair_rows(agent_id: str, old_id: Any, new_id: Any) -> tuple[Memory, Memory]:
    """The two rows of a verdict, earlier first; another agent's id is ``not_found`` like a missing one."""
    ids = [i for i in (old_id, new_id) if isinstance(i, str) and 0 < len(i) <= 64]
    if len(ids) != 2 or ids[0] == ids[1]:
        raise InvalidArgument("a verdict needs two different memory ids", field="ids")
    found = {m.id: m for m in Memory.objects.filter(agent_id=agent_id, id__in=ids)}
    if len(found) != 2:
        raise NotFound("no memory with that id", field="ids")
    first, second = sorted(found.values(), key=_order)
    return first, second


def state_fingerprint(rows: list[Memory]) -> str:
    """A digest of what a decision about ``rows`` depends on: any change to their value, interval or belief
    makes a proposal stale."""
    parts = [
        [m.id, m.subject, m.predicate, m.object, m.content, _iso(m.valid_from), _iso(m.valid_until)]
        + [m.quarantined, m.invalidated_by_event or ""]
        for m in sorted(rows, key=lambda r: r.id)
    ]
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:32]


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


# --- applying --------------------------------------------------------------------------------------------


def _check(verdict: Any, source_event: Any) -> tuple[str, str]:
    if verdict not in VERDICTS:
        raise InvalidArgument(f"verdict must be one of {', '.join(VERDICTS)}", field="verdict")
    if not isinstance(source_event, str) or not source_event.strip() or len(source_event) > MAX_EVENT:
        raise InvalidArgument("source_event must be a non-empty string", field="source_event")
    return str(verdict), source_event.strip()


@c.write_transaction
def verdict_apply(
    *,
    agent_id: str,
    verdict: str,
    old_id: str,
    new_id: str,
    source_event: str,
    actor: str,
    expected: str | None = None,
) -> AppliedVerdict:
    """Apply ``verdict`` to the pair (see the module docstring). ``expected`` is the pair's
    ``state_fingerprint`` when the verdict was reached: if the rows changed since, nothing is written
    (``stale``)."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    verdict, event = _check(verdict, source_event)
    old, new = pair_rows(agent_id, old_id, new_id)
    keys = keys_of([old, new])
    for subject, predicate in keys:
        c.lock_key(agent_id, subject, predicate)
    old.refresh_from_db()
    new.refresh_from_db()
    if expected is not None and state_fingerprint([old, new]) != expected:
        raise Stale("these memories changed since the verdict was reached; judge them again", field="ids")
    if verdict not in CHANGING:
        return AppliedVerdict(verdict, None, None, False, {})
    if not (is_believed(old) and is_believed(new)):
        raise Stale("one of these memories is no longer believed", field="ids")
    if bool(old.subject) != bool(new.subject):
        raise InvalidArgument("a verdict joins two facts or two plain memories, not one of each", field="ids")
    t = c.now()
    undo = key_snapshot(agent_id, keys, [m.id for m in (old, new) if not m.subject])
    if verdict == "MERGE":
        kept, ended = old, new
        (_merge_facts if keys else _merge_plain)(agent_id, kept, ended, event, t)
        _close_merged(kept, ended, event, t)  # before re-deriving: the kept row may re-open
    else:
        kept, ended = new, old
        if keys:
            undo["new"] = _supersede_facts(agent_id, ended, kept, event, t)
        else:
            _supersede_plain(ended, kept, event, t)
    for subject, predicate in keys:
        rederive_key(agent_id, subject, predicate, at=t)
    if verdict == "SUPERSEDE" and keys:
        Memory.objects.filter(id=ended.id).update(invalidated_by_event=event, invalidated_at=t)
    c.bump_generation(agent_id)
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action=f"verdict_{verdict.lower()}",
        memory_id=ended.id,
        subject=ended.subject,
        reason=event,
        at=t,
        kept=kept.id,
        ended=ended.id,
        source_event=event,
    )
    return AppliedVerdict(verdict, kept.id, ended.id, True, undo)


def _merge_facts(agent_id: str, kept: Memory, later: Memory, event: str, t: datetime) -> None:
    """The later row's writes become reaffirmations of the kept row (moved onto its key if it differs)."""
    primary = (kept.metadata or {}).get(CONTINUATION_KEY) or kept.id
    moved = list(
        FactWrite.objects.filter(
            agent_id=agent_id, memory_id=later.id, state=FactWrite.STATE_BELIEVED
        ).order_by("id")
    )
    FactWrite.objects.filter(id__in=[w.id for w in moved]).update(
        memory_id=primary,
        is_reaffirm=True,
        subject=kept.subject,
        predicate=kept.predicate,
        value_key=kept.value_key,
    )
    entries, confidence = list(kept.reaffirmed_by or []), kept.confidence
    for w in moved:
        entries, confidence = reaffirm_entries(
            _Reaffirm(event, w.origin), entries, confidence, kept.origin, w.req_from, w.req_until, t
        )
    Memory.objects.filter(id=kept.id).update(reaffirmed_by=entries, confidence=confidence)


def _merge_plain(agent_id: str, kept: Memory, later: Memory, event: str, t: datetime) -> None:
    start = later.valid_from or later.timestamp
    entries, confidence = reaffirm_entries(
        _Reaffirm(event, later.origin),
        list(kept.reaffirmed_by or []),
        kept.confidence,
        kept.origin,
        start,
        None,
        t,
    )
    Memory.objects.filter(id=kept.id).update(reaffirmed_by=entries, confidence=confidence)


def _supersede_facts(agent_id: str, old: Memory, new: Memory, event: str, t: datetime) -> list[int]:
    """Bound every believed write of ``old`` that reaches past ``new``'s start by a copy ending there. A write
    starting at or after that moment keeps supporting the row as a zero-length copy (the row stays believed,
    ended at its start, rather than reading as retracted by a purge)."""
    end = new.valid_from or new.timestamp
    primary = (old.metadata or {}).get(CONTINUATION_KEY) or old.id
    reaching = [
        w
        for w in FactWrite.objects.filter(
            agent_id=agent_id, memory_id=primary, state=FactWrite.STATE_BELIEVED
        )
        if w.req_until is None or w.req_until > end
    ]
    created: list[int] = []
    for w in reaching:
        FactWrite.objects.filter(id=w.id).update(state=FactWrite.STATE_RETRACTED, believed_until=t)
        values = {
            f.attname: getattr(w, f.attname) for f in FactWrite._meta.concrete_fields if not f.primary_key
        }
        values.update(req_until=max(end, w.req_from), believed_from=t, believed_until=None)
        created.append(int(rawsql.insert(FactWrite, values, returning_id=True)))
    return created


def _supersede_plain(old: Memory, new: Memory, event: str, t: datetime) -> None:
    end = max(new.valid_from or new.timestamp, old.valid_from or old.timestamp)
    Memory.objects.filter(id=old.id).update(
        valid_until=end, superseded_by=new.id, invalidated_by_event=event, invalidated_at=t
    )
    Memory.objects.filter(id=new.id).update(supersedes=old.id)


def _close_merged(kept: Memory, ended: Memory, event: str, t: datetime) -> None:
    """Close the merged-away row (and its continuations) at its own start: no write speaks for it now."""
    start = ended.valid_from or ended.timestamp
    closed = {"valid_from": start, "valid_until": start, "invalidated_by_event": event, "invalidated_at": t}
    Memory.objects.filter(id=ended.id).update(superseded_by=kept.id, **closed)
    if ended.subject:
        Memory.objects.filter(
            agent_id=ended.agent_id,
            subject=ended.subject,
            predicate=ended.predicate,
            **{f"metadata__{CONTINUATION_KEY}": ended.id},
        ).update(**closed)


def verdict_undo(*, agent_id: str, undo: dict[str, Any], actor: str, reason: str) -> int:
    """Put back what ``verdict_apply`` changed (its ``undo`` snapshot); see ``snapshots.restore_snapshot``."""
    return restore_snapshot(agent_id=agent_id, undo=undo, actor=actor, reason=reason, action="verdict_undo")
