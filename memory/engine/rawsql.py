"""Thin raw-SQL helpers for the engine's hot write path.

Values are adapted as Django would store them (naive-UTC text for datetimes and JSON text on SQLite; aware
datetimes and ``Jsonb`` on PostgreSQL), by converters chosen once per model and database, not per call through
the fields' ``get_db_prep_save``. Statements go to the DB-API connection directly, skipping Django's cursor
wrapper. SQL is written with ``%s`` placeholders for both backends; no literal percent signs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from functools import cache, lru_cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, models

_PLAIN = {"CharField", "TextField", "FloatField", "IntegerField", "BigIntegerField", "BooleanField"}
_MISSING = object()
Converter = Callable[[Any], Any] | None


def db() -> Any:
    """The default connection wrapper, connected."""
    wrapper = connections[DEFAULT_DB_ALIAS]
    if wrapper.connection is None:
        wrapper.ensure_connection()
    return wrapper


@cache
def vendor() -> str:
    """The default database's vendor (fixed by the settings for the life of the process)."""
    return str(connections[DEFAULT_DB_ALIAS].vendor)


def sqlite_datetime(value: datetime | None) -> str | None:
    """What Django stores on SQLite for an aware datetime (USE_TZ): naive UTC, ``str(datetime)``."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("naive datetime reached the database layer")
    return _utc_text(value)


@lru_cache(maxsize=256)  # one write stores its time in several columns and statements
def _utc_text(value: datetime) -> str:
    return str(value.astimezone(UTC).replace(tzinfo=None))


def as_utc(value: Any) -> datetime | None:
    """A datetime column as a raw cursor returns it (aware on PostgreSQL; naive UTC, or its text, on SQLite)
    as an aware UTC datetime."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _sqlite_json(value: Any) -> str | None:
    if value is None:
        return None
    if not value and type(value) in (list, dict):
        return "[]" if type(value) is list else "{}"
    return json.dumps(value)


def _pg_json(value: Any) -> Any:
    from psycopg.types.json import Jsonb

    return None if value is None else Jsonb(value)


def _converter(field: models.Field[Any, Any], vendor: str) -> Converter:
    """The cheapest correct Python → database conversion of one field (None: the value as it is)."""
    kind = field.get_internal_type()
    if kind in _PLAIN:
        return None
    if kind == "DateTimeField":
        return sqlite_datetime if vendor == "sqlite" else None  # psycopg adapts aware datetimes itself
    if kind == "JSONField" and field.encoder is None:  # type: ignore[attr-defined]
        return _sqlite_json if vendor == "sqlite" else _pg_json
    conn = connections[DEFAULT_DB_ALIAS]
    return lambda v: field.get_db_prep_save(v, conn)


def convert(model: type[models.Model], name: str, value: Any) -> Any:
    """One value of ``model.name`` as the database stores it."""
    conv = _converters(model, vendor())[name]
    return value if conv is None else conv(value)


@cache
def _converters(model: type[models.Model], vendor: str) -> dict[str, Converter]:
    return {f.attname: _converter(f, vendor) for f in model._meta.concrete_fields}


