"""Thin raw-SQL helpers for the engine's hot write path (values adapted by the models' own fields)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections, models

_PLAIN = {"CharField", "TextField", "FloatField", "IntegerField", "BigIntegerField", "BooleanField"}


def _adapter(field: models.Field) -> Any:
    """The cheapest correct Python → database conversion for one field on this connection."""
    kind = field.get_internal_type()
    if kind in _PLAIN:
        return None
    if kind == "DateTimeField":
        if connection.vendor == "sqlite":
            return _sqlite_datetime  # what Django stores (USE_TZ): naive UTC, str(datetime)
        adapt = connection.ops.adapt_datetimefield_value
        return lambda v: None if v is None else adapt(v)
    return lambda v: field.get_db_prep_save(v, connection)


def _sqlite_datetime(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("naive datetime reached the database layer")
    return str(value.astimezone(UTC).replace(tzinfo=None))


@cache
def _insert_plan(model: type[models.Model], vendor: str) -> tuple[str, tuple[tuple[str, Any], ...]]:
    fields = tuple(
        f
        for f in model._meta.concrete_fields
        if not (f.primary_key and f.get_internal_type().endswith("AutoField"))
    )
    qn = connection.ops.quote_name
    cols = ", ".join(qn(f.column) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    sql = f"INSERT INTO {qn(model._meta.db_table)} ({cols}) VALUES ({marks})"
    return sql, tuple((f.attname, _adapter(f)) for f in fields)


@cache
def _qmark(sql: str) -> str:
    return sql.replace("%s", "?")


def run(sql: str, params: list[Any] | tuple[Any, ...]) -> Any:
    """Execute on the DB-API cursor directly (skipping Django's wrapper on the hot path); returns the cursor.

    SQL is written with ``%s`` placeholders for both backends; no literal percent signs.
    """
    db = connections[DEFAULT_DB_ALIAS]
    db.ensure_connection()
    raw = db.connection
    if db.vendor == "sqlite":
        return raw.execute(_qmark(sql), params)
    cur = raw.cursor()
    cur.execute(sql, params)
    return cur


def _field(model: type[models.Model], name: str) -> models.Field[Any, Any]:
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field), name
    return field


def insert(model: type[models.Model], values: dict[str, Any], *, returning_id: bool = False) -> Any:
    """INSERT one row given as attribute values; fields left out take their model default. With
    ``returning_id``, returns the new auto id."""
    sql, plan = _insert_plan(model, connection.vendor)
    params = []
    for name, adapt in plan:
        if name in values:
            v = values[name]
        else:
            v = _field(model, name).get_default()
        params.append(v if adapt is None else adapt(v))
    if not returning_id:
        run(sql, params)
        return None
    if connection.vendor == "sqlite":
        return run(sql, params).lastrowid
    return run(sql + f" RETURNING {connection.ops.quote_name(model._meta.pk.column)}", params).fetchone()[0]


def prep(model: type[models.Model], field: str, value: Any) -> Any:
    return _field(model, field).get_db_prep_save(value, connection)


def load_json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


def update(model: type[models.Model], pk: Any, **values: Any) -> int:
    """UPDATE one row by primary key; returns the number of rows changed."""
    qn = connection.ops.quote_name
    meta = model._meta
    cols = [_field(model, name) for name in values]
    sets = ", ".join(f"{qn(f.column)} = %s" for f in cols)
    params = [f.get_db_prep_save(values[f.name], connection) for f in cols]
    return int(
        run(f"UPDATE {qn(meta.db_table)} SET {sets} WHERE {qn(meta.pk.column)} = %s", [*params, pk]).rowcount
    )


def execute(sql: str, params: list[Any]) -> int:
    return int(run(sql, params).rowcount)
