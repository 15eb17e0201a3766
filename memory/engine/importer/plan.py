"""Planning: each new row's trust (SPEC P1), the write-log entries of a key's rows, and the checks that decide
whether a key's imported history re-derives as it stands or must be repaired."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from memory.models import FactWrite, Memory

from ..provenance import ceiling
from ..timeline import WriteSpan, derive
from ..types import InvalidArgument
from . import sizes
from .convert import _Row
from .fields import _LIMITS, IMPORT_ORIGIN, ImportPolicy, _base_trust, _id_list, _number, _origin, _text
from .reading import _select

# --- trust (light pass) -----------------------------------------------------------------------------------


def _plan_trust(
    conn: sqlite3.Connection, names: dict[str, str], policy: ImportPolicy
) -> tuple[dict[str, tuple[float, Any]], dict[str, str]]:
    """Trust of every row not yet stored (id -> (trust, legacy value if the trust differs from it)), and the
    owner (agent id) of every id of the file that is already stored."""
    light: dict[str, tuple[str, float, list[str], Any]] = {}
    for r in _select(conn, names, ["id", "agent_id", "origin", "origin_trust", "derived_from"]):
        mid, changed = _text(r.get("id"))
        if mid is None or changed or not mid.strip() or len(mid) > _LIMITS["id"]:
            continue
        try:
            agent_id = policy.target(r.get("agent_id"))
        except InvalidArgument:
            continue
        origin = _origin(r.get("origin")) if "origin" in names else IMPORT_ORIGIN
        legacy = r.get("origin_trust")
        base, _ = _base_trust(origin, legacy, policy.ceiling(origin))
        derived = _id_list(r.get("derived_from"))[0] if "derived_from" in names else []
        light[mid] = (agent_id, base, derived, legacy)

    existing: dict[str, tuple[str, float]] = {}
    ids = list(light)
    for i in range(0, len(ids), sizes.CHUNK):
        for mid, owner, stored_trust in Memory.objects.filter(id__in=ids[i : i + sizes.CHUNK]).values_list(
            "id", "agent_id", "origin_trust"
        ):
            existing[mid] = (owner, float(stored_trust))
    new = {mid for mid in light if mid not in existing}
    trust = {mid: light[mid][1] for mid in new}

    def source_trust(agent_id: str, sid: str) -> float:
        if sid in new and light[sid][0] == agent_id:
            return trust[sid]
        if sid in existing and existing[sid][0] == agent_id:
            return existing[sid][1]
        return 0.0  # SPEC P1: an unknown source counts 0.0

    derived_rows = [mid for mid in new if light[mid][2]]
    for _ in range(len(derived_rows) + 1):  # values only decrease: a fixed point within n passes
        changed = False
        for mid in derived_rows:
            agent_id, base, derived, _legacy = light[mid]
            value = round(min(base, *(source_trust(agent_id, s) for s in derived)), 6)
            if value < trust[mid]:
                trust[mid], changed = value, True
        if not changed:
            break

    out: dict[str, tuple[float, Any]] = {}
    for mid in new:
        legacy = light[mid][3]
        number, problem = _number(legacy, 1.0, 0.0, 1.0)
        kept = legacy is None or (problem is None and round(number, 6) == trust[mid])
        out[mid] = (trust[mid], None if kept else legacy)
    return out, {mid: owner for mid, (owner, _) in existing.items()}


# --- fact writes and key checks ---------------------------------------------------------------------------


def _believed_interval(vf: datetime | None, vu: datetime | None) -> bool:
    return vf is not None and (vu is None or vu > vf)


def _overlaps(intervals: list[tuple[datetime, datetime | None]]) -> bool:
    """Whether any two non-empty world-time intervals intersect (``None`` end = open)."""
    seen = False
    reach: datetime | None = None
    for start, end in sorted(intervals, key=lambda iv: iv[0]):
        if seen and (reach is None or start < reach):
            return True
        # no overlap so far: every earlier interval ends at or before ``start``, hence before ``end``
        seen, reach = True, end
    return False


def _writes_for(rows: list[_Row], *, natural: bool) -> list[FactWrite]:
    """The write-log entries of a key's imported rows, in ingestion order.

    ``natural``: a row closed by supersession (``superseded_by`` set) gets an open request, as the write that
    created it had; the supersession then follows from the successor's later start, so purging the successor
    restores it (SPEC P2). Otherwise every request is the row's own interval.
    """
    planned: list[tuple[tuple[Any, ...], FactWrite]] = []
    for r in rows:
        m = r.memory
        assert r.state is not None and r.valid_from is not None and m.subject and m.predicate
        start = r.valid_from
        until = None if natural and m.superseded_by and r.valid_until is not None else r.valid_until
        ingested = m.ingested_at or m.timestamp
        believed_from: datetime | None = ingested
        believed_until: datetime | None = None
        if r.state == FactWrite.STATE_QUARANTINED or m.invalidated_by_event == "quarantine_reject":
            believed_from = None
        if r.state == FactWrite.STATE_RETRACTED and believed_from is not None:
            believed_until = max(believed_from, m.invalidated_at or believed_from)
        common = {
            "agent_id": m.agent_id,
            "subject": m.subject,
            "predicate": m.predicate,
            "object": m.object,
            "value_key": m.value_key,
            "content": m.content,
            "session_id": m.session_id,
            "memory_id": m.id,
            "state": r.state,
        }
        planned.append(
            (
                (ingested, m.id, 0, 0),
                FactWrite(
                    **common,
                    req_from=start,
                    req_until=until,
                    ingested_at=ingested,
                    origin=m.origin,
                    origin_trust=m.origin_trust,
                    source_event=m.source_event,
                    believed_from=believed_from,
                    believed_until=believed_until,
                ),
            )
        )
        for k, e in enumerate(r.reaffirms):
            inside = (
                e.valid_from is not None and e.valid_from >= start and (until is None or e.valid_from < until)
            )
            r_from = e.valid_from if inside and e.valid_from is not None else start
            r_until = until
            if (
                e.valid_until is not None
                and e.valid_until > r_from
                and (until is None or e.valid_until < until)
            ):
                r_until = e.valid_until
            r_ingested = max(ingested, e.ingested_at or ingested)
            planned.append(
                (
                    (r_ingested, m.id, 1, k),
                    FactWrite(
                        **common,
                        req_from=r_from,
                        req_until=r_until,
                        ingested_at=r_ingested,
                        origin=e.origin,
                        origin_trust=ceiling(e.origin),
                        source_event=e.source_event,
                        is_reaffirm=True,
                        believed_from=r_ingested,
                    ),
                )
            )
    planned.sort(key=lambda p: p[0])
    return [w for _, w in planned]


def _reproduces(rows: list[_Row], writes: list[FactWrite]) -> bool:
    """Whether deriving the key from ``writes`` gives back exactly the legacy rows' intervals (SPEC T2)."""
    spans = [
        WriteSpan(i, w.req_from, w.req_until, w.memory_id, w.source_event)
        for i, w in enumerate(writes)
        if w.state == FactWrite.STATE_BELIEVED
    ]
    got = [(s.start, s.end, s.row) for s in derive(spans)]
    expected = sorted(
        (
            (r.valid_from, r.valid_until, r.memory.id)
            for r in rows
            if r.state == FactWrite.STATE_BELIEVED and _believed_interval(r.valid_from, r.valid_until)
        ),
        key=lambda t: (t[0], t[2]),
    )
    return got == expected


