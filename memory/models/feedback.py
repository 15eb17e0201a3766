from __future__ import annotations

from django.db import models

VERDICTS = ("CORRECT", "INCORRECT", "AMBIGUOUS")


class Feedback(models.Model):
    """An agent's verdict on one of its memories or on one of its searches (SPEC A3 ``memory_feedback``)."""

    TARGET_MEMORY = "memory"
    TARGET_QUERY = "query"

    agent_id = models.CharField(max_length=128)
    created_at = models.DateTimeField()
    target_type = models.CharField(max_length=16)  # memory | query
    memory_id = models.CharField(max_length=40, null=True, blank=True)
    query_id = models.CharField(max_length=40, null=True, blank=True)
    verdict = models.CharField(max_length=16)  # CORRECT | INCORRECT | AMBIGUOUS
    note = models.TextField(blank=True, default="")
    actor = models.CharField(max_length=256)

    class Meta:
        db_table = "memory_feedback"
        indexes = [
            models.Index(fields=["agent_id", "created_at"], name="idx_feedback_agent_ts"),
            models.Index(fields=["agent_id", "memory_id"], name="idx_feedback_memory"),
            models.Index(fields=["agent_id", "query_id"], name="idx_feedback_query"),
        ]
