"""Full-text search: an FTS5 table kept in sync by triggers on SQLite; an expression GIN index on PostgreSQL.

Both index the same document (content, subject, object), with CJK runs as bigrams (memory.engine.text).
"""

from django.db import migrations

SQLITE_FORWARD = [
    """CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
        doc, memory_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts(doc, memory_id)
        VALUES (memdesk_fts_doc(new.content, new.subject, new.object), new.id);
    END""",
    """CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN
        DELETE FROM memories_fts WHERE memory_id = old.id;
    END""",
    """CREATE TRIGGER memories_fts_au AFTER UPDATE OF content, subject, object, id ON memories BEGIN
        DELETE FROM memories_fts WHERE memory_id = old.id;
        INSERT INTO memories_fts(doc, memory_id)
        VALUES (memdesk_fts_doc(new.content, new.subject, new.object), new.id);
    END""",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS memories_fts_au",
    "DROP TRIGGER IF EXISTS memories_fts_ad",
    "DROP TRIGGER IF EXISTS memories_fts_ai",
    "DROP TABLE IF EXISTS memories_fts",
]

# Same tokenisation as memory.engine.text.document: NFKC + lower-case, ASCII punctuation as spaces, and every
# pair of adjacent CJK characters as an extra token.
PG_FORWARD = [
    r"""CREATE OR REPLACE FUNCTION memdesk_fts_doc(c text, s text, o text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT to_tsvector('simple'::regconfig,
        regexp_replace(x.t, '[!-/:-@\[-`{-~_]+', ' ', 'g') || ' ' || coalesce((
          SELECT string_agg(substr(x.t, i, 2), ' ' ORDER BY i)
          FROM generate_series(1, greatest(length(x.t) - 1, 0)) AS i
          WHERE substr(x.t, i, 2) ~ '^[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]{2}$'
        ), ''))
      FROM (SELECT normalize(lower(coalesce(c, '') || ' ' || coalesce(s, '') || ' ' || coalesce(o, '')), NFKC)
            AS t) AS x
    $$""",
    "CREATE INDEX IF NOT EXISTS memories_fts_gin ON memories USING gin (memdesk_fts_doc(content, subject, object))",
]
PG_BACKWARD = [
    "DROP INDEX IF EXISTS memories_fts_gin",
    "DROP FUNCTION IF EXISTS memdesk_fts_doc(text, text, text)",
]


def forward(apps, schema_editor):
    conn = schema_editor.connection
    statements = (
        SQLITE_FORWARD if conn.vendor == "sqlite" else PG_FORWARD if conn.vendor == "postgresql" else []
    )
    for sql in statements:
        schema_editor.execute(sql, params=None)
    if conn.vendor == "sqlite":
        schema_editor.execute(
            "INSERT INTO memories_fts(doc, memory_id) "
            "SELECT memdesk_fts_doc(content, subject, object), id FROM memories",
            params=None,
        )


def backward(apps, schema_editor):
    conn = schema_editor.connection
    statements = (
        SQLITE_BACKWARD if conn.vendor == "sqlite" else PG_BACKWARD if conn.vendor == "postgresql" else []
    )
    for sql in statements:
        schema_editor.execute(sql, params=None)


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial")]
    operations = [migrations.RunPython(forward, backward)]
