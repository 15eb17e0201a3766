"""Reading the graph's input (SPEC G1, G5): one aggregated statement per scan, split into Arrow columns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from django.db import connection
from django.utils.dateparse import parse_datetime

from ..belief import believed_sql, not_retracted_sql
from .names import _encode_names, _entity_nodes


@dataclass(frozen=True)
class FactColumns:
    """The agent's current, believed facts as columns, and when that set next changes with time alone."""

    ids: Sequence[str] | Any  # a sequence, or an Arrow string array (the aggregated scan)
    subjects: Sequence[str] | Any
    objects: Sequence[str | None] | Any
    trusts: Sequence[float] | np.ndarray
    expires: datetime | None


# between the values of one aggregated column; a value holding it makes scan_facts read row by row
_SEP = "\x1f"


# SQLite: migration 0010. Not forced with INDEXED BY (a statement naming a missing index fails, and a later
# migration that rebuilds the table would recreate only the indexes Django knows); a test pins the plan to it.
GRAPH_SCAN_INDEX = "idx_mem_graph_scan"


def _fact_scan_sql(select: str) -> str:
    """The agent's believed fact rows that are current at ``at`` or start later (parameters: agent, at).
    On SQLite they are read from the covering partial index of migration 0010 alone (its WHERE is repeated
    here as literals, so that SQLite can prove it applies)."""
    return (
        f"SELECT {select} FROM memories m WHERE m.agent_id = %s AND m.subject IS NOT NULL"
        f" AND m.predicate IS NOT NULL AND {believed_sql('m')} AND (m.valid_until IS NULL OR m.valid_until > %s)"
    )


def _aggregate_sql() -> tuple[str, str, str]:
    """This database's string aggregate, the separator ``_SEP`` as SQL, and the trust column as text."""
    if connection.vendor == "postgresql":
        return "string_agg", "chr(31)", "m.origin_trust::text"
    return "group_concat", "char(31)", "m.origin_trust"


