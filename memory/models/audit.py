from __future__ import annotations

from django.db import models


class AuditEvent(models.Model):
    """Append-only record of every engine action that people need to answer for."""

    created_at = models.DateTimeField(db_index=True)
    agent_id = models.CharField(max_length=128, db_index=True)
    actor = models.CharField(max_length=256)
    action = models.CharField(max_length=64, db_index=True)
    memory_id = models.CharField(max_length=40, null=True, blank=True, db_index=True)
    subject = models.CharField(max_length=512, null=True, blank=True)
    reason = models.TextField(blank=True, default="")
    details = models.JSONField(default=dict)

    class Meta:
        db_table = "audit_events"
        ordering = ["-created_at", "-id"]
