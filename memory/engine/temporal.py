"""The timeline of a key (SPEC T1–T9): fact writes, re-derivation, every timeline write, and temporal reads.

The public write entry points (``store``, ``store_temporal``) are in ``writes``: they validate, run the guard
when asked, then call ``apply_fact`` / ``write_fact`` here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any, Protocol

from django.db.models import F

from memory.models import FactWrite, Memory

from . import common as c
from . import rawsql
from .archive import holds, same_text
from .belief import believed_sql, current_q, is_believed, is_current, is_retracted
from .cardinality import value_key as key_value
from .graph.names import MAX_OBJECT_CHARS, check_entity_length
from .provenance import NON_CORROBORATING, check_origin, effective_trust, origin_class
from .taint import resolve_tainted
from .timeline import Segment, WriteSpan, derive, value_at
from .types import EngineError, InvalidArgument, InvalidTime, MemoryRecord, NotFound, StoreResult

MAX_REAFFIRMED = 20
CONTINUATION_KEY = "continuation_of"
DERIVED_FIELDS = (
    "valid_from",
    "valid_until",
    "superseded_by",
    "supersedes",
    "invalidated_by_event",
    "invalidated_at",
    "quarantined",
)


# --- facts ------------------------------------------------------------------------------------------------


class ReaffirmSource(Protocol):
    """What a reaffirmation entry records of the write behind it (a FactInput, or a verdict's merged write)."""

    @property
    def source_event(self) -> str: ...
    @property
    def origin(self) -> str: ...


@dataclass
class FactInput:
    agent_id: str
    content: str
    subject: str
    predicate: str
    object: str | None
    valid_from: datetime | None
    valid_until: datetime | None
    confidence: float
    origin: str
    origin_trust: float
    derived_from: list[str]
    source_event: str
    session_id: str | None
    metadata: dict[str, Any]
    layer: str = "semantic"
    importance: float = 5.0
    tags: list[str] = field(default_factory=list)
    value_key: str = ""  # SPEC B3: the fact's key is (agent_id, subject, predicate, value_key)


def check_fact(
    *,
    agent_id: Any,
    content: Any,
    subject: Any,
    predicate: Any,
    object: Any = None,
    valid_from: Any = None,
    valid_until: Any = None,
    confidence: Any = 1.0,
    origin: Any = None,
    origin_trust: Any = None,
    derived_from: Any = (),
    source_event: Any = "",
    session_id: Any = None,
    metadata: Any = None,
    layer: Any = "semantic",
    importance: Any = 5.0,
    tags: Any = (),
) -> FactInput:
    agent_id = c.check_agent_id(agent_id)
    content = c.check_content(content)
    subj = c.check_text(subject, field="subject", required=False)
    pred = c.check_text(predicate, field="predicate", required=False)
    if subj is None or pred is None:
        missing = "subject" if subj is None else "predicate"
        raise InvalidArgument(f"a fact needs both subject and predicate; {missing} is empty", field=missing)
    obj = c.check_text(object, field="object", required=False, limit=MAX_OBJECT_CHARS)
    check_entity_length(subj, field="subject")
    check_entity_length(obj, field="object", limit=MAX_OBJECT_CHARS)
    vf = c.parse_time(valid_from, field="valid_from")
    vu = c.parse_time(valid_until, field="valid_until")
    if vf is not None and vu is not None and vu <= vf:
        raise InvalidTime("valid_until must be later than valid_from", field="valid_until")
    origin = check_origin(origin)
    if derived_from is None:
        derived_from = ()
    if isinstance(derived_from, str) or not isinstance(derived_from, list | tuple):
        raise InvalidArgument("derived_from must be a list of memory ids", field="derived_from")
    trust, ids = effective_trust(
        agent_id=agent_id, origin=origin, requested=origin_trust, derived_from=derived_from
    )
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidArgument("metadata must be an object", field="metadata")
    return FactInput(
        agent_id=agent_id,
        content=content,
        subject=subj,
        predicate=pred,
        object=obj,
        valid_from=vf,
        valid_until=vu,
        confidence=c.check_number(confidence, field="confidence", low=0, high=1),
        origin=origin,
        origin_trust=trust,
        derived_from=ids,
        source_event=c.check_source_event(source_event),
        session_id=c.check_session(session_id),
        metadata={k: v for k, v in (metadata or {}).items() if k != CONTINUATION_KEY},
        layer=c.check_layer(layer),
        importance=c.check_number(importance, field="importance", low=0, high=10),
        tags=c.check_tags(tags),
        value_key=key_value(pred, obj),
    )


@c.write_transaction
def write_fact(fact: FactInput, *, quarantine: bool = False) -> StoreResult:
    """Apply one validated fact in its own transaction (``apply_fact``)."""
    return apply_fact(fact, quarantine=quarantine)


def apply_fact(fact: FactInput, *, quarantine: bool = False, t: datetime | None = None) -> StoreResult:
    """Apply one validated fact under its key lock, inside the caller's transaction: supersede, insert a
    historical segment, or reaffirm (SPEC T2-T5). ``quarantine`` stores it inert (SPEC P7)."""
    c.lock_key(fact.agent_id, fact.subject, fact.predicate)
    t = t or c.now()
    start = fact.valid_from or t
    end = fact.valid_until
    if end is not None and end <= start:
        raise InvalidTime(
            "valid_until must be later than valid_from (which defaults to now)", field="valid_until"
        )
    if not quarantine:
        fast = _fast_write(fact, start, end, t)
        if fast is not None:
            return fast
    rows = {m.id: m for m in _key_rows(fact.agent_id, fact.subject, fact.predicate, fact.value_key)}
    if not quarantine:
        covering = _covering_row(rows.values(), start)
        if covering is not None and _same_value(covering, fact):
            return _reaffirm(fact, covering, rows, start, end, t)
    mid = c.new_memory_id()
    wid = _log_write(fact, start, end, t, mid, believed=not quarantine)
    values = _row_values(fact, mid, start, end, t, quarantined=quarantine)
    if quarantine:
        rawsql.insert(Memory, values)
        # no believed row changed, but the curator's graph shows held facts (flagged): its cached columns
        # (graph.view_cache) must see this row, so the generation moves (the search graph's delta reads the
        # row, finds it held and changes nothing)
        c.bump_generation(fact.agent_id, {mid})
        return StoreResult(mid, "quarantined", write_id=wid)
    rows[mid] = Memory(**values)
    changed = rederive_key(
        fact.agent_id, fact.subject, fact.predicate, at=t, rows=rows, new_ids={mid}, value_key=fact.value_key
    )
    c.bump_generation(fact.agent_id, changed | {mid})
    return StoreResult(mid, "stored", write_id=wid)


# The latest believed write start of the key, whether it has any row, whether a closed believed row starts at
# or after ``start`` (a zero-length row left at a boundary: the open row is then not the only row reaching
# ``start``), and its open believed row (the partial index idx_mem_open_value_key; a UNION, not a LEFT JOIN, so
# that SQLite can use it). Parameters: the key (agent, subject, predicate, value_key) three times, start, the key.
@cache
def _open_sql(vendor: str) -> str:
    return (
        "SELECT (SELECT MAX(w.req_from) FROM memory_fact_writes w WHERE w.agent_id = %s AND w.subject = %s"
        " AND w.predicate = %s AND w.value_key = %s AND w.state = 'believed'),"
        " EXISTS (SELECT 1 FROM memories k WHERE k.agent_id = %s AND k.subject = %s AND k.predicate = %s"
        " AND k.value_key = %s),"
        " EXISTS (SELECT 1 FROM memories z WHERE z.agent_id = %s AND z.subject = %s AND z.predicate = %s"
        f" AND z.value_key = %s AND z.valid_from >= %s AND z.valid_until IS NOT NULL AND {believed_sql('z')}),"
        " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"
        " UNION ALL SELECT NULL, NULL, NULL, m.id, m.valid_from, m.object, m.content, m.metadata, m.reaffirmed_by,"
        " m.confidence, m.origin FROM memories m WHERE m.agent_id = %s AND m.subject = %s AND m.predicate = %s"
        f" AND m.value_key = %s AND m.valid_until IS NULL AND {believed_sql('m')}"
    )


# The key's believed rows that reach ``start`` or beyond, plus the latest believed write start (one statement,
# also when no row matches). Parameters: the key, start, start, the key, start (the key: agent, subject,
# predicate, value_key).
@cache
def _fast_sql(vendor: str) -> str:
    return (
        "SELECT (SELECT MAX(w.req_from) FROM memory_fact_writes w WHERE w.agent_id = %s AND w.subject = %s"
        " AND w.predicate = %s AND w.value_key = %s AND w.state = 'believed') <= %s,"
        " m.id, m.valid_from < %s, m.valid_until, m.object, m.content, m.metadata, m.reaffirmed_by,"
        " m.confidence, m.origin"
        " FROM (SELECT 1 AS one) AS one LEFT JOIN memories m ON m.agent_id = %s AND m.subject = %s"
        f" AND m.predicate = %s AND m.value_key = %s AND {believed_sql('m')}"
        " AND (m.valid_until IS NULL OR m.valid_until >= %s)"
    )


def _fast_write(fact: FactInput, start: datetime, end: datetime | None, t: datetime) -> StoreResult | None:
    """The common cases in a few statements; None when the full re-derivation is needed.

    Taken only when no believed write of the key starts after ``start`` and at most one believed row reaches
    ``start``: then the timeline model (SPEC T2) gives exactly this result, which ``rederive_key`` would
    reproduce (the property tests check that it changes nothing afterwards). The first read looks at the
    key's open row only (an index probe, however long the key's history): when no write starts at or after
    ``start``, the open row started before it and no closed row starts at or after ``start`` (a zero-length row
    left at a boundary), no other believed row can reach ``start`` (believed rows never overlap), so a new value cuts it or the same value reaffirms it; a key without rows takes its first
    value. Everything else reads the rows that reach ``start`` (``_fast_sql``).
    """
    key = [fact.agent_id, fact.subject, fact.predicate, fact.value_key]
    prep_start = rawsql.convert(Memory, "valid_from", start)
    head, *opens = rawsql.run(_open_sql(rawsql.vendor()), [*key, *key, *key, prep_start, *key]).fetchall()
    latest = rawsql.as_utc(head[0])
    if latest is not None and latest > start:
        return None  # a write starts later than this one: historical insertion
    if not head[1]:
        return _fast_insert(fact, start, end, t, predecessor=None)  # the key's first row
    if end is None and len(opens) == 1 and latest is not None and latest < start and not head[2]:
        _, _, _, rid, since, obj, content, metadata, reaffirmed, confidence, origin = opens[0]
        since = rawsql.as_utc(since)
        if since is not None and since < start and CONTINUATION_KEY not in (rawsql.load_json(metadata) or {}):
            if (obj or None) == (fact.object or None) and same_text(rid, content, fact.content):
                return _fast_reaffirm(
                    fact, rid, start, t, rawsql.load_json(reaffirmed) or [], confidence, origin
                )
            return _fast_insert(fact, start, end, t, predecessor=rid, cut=True)
    return _fast_reaching(fact, key, start, end, t)


def _fast_reaching(
    fact: FactInput, key: list[str], start: datetime, end: datetime | None, t: datetime
) -> StoreResult | None:
    """``_fast_write`` from the believed rows that reach ``start``."""
    prep_t = rawsql.convert(Memory, "valid_from", start)
    found = rawsql.run(_fast_sql(rawsql.vendor()), [*key, prep_t, prep_t, *key, prep_t]).fetchall()
    max_ok = found[0][0]
    if max_ok is not None and not max_ok:
        return None  # a write starts later than this one: historical insertion
    rows = [r for r in found if r[1] is not None]
    if not rows:
        return _fast_insert(fact, start, end, t, predecessor=None)
    if len(rows) > 1:
        return None
    _, rid, before_start, until, obj, content, metadata, reaffirmed, confidence, origin = rows[0]
    if not before_start or end is not None:
        return None  # a tie on valid_from, or a bounded write that may need a continuation
    if CONTINUATION_KEY in (rawsql.load_json(metadata) or {}):
        return None
    if until is not None and rawsql.as_utc(until) == start:
        return _fast_insert(fact, start, end, t, predecessor=rid)  # the previous segment ends exactly here
    if until is not None:
        return None
    if (obj or None) == (fact.object or None) and same_text(rid, content, fact.content):
        return _fast_reaffirm(fact, rid, start, t, rawsql.load_json(reaffirmed) or [], confidence, origin)
    return _fast_insert(fact, start, end, t, predecessor=rid, cut=True)


def write_log_values(
    fact: FactInput,
    start: datetime,
    end: datetime | None,
    t: datetime,
    memory_id: str,
    *,
    is_reaffirm: bool = False,
    believed: bool = True,
) -> dict[str, Any]:
    """The write-log row (``FactWrite``) that records one write of ``fact`` at ``t``: the one place that says
    what a write records, for the single-fact and the batch paths alike."""
    return dict(
        agent_id=fact.agent_id,
        subject=fact.subject,
        predicate=fact.predicate,
        object=fact.object,
        value_key=fact.value_key,
        content=fact.content,
        req_from=start,
        req_until=end,
        ingested_at=t,
        origin=fact.origin,
        origin_trust=fact.origin_trust,
        source_event=fact.source_event,
        session_id=fact.session_id,
        memory_id=memory_id,
        is_reaffirm=is_reaffirm,
        state=FactWrite.STATE_BELIEVED if believed else FactWrite.STATE_QUARANTINED,
        believed_from=t if believed else None,
    )


def _log_write(
    fact: FactInput,
    start: datetime,
    end: datetime | None,
    t: datetime,
    memory_id: str,
    *,
    is_reaffirm: bool = False,
    believed: bool = True,
) -> int:
    values = write_log_values(fact, start, end, t, memory_id, is_reaffirm=is_reaffirm, believed=believed)
    return int(rawsql.insert(FactWrite, values, returning_id=True))


def _fast_insert(
    fact: FactInput,
    start: datetime,
    end: datetime | None,
    t: datetime,
    *,
    predecessor: str | None,
    cut: bool = False,
) -> StoreResult:
    mid = c.new_memory_id()
    wid = _log_write(fact, start, end, t, mid)
    if predecessor is not None:
        changes: dict[str, Any] = {
            "superseded_by": mid,
            "invalidated_by_event": fact.source_event or f"supersede:{mid}",
            "invalidated_at": t,
        }
        if cut:
            changes["valid_until"] = start
        rawsql.update(Memory, predecessor, **changes)
    rawsql.insert(Memory, _row_values(fact, mid, start, end, t, supersedes=predecessor))
    c.bump_generation(fact.agent_id, (mid,) if predecessor is None else (mid, predecessor))
    return StoreResult(mid, "stored", write_id=wid)


def _fast_reaffirm(
    fact: FactInput,
    rid: str,
    start: datetime,
    t: datetime,
    existing: list[dict[str, Any]],
    confidence: float,
    origin: str,
) -> StoreResult:
    wid = _log_write(fact, start, None, t, rid, is_reaffirm=True)
    reaffirmed_by, confidence = reaffirm_entries(fact, existing, confidence, origin, start, None, t)
    # one statement; the key's row exists, so the agent is registered (no generation read)
    rawsql.execute(
        "UPDATE memories SET reaffirmed_by = %s, confidence = %s, access_count = access_count + 1 WHERE id = %s",
        [rawsql.convert(Memory, "reaffirmed_by", reaffirmed_by), confidence, rid],
    )
    return StoreResult(rid, "reaffirmed", write_id=wid)


def _row_values(
    fact: FactInput,
    mid: str,
    start: datetime,
    end: datetime | None,
    t: datetime,
    *,
    supersedes: str | None = None,
    quarantined: bool = False,
) -> dict[str, Any]:
    return dict(
        id=mid,
        agent_id=fact.agent_id,
        content=fact.content,
        timestamp=t,
        tags=fact.tags,
        created_at=t,
        layer=fact.layer,
        importance=fact.importance,
        source_event=fact.source_event,
        valid_from=start,
        valid_until=end,
        supersedes=supersedes,
        subject=fact.subject,
        predicate=fact.predicate,
        object=fact.object,
        value_key=fact.value_key,
        confidence=fact.confidence,
        metadata=fact.metadata,
        origin=fact.origin,
        origin_trust=fact.origin_trust,
        derived_from=fact.derived_from,
        ingested_at=t,
        quarantined=quarantined,
        session_id=fact.session_id,
    )


def _key_rows(agent_id: str, subject: str, predicate: str, value_key: str | None = None) -> list[Memory]:
    """The rows of one key, or of every value of ``(subject, predicate)`` when ``value_key`` is None."""
    rows = Memory.objects.filter(agent_id=agent_id, subject=subject, predicate=predicate)
    if value_key is not None:
        rows = rows.filter(value_key=value_key)
    return list(rows)


def _covering_row(rows: Any, at: datetime) -> Memory | None:
    for m in rows:
        if m.valid_from is not None and is_current(m, at):
            return m
    return None


def _same_value(row: Memory, fact: FactInput) -> bool:
    return (row.object or None) == (fact.object or None) and holds(row, fact.content)


def reaffirm_entries(
    fact: ReaffirmSource,
    existing: list[dict[str, Any]],
    confidence: float,
    row_origin: str,
    start: datetime,
    end: datetime | None,
    t: datetime,
) -> tuple[list[dict[str, Any]], float]:
    """SPEC T5: the row's new reaffirmed_by list (no duplicates, newest 20) and confidence."""
    entry = {
        "source_event": fact.source_event,
        "origin": fact.origin,
        "valid_from": start.isoformat(),
        "valid_until": end.isoformat() if end else None,
        "ingested_at": t.isoformat(),
    }
    existing = list(existing)
    same = any(
        all(e.get(k) == entry[k] for k in ("source_event", "origin", "valid_from", "valid_until"))
        for e in existing
    )
    corroborated = {origin_class(row_origin)} | {origin_class(str(e.get("origin", ""))) for e in existing}
    new_class = origin_class(fact.origin)
    if new_class not in corroborated and new_class not in NON_CORROBORATING:
        confidence = min(1.0, round(confidence + 0.1, 6))
    if not same:
        existing.append(entry)
    return existing[-MAX_REAFFIRMED:], confidence


def _reaffirm(
    fact: FactInput, row: Memory, rows: dict[str, Memory], start: datetime, end: datetime | None, t: datetime
) -> StoreResult:
    primary = row.metadata.get(CONTINUATION_KEY) or row.id
    wid = _log_write(fact, start, end, t, primary, is_reaffirm=True)
    reaffirmed_by, confidence = reaffirm_entries(
        fact, row.reaffirmed_by or [], row.confidence, row.origin, start, end, t
    )
    # F(): a concurrent search may bump access_count outside the key lock
    Memory.objects.filter(id=row.id).update(
        reaffirmed_by=reaffirmed_by, confidence=confidence, access_count=F("access_count") + 1
    )
    row.reaffirmed_by, row.confidence, row.access_count = reaffirmed_by, confidence, row.access_count + 1
    changed = rederive_key(
        fact.agent_id, fact.subject, fact.predicate, at=t, rows=rows, value_key=fact.value_key
    )
    c.ensure_agent(fact.agent_id, bump_generation=bool(changed), changed=changed)
    return StoreResult(row.id, "reaffirmed", write_id=wid)


# --- re-derivation ----------------------------------------------------------------------------------------


def _write_spans(writes: list[FactWrite]) -> list[WriteSpan]:
    return [WriteSpan(w.order, w.req_from, w.req_until, w.memory_id, w.source_event) for w in writes]


@dataclass
class _KeyWrites:
    """The write log of one key, as re-derivation reads it."""

    writes: list[FactWrite]
    believed: list[WriteSpan]  # the believed writes, in ingestion order
    states: dict[str, set[str]]  # primary row id -> the states of every write supporting it
    primary_state: dict[str, str]  # primary row id -> the state of the write that created it


def _key_write_list(agent_id: str, subject: str, predicate: str, value_key: str | None) -> list[FactWrite]:
    writes = FactWrite.objects.filter(agent_id=agent_id, subject=subject, predicate=predicate)
    if value_key is not None:
        writes = writes.filter(value_key=value_key)
    return list(writes.order_by("id"))


def _key_writes(writes: list[FactWrite]) -> _KeyWrites:
    states: dict[str, set[str]] = {}
    primary_state: dict[str, str] = {}
    for w in writes:
        states.setdefault(w.memory_id, set()).add(w.state)
        if not w.is_reaffirm:
            primary_state[w.memory_id] = w.state
    believed = _write_spans([w for w in writes if w.state == FactWrite.STATE_BELIEVED])
    return _KeyWrites(writes, believed, states, primary_state)


def rederive_key(
    agent_id: str,
    subject: str,
    predicate: str,
    *,
    at: datetime,
    rows: dict[str, Memory] | None = None,
    new_ids: set[str] | None = None,
    retract_event: str | None = None,
    value_key: str | None = None,
) -> set[str]:
    """Make the stored rows of one key match the believed writes (SPEC T2). Returns the ids of the rows it
    changed or inserted (empty when the rows already matched).

    The key is ``(agent_id, subject, predicate, value_key)`` (SPEC B3); with ``value_key`` None every value of
    ``(subject, predicate)`` is re-derived, each as its own key (``rows``, when given, holds the rows of the
    keys re-derived).

    Four phases: read the key's write log; derive the believed segments and place each on a row (the
    write's own row first, then its continuation rows, created as needed); say what every row must look
    like (placed rows from their segments, the rest as shadowed, held or retracted); apply the differences.
    Rows in ``new_ids`` are unsaved and get inserted. Rows whose every write is retracted take
    ``retract_event``.
    """
    if rows is None:
        rows = {m.id: m for m in _key_rows(agent_id, subject, predicate, value_key)}
    new_ids = set(new_ids or ())
    writes = _key_write_list(agent_id, subject, predicate, value_key)
    values = {w.value_key for w in writes} | {m.value_key for m in rows.values()}
    changed: set[str] = set()
    for vk in sorted(values):
        key_rows = rows if len(values) == 1 else {i: m for i, m in rows.items() if m.value_key == vk}
        key_new = new_ids & set(key_rows)
        log = _key_writes(writes if len(values) == 1 else [w for w in writes if w.value_key == vk])
        placed = _place_segments(derive(log.believed), key_rows, log.writes, at, key_new)
        desired = _placed_rows(placed, key_new, at)
        desired.update(_unplaced_rows(key_rows, desired, log, at, retract_event))
        changed |= _apply(key_rows, desired, key_new)
        rows.update(key_rows)
    return changed


def _place_segments(
    segments: list[Segment], rows: dict[str, Memory], writes: list[FactWrite], at: datetime, new_ids: set[str]
) -> list[tuple[Segment, Memory]]:
    """Each believed segment (oldest first) with the row that holds it: its write's primary row for the first
    stretch, then that row's continuation rows in id order, new ones created (and added to ``rows`` and
    ``new_ids``) when there are not enough. A primary row missing from ``rows`` is rebuilt from its write."""
    continuations: dict[str, list[Memory]] = {}
    for m in rows.values():
        parent = (m.metadata or {}).get(CONTINUATION_KEY)
        if parent:
            continuations.setdefault(parent, []).append(m)
    for lst in continuations.values():
        lst.sort(key=lambda m: m.id)
    used: dict[str, int] = {}  # primary row id -> how many of its stretches are placed so far
    placed: list[tuple[Segment, Memory]] = []
    for seg in segments:
        primary = rows.get(seg.row)
        if primary is None:
            primary = _row_from_write(
                next(w for w in writes if w.memory_id == seg.row and not w.is_reaffirm), at
            )
            rows[primary.id] = primary
            new_ids.add(primary.id)
        k = used.get(seg.row, 0)
        used[seg.row] = k + 1
        if k == 0:
            placed.append((seg, primary))
            continue
        spare = continuations.setdefault(seg.row, [])
        if k - 1 >= len(spare):
            cont = _continuation(primary, at)
            rows[cont.id] = cont
            new_ids.add(cont.id)
            spare.append(cont)
        placed.append((seg, spare[k - 1]))
    return placed


def _placed_rows(
    placed: list[tuple[Segment, Memory]], new_ids: set[str], at: datetime
) -> dict[str, dict[str, Any]]:
    """What each row holding a segment must look like: its interval, its chain links to the adjacent
    segments' rows, and, when its end changed, the event that closed it (the next segment's first write)."""
    desired: dict[str, dict[str, Any]] = {}
    for k, (seg, m) in enumerate(placed):
        prev = placed[k - 1] if k > 0 else None
        nxt = placed[k + 1] if k + 1 < len(placed) else None
        pred_id = prev[1].id if prev is not None and prev[0].end == seg.start else None
        succ = nxt if nxt is not None and seg.end == nxt[0].start else None
        succ_id = succ[1].id if succ is not None else None
        want: dict[str, Any] = {
            "valid_from": seg.start,
            "valid_until": seg.end,
            "supersedes": pred_id,
            "superseded_by": succ_id,
            "quarantined": False,
        }
        ended_differently = (
            m.id in new_ids
            or m.valid_until != seg.end
            or m.superseded_by != succ_id
            or is_retracted(m.invalidated_by_event)
        )
        if ended_differently:
            if succ is not None:
                want["invalidated_by_event"] = succ[0].first.source_event or f"supersede:{succ_id}"
                want["invalidated_at"] = at
            else:
                want["invalidated_by_event"] = None
                want["invalidated_at"] = None
        desired[m.id] = want
    return desired


def _unplaced_rows(
    rows: dict[str, Memory],
    placed: dict[str, dict[str, Any]],
    log: _KeyWrites,
    at: datetime,
    retract_event: str | None,
) -> dict[str, dict[str, Any]]:
    """What the key's other rows must look like: believed but shadowed everywhere (a zero-length segment at
    its start, superseded by the winner there), held (quarantined), or retracted. A row no write speaks for
    (imported without history) is left alone."""
    desired: dict[str, dict[str, Any]] = {}
    for m in rows.values():
        if m.id in placed or not m.subject:
            continue
        parent = (m.metadata or {}).get(CONTINUATION_KEY)
        key = parent or m.id
        row_states = log.states.get(key, set())
        if not row_states:
            continue
        if FactWrite.STATE_BELIEVED in row_states:
            start = m.valid_from or at
            winner = value_at(log.believed, start)
            win_row = winner.row if winner else None
            want: dict[str, Any] = {"valid_until": start, "valid_from": start, "quarantined": False}
            if m.valid_until != start or (m.superseded_by != win_row and not parent):
                want["superseded_by"] = None if parent else win_row
                if parent:
                    want["invalidated_by_event"] = "rederived"
                elif winner:
                    want["invalidated_by_event"] = winner.source_event or f"supersede:{win_row}"
                else:
                    want["invalidated_by_event"] = None
                want["invalidated_at"] = at
            desired[m.id] = want
        elif (
            log.primary_state.get(key) == FactWrite.STATE_QUARANTINED
            and FactWrite.STATE_RETRACTED not in row_states
        ):
            desired[m.id] = {"quarantined": True}
        elif not is_retracted(m.invalidated_by_event):
            desired[m.id] = {
                "quarantined": False,
                "invalidated_by_event": retract_event or "origin_purge",
                "invalidated_at": at,
            }
    return desired


def _apply(rows: dict[str, Memory], desired: dict[str, dict[str, Any]], new_ids: set[str]) -> set[str]:
    closing: list[tuple[str, dict[str, Any]]] = []
    opening: list[tuple[str, dict[str, Any]]] = []
    for row_id, want in desired.items():
        m = rows[row_id]
        if row_id in new_ids:
            for k, v in want.items():
                setattr(m, k, v)
            continue
        changes = {k: v for k, v in want.items() if getattr(m, k) != v}
        if not changes:
            continue
        for k, v in changes.items():
            setattr(m, k, v)
        opens = m.valid_until is None and is_believed(m)
        (opening if opens else closing).append((row_id, changes))
    for row_id, changes in closing:
        Memory.objects.filter(id=row_id).update(**changes)
    if new_ids:
        Memory.objects.bulk_create([rows[i] for i in sorted(new_ids)])
    for row_id, changes in opening:
        Memory.objects.filter(id=row_id).update(**changes)
    return {row_id for row_id, _ in closing} | {row_id for row_id, _ in opening} | new_ids


def _continuation(primary: Memory, at: datetime) -> Memory:
    """A row carrying ``primary``'s value over a later, separate stretch of world time."""
    cont = Memory(
        id=c.new_memory_id(),
        **{
            f.attname: getattr(primary, f.attname)
            for f in Memory._meta.concrete_fields
            if f.attname not in {"id", "metadata", "reaffirmed_by", "access_count", "last_accessed"}
        },
    )
    cont.metadata = {**(primary.metadata or {}), CONTINUATION_KEY: primary.id}
    cont.created_at = at
    cont.reaffirmed_by = []
    cont.access_count = 0
    for name in DERIVED_FIELDS:
        if name not in {"quarantined"}:
            setattr(cont, name, None)
    return cont


def _row_from_write(w: FactWrite, at: datetime) -> Memory:
    return Memory(
        id=w.memory_id,
        agent_id=w.agent_id,
        content=w.content,
        timestamp=w.ingested_at,
        created_at=at,
        layer="semantic",
        subject=w.subject,
        predicate=w.predicate,
        object=w.object,
        value_key=w.value_key,
        origin=w.origin,
        origin_trust=w.origin_trust,
        ingested_at=w.ingested_at,
        source_event=w.source_event,
        session_id=w.session_id,
        valid_from=w.req_from,
        valid_until=w.req_until,
    )


# --- a curator's retract ------------------------------------------------------------------------------


def curated_fact(*, agent_id: Any, memory_id: Any, reason: Any, actor: Any) -> tuple[str, str, str, Memory]:
    """The checked request of a curator's retract or restore of one fact: agent, actor, trimmed reason and the
    fact's row, its key locked and the row re-read (a concurrent change that committed meanwhile is seen).
    Another agent's id and an unknown id give the same ``not_found``."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidArgument("a reason is required", field="reason")
    if len(reason) > 2000:
        raise InvalidArgument("the reason is longer than 2000 characters", field="reason")
    if not isinstance(memory_id, str) or not memory_id or len(memory_id) > 64:
        raise NotFound("no fact with that id", field="memory_id")
    row = Memory.objects.filter(id=memory_id).first()
    if row is None or row.agent_id != agent_id or not row.subject or not row.predicate:
        raise NotFound("no fact with that id", field="memory_id")
    c.lock_key(agent_id, row.subject, row.predicate)
    row.refresh_from_db()  # memory rows are never deleted
    return agent_id, actor, reason.strip(), row


@c.write_transaction
def retract_fact(*, agent_id: str, memory_id: str, reason: str, actor: str) -> MemoryRecord:
    """A curator's retract of one fact: every write supporting the row is retracted and the key's timeline
    re-derived (a value it had superseded comes back), like a purge of that single fact. Audited; bumps the
    generation. Another agent's id and an unknown id give the same ``not_found``."""
    agent_id, actor, reason, row = curated_fact(
        agent_id=agent_id, memory_id=memory_id, reason=reason, actor=actor
    )
    assert row.subject is not None and row.predicate is not None  # curated_fact checked both
    if is_retracted(row.invalidated_by_event):
        raise EngineError("this fact is already retracted", code="already_retracted", field="memory_id")
    t = c.now()
    primary = (row.metadata or {}).get(CONTINUATION_KEY) or row.id
    before = set(
        Memory.objects.filter(agent_id=agent_id, subject=row.subject, predicate=row.predicate)
        .filter(current_q(t))
        .values_list("id", flat=True)
    )
    writes = FactWrite.objects.filter(
        agent_id=agent_id, subject=row.subject, predicate=row.predicate, memory_id=primary
    ).exclude(state=FactWrite.STATE_RETRACTED)
    n_writes = writes.update(state=FactWrite.STATE_RETRACTED, believed_until=t)
    changed = {row.id}
    if n_writes:
        changed |= rederive_key(
            agent_id,
            row.subject,
            row.predicate,
            at=t,
            retract_event="curator_retract",
            value_key=row.value_key,
        )
    else:  # a row no write speaks for (imported without history): retract the row itself
        Memory.objects.filter(id=row.id).update(invalidated_by_event="curator_retract", invalidated_at=t)
    after = set(
        Memory.objects.filter(agent_id=agent_id, subject=row.subject, predicate=row.predicate)
        .filter(current_q(t))
        .values_list("id", flat=True)
    )
    c.bump_generation(agent_id, changed)
    resolve_tainted(agent_id=agent_id, t=t, ids=changed)  # a review item asking about this fact is settled
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="curator_retract",
        memory_id=row.id,
        subject=row.subject,
        reason=reason,
        at=t,
        predicate=row.predicate,
        writes=n_writes,
        restored=sorted(after - before),
    )
    return MemoryRecord.from_model(Memory.objects.get(id=row.id))


