"""Applying: batches of whole keys, each written in its own transaction, the report and its audit records."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.models import FactWrite, Memory

from .. import common as c
from ..belief import is_believed
from ..guard.scan import scan_write
from ..temporal import rederive_key
from ..types import ImportResult, InvalidArgument
from . import sizes
from .convert import _Converter, _Row, _Skip
from .fields import ImportPolicy
from .plan import (
    _believed_interval,
    _diff,
    _existing_key_rows,
    _overlaps,
    _plan_trust,
    _reproduces,
    _snapshot,
    _writes_for,
)
from .reading import BASE_COLUMNS, LATER_COLUMNS, _columns, _open, _quote, _select

MAX_REPORTED = 200


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
    for i in range(0, len(ids), sizes.CHUNK):
        existing.update(Memory.objects.filter(id__in=ids[i : i + sizes.CHUNK]).values_list("id", "agent_id"))
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

    by_key: dict[tuple[str, str, str, str], list[_Row]] = {}
    for r in new:
        key = r.key
        if key is not None:
            by_key.setdefault(key, []).append(r)
    for agent_id, subject, predicate in sorted({key[:3] for key in by_key}):
        c.lock_key(agent_id, subject, predicate)
    old_rows = _existing_key_rows(set(by_key))

    writes: list[FactWrite] = []
    to_repair: list[tuple[tuple[str, str, str, str], dict[str, dict[str, Any]]]] = []
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
    changed: dict[str, set[str]] = {}  # per agent: the fact rows written or repaired (the graph's delta)
    for key, krows in by_key.items():
        changed.setdefault(key[0], set()).update(r.memory.id for r in krows)
    for key, before in to_repair:
        agent_id, subject, predicate, value_key = key
        changed[agent_id] |= rederive_key(agent_id, subject, predicate, at=at, value_key=value_key)
        after = _snapshot(
            list(
                Memory.objects.filter(
                    agent_id=agent_id, subject=subject, predicate=predicate, value_key=value_key
                )
            )
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
        c.ensure_agent(
            agent_id, bump_generation=agent_id in out.fact_agents, changed=changed.get(agent_id, set())
        )
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
    dropped: list[tuple[str, str, str | None, str, Any]] = field(default_factory=list)  # refused by the scan

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
    last_key: tuple[str, ...] | None = None
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
        if not isinstance(row, _Skip):
            row = _scanned(row, tally)
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
        key = row.key[:3] if row.key is not None else None  # all values of a (subject, predicate) together
        if len(batch) >= sizes.BATCH_ROWS and (key is None or key != last_key):
            yield batch
            batch = []
        batch.append(row)
        last_key = key
    if batch:
        yield batch


def _scanned(row: _Row, tally: _Tally) -> _Row | _Skip:
    """The injection scan of an agent write, on every imported row (issue 15 item 12): a blocked row is not
    imported, and is audited like a dropped write. Every window is scanned (an operator's import has no time
    budget)."""
    m = row.memory
    verdict = scan_write(m.content, m.subject, m.predicate, m.object, budget=None)
    if not verdict.blocked:
        return row
    tally.dropped.append((m.agent_id, m.id, m.subject, m.origin, verdict))
    return _Skip(m.id, "prompt_injection: " + ", ".join(verdict.rules))


def _check_map(agent_map: Any) -> dict[str, str] | None:
    if agent_map is None:
        return None
    if not isinstance(agent_map, dict) or not agent_map:
        raise InvalidArgument("agent_map must map file agents to target agents", field="agent_map")
    return {c.check_agent_id(src): c.check_agent_id(dst) for src, dst in agent_map.items()}


def import_legacy(
    *,
    path: Any,
    actor: str = "system:import",
    agent_id: str | None = None,
    agent_map: dict[str, str] | None = None,
    trust_origins: bool = False,
) -> LegacyImportResult:
    """Import a legacy ``memories`` SQLite file (SPEC M4). Idempotent: a second run inserts nothing.

    ``agent_id`` puts every row into that agent instead of the row's own ``agent_id``; ``agent_map``
    (``{file agent: target agent}``) imports only the rows of the agents it names (the others are refused and
    reported). Every row passes the checks of an agent's write: the size caps, entity names bounded once
    normalised, tags, and the injection scan (a blocked row is refused and audited). Trust is capped at the
    ``import`` class (0.7) unless ``trust_origins``. Raises ``InvalidImportFile`` (code
    ``invalid_import_file``) before writing anything when the file is not an undamaged SQLite database whose
    plain ``memories`` table carries the base columns (views, triggers, a virtual or generated ``memories``,
    and files over the row or size caps are refused). Each batch of whole keys commits on its own, so an
    interrupted import can simply be run again.
    """
    actor = c.check_actor(actor)
    override = c.check_agent_id(agent_id) if agent_id is not None else None
    if override is not None and agent_map is not None:
        raise InvalidArgument("give agent_id or agent_map, not both", field="agent_map")
    policy = ImportPolicy(
        agent_id=override, agent_map=_check_map(agent_map), trust_origins=bool(trust_origins)
    )
    conn = _open(path)
    tally = _Tally()
    try:
        columns = _columns(conn)
        names = {col.lower(): col for col in columns}
        known = set(BASE_COLUMNS) | set(LATER_COLUMNS)
        ignored = [col for col in columns if col.lower() not in known]
        trusts, stored = _plan_trust(conn, names, policy)
        conv = _Converter(names, policy, trusts)
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
    _audit(res, actor=actor, path=str(path), per_agent=tally.per_agent, override=override, tally=tally)
    return res


@c.write_transaction
def _audit(
    res: LegacyImportResult,
    *,
    actor: str,
    path: str,
    per_agent: dict[str, dict[str, int]],
    override: str | None,
    tally: _Tally,
) -> None:
    for agent_id, memory_id, subject, origin, verdict in tally.dropped:
        c.audit(
            agent_id=agent_id,
            actor=actor,
            action="prompt_injection",
            subject=subject,
            reason="import refused: " + ", ".join(verdict.rules),
            rules=list(verdict.rules),
            score=verdict.score,
            origin=origin,
            legacy_id=memory_id,
        )
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
