from __future__ import annotations

from django.db import models

CATEGORIES = ("safety", "hallucination", "factual", "capability", "behavioral")  # priority order (SPEC X1)


class Mistake(models.Model):
    """The mistake notebook (SPEC X1). ``resolution`` says how a mistake stopped being open."""

    id = models.CharField(primary_key=True, max_length=40)
    agent_id = models.CharField(max_length=128)
    timestamp = models.DateTimeField()
    category = models.CharField(max_length=32)
    session_id = models.CharField(max_length=256, null=True, blank=True)
    input_summary = models.TextField()
    agent_response_summary = models.TextField(blank=True, default="")
    what_went_wrong = models.TextField()
    ground_truth = models.TextField(null=True, blank=True)
    resolved = models.BooleanField(default=False)
    resolution = models.CharField(max_length=64, blank=True, default="")  # consolidated:<memory id> | evicted

    class Meta:
        db_table = "mistakes"
        indexes = [
            models.Index(fields=["agent_id", "resolved", "category"], name="idx_mistake_open"),
            models.Index(fields=["agent_id", "timestamp"], name="idx_mistake_ts"),
        ]
