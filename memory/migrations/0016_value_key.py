"""SPEC B3: the predicate registry's cardinality reaches the write path. A fact's key becomes
``(agent_id, subject, predicate, value_key)``: ``value_key`` is "" for single-valued predicates and the
normalised object for multi-valued ones (``memory.engine.cardinality``), on ``memories`` and on the write log,
and it joins every index over a key and the one-open-believed-row constraint.

The columns are added with a plain ``ALTER TABLE ... ADD COLUMN ... DEFAULT ''`` on both databases (the ORM
would rebuild the SQLite table, dropping the full-text triggers of 0002 and the scan index of 0010). Rows stored
before this migration keep ``value_key = ''`` (the single-valued behaviour they were written under) until
``manage.py rekey_predicates`` re-derives the keys of multi-valued predicates (audited; the same command runs
after a registry change flips a predicate's cardinality)."""

from django.db import migrations, models
from django.db.models import Q

RETRACT_EVENTS = ("origin_purge", "quarantine_reject", "curator_retract")


def _add_column(table: str) -> migrations.RunSQL:
    return migrations.RunSQL(
        f"ALTER TABLE {table} ADD COLUMN value_key varchar(256) NOT NULL DEFAULT ''",
        f"ALTER TABLE {table} DROP COLUMN value_key",
    )


class Migration(migrations.Migration):
    dependencies = [("memory", "0015_graph_generation_changes")]

    operations = [
        migrations.RemoveConstraint(model_name="memory", name="uniq_mem_open_believed_key"),
        migrations.RemoveIndex(model_name="factwrite", name="idx_fw_key_state_from"),
        migrations.RemoveIndex(model_name="memory", name="idx_mem_open_key"),
        migrations.RemoveIndex(model_name="memory", name="idx_mem_key_from"),
        migrations.SeparateDatabaseAndState(
            database_operations=[_add_column("memories"), _add_column("memory_fact_writes")],
            state_operations=[
                migrations.AddField(
                    model_name="factwrite",
                    name="value_key",
                    field=models.CharField(blank=True, default="", max_length=256),
                ),
                migrations.AddField(
                    model_name="memory",
                    name="value_key",
                    field=models.CharField(blank=True, default="", max_length=256),
                ),
            ],
        ),
        migrations.AddIndex(
            model_name="factwrite",
            index=models.Index(
                fields=["agent_id", "subject", "predicate", "value_key", "state", "req_from"],
                name="idx_fw_vkey_state_from",
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=Q(valid_until__isnull=True),
                fields=["agent_id", "subject", "predicate", "value_key"],
                name="idx_mem_open_value_key",
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                fields=["agent_id", "subject", "predicate", "value_key", "valid_from"],
                name="idx_mem_vkey_from",
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.UniqueConstraint(
                condition=Q(valid_until__isnull=True, quarantined=False, subject__isnull=False)
                & (Q(invalidated_by_event__isnull=True) | ~Q(invalidated_by_event__in=RETRACT_EVENTS)),
                fields=("agent_id", "subject", "predicate", "value_key"),
                name="uniq_mem_open_believed_vkey",
            ),
        ),
    ]
