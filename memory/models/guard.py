from __future__ import annotations

from django.db import models
from django.db.models import Q


class GuardCounter(models.Model):
    """SPEC P5: the persistent sliding-window counter of one (agent, origin, subject).

    ``hits`` holds ``[ingested_at ISO, write id]`` pairs inside the window; the row is also the lock that makes
    the count atomic (SELECT … FOR UPDATE on PostgreSQL, the IMMEDIATE transaction on SQLite).
    """

    agent_id = models.CharField(max_length=128)
    origin = models.CharField(max_length=256)
    subject = models.CharField(max_length=512)
    hits = models.JSONField(default=list)
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "guard_counters"
        constraints = [
            models.UniqueConstraint(fields=["agent_id", "origin", "subject"], name="uniq_guard_counter"),
        ]


class ApprovalRequest(models.Model):
    """SPEC P8: a human decision the engine waits for (today: one quarantined burst)."""

    PENDING, APPROVED, DENIED, EXPIRED = "pending", "approved", "denied", "expired"
    STATUSES = [(s, s) for s in (PENDING, APPROVED, DENIED, EXPIRED)]
    KNOWLEDGE_QUARANTINE = "knowledge_quarantine"

    agent_id = models.CharField(max_length=128)
    action_kind = models.CharField(max_length=64, default=KNOWLEDGE_QUARANTINE)
    status = models.CharField(max_length=16, choices=STATUSES, default=PENDING)
    origin = models.CharField(max_length=256)
    subject = models.CharField(max_length=512)
    payload = models.JSONField(default=dict)  # origin, subject, ids, write_ids, snippet, reason
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    remind_at = models.DateTimeField()
    reminded_at = models.DateTimeField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=256, blank=True, default="")
    decision_reason = models.TextField(blank=True, default="")
    # a reviewer's claim while working on the batch: others are refused until it expires (no job needed)
    claimed_by = models.CharField(max_length=256, blank=True, default="")
    claimed_until = models.DateTimeField(null=True, blank=True)
    # after a person's decision: until when the decider may undo it, and what the undo restores
    undo_until = models.DateTimeField(null=True, blank=True)
    undo_state = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "approvals"
        indexes = [
            models.Index(fields=["status", "expires_at"], name="idx_approval_due"),
            models.Index(fields=["agent_id", "status"], name="idx_approval_agent"),
        ]
        constraints = [
            # one open batch per (agent, origin, subject): later writes of the same burst join it
            models.UniqueConstraint(
                fields=["agent_id", "action_kind", "origin", "subject"],
                condition=Q(status="pending"),
                name="uniq_pending_approval",
            ),
        ]


class OutboundEvent(models.Model):
    """Events for the optional webhook (``knowledge.quarantined`` …), delivered by a job with retries."""

    name = models.CharField(max_length=64)
    agent_id = models.CharField(max_length=128)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField()
    delivered_at = models.DateTimeField(null=True, blank=True)
    attempts = models.IntegerField(default=0)
    last_error = models.TextField(blank=True, default="")

    class Meta:
        db_table = "outbound_events"
