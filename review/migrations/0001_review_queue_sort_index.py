"""The review queue's orders read from indexes, so a page's first query stops after one page instead of sorting
every pending item: lowest confidence first (then soonest expiry, the default) and highest impact first.

The table belongs to the memory app (``ReviewItem``); these indexes serve only the review pages, so they live
with them. Plain SQL both backends accept; the model's state is unchanged.
"""

from django.db import migrations

INDEXES = {
    "idx_review_queue_confidence": "agent_id, status, confidence, expires_at",
    "idx_review_queue_impact": "agent_id, status, impact DESC, confidence, expires_at",
}


class Migration(migrations.Migration):
    dependencies = [("memory", "0011_review_and_dream")]

    operations = [
        migrations.RunSQL(
            sql=f"CREATE INDEX IF NOT EXISTS {name} ON review_items ({columns})",
            reverse_sql=f"DROP INDEX IF EXISTS {name}",
        )
        for name, columns in INDEXES.items()
    ]
