"""Legacy import (SPEC M4): load a source-engine SQLite ``memories`` table losslessly and idempotently.

The file is read through the standard library's ``sqlite3`` in read-only mode; nothing is written until the
file has been checked (an SQLite database with a ``memories`` table carrying every base column). Then:

1. A light pass reads ``id, agent_id, origin, origin_trust, derived_from`` of every row and computes each new
   row's trust by SPEC P1: ``min(legacy trust or 1.0, ceiling of its origin class, lowest trust of its
   derived_from sources)``, a source being a row of the file or of the agent already in the database and an
   unknown source counting 0.0. A row without an origin gets the origin ``import`` (ceiling 0.7).
2. A batch pass reads full rows ordered by key and imports them in batches of whole keys, each batch in its own
   transaction: rows whose id exists for the same agent are skipped (that is what makes a second import a
   no-op), rows whose id exists for another agent are conflicts (skipped, reported, never overwritten).
   Facts (subject and predicate) also get their write-log entries (``FactWrite``), so later writes, purges and
   verdicts re-derive the key on top of the imported history. Keys whose believed rows overlap in world time
   (e.g. two open rows, which the partial unique index forbids) are re-derived by the engine's own rule (T2:
   the latest ``valid_from`` wins, so the older open row is closed where the newer starts) and reported.

Every column present in the file is kept as is. A value that cannot be kept (malformed JSON, an unreadable
time, an out-of-range number, more than 20 ``reaffirmed_by`` entries, a trust above what P1 allows) is
replaced by the column's default, its legacy value is kept in ``metadata["legacy_raw"][column]`` and the row is
listed among the problems; it never aborts the import. Times are read as ISO-8601 (naive = UTC, ``Z`` and
offsets honoured). Filled where memdesk never leaves a gap: ``ingested_at`` (record time) defaults to
``timestamp``, and a fact's ``valid_from`` defaults to its ``timestamp`` as for any fact write (T1).

Write-log entries of imported facts: a believed row's request is its own interval, except that a row closed by
supersession (``superseded_by`` set) gets an open request when that re-derives to exactly the legacy rows; then
purging the successor restores it, as for native history (P2). ``reaffirmed_by`` entries of believed rows
become reaffirmation writes, so support stays per write. Quarantined rows get a quarantined write (never
believed), retracted rows a retracted one.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.models import LAYERS, FactWrite, Memory

from . import common as c
from .belief import is_believed, is_retracted
from .provenance import ceiling
from .temporal import CONTINUATION_KEY, MAX_REAFFIRMED, rederive_key
from .timeline import WriteSpan, derive
from .types import ImportResult, InvalidArgument

BASE_COLUMNS = (
    "id",
    "agent_id",
    "content",
    "timestamp",
    "tags",
    "created_at",
    "layer",
    "importance",
    "access_count",
    "last_accessed",
    "source_event",
)
LATER_COLUMNS = (
    "valid_from",
    "valid_until",
    "superseded_by",
    "supersedes",
    "subject",
    "predicate",
    "object",
    "confidence",
    "metadata",
    "origin",
    "origin_trust",
    "derived_from",
    "ingested_at",
    "invalidated_by_event",
    "invalidated_at",
    "reaffirmed_by",
    "quarantined",
    "session_id",
)
IMPORT_ORIGIN = "import"
BATCH_ROWS = 1000
CHUNK = 500  # ids / subjects per IN (...) query
MAX_REPORTED = 200
_LIMITS = {
    "id": 40,
    "superseded_by": 40,
    "supersedes": 40,
    "subject": 512,
    "predicate": 512,
    "origin": 256,
    "invalidated_by_event": 256,
    "session_id": 256,
}
_MAX_INT = 2_147_483_647


class InvalidImportFile(InvalidArgument):
    """The file is not an SQLite database with a usable legacy ``memories`` table; nothing was written."""

    code = "invalid_import_file"


@dataclass(frozen=True)
class LegacyImportResult(ImportResult):
    """``ImportResult`` plus the report: why rows were skipped, what was repaired."""

    already_present: int = 0
    conflicts: int = 0
    invalid: int = 0
    facts: int = 0
    fact_writes: int = 0
    quarantined: int = 0
    trust_lowered: int = 0
    agents: list[str] = field(default_factory=list)
    ignored_columns: list[str] = field(default_factory=list)
    conflict_ids: list[str] = field(default_factory=list)
    problem_rows: int = 0
    problems: list[dict[str, Any]] = field(default_factory=list)
    repaired_keys: int = 0
    repairs: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "inserted": self.inserted,
            "skipped": self.skipped,
            "total": self.total,
            "columns": list(self.columns),
            "already_present": self.already_present,
            "conflicts": self.conflicts,
            "invalid": self.invalid,
            "facts": self.facts,
            "fact_writes": self.fact_writes,
            "quarantined": self.quarantined,
            "trust_lowered": self.trust_lowered,
            "agents": list(self.agents),
            "ignored_columns": list(self.ignored_columns),
            "conflict_ids": list(self.conflict_ids),
            "problem_rows": self.problem_rows,
            "problems": list(self.problems),
            "repaired_keys": self.repaired_keys,
            "repairs": list(self.repairs),
        }


# --- reading the legacy file ------------------------------------------------------------------------------


def _open(path: Any) -> sqlite3.Connection:
    if not isinstance(path, str | Path) or not str(path).strip():
        raise InvalidImportFile("path must name a legacy SQLite file", field="path")
    p = Path(path)
    if not p.is_file():
        raise InvalidImportFile(f"no such file: {str(p)[:200]}", field="path")
    try:
        conn = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise InvalidImportFile(f"cannot open the file as SQLite: {exc}", field="path") from None
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise InvalidImportFile(f"not an SQLite database: {exc}", field="path") from None
    return conn


def _columns(conn: sqlite3.Connection) -> list[str]:
    """The legacy table's column names (as spelled in the file); raises when the table or a base column is missing."""
    kinds = {
        str(name).lower(): kind
        for name, kind in conn.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')")
    }
    if "memories" not in kinds:
        raise InvalidImportFile("the file has no `memories` table", field="path")
    try:
        cols = [str(row[1]) for row in conn.execute('PRAGMA table_info("memories")')]
    except sqlite3.DatabaseError as exc:
        raise InvalidImportFile(f"cannot read the `memories` table: {exc}", field="path") from None
    lower = {col.lower() for col in cols}
    missing = [col for col in BASE_COLUMNS if col not in lower]
    if missing:
        raise InvalidImportFile(
            f"the `memories` table lacks base column(s): {', '.join(missing)}", field="path", missing=missing
        )
    return cols


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _select(
    conn: sqlite3.Connection, names: dict[str, str], wanted: list[str], order: str = ""
) -> Iterator[dict]:
    """Yield rows as dicts keyed by our (lower-case) column names."""
    present = [w for w in wanted if w in names]
    sql = "SELECT " + ", ".join(_quote(names[w]) for w in present) + " FROM memories" + order
    cur = conn.execute(sql)
    while True:
        chunk = cur.fetchmany(BATCH_ROWS)
        if not chunk:
            return
        for values in chunk:
            yield dict(zip(present, values, strict=True))


