"""The batch write path for imports and backfills (SPEC T1–T5, T9): ``store_temporal_many``.

Every fact is validated first (a bad one rejects the whole call, nothing written). Then the facts are applied
in chunks, one transaction each: the chunk's keys are locked together and their state read in two statements;
each key's facts are applied in order in memory when they are the common cases ``temporal._fast_write``
takes (a first value, a supersede, a reaffirm of the open value, a value after a segment that ends there), and
written with multi-row statements; a key with any other case (a historical insertion, a bounded write, a tie,
continuation rows) goes through ``temporal.apply_fact`` fact by fact. The generation moves once per chunk.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction

from memory.models import FactWrite, Memory

from . import common as c
from . import rawsql, vectors
from .archive import same_text
from .belief import believed_sql
from .temporal import (
    CONTINUATION_KEY,
    FactInput,
    _row_values,
    apply_fact,
    check_fact,
    reaffirm_entries,
    write_log_values,
)
from .types import EngineError, InvalidArgument, InvalidTime, StoreResult

MAX_FACTS = 100_000  # per call
CHUNK = 1_000  # facts per transaction
FACT_FIELDS = frozenset(
    {
        "content",
        "subject",
        "predicate",
        "object",
        "valid_from",
        "valid_until",
        "confidence",
        "origin",
        "origin_trust",
        "derived_from",
        "source_event",
        "session_id",
        "metadata",
        "layer",
        "importance",
        "tags",
    }
)


def store_temporal_many(
    *, agent_id: str, facts: Any, origin: str | None = None, actor: str = "system"
) -> list[StoreResult]:
    """Write many facts, as ``store_temporal`` would one by one in the same order, much faster (SPEC T1–T5).

    For trusted importers and backfills: no injection scan and no burst guard (``store_temporal(protect=True)``
    is the agent-facing path). Each fact is an object with ``store_temporal``'s arguments (``content``,
    ``subject``, ``predicate``, ``object``, ``valid_from``, ``valid_until``, ``confidence``, ``origin``,
    ``origin_trust``, ``derived_from``, ``source_event``, ``session_id``, ``metadata``, ``layer``,
    ``importance``, ``tags``); ``origin`` is the default for facts that name none. At most ``MAX_FACTS``.

    Every fact is validated before anything is written, with the same rules and caps as ``store_temporal``: the
    first bad one raises its ``EngineError`` (same code) for the whole call, ``field`` naming it
    (``facts[3].subject``) and ``details["index"]`` its position; nothing is written then. All facts of a call
    are ingested at one moment (``valid_from`` defaults to it). They are applied in chunks of ``CHUNK``, each
    its own transaction moving the agent's graph generation once. The rows, the write log and every read are
    those the same facts written one by one would give (write-log ids follow the call's order within each key).
    Returns one result per fact, in order: ``stored`` (``id`` the new row) or ``reaffirmed`` (``id`` the row).
    One audit event records the call.
    """
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    if isinstance(facts, dict | str) or not isinstance(facts, list | tuple):
        raise InvalidArgument("facts must be a list of fact objects", field="facts")
    if len(facts) > MAX_FACTS:
        raise InvalidArgument(
            f"at most {MAX_FACTS} facts per call; got {len(facts)}", field="facts", limit=MAX_FACTS
        )
    t = c.now()
    checked = [_check(agent_id, raw, origin, i, t) for i, raw in enumerate(facts)]
    results: list[StoreResult] = []
    for i in range(0, len(checked), CHUNK):
        results.extend(_write_chunk(agent_id, checked[i : i + CHUNK], t))
    # the new rows' vectors, embedded in batches after the writes (a failure leaves them to the backfill)
    vectors.write_vectors(
        agent_id=agent_id,
        items=[
            (r.id, f.content) for r, f in zip(results, checked, strict=True) if r.outcome == "stored" and r.id
        ],
    )
    if results:
        with transaction.atomic():
            c.audit(
                agent_id=agent_id,
                actor=actor,
                action="store_temporal_many",
                reason=f"{len(results)} facts",
                at=t,
                stored=sum(r.outcome == "stored" for r in results),
                reaffirmed=sum(r.outcome == "reaffirmed" for r in results),
            )
    return results


def _check(agent_id: str, raw: Any, origin: str | None, i: int, t: datetime) -> FactInput:
    where = f"facts[{i}]"
    if not isinstance(raw, dict):
        raise InvalidArgument(f"fact {i} must be an object", field=where, index=i)
    unknown = sorted(set(raw) - FACT_FIELDS)
    if unknown:
        raise InvalidArgument(
            f"fact {i} has an unknown field {unknown[0]!r}", field=f"{where}.{unknown[0]}", index=i
        )
    args = {"content": None, "subject": None, "predicate": None, **raw}
    if args.get("origin") is None:
        args["origin"] = origin
    try:
        fact = check_fact(agent_id=agent_id, **args)
        if fact.valid_until is not None and fact.valid_until <= (fact.valid_from or t):
            raise InvalidTime(
                "valid_until must be later than valid_from (which defaults to now)", field="valid_until"
            )
    except EngineError as exc:
        raise type(exc)(
            f"fact {i}: {exc.message}",
            code=exc.code,
            field=f"{where}.{exc.field}" if exc.field else where,
            **{**exc.details, "index": i},
        ) from None
    return fact


# --- one chunk --------------------------------------------------------------------------------------------


@dataclass
class _Row:
    """A believed row of a key as the chunk sees it: read from the database, or new in this chunk."""

    id: str
    valid_from: datetime | None
    valid_until: datetime | None
    object: str | None
    content: str
    continued: bool  # a continuation row (metadata names its primary)
    reaffirmed_by: Any  # the list, or its JSON text as read (decoded when a reaffirm needs it)
    confidence: float
    origin: str
    values: dict[str, Any] | None = None  # a new row: its full values
    closed: dict[str, Any] | None = None  # a read row that this chunk closes: its new end and links
    reaffirms: int = 0  # reaffirmations by this chunk


@dataclass
class _Key:
    latest: datetime | None  # the latest start of a believed write of the key
    rows: list[_Row] = field(default_factory=list)


@c.write_transaction
def _write_chunk(agent_id: str, facts: list[FactInput], t: datetime) -> list[StoreResult]:
    by_key: dict[tuple[str, str, str], list[int]] = {}  # (subject, predicate, value_key): SPEC B3
    for pos, f in enumerate(facts):
        by_key.setdefault((f.subject, f.predicate, f.value_key), []).append(pos)
    c.lock_keys(agent_id, {(s, p) for s, p, _ in by_key})
    starts = {key: min(facts[p].valid_from or t for p in positions) for key, positions in by_key.items()}
    state = _read_keys(agent_id, starts)
    results: list[StoreResult | None] = [None] * len(facts)
    plan = _Plan(agent_id, t)
    with c.one_bump():
        slow = [key for key, positions in by_key.items() if not plan.add_key(state[key], facts, positions)]
        plan.write(results)
        for key in slow:
            for pos in by_key[key]:
                results[pos] = apply_fact(facts[pos], t=t)
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]


def _values_sql(n: int, width: int, casts: tuple[str, ...]) -> str:
    one = "(" + ", ".join(f"%s{cast}" for cast in casts[:width]) + ")"
    return ", ".join([one] * n)


def _read_keys(
    agent_id: str, starts: dict[tuple[str, str, str], datetime]
) -> dict[tuple[str, str, str], _Key]:
    """Per key: the latest believed write start, and the believed rows that reach its earliest start here."""
    keys = list(starts)
    pg = rawsql.vendor() == "postgresql"
    casts = ("::text", "::text", "::text", "::timestamptz") if pg else ("", "", "", "")
    out = {key: _Key(None) for key in keys}
    flat = [v for key in keys for v in key]
    latest_sql = (
        f"WITH k(s, p, v) AS (VALUES {_values_sql(len(keys), 3, casts)})"
        " SELECT k.s, k.p, k.v, (SELECT MAX(w.req_from) FROM memory_fact_writes w WHERE w.agent_id = %s"
        " AND w.subject = k.s AND w.predicate = k.p AND w.value_key = k.v AND w.state = 'believed') FROM k"
    )
    for s, p, v, latest in rawsql.run(latest_sql, [*flat, agent_id]).fetchall():
        out[(s, p, v)].latest = rawsql.as_utc(latest)
    rows_sql = (
        f"WITH k(s, p, v, t) AS (VALUES {_values_sql(len(keys), 4, casts)})"
        " SELECT m.subject, m.predicate, m.value_key, m.id, m.valid_from, m.valid_until, m.object, m.content,"
        " m.metadata, m.reaffirmed_by, m.confidence, m.origin FROM k JOIN memories m ON m.agent_id = %s"
        f" AND m.subject = k.s AND m.predicate = k.p AND m.value_key = k.v WHERE {believed_sql('m')}"
        " AND (m.valid_until IS NULL OR m.valid_until >= k.t) ORDER BY m.id"
    )
    params = [
        v
        for (s, p, vk), start in starts.items()
        for v in (s, p, vk, rawsql.convert(Memory, "valid_from", start))
    ]
    for s, p, v, mid, vf, vu, obj, content, meta, reaffirmed, confidence, origin in rawsql.run(
        rows_sql, [*params, agent_id]
    ).fetchall():
        continued = (not isinstance(meta, str) or CONTINUATION_KEY in meta) and CONTINUATION_KEY in (
            rawsql.load_json(meta) or {}
        )
        out[(s, p, v)].rows.append(
            _Row(
                mid,
                rawsql.as_utc(vf),
                rawsql.as_utc(vu),
                obj,
                content,
                continued,
                reaffirmed,
                confidence,
                origin,
            )
        )
    return out


def _step(
    rows: list[_Row], start: datetime, end: datetime | None
) -> tuple[_Row | None, list[_Row], _Row | None] | None:
    """How a write starting at ``start`` (no believed write of the key starts later) meets the key's believed
    rows, when it is one of the cases taken in memory: ``(winner, ended, before)``: the row whose value holds at
    ``start`` (a write with its value reaffirms it; None: nothing holds there), the rows a new value ends at
    ``start``, and the row the new value follows directly (its ``supersedes``). None for every other case
    (a bounded write meeting rows, a row reaching past ``start`` with an end, continuation rows, ...), which
    takes ``apply_fact``. The cases are those re-derivation resolves as follows: a first value; the open row
    started before (cut there); the last row ends exactly there; the open row starts there too (a tie: the
    later write wins and the rows already at ``start`` become zero-length, all superseded by it)."""
    reaching = [r for r in rows if r.valid_until is None or r.valid_until >= start]
    if not reaching:
        return None, [], None
    if end is not None or any(r.continued or r.valid_from is None for r in reaching):
        return None
    opens = [r for r in reaching if r.valid_until is None]
    if not opens:  # one row, ending exactly here
        last = reaching[0]
        ok = len(reaching) == 1 and last.valid_until == start and last.valid_from < start  # type: ignore[operator]
        return (None, [last], last) if ok else None
    if len(opens) > 1:
        return None
    winner = opens[0]
    others = [r for r in reaching if r is not winner]
    assert winner.valid_from is not None
    if winner.valid_from < start:
        return None if others else (winner, [winner], winner)
    if winner.valid_from > start or any(r.valid_until != start for r in others):
        return None
    before = [r for r in others if r.valid_from < start]  # type: ignore[operator]
    if len(before) > 1:
        return None
    return winner, [winner, *others], before[0] if before else None


class _Plan:
    """The fast keys' writes of one chunk, applied in memory, then written with a few multi-row statements."""

    def __init__(self, agent_id: str, t: datetime):
        self.agent_id = agent_id
        self.t = t
        self.logs: list[tuple[int, dict[str, Any]]] = []  # (position, write-log values)
        self.outcomes: dict[int, tuple[str, str]] = {}  # position -> (row id, outcome)
        self.rows: list[_Row] = []  # every row a fast key touched

    def add_key(self, key: _Key, facts: list[FactInput], positions: list[int]) -> bool:
        """Apply one key's facts in memory; False (nothing kept) at the first case the fast path does not take."""
        rows = [copy.copy(r) for r in key.rows]  # attributes are reassigned, never changed in place
        latest = key.latest
        logs: list[tuple[int, dict[str, Any]]] = []
        outcomes: dict[int, tuple[str, str]] = {}
        t = self.t
        for pos in positions:
            f = facts[pos]
            start, end = f.valid_from or t, f.valid_until
            if latest is not None and latest > start:
                return False  # a write starts later: historical insertion
            step = _step(rows, start, end)
            if step is None:
                return False
            latest = start if latest is None else max(latest, start)
            winner, ended, before = step
            if (
                winner is not None
                and (winner.object or None) == (f.object or None)
                and same_text(winner.id, winner.content, f.content)
            ):
                earlier = winner.reaffirmed_by
                winner.reaffirmed_by, winner.confidence = reaffirm_entries(
                    f,
                    earlier if isinstance(earlier, list) else rawsql.load_json(earlier) or [],
                    winner.confidence,
                    winner.origin,
                    start,
                    None,
                    t,
                )
                winner.reaffirms += 1
                logs.append((pos, self._log(f, start, None, winner.id, reaffirm=True)))
                outcomes[pos] = (winner.id, "reaffirmed")
                continue
            mid = c.new_memory_id()
            closing = {
                "valid_until": start,
                "superseded_by": mid,
                "invalidated_by_event": f.source_event or f"supersede:{mid}",
                "invalidated_at": t,
            }
            for r in ended:
                r.valid_until = start
                if r.values is not None:
                    r.values.update(closing)
                else:
                    r.closed = closing
            values = _row_values(f, mid, start, end, t, supersedes=before.id if before else None)
            rows.append(
                _Row(
                    mid,
                    start,
                    end,
                    f.object,
                    f.content,
                    False,  # check_fact drops a continuation key from the metadata
                    [],
                    f.confidence,
                    f.origin,
                    values=values,
                )
            )
            logs.append((pos, self._log(f, start, end, mid)))
            outcomes[pos] = (mid, "stored")
        self.rows.extend(rows)
        self.logs.extend(logs)
        self.outcomes.update(outcomes)
        return True

    def _log(
        self, f: FactInput, start: datetime, end: datetime | None, mid: str, reaffirm: bool = False
    ) -> dict:
        return write_log_values(f, start, end, self.t, mid, is_reaffirm=reaffirm)

    def write(self, results: list[StoreResult | None]) -> None:
        """Close and reaffirm the read rows, insert the new rows, then the write log (ids in call order)."""
        if not self.logs:
            return
        closes = [r for r in self.rows if r.closed is not None]
        if closes:
            rawsql.run_many(
                "UPDATE memories SET valid_until = %s, superseded_by = %s, invalidated_by_event = %s,"
                " invalidated_at = %s WHERE id = %s",
                [
                    [
                        rawsql.convert(Memory, "valid_until", r.closed["valid_until"]),
                        r.closed["superseded_by"],
                        r.closed["invalidated_by_event"],
                        rawsql.convert(Memory, "invalidated_at", r.closed["invalidated_at"]),
                        r.id,
                    ]
                    for r in closes
                    if r.closed is not None
                ],
            )
        reaffirmed = [r for r in self.rows if r.reaffirms and r.values is None]
        if reaffirmed:
            rawsql.run_many(
                "UPDATE memories SET reaffirmed_by = %s, confidence = %s, access_count = access_count + %s"
                " WHERE id = %s",
                [
                    [
                        rawsql.convert(Memory, "reaffirmed_by", r.reaffirmed_by),
                        r.confidence,
                        r.reaffirms,
                        r.id,
                    ]
                    for r in reaffirmed
                ],
            )
        new = [r for r in self.rows if r.values is not None]
        for r in new:
            assert r.values is not None
            if r.reaffirms:
                r.values.update(
                    reaffirmed_by=r.reaffirmed_by, confidence=r.confidence, access_count=r.reaffirms
                )
        rawsql.insert_many(Memory, [r.values for r in new if r.values is not None])
        self.logs.sort(key=lambda item: item[0])
        ids = rawsql.insert_many(FactWrite, [values for _, values in self.logs], returning_id=True)
        for (pos, _), wid in zip(self.logs, ids, strict=True):
            mid, outcome = self.outcomes[pos]
            results[pos] = StoreResult(mid, outcome, write_id=wid)
        changed = [r.id for r in new] + [r.id for r in closes]
        if changed:
            c.bump_generation(self.agent_id, changed)
