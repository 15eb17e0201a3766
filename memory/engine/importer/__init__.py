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

from .apply import LegacyImportResult, import_legacy
from .reading import BASE_COLUMNS, LATER_COLUMNS, InvalidImportFile

__all__ = ["BASE_COLUMNS", "LATER_COLUMNS", "InvalidImportFile", "LegacyImportResult", "import_legacy"]