# --- reads ------------------------------------------------------------------------------------------------


def _check_key(agent_id: Any, subject: Any, predicate: Any) -> tuple[str, str, str]:
    agent_id = c.check_agent_id(agent_id)
    subj = c.check_text(subject, field="subject", required=True)
    pred = c.check_text(predicate, field="predicate", required=True)
    assert subj is not None and pred is not None
    return agent_id, subj, pred


def get_history(*, agent_id: str, subject: str, predicate: str) -> list[MemoryRecord]:
    """Every row of the key, oldest world time first, quarantined and retracted rows included (SPEC T6). For a
    multi-valued predicate (SPEC B3) every value's rows, interleaved by world time."""
    agent_id, subject, predicate = _check_key(agent_id, subject, predicate)
    rows = Memory.objects.filter(agent_id=agent_id, subject=subject, predicate=predicate).order_by(
        "valid_from", "ingested_at", "id"
    )
    return [MemoryRecord.from_model(m) for m in rows]


def get_at(
    *,
    agent_id: str,
    subject: str,
    predicate: str,
    at: datetime | str,
    as_of: datetime | str | None = None,
    object: str | None = None,
) -> MemoryRecord | None:
    """The believed row valid at world time ``at``; with ``as_of``, as believed at that record time (SPEC T7).

    For a multi-valued predicate (SPEC B3) several values may hold at ``at``: ``object`` asks about that value
    alone; without it the answer is the value that started latest (``get_values_at`` lists them all)."""
    found = _values_at(agent_id, subject, predicate, at, as_of, object)
    return found[0] if found else None


