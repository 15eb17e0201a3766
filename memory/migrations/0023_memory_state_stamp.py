"""The agent's state stamp (issue 19: the agents list and agent home at 100k memories).

``memory_state_stamp`` holds, per agent, a counter and a random token that move with every change to the agent's
rows that a count of them can see: a row inserted or deleted, or an update naming one of the columns the counts
read (agent, layer, quarantined, invalidated_by_event, valid_from, valid_until, subject). Database triggers move
it, so every write path does, whatever code runs it; ``engine.state_memo`` keeps counts while it stands. The
random token makes a stamp that a rollback took back differ from the next one that reaches the same counter.
"""

from django.db import migrations

COLUMNS = "agent_id, layer, quarantined, invalidated_by_event, valid_from, valid_until, subject"

TABLE = """CREATE TABLE IF NOT EXISTS memory_state_stamp (
    agent_id varchar(128) NOT NULL PRIMARY KEY, stamp bigint NOT NULL, token bigint NOT NULL)"""


def _sqlite_bump(row: str) -> str:
    return (
        f"INSERT INTO memory_state_stamp(agent_id, stamp, token) VALUES ({row}.agent_id, 1, random())"
        " ON CONFLICT(agent_id) DO UPDATE SET stamp = stamp + 1, token = random();"
    )


SQLITE_FORWARD = [
    TABLE,
    f"""CREATE TRIGGER IF NOT EXISTS memories_state_ai AFTER INSERT ON memories BEGIN {_sqlite_bump("new")} END""",
    f"""CREATE TRIGGER IF NOT EXISTS memories_state_ad AFTER DELETE ON memories BEGIN {_sqlite_bump("old")} END""",
    f"""CREATE TRIGGER IF NOT EXISTS memories_state_au AFTER UPDATE OF {COLUMNS} ON memories BEGIN
        {_sqlite_bump("old")}
        {_sqlite_bump("new")}
    END""",
    "INSERT OR IGNORE INTO memory_state_stamp(agent_id, stamp, token)"
    " SELECT agent_id, 1, random() FROM (SELECT DISTINCT agent_id FROM memories)",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS memories_state_ai",
    "DROP TRIGGER IF EXISTS memories_state_ad",
    "DROP TRIGGER IF EXISTS memories_state_au",
    "DROP TABLE IF EXISTS memory_state_stamp",
]

PG_TOKEN = "(floor(random() * 9.2e18) - 4.6e18)::bigint"
PG_FORWARD = [
    TABLE,
    f"""CREATE OR REPLACE FUNCTION memdesk_state_bump() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN
        INSERT INTO memory_state_stamp(agent_id, stamp, token) VALUES (OLD.agent_id, 1, {PG_TOKEN})
          ON CONFLICT (agent_id) DO UPDATE SET stamp = memory_state_stamp.stamp + 1, token = EXCLUDED.token;
      END IF;
      IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.agent_id IS DISTINCT FROM OLD.agent_id) THEN
        INSERT INTO memory_state_stamp(agent_id, stamp, token) VALUES (NEW.agent_id, 1, {PG_TOKEN})
          ON CONFLICT (agent_id) DO UPDATE SET stamp = memory_state_stamp.stamp + 1, token = EXCLUDED.token;
      END IF;
      RETURN NULL;
    END $$""",
    "DROP TRIGGER IF EXISTS memories_state_stamp ON memories",
    f"""CREATE TRIGGER memories_state_stamp AFTER INSERT OR DELETE OR UPDATE OF {COLUMNS} ON memories
        FOR EACH ROW EXECUTE FUNCTION memdesk_state_bump()""",
    f"INSERT INTO memory_state_stamp(agent_id, stamp, token) SELECT agent_id, 1, {PG_TOKEN}"
    " FROM (SELECT DISTINCT agent_id FROM memories) d ON CONFLICT (agent_id) DO NOTHING",
]
PG_BACKWARD = [
    "DROP TRIGGER IF EXISTS memories_state_stamp ON memories",
    "DROP FUNCTION IF EXISTS memdesk_state_bump()",
    "DROP TABLE IF EXISTS memory_state_stamp",
]


def _run(schema_editor, sqlite: list[str], pg: list[str]) -> None:
    vendor = schema_editor.connection.vendor
    for statement in {"sqlite": sqlite, "postgresql": pg}.get(vendor, []):
        schema_editor.execute(statement, params=None)


def forward(apps, schema_editor):
    _run(schema_editor, SQLITE_FORWARD, PG_FORWARD)


def backward(apps, schema_editor):
    _run(schema_editor, SQLITE_BACKWARD, PG_BACKWARD)


class Migration(migrations.Migration):
    dependencies = [("memory", "0022_fact_write_ranks_as")]
    operations = [migrations.RunPython(forward, backward)]
