"""PostgreSQL: the full-text document is stored, never recomputed by a query; documents are capped once
normalised (issue 15 item 3).

Until now the GIN index was on the expression ``memdesk_fts_doc(content, subject, object)``. On an agent with
few rows the planner reads the agent's rows by ``agent_id`` and evaluates that expression for every row (the
filter and ``ts_rank``): a 64 KB row of U+FDFA (18 characters each once normalised) cost ~0.3 s per row per
search. The document is now a stored generated column, ``fts_doc``, computed once when the row is written, with
its own GIN index; searches read the column. The function cuts the normalised text at ``MAX_DOC_CHARS``
(memory.engine.text cuts SQLite's documents at the same length), so one row's document costs a bounded amount
of work however NFKC lengthens it. ASCII text never lengthens, so no document of text a write accepts as plain
ASCII is cut. SQLite is unchanged here (its FTS5 table already stores the document).
"""

from django.db import migrations

MAX_DOC_CHARS = 72_000  # memory.engine.text.MAX_DOC_CHARS

_CJK_CLASS = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]"
_PUNCTUATION = r"regexp_replace(x.t, '[!-/:-@\[-`{-~_]+', ' ', 'g')"
_BIGRAMS = f"""SELECT string_agg(z.ch || z.nx, ' ' ORDER BY z.i)
          FROM (SELECT u.ch, lead(u.ch) OVER (ORDER BY u.i) AS nx, u.i
                FROM unnest(string_to_array(x.t, NULL)) WITH ORDINALITY AS u(ch, i)) AS z
          WHERE z.ch ~ '^{_CJK_CLASS}$' AND z.nx ~ '^{_CJK_CLASS}$'"""


def function_sql(cap: int | None) -> str:
    normalised = "normalize(lower(coalesce(c, '') || ' ' || coalesce(s, '') || ' ' || coalesce(o, '')), NFKC)"
    if cap is not None:
        normalised = f"left({normalised}, {cap})"
    return f"""CREATE OR REPLACE FUNCTION memdesk_fts_doc(c text, s text, o text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT to_tsvector('simple'::regconfig, {_PUNCTUATION} || ' ' || coalesce(({_BIGRAMS}), ''))
      FROM (SELECT {normalised} AS t) AS x
    $$"""


FORWARD = [
    "DROP INDEX IF EXISTS memories_fts_gin",
    function_sql(MAX_DOC_CHARS),
    "ALTER TABLE memories ADD COLUMN fts_doc tsvector"
    " GENERATED ALWAYS AS (memdesk_fts_doc(content, subject, object)) STORED",
    "CREATE INDEX memories_fts_doc_gin ON memories USING gin (fts_doc)",
]
BACKWARD = [
    "DROP INDEX IF EXISTS memories_fts_doc_gin",
    "ALTER TABLE memories DROP COLUMN IF EXISTS fts_doc",
    function_sql(None),
    "CREATE INDEX IF NOT EXISTS memories_fts_gin ON memories USING gin (memdesk_fts_doc(content, subject, object))",
]


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in FORWARD:
            schema_editor.execute(sql, params=None)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in BACKWARD:
            schema_editor.execute(sql, params=None)


class Migration(migrations.Migration):
    dependencies = [("memory", "0012_discovery")]
    operations = [migrations.RunPython(forward, backward)]
