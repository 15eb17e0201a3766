"""PostgreSQL: the full-text document function builds its CJK bigrams in linear time.

0002's ``memdesk_fts_doc`` took ``substr(t, i, 2)`` for every position i of the text. On UTF-8 text each substr
walks the string from its start, so the work grew with the square of the length: a fact whose subject was 512
copies of U+FDFA (18 characters each once NFKC-normalised) took about 100 s to write, a 4,000-character CJK
content about 4 s. This body splits the text into characters once and pairs each with the next (``lead``): the
same tokens (tests compare the two bodies on PostgreSQL), in linear time. The GIN index needs no rebuild, since
every document is unchanged. SQLite computes the document in Python (memory.engine.text) and is not affected.
"""

from django.db import migrations

_CJK_CLASS = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]"
_NORMALISED = "(SELECT normalize(lower(coalesce(c, '') || ' ' || coalesce(s, '') || ' ' || coalesce(o, '')), NFKC) AS t)"
_PUNCTUATION = r"regexp_replace(x.t, '[!-/:-@\[-`{-~_]+', ' ', 'g')"


def function_sql(name: str, bigrams: str) -> str:
    return f"""CREATE OR REPLACE FUNCTION {name}(c text, s text, o text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT to_tsvector('simple'::regconfig, {_PUNCTUATION} || ' ' || coalesce(({bigrams}), ''))
      FROM {_NORMALISED} AS x
    $$"""


LINEAR_BIGRAMS = f"""SELECT string_agg(z.ch || z.nx, ' ' ORDER BY z.i)
          FROM (SELECT u.ch, lead(u.ch) OVER (ORDER BY u.i) AS nx, u.i
                FROM unnest(string_to_array(x.t, NULL)) WITH ORDINALITY AS u(ch, i)) AS z
          WHERE z.ch ~ '^{_CJK_CLASS}$' AND z.nx ~ '^{_CJK_CLASS}$'"""

# 0002's body (quadratic), for the way back and for the test that both give the same documents.
QUADRATIC_BIGRAMS = f"""SELECT string_agg(substr(x.t, i, 2), ' ' ORDER BY i)
          FROM generate_series(1, greatest(length(x.t) - 1, 0)) AS i
          WHERE substr(x.t, i, 2) ~ '^{_CJK_CLASS}{{2}}$'"""


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(function_sql("memdesk_fts_doc", LINEAR_BIGRAMS), params=None)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(function_sql("memdesk_fts_doc", QUADRATIC_BIGRAMS), params=None)


class Migration(migrations.Migration):
    dependencies = [("memory", "0008_entity_alias_and_embedding")]
    operations = [migrations.RunPython(forward, backward)]