def _existing_key_rows(
    keys: set[tuple[str, str, str, str]],
) -> dict[tuple[str, str, str, str], list[Memory]]:
    out: dict[tuple[str, str, str, str], list[Memory]] = {}
    if not keys:
        return out
    agents = sorted({k[0] for k in keys})
    subjects = sorted({k[1] for k in keys})
    for i in range(0, len(subjects), sizes.CHUNK):
        qs = Memory.objects.filter(agent_id__in=agents, subject__in=subjects[i : i + sizes.CHUNK])
        for m in qs:
            key = (m.agent_id, m.subject or "", m.predicate or "", m.value_key)
            if key in keys:
                out.setdefault(key, []).append(m)
    return out


_REPORTED_FIELDS = ("valid_from", "valid_until", "supersedes", "superseded_by", "invalidated_by_event")


def _snapshot(rows: list[Memory]) -> dict[str, dict[str, Any]]:
    return {m.id: {f: getattr(m, f) for f in _REPORTED_FIELDS} for m in rows}


def _diff(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    changes: list[dict[str, Any]] = []
    for mid in sorted(after):
        old = before.get(mid)
        if old is None:
            changes.append({"id": mid, "created": True, **{f: _jsonable(v) for f, v in after[mid].items()}})
            continue
        fields = {f: [_jsonable(old[f]), _jsonable(v)] for f, v in after[mid].items() if old[f] != v}
        if fields:
            changes.append({"id": mid, **fields})
    return changes


def _jsonable(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value
