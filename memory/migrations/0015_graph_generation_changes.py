"""The graph generation's change log (SPEC G5): ``graph_generation.changes``, the memory rows each of the last
bumps changed, written by the bump's own UPDATE, so a cached graph can be brought forward by the delta of the
writes instead of a full rebuild (``memory.engine.graph.delta``)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory", "0014_insights")]

    operations = [
        migrations.AddField(
            model_name="graphgeneration",
            name="changes",
            field=models.TextField(blank=True, null=True),
        ),
    ]
