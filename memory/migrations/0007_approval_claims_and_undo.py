from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0006_guard_and_approvals"),
    ]

    operations = [
        migrations.AddField(
            model_name="approvalrequest",
            name="claimed_by",
            field=models.CharField(blank=True, default="", max_length=256),
        ),
        migrations.AddField(
            model_name="approvalrequest",
            name="claimed_until",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="approvalrequest",
            name="undo_until",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="approvalrequest",
            name="undo_state",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