def _split_joined(joined: Sequence[str], separators: Sequence[str], count: int) -> list[Any] | None:
    """Aggregated columns split into Arrow arrays (in C), or None when one does not split into ``count``
    values (a value held its separator: the caller reads the rows instead)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = [
        pc.split_pattern(pa.array([value], pa.large_string()), separator).flatten()
        for value, separator in zip(joined, separators, strict=True)
    ]
    return columns if all(len(col) == count for col in columns) else None


def scan_facts(*, agent_id: str, at: datetime) -> FactColumns:
    """The graph's input in one statement: the agent's believed rows not ended at ``at`` as one row of
    aggregated columns (the database joins a million values into one string faster than the driver hands
    over a million rows), which Arrow splits in C. The graph expires at the first moment a fact starts or
    stops being current (world time moves without a write): the statement also returns the earliest end and
    the latest start. Only when some row starts later than ``at`` (a future-dated fact, rare) does a second,
    narrow read find those rows, which are then left out, and the earliest of their starts. When a value
    holds the separator (the pieces would not line up), the current rows are read one by one instead."""
    now = connection.ops.adapt_datetimefield_value(at)
    agg, sep, trust = _aggregate_sql()
    select = (
        f"COUNT(*), MIN(m.valid_until), MAX(m.valid_from), {agg}(m.id, {sep}), {agg}(m.subject, {sep}),"
        f" {agg}(COALESCE(m.object, ''), {sep}), {agg}({trust}, ',')"
    )
    with connection.cursor() as cur:
        cur.execute(_fact_scan_sql(select), [agent_id, now])
        count, ends, last_start, ids, subjects, objects, trusts = cur.fetchone()
        expires = _as_datetime(ends)
        later: list[str] = []
        if last_start is not None and _as_datetime(last_start) > at:  # type: ignore[operator]
            cur.execute(_fact_scan_sql("m.id, m.valid_from") + " AND m.valid_from > %s", [agent_id, now, now])
            rows = cur.fetchall()
            later = [mid for mid, _ in rows]
            starts = min((d for _, start in rows if (d := _as_datetime(start))), default=None)
            expires = min(expires, starts) if expires and starts else expires or starts
        if not count:
            return FactColumns((), (), (), (), expires)
        import pyarrow as pa
        import pyarrow.compute as pc

        columns = _split_joined([ids, subjects, objects, trusts], [_SEP, _SEP, _SEP, ","], count)
        del ids, subjects, objects, trusts
        if columns is not None:
            if later:
                keep = pc.invert(pc.is_in(columns[0], value_set=pa.array(later, pa.large_string())))
                columns = [col.filter(keep) for col in columns]
            mids, subs, objs, weights = (
                columns  # (a later row written after the first read is not among them)
            )
            if not len(mids):
                return FactColumns((), (), (), (), expires)
            return FactColumns(mids, subs, objs, weights.cast(pa.float64()).to_numpy(), expires)
        cur.execute(
            _fact_scan_sql("m.id, m.subject, m.object, m.origin_trust")
            + " AND (m.valid_from IS NULL OR m.valid_from <= %s)",
            [agent_id, now, now],
        )
        rows = cur.fetchall()
    if not rows:
        return FactColumns((), (), (), (), expires)
    mids, subs, objs, weights = zip(*rows, strict=True)
    return FactColumns(mids, subs, objs, weights, expires)


@dataclass(frozen=True)
class EdgeColumns:
    """The agent's current fact rows (for the curator's reads) as columns, newest first (timestamp, then id,
    descending): ids and predicates as Arrow arrays; subject and object as codes into ``names`` (normalised and
    alias-resolved entity names; -1 for none); trust and the quarantine flag as NumPy arrays."""

    ids: Any
    predicates: Any
    subjects: np.ndarray
    objects: np.ndarray
    trusts: np.ndarray
    quarantined: np.ndarray
    names: Any
    # the stored surface forms: each distinct raw name, its entity node, and the raw code of every subject
    # then every object (-1 for none), so a view can label an entity as it was written, not by its key
    raw_names: Any = None
    raw_nodes: np.ndarray | None = None
    raw_codes: np.ndarray | None = None

    def code(self, name: str) -> int:
        """The code of entity ``name``, or -2 (which no row has) if no row names it."""
        import pyarrow.compute as pc

        i = pc.index(self.names, name).as_py() if len(self.names) else -1
        return -2 if i < 0 else int(i)

    def name(self, code: int) -> str:
        return str(self.names[code].as_py())

    def predicate_is(self, predicate: str) -> np.ndarray:
        import pyarrow.compute as pc

        return np.asarray(pc.equal(self.predicates, predicate).to_numpy(zero_copy_only=False), dtype=bool)

    def predicate_names(self) -> list[str]:
        import pyarrow.compute as pc

        return sorted(pc.unique(self.predicates).to_pylist())


def _edge_columns(agent_id: str, at: datetime, *, aliases: dict[str, str]) -> EdgeColumns:
    """Every current fact row of the agent, quarantined ones included, read as one row of aggregated columns
    like ``scan_facts`` (row by row if a value holds the separator), sorted and name-resolved in Arrow."""
    import pyarrow as pa
    import pyarrow.compute as pc

    now = connection.ops.adapt_datetimefield_value(at)
    agg, sep, trust = _aggregate_sql()
    if connection.vendor == "postgresql":
        subject, flag = "m.subject", "m.quarantined::int::text"
        stamp = "to_char(m.timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')"  # sorts as text
    else:  # SQLite stores str(datetime), which sorts as text. ``+m.subject`` keeps the planner off the key
        # index (agent, subject, ...), whose order sends every row lookup to a random page; the (agent,
        # timestamp) index visits the rows about in the order they were written
        subject, flag, stamp = "+m.subject", "m.quarantined", "m.timestamp"
    where = (
        f" FROM memories m WHERE m.agent_id = %s AND {subject} IS NOT NULL AND m.predicate IS NOT NULL"
        f" AND {not_retracted_sql('m')}"
        " AND (m.valid_from IS NULL OR m.valid_from <= %s) AND (m.valid_until IS NULL OR m.valid_until > %s)"
    )
    texts = ["m.id", "m.subject", "COALESCE(m.object, '')", "m.predicate", stamp]
    select = ", ".join([*(f"{agg}({t}, {sep})" for t in texts), f"{agg}({trust}, ','), {agg}({flag}, ',')"])
    params = [agent_id, now, now]
    with connection.cursor() as cur:
        cur.execute(f"SELECT COUNT(*), {select}{where}", params)
        count, *joined = cur.fetchone()
        columns = _split_joined(joined, [_SEP] * len(texts) + [",", ","], count) if count else []
        del joined
        if columns is None:  # a value holds the separator: read the rows
            cur.execute(f"SELECT {', '.join(texts)}, m.origin_trust, m.quarantined{where}", params)
            rows = list(zip(*cur.fetchall(), strict=True))
            if rows:  # the driver's own types: a float for the trust, a bool for the flag
                *text, weight, flag_values = rows
                columns = [pa.array([str(v) for v in col], pa.large_string()) for col in text]
                columns += [
                    pa.array(weight, pa.float64()),
                    pa.array([int(v) for v in flag_values], pa.int8()),
                ]
            else:
                columns = []
    if not columns:
        columns = [pa.array([], pa.large_string())] * 7
    ids, subjects, objects, predicates, stamps, trusts, flags = columns
    order = pc.sort_indices(
        pa.table({"t": stamps, "i": ids}), sort_keys=[("t", "descending"), ("i", "descending")]
    )
    ids, subjects, objects, predicates, trusts, flags = (
        col.take(order) for col in (ids, subjects, objects, predicates, trusts, flags)
    )
    codes, distinct = _encode_names(subjects, objects)
    node_of_raw, names = _entity_nodes(distinct, aliases)
    nodes = node_of_raw[codes]
    n = len(ids)
    return EdgeColumns(
        ids=ids,
        predicates=predicates,
        subjects=nodes[:n],
        objects=nodes[n:],
        trusts=trusts.cast(pa.float64()).to_numpy(zero_copy_only=False),
        quarantined=flags.cast(pa.int8()).to_numpy(zero_copy_only=False).astype(bool),
        names=names,
        raw_names=distinct,
        raw_nodes=node_of_raw,
        raw_codes=codes,
    )


def _as_datetime(value: Any) -> datetime | None:
    """A datetime column read by a raw cursor: aware on PostgreSQL, naive-UTC text on SQLite."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        value = parse_datetime(str(value))
        if value is None:
            return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
