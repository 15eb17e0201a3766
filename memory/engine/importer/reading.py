"""Reading the legacy file: open it read-only, check its ``memories`` table, select rows by our column names."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..types import InvalidArgument
from . import sizes

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


class InvalidImportFile(InvalidArgument):
    """The file is not an SQLite database with a usable legacy ``memories`` table; nothing was written."""

    code = "invalid_import_file"


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
        chunk = cur.fetchmany(sizes.BATCH_ROWS)
        if not chunk:
            return
        for values in chunk:
            yield dict(zip(present, values, strict=True))