def get_values_at(
    *,
    agent_id: str,
    subject: str,
    predicate: str,
    at: datetime | str,
    as_of: datetime | str | None = None,
) -> list[MemoryRecord]:
    """Every value of ``(subject, predicate)`` valid at ``at`` (one for a single-valued predicate; each current
    value of a multi-valued one, SPEC B3), the latest start first; ``as_of`` as for ``get_at``."""
    return _values_at(agent_id, subject, predicate, at, as_of, None)


def _values_at(
    agent_id: Any, subject: Any, predicate: Any, at: Any, as_of: Any, obj: Any
) -> list[MemoryRecord]:
    agent_id, subject, predicate = _check_key(agent_id, subject, predicate)
    when = c.parse_time(at, field="at")
    if when is None:
        raise InvalidTime("at is required", field="at")
    record_time = c.parse_time(as_of, field="as_of")
    vk: str | None = None
    if obj is not None:
        text = c.check_text(obj, field="object", required=False, limit=MAX_OBJECT_CHARS)
        vk = key_value(predicate, text)
    if record_time is None:
        rows = Memory.objects.filter(agent_id=agent_id, subject=subject, predicate=predicate).filter(
            current_q(when)
        )
        if vk is not None:
            rows = rows.filter(value_key=vk)
        return [MemoryRecord.from_model(m) for m in rows.order_by("-valid_from", "-ingested_at", "-id")]
    writes = FactWrite.objects.filter(
        agent_id=agent_id, subject=subject, predicate=predicate, ingested_at__lte=record_time
    )
    if vk is not None:
        writes = writes.filter(value_key=vk)
    by_key: dict[str, list[FactWrite]] = {}
    for w in writes.order_by("id"):
        if w.believed_at(record_time):
            by_key.setdefault(w.value_key, []).append(w)
    found: list[tuple[datetime, int, MemoryRecord]] = []
    for key_writes in by_key.values():
        spans = _write_spans(key_writes)
        winner = value_at(spans, when)
        if winner is None:
            continue
        seg = next(s for s in derive(spans) if s.start <= when and (s.end is None or s.end > when))
        row = Memory.objects.filter(agent_id=agent_id, id=winner.row).first()
        if row is None:
            continue
        record = MemoryRecord.from_model(
            row,
            valid_from=seg.start,
            valid_until=seg.end,
            quarantined=False,
            invalidated_by_event=None if seg.end is None else row.invalidated_by_event,
        )
        found.append((seg.start, winner.order, record))
    found.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [record for _, _, record in found]
