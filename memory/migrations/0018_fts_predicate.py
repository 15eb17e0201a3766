"""Search finds predicates (issue 19 item 8): the full-text document of a row is its content, subject,
predicate and object (it was content, subject, object), so "deploy" or "deploy_target" finds the current deploy
target fact. ``_`` separates words in both indexes, so a predicate's parts are words of their own.

SQLite: the triggers call the four-argument ``memdesk_fts_doc`` (memory.db registers it) and the index is
rebuilt from the rows. PostgreSQL: a four-argument ``memdesk_fts_doc`` (the three-argument one over the subject
and predicate joined) and the stored ``fts_doc`` column recomputed from it, with its GIN index.
"""

from django.db import migrations

SQLITE_DOC = "memdesk_fts_doc({p}content, {p}subject, {p}predicate, {p}object)"
SQLITE_DOC_OLD = "memdesk_fts_doc({p}content, {p}subject, {p}object)"


def _sqlite(doc: str, columns: str) -> list[str]:
    new, old_id = doc.format(p="new."), "old.id"
    return [
        "DROP TRIGGER IF EXISTS memories_fts_ai",
        "DROP TRIGGER IF EXISTS memories_fts_au",
        f"""CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts(doc, memory_id) VALUES ({new}, new.id);
    END""",
        f"""CREATE TRIGGER memories_fts_au AFTER UPDATE OF {columns} ON memories BEGIN
        DELETE FROM memories_fts WHERE memory_id = {old_id};
        INSERT INTO memories_fts(doc, memory_id) VALUES ({new}, new.id);
    END""",
        "DELETE FROM memories_fts",
        f"INSERT INTO memories_fts(doc, memory_id) SELECT {doc.format(p='')}, id FROM memories",
    ]


SQLITE_FORWARD = _sqlite(SQLITE_DOC, "content, subject, predicate, object, id")
SQLITE_BACKWARD = _sqlite(SQLITE_DOC_OLD, "content, subject, object, id")

PG_FUNCTION = """CREATE OR REPLACE FUNCTION memdesk_fts_doc(c text, s text, p text, o text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT memdesk_fts_doc(c, coalesce(s, '') || ' ' || coalesce(p, ''), o)
    $$"""


def _pg_column(expression: str) -> list[str]:
    return [
        "DROP INDEX IF EXISTS memories_fts_doc_gin",
        "ALTER TABLE memories DROP COLUMN IF EXISTS fts_doc",
        f"ALTER TABLE memories ADD COLUMN fts_doc tsvector GENERATED ALWAYS AS ({expression}) STORED",
        "CREATE INDEX memories_fts_doc_gin ON memories USING gin (fts_doc)",
    ]


PG_FORWARD = [PG_FUNCTION, *_pg_column("memdesk_fts_doc(content, subject, predicate, object)")]
PG_BACKWARD = [
    *_pg_column("memdesk_fts_doc(content, subject, object)"),
    "DROP FUNCTION IF EXISTS memdesk_fts_doc(text, text, text, text)",
]


def forward(apps, schema_editor):
    sql = SQLITE_FORWARD if schema_editor.connection.vendor == "sqlite" else PG_FORWARD
    if schema_editor.connection.vendor in ("sqlite", "postgresql"):
        for statement in sql:
            schema_editor.execute(statement, params=None)


def backward(apps, schema_editor):
    sql = SQLITE_BACKWARD if schema_editor.connection.vendor == "sqlite" else PG_BACKWARD
    if schema_editor.connection.vendor in ("sqlite", "postgresql"):
        for statement in sql:
            schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [("memory", "0017_session_neighbours")]
    operations = [migrations.RunPython(forward, backward)]
