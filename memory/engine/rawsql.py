"""Thin raw-SQL helpers for the engine's hot write path (values adapted by the models' own fields)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from django.db import connection, models


@cache
def _insert_sql(model: type[models.Model]) -> tuple[str, tuple[models.Field, ...]]:
    fields = tuple(
        f
        for f in model._meta.concrete_fields
        if not (f.primary_key and f.get_internal_type().endswith("AutoField"))
    )
    qn = connection.ops.quote_name
    cols = ", ".join(qn(f.column) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    return f"INSERT INTO {qn(model._meta.db_table)} ({cols}) VALUES ({marks})", fields


def insert(obj: models.Model) -> None:
    """INSERT one model instance (no signals, no returning of an auto id)."""
    sql, fields = _insert_sql(type(obj))
    params = [f.get_db_prep_save(getattr(obj, f.attname), connection) for f in fields]
    with connection.cursor() as cur:
        cur.execute(sql, params)


def prep(model: type[models.Model], field: str, value: Any) -> Any:
    return model._meta.get_field(field).get_db_prep_save(value, connection)


def load_json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value
