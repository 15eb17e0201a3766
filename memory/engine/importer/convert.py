"""Converting rows: one legacy row to an unsaved ``Memory`` plus its fact-write plan, or a reason to skip it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.models import LAYERS, FactWrite, Memory

from .. import common as c
from ..belief import is_retracted
from ..cardinality import value_key as key_value
from ..graph.names import MAX_OBJECT_CHARS, check_entity_length
from ..temporal import CONTINUATION_KEY, MAX_REAFFIRMED
from ..types import InvalidArgument
from .fields import (
    _LIMITS,
    _MAX_INT,
    IMPORT_ORIGIN,
    ImportPolicy,
    _base_trust,
    _flag,
    _id_list,
    _json,
    _number,
    _origin,
    _raw,
    _text,
    _time,
)


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
    def key(self) -> tuple[str, str, str, str] | None:
        """(agent_id, subject, predicate, value_key): the fact's key (SPEC B3)."""
        m = self.memory
        if self.state is None or m.subject is None or m.predicate is None:
            return None
        return (m.agent_id, m.subject, m.predicate, m.value_key)


@dataclass
class _Skip:
    row_id: str | None
    reason: str


class _Converter:
    """Turns one legacy row into an unsaved ``Memory`` (plus its fact-write plan) and collects problems."""

    def __init__(self, names: dict[str, str], policy: ImportPolicy, trusts: dict[str, tuple[float, Any]]):
        self.has = set(names)
        self.policy = policy
        self.trusts = trusts
        self.problems: list[str] = []
        self.raw: dict[str, Any] = {}

    def note(self, column: str, message: str, raw: Any = None, *, keep_raw: bool = True) -> None:
        self.problems.append(f"{column}: {message}")
        if keep_raw and raw is not None:
            self.raw[column] = _raw(raw)

    def agent(self, value: Any) -> str:
        return self.policy.target(value)

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
        size = len(content.encode("utf-8"))
        if size > c.MAX_CONTENT_BYTES:  # the cap of an agent write (issue 15 item 12)
            return _Skip(mid, f"content: {size} bytes; the limit is {c.MAX_CONTENT_BYTES} bytes")

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
        try:  # entity names are bounded once normalised, as for an agent's write
            check_entity_length(subject, field="subject")
            check_entity_length(texts["object"], field="object", limit=MAX_OBJECT_CHARS)
        except InvalidArgument as exc:
            return _Skip(mid, f"{exc.field}: {exc.message}")

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
        try:
            json_values["tags"] = c.check_tags(json_values["tags"])
        except InvalidArgument as exc:
            self.note("tags", f"{exc.message}; imported without tags", r.get("tags"))
            json_values["tags"] = []
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
        trust, legacy_trust = self.trusts.get(mid) or (
            _base_trust(origin, r.get("origin_trust"), self.policy.ceiling(origin))[0],
            None,
        )
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
            value_key=key_value(predicate, texts["object"]) if is_fact else "",
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