@cache
def _insert_plan(
    model: type[models.Model], vendor: str
) -> tuple[str, tuple[tuple[str, Converter, Any], ...], tuple[str, ...]]:
    """The INSERT statement (one row), each column's attribute, converter and converted default, and the
    column names."""
    fields = tuple(
        f
        for f in model._meta.concrete_fields
        if not (f.primary_key and f.get_internal_type().endswith("AutoField"))
    )
    qn = connections[DEFAULT_DB_ALIAS].ops.quote_name
    cols = tuple(qn(f.column) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    sql = f"INSERT INTO {qn(model._meta.db_table)} ({', '.join(cols)}) VALUES ({marks})"
    plan = []
    for f in fields:
        conv = _converter(f, vendor)
        value = f.get_default()  # what Django would insert for a field left out
        plan.append((f.attname, conv, value if conv is None or value is None else conv(value)))
    return sql, tuple(plan), cols


@cache
def _qmark(sql: str) -> str:
    return sql.replace("%s", "?")


def run(sql: str, params: Sequence[Any]) -> Any:
    """Execute on the DB-API connection directly; returns the cursor."""
    wrapper = db()
    if wrapper.vendor == "sqlite":
        return wrapper.connection.execute(_qmark(sql), params)
    cur = wrapper.connection.cursor()
    cur.execute(sql, params)
    return cur


def run_many(sql: str, rows: Iterable[Sequence[Any]]) -> None:
    """``executemany``: one statement, many parameter rows."""
    wrapper = db()
    if wrapper.vendor == "sqlite":
        wrapper.connection.executemany(_qmark(sql), rows)
        return
    with wrapper.connection.cursor() as cur:
        cur.executemany(sql, list(rows))


def row_params(model: type[models.Model], values: dict[str, Any]) -> list[Any]:
    """One row's INSERT parameters, in ``insert``'s column order; fields left out take their default."""
    _, plan, _ = _insert_plan(model, vendor())
    get = values.get
    return [
        default if (v := get(name, _MISSING)) is _MISSING else v if conv is None or v is None else conv(v)
        for name, conv, default in plan
    ]


def insert(model: type[models.Model], values: dict[str, Any], *, returning_id: bool = False) -> Any:
    """INSERT one row given as attribute values; fields left out take their model default. With
    ``returning_id``, returns the new auto id."""
    wrapper = db()
    sql, _, _ = _insert_plan(model, wrapper.vendor)
    params = row_params(model, values)
    if wrapper.vendor == "sqlite":
        cur = wrapper.connection.execute(_qmark(sql), params)
        return cur.lastrowid if returning_id else None
    if not returning_id:
        run(sql, params)
        return None
    pk = wrapper.ops.quote_name(model._meta.pk.column)
    return run(f"{sql} RETURNING {pk}", params).fetchone()[0]


def insert_many(model: type[models.Model], rows: list[dict[str, Any]], *, returning_id: bool = False) -> Any:
    """INSERT many rows in multi-row statements; with ``returning_id``, the new auto ids in row order (ids are
    allocated in VALUES order, so the returned ids, sorted, line up with ``rows``)."""
    wrapper = db()
    sql, plan, _ = _insert_plan(model, wrapper.vendor)
    head, one = sql.split(" VALUES ", 1)
    per = max(1, min(500, 30_000 // len(plan)))  # SQLite's bound on parameters per statement
    pk = wrapper.ops.quote_name(model._meta.pk.column)
    ids: list[Any] = []
    for i in range(0, len(rows), per):
        part = rows[i : i + per]
        params = [p for values in part for p in row_params(model, values)]
        statement = f"{head} VALUES {', '.join([one] * len(part))}"
        if returning_id:
            found = run(f"{statement} RETURNING {pk}", params).fetchall()
            ids.extend(sorted(r[0] for r in found))
        else:
            run(statement, params)
    return ids if returning_id else None


def load_json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


def _field(model: type[models.Model], name: str) -> models.Field[Any, Any]:
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field), name
    return field


@cache
def _update_sql(model: type[models.Model], names: tuple[str, ...], vendor: str) -> str:
    qn = connections[DEFAULT_DB_ALIAS].ops.quote_name
    meta = model._meta
    sets = ", ".join(f"{qn(_field(model, n).column)} = %s" for n in names)
    return f"UPDATE {qn(meta.db_table)} SET {sets} WHERE {qn(meta.pk.column)} = %s"


def update(model: type[models.Model], pk: Any, **values: Any) -> int:
    """UPDATE one row by primary key; returns the number of rows changed."""
    v = vendor()
    convs = _converters(model, v)
    params = [
        value if (conv := convs[name]) is None or value is None else conv(value)
        for name, value in values.items()
    ]
    return int(run(_update_sql(model, tuple(values), v), [*params, pk]).rowcount)


def execute(sql: str, params: Sequence[Any]) -> int:
    return int(run(sql, params).rowcount)
