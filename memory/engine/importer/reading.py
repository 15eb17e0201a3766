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
    """The file, read-only, refusing what reading it could be made to run: SQLite's length limit caps every
    value, and the schema may not run functions it declares (``trusted_schema`` off)."""
    if not isinstance(path, str | Path) or not str(path).strip():
        raise InvalidImportFile("path must name a legacy SQLite file", field="path")
    p = Path(path)
    if not p.is_file():
        raise InvalidImportFile(f"no such file: {str(p)[:200]}", field="path")
    if p.stat().st_size > sizes.MAX_FILE_BYTES:
        raise InvalidImportFile(f"the file is larger than {sizes.MAX_FILE_BYTES} bytes", field="path")
    try:
        conn = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise InvalidImportFile(f"cannot open the file as SQLite: {exc}", field="path") from None
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, sizes.MAX_VALUE_BYTES)
    try:
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.execute("PRAGMA query_only = ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        problems = [str(r[0]) for r in conn.execute("PRAGMA quick_check(5)")]
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise InvalidImportFile(f"not an SQLite database: {exc}", field="path") from None
    if problems != ["ok"]:
        conn.close()
        raise InvalidImportFile(
            "the file is damaged (truncated or corrupt): " + "; ".join(problems)[:300], field="path"
        )
    return conn


def _columns(conn: sqlite3.Connection) -> list[str]:
    """The legacy table's column names (as spelled in the file). Raises when the table or a base column is
    missing, when ``memories`` is not a plain table (a view or a virtual table would run code of the file's
    choosing on every read), when it has generated columns, when the file holds views or triggers, or when the
    table has more rows than ``sizes.MAX_ROWS``."""
    objects = [(str(kind), str(name), str(sql or "")) for kind, name, sql in conn.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view', 'trigger')"
    )]  # fmt: skip
    tables = {name.lower(): sql for kind, name, sql in objects if kind == "table"}
    others = sorted(f"{kind} {name}" for kind, name, _ in objects if kind in ("view", "trigger"))
    if others:
        raise InvalidImportFile(
            f"the file holds views or triggers ({', '.join(others)[:200]}); only plain tables are read",
            field="path",
        )
    if "memories" not in tables:
        raise InvalidImportFile("the file has no `memories` table", field="path")
    if tables["memories"].lstrip().upper().startswith("CREATE VIRTUAL"):
        raise InvalidImportFile("`memories` is a virtual table; only plain tables are read", field="path")
    try:
        info = list(conn.execute('PRAGMA table_xinfo("memories")'))
        rows = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise InvalidImportFile(f"cannot read the `memories` table: {exc}", field="path") from None
    if any(row[6] for row in info):  # hidden: generated columns, computed on every read
        raise InvalidImportFile(
            "`memories` has generated columns; only stored columns are read", field="path"
        )
    if rows > sizes.MAX_ROWS:
        raise InvalidImportFile(
            f"`memories` has {rows} rows; at most {sizes.MAX_ROWS} are imported from one file", field="path"
        )
    cols = [str(row[1]) for row in info]
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
    try:
        cur = conn.execute(sql)
        while True:
            chunk = cur.fetchmany(sizes.BATCH_ROWS)
            if not chunk:
                return
            for values in chunk:
                yield dict(zip(present, values, strict=True))
    except sqlite3.DatabaseError as exc:  # e.g. a value over the length limit
        raise InvalidImportFile(f"cannot read the `memories` table: {exc}", field="path") from None
