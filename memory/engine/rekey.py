"""Re-keying after the predicate registry changes a predicate's cardinality (SPEC B3).

A fact's stored ``value_key`` follows the registry in force when it was written (``cardinality.value_key``).
When the registry later flips a predicate (single -> multi, or back), ``rekey_predicates`` finds every
``(agent, subject, predicate)`` whose stored keys disagree with the registry now, sets the new ``value_key`` on
its write log and rows, and re-derives the timelines (SPEC T2) under the new keys: single -> multi brings the
values that a later value had superseded back as current; multi -> single lets the latest value supersede the
others at its start. One audit event per agent records the predicates and keys re-keyed. Running it again
changes nothing (rows already keyed as the registry says are not touched).

It is also what brings rows written before migration 0016 (all keyed single-valued) onto the registry.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from memory.models import FactWrite, Memory

from . import common as c
from .belief import is_believed
from .cardinality import is_multi, value_key
from .temporal import CONTINUATION_KEY, rederive_key

__all__ = ["RekeyReport", "rekey_predicates"]


@dataclass
class RekeyReport:
    """What a re-key changed (or, with ``dry_run``, would change)."""

    keys: int = 0  # (agent, subject, predicate) groups re-keyed
    writes: int = 0  # write-log entries whose value_key changed
    rows: int = 0  # memory rows whose value_key changed
    changed: int = 0  # memory rows whose timeline changed on re-derivation
    predicates: dict[str, list[str]] = field(default_factory=dict)  # agent -> predicates re-keyed

    def as_dict(self) -> dict[str, object]:
        return {
            "keys": self.keys,
            "writes": self.writes,
            "rows": self.rows,
            "changed": self.changed,
            "predicates": {a: sorted(p) for a, p in sorted(self.predicates.items())},
        }


def _stale_groups(agent_id: str | None) -> dict[tuple[str, str, str], dict[str, str]]:
    """(agent, subject, predicate) -> {write id or row id (prefixed): the value_key it must have}, for the
    groups where anything is keyed otherwise than the registry says now."""
    writes = FactWrite.objects.all()
    rows = Memory.objects.filter(subject__isnull=False, predicate__isnull=False)
    if agent_id is not None:
        writes, rows = writes.filter(agent_id=agent_id), rows.filter(agent_id=agent_id)
    predicates = set(writes.values_list("predicate", flat=True).distinct()) | set(
        rows.values_list("predicate", flat=True).distinct()
    )
    multi = {p for p in predicates if is_multi(p)}
    stale: dict[tuple[str, str, str], dict[str, str]] = defaultdict(dict)
    # single-valued predicates: any non-empty key is stale (one indexed query per table)
    for model, prefix in ((writes, "w"), (rows, "m")):
        wrong = model.exclude(predicate__in=multi).exclude(value_key="")
        for pk, agent, subject, predicate in wrong.values_list("pk", "agent_id", "subject", "predicate"):
            stale[(agent, subject or "", predicate or "")][f"{prefix}{pk}"] = ""
    # multi-valued predicates: the normalised object decides (computed here, not in SQL)
    for model, prefix in ((writes, "w"), (rows, "m")):
        query = model.filter(predicate__in=multi).values_list(
            "pk", "agent_id", "subject", "predicate", "object", "value_key"
        )
        for pk, agent, subject, predicate, obj, stored in query.iterator(chunk_size=2000):
            want = value_key(predicate, obj, multi=True)
            if stored != want:
                stale[(agent, subject or "", predicate or "")][f"{prefix}{pk}"] = want
    return stale


def rekey_predicates(*, agent_id: str | None = None, actor: str, dry_run: bool = False) -> RekeyReport:
    """Bring every stored key (of one agent, or of all) onto the registry in force (see the module docstring).
    Each (agent, subject, predicate) is re-keyed in its own transaction under its key lock."""
    if agent_id is not None:
        agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    report = RekeyReport()
    stale = _stale_groups(agent_id)
    per_agent: dict[str, RekeyReport] = defaultdict(RekeyReport)
    for (agent, subject, predicate), wanted in sorted(stale.items()):
        part = per_agent[agent]
        part.keys += 1
        part.predicates.setdefault(agent, [])
        if predicate not in part.predicates[agent]:
            part.predicates[agent].append(predicate)
        if dry_run:
            part.writes += sum(1 for k in wanted if k.startswith("w"))
            part.rows += sum(1 for k in wanted if k.startswith("m"))
            continue
        n_writes, n_rows, changed = _rekey_group(agent, subject, predicate)
        part.writes += n_writes
        part.rows += n_rows
        part.changed += len(changed)
    for agent, part in sorted(per_agent.items()):
        report.keys += part.keys
        report.writes += part.writes
        report.rows += part.rows
        report.changed += part.changed
        report.predicates[agent] = sorted(part.predicates.get(agent, []))
        if not dry_run:
            c.audit(
                agent_id=agent,
                actor=actor,
                action="rekey_predicates",
                reason="the predicate registry's cardinality changed",
                keys=part.keys,
                writes=part.writes,
                rows=part.rows,
                changed=part.changed,
                predicates=sorted(part.predicates.get(agent, [])),
            )
    return report


@c.write_transaction
def _rekey_group(agent_id: str, subject: str, predicate: str) -> tuple[int, int, set[str]]:
    """Re-key one (agent, subject, predicate) under its lock (re-read there), then re-derive every value."""
    c.lock_key(agent_id, subject, predicate)
    t = c.now()
    multi = is_multi(predicate)
    by_want: dict[str, list[int]] = defaultdict(list)
    for pk, obj, stored in FactWrite.objects.filter(
        agent_id=agent_id, subject=subject, predicate=predicate
    ).values_list("pk", "object", "value_key"):
        want = value_key(predicate, obj, multi=multi)
        if stored != want:
            by_want[want].append(pk)
    rows = list(Memory.objects.filter(agent_id=agent_id, subject=subject, predicate=predicate))
    row_want: dict[str, list[str]] = defaultdict(list)
    for m in rows:
        want = value_key(predicate, m.object, multi=multi)
        if m.value_key != want:
            row_want[want].append(m.id)
    if not by_want and not row_want:
        return 0, 0, set()
    # Close the open believed rows that some write speaks for (re-derivation re-opens the right ones), so that
    # two rows meeting in one key never break the one-open-row constraint in between.
    spoken = set(
        FactWrite.objects.filter(agent_id=agent_id, subject=subject, predicate=predicate).values_list(
            "memory_id", flat=True
        )
    )
    opened = [
        m.id
        for m in rows
        if m.valid_until is None
        and ((m.metadata or {}).get(CONTINUATION_KEY) or m.id) in spoken
        and is_believed(m)
    ]
    for m in rows:
        if m.id in opened:
            Memory.objects.filter(id=m.id).update(valid_until=m.valid_from or t)
    for want, ids in by_want.items():
        FactWrite.objects.filter(pk__in=ids).update(value_key=want)
    for want, mids in row_want.items():
        Memory.objects.filter(id__in=mids).update(value_key=want)
    changed = rederive_key(agent_id, subject, predicate, at=t) | set(opened)
    c.bump_generation(agent_id, changed)
    return sum(map(len, by_want.values())), sum(map(len, row_want.values())), changed
