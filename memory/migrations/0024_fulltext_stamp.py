"""The full-text stamp (issue 19: the memory search for a common word at 100k memories).

SQLite ranks every full-text match of a word by bm25 before it keeps the best (≈ 50 ms for "deploy" over 27k
matches at 100k memories). The ranking depends on the whole index (bm25 reads every document's length), so
``memory_fts_stamp`` holds one counter and random token that triggers move with every change to the indexed
text of any row (insert, delete, update of content, subject, predicate, object or id; the tiers' content cuts,
which set the index's own trigger aside, are updates of content too). ``retrieval`` keeps a ranking while it
stands. PostgreSQL ranks through its GIN index and keeps nothing: no table there.
"""

from django.db import migrations

BUMP = "UPDATE memory_fts_stamp SET stamp = stamp + 1, token = random() WHERE id = 1;"

SQLITE_FORWARD = [
    "CREATE TABLE IF NOT EXISTS memory_fts_stamp (id integer NOT NULL PRIMARY KEY CHECK (id = 1),"
    " stamp bigint NOT NULL, token bigint NOT NULL)",
    "INSERT OR IGNORE INTO memory_fts_stamp(id, stamp, token) VALUES (1, 1, random())",
    f"CREATE TRIGGER IF NOT EXISTS memories_fts_stamp_ai AFTER INSERT ON memories BEGIN {BUMP} END",
    f"CREATE TRIGGER IF NOT EXISTS memories_fts_stamp_ad AFTER DELETE ON memories BEGIN {BUMP} END",
    "CREATE TRIGGER IF NOT EXISTS memories_fts_stamp_au AFTER UPDATE OF content, subject, predicate, object, id ON memories"
    f" BEGIN {BUMP} END",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS memories_fts_stamp_ai",
    "DROP TRIGGER IF EXISTS memories_fts_stamp_ad",
    "DROP TRIGGER IF EXISTS memories_fts_stamp_au",
    "DROP TABLE IF EXISTS memory_fts_stamp",
]


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for statement in SQLITE_FORWARD:
            schema_editor.execute(statement, params=None)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for statement in SQLITE_BACKWARD:
            schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [("memory", "0023_memory_state_stamp")]
    operations = [migrations.RunPython(forward, backward)]