# --- value conversion -------------------------------------------------------------------------------------


def _raw(value: Any) -> Any:
    """A JSON-safe copy of a legacy value, for ``metadata.legacy_raw``."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, float) and value != value:
        return None
    return value


def _text(value: Any) -> tuple[str | None, bool]:
    """(text, changed): bytes are decoded, NUL characters (which PostgreSQL cannot store) replaced."""
    if value is None:
        return None, False
    changed = False
    if isinstance(value, bytes):
        text = value.decode("utf-8", "replace")
        changed = "\ufffd" in text and b"\xef\xbf\xbd" not in value
    elif isinstance(value, str):
        text = value
    else:
        text = str(value)
    if "\x00" in text:
        text, changed = text.replace("\x00", "\ufffd"), True
    return text, changed


def _time(value: Any) -> tuple[datetime | None, bool]:
    """(aware UTC datetime or None, ok). Naive times are UTC; numbers are Unix seconds."""
    if value is None:
        return None, True
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, UTC), True
        text, _ = _text(value)
        text = (text or "").strip()
        if not text:
            return None, True
        if text[-1] in "zZ":
            text = text[:-1] + "+00:00"
        dt = datetime.fromisoformat(text)
        if dt.tzinfo is None or dt.tzinfo.utcoffset(dt) is None:
            dt = dt.replace(tzinfo=UTC)
        return dt.astimezone(UTC), True
    except (ValueError, OverflowError, OSError):
        return None, False


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _scrub(value: Any) -> tuple[Any, bool]:
    """Replace NUL characters inside parsed JSON (PostgreSQL's jsonb cannot hold them)."""
    if isinstance(value, str):
        return (value.replace("\x00", "\ufffd"), True) if "\x00" in value else (value, False)
    if isinstance(value, list):
        out, changed = [], False
        for item in value:
            new, ch = _scrub(item)
            out.append(new)
            changed |= ch
        return out, changed
    if isinstance(value, dict):
        d, changed = {}, False
        for k, v in value.items():
            nk, ch1 = _scrub(k)
            nv, ch2 = _scrub(v)
            d[nk] = nv
            changed |= ch1 or ch2
        return d, changed
    return value, False


def _json(value: Any, kind: type) -> tuple[Any, str | None]:
    """(parsed value or kind(), problem). NULL and empty text are simply the default."""
    if value is None:
        return kind(), None
    if value == "[]" and kind is list or value == "{}" and kind is dict:
        return kind(), None
    text, _ = _text(value)
    if not (text or "").strip():
        return kind(), None
    try:
        parsed = json.loads(text or "", parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return kind(), "malformed JSON"
    if not isinstance(parsed, kind):
        return kind(), f"JSON {type(parsed).__name__} where a {kind.__name__} was expected"
    parsed, scrubbed = _scrub(parsed)
    return parsed, "NUL characters replaced" if scrubbed else None


def _number(value: Any, default: float, low: float, high: float) -> tuple[float, str | None]:
    if value is None or (isinstance(value, str | bytes) and not value.strip()):
        return default, None
    if isinstance(value, bytes):
        return default, "not a number"
    try:
        x = float(value)
    except (TypeError, ValueError):
        return default, "not a number"
    if x != x or x in (float("inf"), float("-inf")):
        return default, "not a number"
    if x < low:
        return low, f"below {low}"
    if x > high:
        return high, f"above {high}"
    return x, None


def _flag(value: Any) -> tuple[bool, str | None]:
    if value is None:
        return False, None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value != 0, None
    text = (_text(value)[0] or "").strip().lower()
    if text in {"", "0", "false", "f", "no", "n"}:
        return False, None
    if text in {"1", "true", "t", "yes", "y"}:
        return True, None
    return False, "not a boolean"


def _origin(value: Any) -> str:
    text = (_text(value)[0] or "").strip()
    return text or IMPORT_ORIGIN


def _id_list(value: Any) -> tuple[list[str], str | None]:
    parsed, problem = _json(value, list)
    ids = [i for i in parsed if isinstance(i, str) and i]
    if len(ids) != len(parsed) and problem is None:
        problem = "entries that are not ids were dropped"
    return ids, problem


@dataclass(frozen=True)
class _Reaffirm:
    source_event: str
    origin: str
    valid_from: datetime | None
    valid_until: datetime | None
    ingested_at: datetime | None


@dataclass
class _Row:
    memory: Memory
    state: str | None  # FactWrite state for facts; None for plain memories
    valid_from: datetime | None  # the legacy interval (the row may be closed temporarily during a repair)
    valid_until: datetime | None
    reaffirms: list[_Reaffirm]

    @property
    def key(self) -> tuple[str, str, str] | None:
        m = self.memory
        if self.state is None or m.subject is None or m.predicate is None:
            return None
        return (m.agent_id, m.subject, m.predicate)


@dataclass
class _Skip:
    row_id: str | None
    reason: str


class _Converter:
    """Turns one legacy row into an unsaved ``Memory`` (plus its fact-write plan) and collects problems."""

    def __init__(
        self, names: dict[str, str], agent_override: str | None, trusts: dict[str, tuple[float, Any]]
    ):
        self.has = set(names)
        self.override = agent_override
        self.trusts = trusts
        self.problems: list[str] = []
        self.raw: dict[str, Any] = {}

    def note(self, column: str, message: str, raw: Any = None, *, keep_raw: bool = True) -> None:
        self.problems.append(f"{column}: {message}")
        if keep_raw and raw is not None:
            self.raw[column] = _raw(raw)

    def agent(self, value: Any) -> str:
        if self.override is not None:
            return self.override
        return c.check_agent_id(_text(value)[0])

    def convert(self, r: dict[str, Any]) -> _Row | _Skip:
        self.problems, self.raw = [], {}
        mid, changed = _text(r.get("id"))
        if mid is None or not mid.strip() or changed:
            return _Skip(mid, "id: missing or unreadable")
        if len(mid) > _LIMITS["id"]:
            return _Skip(mid, f"id: longer than {_LIMITS['id']} characters")
        try:
            agent_id = self.agent(r.get("agent_id"))
        except InvalidArgument as exc:
            return _Skip(mid, f"agent_id: {exc.message}")

        content, changed = _text(r.get("content"))
        if content is None:
            self.note("content", "NULL content imported as empty text", keep_raw=False)
            content = ""
        elif changed:
            self.note("content", "unreadable bytes or NUL characters replaced", r.get("content"))

        times: dict[str, datetime | None] = {}
        for col in (
            "timestamp",
            "created_at",
            "last_accessed",
            "valid_from",
            "valid_until",
            "ingested_at",
            "invalidated_at",
        ):
            if col not in self.has:
                times[col] = None
                continue
            value, ok = _time(r.get(col))
            if not ok:
                self.note(col, "not an ISO-8601 time", r.get(col))
            times[col] = value
        timestamp = times["timestamp"] or times["created_at"] or times["ingested_at"]
        if timestamp is None:
            return _Skip(mid, "timestamp: no usable timestamp or created_at")
        created_at = times["created_at"] or timestamp

        texts: dict[str, str | None] = {}
        for col in ("source_event", "superseded_by", "supersedes", "subject", "predicate", "object",
                    "origin", "invalidated_by_event", "session_id", "layer"):  # fmt: skip
            if col not in self.has:
                texts[col] = None
                continue
            text, changed = _text(r.get(col))
            if changed:
                self.note(col, "unreadable bytes or NUL characters replaced", r.get(col))
            limit = _LIMITS.get(col)
            if text is not None and limit is not None and len(text) > limit:
                if col in ("superseded_by", "supersedes"):
                    self.note(col, f"longer than {limit} characters; dropped", r.get(col))
                    text = None
                else:
                    return _Skip(mid, f"{col}: longer than {limit} characters")
            texts[col] = text
        subject = texts["subject"] if texts["subject"] and texts["subject"].strip() else None
        predicate = texts["predicate"] if texts["predicate"] and texts["predicate"].strip() else None

        layer = (texts["layer"] or "").strip() or "episodic"
        if layer not in LAYERS:
            self.note("layer", f"unknown layer {layer[:40]!r} imported as episodic", r.get("layer"))
            layer = "episodic"

        numbers: dict[str, float] = {}
        for col, default, low, high in (
            ("importance", 5.0, 0.0, 10.0),
            ("access_count", 0.0, 0.0, float(_MAX_INT)),
            ("confidence", 1.0, 0.0, 1.0),
        ):
            if col not in self.has:
                numbers[col] = default
                continue
            number, problem = _number(r.get(col), default, low, high)
            if problem:
                self.note(col, problem, r.get(col))
            numbers[col] = number

        quarantined = False
        if "quarantined" in self.has:
            quarantined, problem = _flag(r.get("quarantined"))
            if problem:
                self.note("quarantined", problem, r.get("quarantined"))

        json_values: dict[str, Any] = {}
        for col, kind in (("tags", list), ("metadata", dict), ("reaffirmed_by", list)):
            if col not in self.has:
                json_values[col] = kind()
                continue
            value, problem = _json(r.get(col), kind)
            if problem:
                self.note(col, problem, r.get(col))
            json_values[col] = value
        derived_from: list[str] = []
        if "derived_from" in self.has:
            derived_from, problem = _id_list(r.get("derived_from"))
            if problem:
                self.note("derived_from", problem, r.get("derived_from"))
        reaffirmed_by = json_values["reaffirmed_by"]
        if len(reaffirmed_by) > MAX_REAFFIRMED:
            self.note(
                "reaffirmed_by",
                f"{len(reaffirmed_by)} entries; the newest {MAX_REAFFIRMED} kept",
                r.get("reaffirmed_by"),
            )
            reaffirmed_by = reaffirmed_by[-MAX_REAFFIRMED:]
        metadata: dict[str, Any] = json_values["metadata"]
        if CONTINUATION_KEY in metadata:
            # memdesk reads this key as "a continuation row of another row"; a legacy row never is one.
            metadata = {k: v for k, v in metadata.items() if k != CONTINUATION_KEY}
            metadata[f"legacy_{CONTINUATION_KEY}"] = json_values["metadata"][CONTINUATION_KEY]
            self.note(
                "metadata", f"key {CONTINUATION_KEY!r} renamed legacy_{CONTINUATION_KEY}", keep_raw=False
            )

        origin = _origin(r.get("origin")) if "origin" in self.has else IMPORT_ORIGIN
        trust, legacy_trust = self.trusts.get(mid) or (_base_trust(origin, r.get("origin_trust"))[0], None)
        if legacy_trust is not None:
            self.note("origin_trust", f"set to {trust} by the trust rules (SPEC P1)", legacy_trust)

        ingested_at = times["ingested_at"] or timestamp
        valid_from, valid_until = times["valid_from"], times["valid_until"]
        is_fact = subject is not None and predicate is not None
        if is_fact and valid_from is None:
            valid_from = timestamp  # a fact's world time starts when it was written (SPEC T2)
        if is_fact and valid_until is not None and valid_from is not None and valid_until <= valid_from:
            self.note("valid_until", "not later than valid_from (an empty interval)", keep_raw=False)

        if self.raw:
            previous = metadata.get("legacy_raw")
            metadata = {
                **metadata,
                "legacy_raw": {**(previous if isinstance(previous, dict) else {}), **self.raw},
            }

        memory = Memory(
            id=mid,
            agent_id=agent_id,
            content=content,
            timestamp=timestamp,
            tags=json_values["tags"],
            created_at=created_at,
            layer=layer,
            importance=numbers["importance"],
            access_count=int(numbers["access_count"]),
            last_accessed=times["last_accessed"],
            source_event=texts["source_event"] or "",
            valid_from=valid_from,
            valid_until=valid_until,
            superseded_by=texts["superseded_by"],
            supersedes=texts["supersedes"],
            subject=subject,
            predicate=predicate,
            object=texts["object"],
            confidence=numbers["confidence"],
            metadata=metadata,
            origin=origin,
            origin_trust=trust,
            derived_from=derived_from,
            ingested_at=ingested_at,
            invalidated_by_event=texts["invalidated_by_event"],
            invalidated_at=times["invalidated_at"],
            reaffirmed_by=reaffirmed_by,
            quarantined=quarantined,
            session_id=texts["session_id"],
        )
        state: str | None = None
        reaffirms: list[_Reaffirm] = []
        if is_fact:
            if is_retracted(memory.invalidated_by_event):
                state = FactWrite.STATE_RETRACTED
            elif quarantined:
                state = FactWrite.STATE_QUARANTINED
            else:
                state = FactWrite.STATE_BELIEVED
                reaffirms = [_reaffirm(e) for e in reaffirmed_by if isinstance(e, dict)]
        return _Row(memory, state, valid_from, valid_until, reaffirms)


def _reaffirm(entry: dict[str, Any]) -> _Reaffirm:
    return _Reaffirm(
        source_event=(_text(entry.get("source_event"))[0] or "")[:256],
        origin=_origin(entry.get("origin"))[:256],
        valid_from=_time(entry.get("valid_from"))[0],
        valid_until=_time(entry.get("valid_until"))[0],
        ingested_at=_time(entry.get("ingested_at"))[0],
    )


def _base_trust(origin: str, legacy: Any) -> tuple[float, bool]:
    """(min(legacy trust or 1.0, ceiling of the origin class), legacy value was unusable)."""
    requested, problem = _number(legacy, 1.0, 0.0, 1.0)
    return round(min(requested, ceiling(origin)), 6), problem is not None


# --- trust (light pass) -----------------------------------------------------------------------------------


def _plan_trust(
    conn: sqlite3.Connection, names: dict[str, str], agent_override: str | None
) -> tuple[dict[str, tuple[float, Any]], dict[str, str]]:
    """Trust of every row not yet stored (id -> (trust, legacy value if the trust differs from it)), and the
    owner (agent id) of every id of the file that is already stored."""
    light: dict[str, tuple[str, float, list[str], Any]] = {}
    for r in _select(conn, names, ["id", "agent_id", "origin", "origin_trust", "derived_from"]):
        mid, changed = _text(r.get("id"))
        if mid is None or changed or not mid.strip() or len(mid) > _LIMITS["id"]:
            continue
        try:
            agent_id = agent_override or c.check_agent_id(_text(r.get("agent_id"))[0])
        except InvalidArgument:
            continue
        origin = _origin(r.get("origin")) if "origin" in names else IMPORT_ORIGIN
        legacy = r.get("origin_trust")
        base, _ = _base_trust(origin, legacy)
        derived = _id_list(r.get("derived_from"))[0] if "derived_from" in names else []
        light[mid] = (agent_id, base, derived, legacy)

    existing: dict[str, tuple[str, float]] = {}
    ids = list(light)
    for i in range(0, len(ids), CHUNK):
        for mid, owner, stored_trust in Memory.objects.filter(id__in=ids[i : i + CHUNK]).values_list(
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


def _existing_key_rows(keys: set[tuple[str, str, str]]) -> dict[tuple[str, str, str], list[Memory]]:
    out: dict[tuple[str, str, str], list[Memory]] = {}
    if not keys:
        return out
    agents = sorted({k[0] for k in keys})
    subjects = sorted({k[1] for k in keys})
    for i in range(0, len(subjects), CHUNK):
        qs = Memory.objects.filter(agent_id__in=agents, subject__in=subjects[i : i + CHUNK])
        for m in qs:
            key = (m.agent_id, m.subject or "", m.predicate or "")
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


# --- one batch --------------------------------------------------------------------------------------------


@dataclass
class _BatchOutcome:
    inserted: list[str] = field(default_factory=list)
    present: int = 0
    conflicts: list[str] = field(default_factory=list)
    facts: int = 0
    fact_writes: int = 0
    quarantined: int = 0
    agents: set[str] = field(default_factory=set)
    fact_agents: set[str] = field(default_factory=set)
    repairs: list[dict[str, Any]] = field(default_factory=list)


@c.write_transaction
def _apply_batch(rows: list[_Row], at: datetime) -> _BatchOutcome:
    out = _BatchOutcome()
    ids = [r.memory.id for r in rows]
    existing: dict[str, str] = {}
    for i in range(0, len(ids), CHUNK):
        existing.update(Memory.objects.filter(id__in=ids[i : i + CHUNK]).values_list("id", "agent_id"))
    new: list[_Row] = []
    for r in rows:
        owner = existing.get(r.memory.id)
        if owner is None:
            new.append(r)
        elif owner == r.memory.agent_id:
            out.present += 1
        else:
            out.conflicts.append(r.memory.id)
    if not new:
        return out

    by_key: dict[tuple[str, str, str], list[_Row]] = {}
    for r in new:
        key = r.key
        if key is not None:
            by_key.setdefault(key, []).append(r)
    for key in sorted(by_key):
        c.lock_key(*key)
    old_rows = _existing_key_rows(set(by_key))

    writes: list[FactWrite] = []
    to_repair: list[tuple[tuple[str, str, str], dict[str, dict[str, Any]]]] = []
    for key, krows in by_key.items():
        olds = old_rows.get(key, [])
        intervals = [
            (m.valid_from, m.valid_until)
            for m in olds
            if is_believed(m) and m.valid_from is not None and _believed_interval(m.valid_from, m.valid_until)
        ]
        intervals += [
            (r.valid_from, r.valid_until)
            for r in krows
            if r.state == FactWrite.STATE_BELIEVED
            and r.valid_from is not None
            and _believed_interval(r.valid_from, r.valid_until)
        ]
        overlap = _overlaps(intervals)
        key_writes = _writes_for(krows, natural=True)
        if olds or overlap or not _reproduces(krows, key_writes):
            key_writes = _writes_for(krows, natural=False)
        writes.extend(key_writes)
        for r in krows:
            r.memory.valid_from, r.memory.valid_until = r.valid_from, r.valid_until
        if overlap:
            before = _snapshot(olds + [r.memory for r in krows])
            for r in krows:
                if r.state == FactWrite.STATE_BELIEVED and r.valid_until is None:
                    # Inserted closed for a moment (the partial unique index allows one open row per key);
                    # the re-derivation below decides which row is open.
                    r.memory.valid_until = r.valid_from
            to_repair.append((key, before))

    Memory.objects.bulk_create([r.memory for r in new], batch_size=500)
    FactWrite.objects.bulk_create(writes, batch_size=500)
    for key, before in to_repair:
        agent_id, subject, predicate = key
        rederive_key(agent_id, subject, predicate, at=at)
        after = _snapshot(
            list(Memory.objects.filter(agent_id=agent_id, subject=subject, predicate=predicate))
        )
        out.repairs.append(
            {
                "agent_id": agent_id,
                "subject": subject,
                "predicate": predicate,
                "changes": _diff(before, after),
            }
        )

    out.inserted = [r.memory.id for r in new]
    out.facts = sum(1 for r in new if r.key is not None)
    out.fact_writes = len(writes)
    out.quarantined = sum(1 for r in new if r.memory.quarantined)
    out.agents = {r.memory.agent_id for r in new}
    out.fact_agents = {key[0] for key in by_key}
    for agent_id in sorted(out.agents):
        c.ensure_agent(agent_id, bump_generation=agent_id in out.fact_agents)
    return out


# --- the entry point --------------------------------------------------------------------------------------


@dataclass
class _Tally:
    """Counts and bounded samples for the report."""

    total: int = 0
    inserted: int = 0
    present: int = 0
    conflicts: int = 0
    invalid: int = 0
    facts: int = 0
    fact_writes: int = 0
    quarantined: int = 0
    trust_lowered: int = 0
    problem_rows: int = 0
    repaired_keys: int = 0
    agents: set[str] = field(default_factory=set)
    conflict_ids: list[str] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)
    repairs: list[dict[str, Any]] = field(default_factory=list)
    per_agent: dict[str, dict[str, int]] = field(default_factory=dict)

    def problem(self, row_id: str | None, problems: list[str]) -> None:
        self.problem_rows += 1
        if len(self.problems) < MAX_REPORTED:
            self.problems.append({"id": row_id, "problems": list(problems)})

    def conflict(self, row_id: str) -> None:
        self.conflicts += 1
        if len(self.conflict_ids) < MAX_REPORTED:
            self.conflict_ids.append(row_id)

    def count(self, agent_id: str, what: str) -> None:
        counts = self.per_agent.setdefault(agent_id, {"inserted": 0, "skipped": 0})
        counts[what] += 1

    def add(self, batch: list[_Row], outcome: _BatchOutcome) -> None:
        self.inserted += len(outcome.inserted)
        self.present += outcome.present
        for mid in outcome.conflicts:
            self.conflict(mid)
        self.facts += outcome.facts
        self.fact_writes += outcome.fact_writes
        self.quarantined += outcome.quarantined
        self.repaired_keys += len(outcome.repairs)
        self.repairs.extend(outcome.repairs[: max(0, MAX_REPORTED - len(self.repairs))])
        self.agents |= outcome.agents
        inserted = set(outcome.inserted)
        for r in batch:
            self.count(r.memory.agent_id, "inserted" if r.memory.id in inserted else "skipped")


def _batches(
    conn: sqlite3.Connection,
    names: dict[str, str],
    conv: _Converter,
    stored: dict[str, str],
    tally: _Tally,
) -> Iterator[list[_Row]]:
    """Converted new rows in batches of whole keys (rows ordered by key, batches cut only between keys).

    Ids found stored by the light pass (``stored``: id -> owner) are tallied without conversion: that keeps a
    second import of a large file cheap. ``_apply_batch`` checks existence again under its transaction.
    """
    order = ""
    if "subject" in names and "predicate" in names:
        order = " ORDER BY " + ", ".join(
            _quote(names[col]) for col in ("subject", "predicate", "agent_id", "id")
        )
    seen: set[str] = set()
    batch: list[_Row] = []
    last_key: tuple[str, str, str] | None = None
    for raw in _select(conn, names, [*BASE_COLUMNS, *LATER_COLUMNS], order):
        tally.total += 1
        owner = stored.get(raw["id"]) if isinstance(raw["id"], str) else None
        if owner is not None:
            try:
                agent_id = conv.agent(raw.get("agent_id"))
            except InvalidArgument:
                agent_id = None
            if agent_id == owner:
                tally.present += 1
                tally.count(owner, "skipped")
                continue
            if agent_id is not None:
                tally.conflict(raw["id"])
                tally.count(agent_id, "skipped")
                continue
        row = conv.convert(raw)
        if isinstance(row, _Skip):
            tally.invalid += 1
            tally.problem(row.row_id, [row.reason])
            continue
        if row.memory.id in seen:
            tally.invalid += 1
            tally.problem(row.memory.id, ["id: duplicate id in the file; the first row was kept"])
            continue
        seen.add(row.memory.id)
        if conv.problems:
            tally.problem(row.memory.id, conv.problems)
        if "origin_trust" in conv.raw:
            tally.trust_lowered += 1
        key = row.key
        if len(batch) >= BATCH_ROWS and (key is None or key != last_key):
            yield batch
            batch = []
        batch.append(row)
        last_key = key
    if batch:
        yield batch


def import_legacy(
    *, path: Any, actor: str = "system:import", agent_id: str | None = None
) -> LegacyImportResult:
    """Import a legacy ``memories`` SQLite file (SPEC M4). Idempotent: a second run inserts nothing.

    ``agent_id`` puts every row into that agent instead of the row's own ``agent_id``.
    Raises ``InvalidImportFile`` (code ``invalid_import_file``) before writing anything when the file is not
    an SQLite database with a ``memories`` table carrying the base columns. Each batch of whole keys commits
    on its own, so an interrupted import can simply be run again.
    """
    actor = c.check_actor(actor)
    override = c.check_agent_id(agent_id) if agent_id is not None else None
    conn = _open(path)
    tally = _Tally()
    try:
        columns = _columns(conn)
        names = {col.lower(): col for col in columns}
        known = set(BASE_COLUMNS) | set(LATER_COLUMNS)
        ignored = [col for col in columns if col.lower() not in known]
        trusts, stored = _plan_trust(conn, names, override)
        conv = _Converter(names, override, trusts)
        at = c.now()
        for batch in _batches(conn, names, conv, stored, tally):
            tally.add(batch, _apply_batch(batch, at))
    finally:
        conn.close()

    res = LegacyImportResult(
        inserted=tally.inserted,
        skipped=tally.total - tally.inserted,
        total=tally.total,
        columns=columns,
        already_present=tally.present,
        conflicts=tally.conflicts,
        invalid=tally.invalid,
        facts=tally.facts,
        fact_writes=tally.fact_writes,
        quarantined=tally.quarantined,
        trust_lowered=tally.trust_lowered,
        agents=sorted(tally.agents),
        ignored_columns=ignored,
        conflict_ids=tally.conflict_ids,
        problem_rows=tally.problem_rows,
        problems=tally.problems,
        repaired_keys=tally.repaired_keys,
        repairs=tally.repairs,
    )
    _audit(res, actor=actor, path=str(path), per_agent=tally.per_agent, override=override)
    return res


@c.write_transaction
def _audit(
    res: LegacyImportResult,
    *,
    actor: str,
    path: str,
    per_agent: dict[str, dict[str, int]],
    override: str | None,
) -> None:
    summary: dict[str, Any] = {
        "path": path[:500],
        "file_total": res.total,
        "file_inserted": res.inserted,
        "file_skipped": res.skipped,
        "already_present": res.already_present,
        "conflicts": res.conflicts,
        "invalid": res.invalid,
        "repaired_keys": res.repaired_keys,
        "trust_lowered": res.trust_lowered,
        "columns": res.columns,
    }
    targets = per_agent or {override or "": {"inserted": 0, "skipped": 0}}
    for agent_id, counts in sorted(targets.items()):
        details = {**summary, "inserted": counts["inserted"], "skipped": counts["skipped"]}
        c.audit(
            agent_id=agent_id,
            actor=actor,
            action="import",
            reason=f"legacy import of {Path(path).name}"[:500],
            **details,
        )
