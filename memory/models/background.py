"""The background track's tables (SPEC B1, B2, B7, D2): dream runs, review items, review policy.

Review items are written by the engine only (``memory.engine.review``); dream runs by the loop
(``memory.dream.loop``) through the engine's run functions.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class DreamState(models.Model):
    """Per agent: whether the dream loop may apply (``apply``) or only propose (``dry_run``, the default for a
    new agent), and when it last completed a run (the gate's clock)."""

    DRY_RUN, APPLY = "dry_run", "apply"
    MODES = [(DRY_RUN, "dry run"), (APPLY, "apply")]

    agent_id = models.CharField(max_length=128, primary_key=True)
    mode = models.CharField(max_length=16, choices=MODES, default=DRY_RUN)
    last_dream_at = models.DateTimeField(null=True, blank=True)
    last_run_id = models.BigIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(null=True, blank=True)
    updated_by = models.CharField(max_length=256, blank=True, default="")

    class Meta:
        db_table = "dream_state"


class DreamRun(models.Model):
    """One pass of the dream loop over one agent: status, live progress, and the report per phase."""

    RUNNING, DONE, FAILED, ABANDONED = "running", "done", "failed", "abandoned"
    STATUSES = [(s, s) for s in (RUNNING, DONE, FAILED, ABANDONED)]

    agent_id = models.CharField(max_length=128)
    status = models.CharField(max_length=16, choices=STATUSES, default=RUNNING)
    dry_run = models.BooleanField(default=True)
    force = models.BooleanField(default=False)
    actor = models.CharField(max_length=256)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField()
    phase = models.CharField(max_length=32, blank=True, default="")
    done = models.IntegerField(default=0)
    total = models.IntegerField(default=0)
    # {phase: {"counts": {...}, "items": [...], "duration_ms": n, "errors": [...], "llm_calls": n, "llm_tokens": n}}
    phases = models.JSONField(default=dict)
    llm_calls = models.IntegerField(default=0)
    llm_tokens = models.IntegerField(default=0)
    error = models.TextField(blank=True, default="")

    class Meta:
        db_table = "dream_runs"
        indexes = [models.Index(fields=["agent_id", "-started_at"], name="idx_dream_agent_started")]
        constraints = [
            # SPEC B1: at most one run per agent at a time
            models.UniqueConstraint(
                fields=["agent_id"], condition=Q(status="running"), name="uniq_dream_running"
            )
        ]


class ReviewItem(models.Model):
    """SPEC D2/B7: something the background track must not decide alone (or decided and may be undone)."""

    KINDS = ("conflict", "lint", "low_confidence", "attitude", "skill")
    PENDING, APPROVED, REJECTED, APPLIED, DRY, STALE = (
        "pending",
        "approved",
        "rejected",
        "applied",
        "dry",
        "stale",
    )
    STATUSES = [(s, s) for s in (PENDING, APPROVED, REJECTED, APPLIED, DRY, STALE)]

    agent_id = models.CharField(max_length=128)
    kind = models.CharField(max_length=16)
    status = models.CharField(max_length=16, default=PENDING)
    # what the proposal is about, stable across runs (never proposed twice): kind + rule + the rows' ids
    fingerprint = models.CharField(max_length=64)
    # the rows' state when proposed: a decision on rows that changed since is refused (stale)
    state = models.CharField(max_length=64, blank=True, default="")
    title = models.CharField(max_length=300, blank=True, default="")
    # old/new sides, the proposed action (verdict, fix), the judge's reason, rule, evidence
    payload = models.JSONField(default=dict)
    memory_ids = models.JSONField(default=list)
    confidence = models.FloatField(default=0.0)
    impact = models.IntegerField(default=0)
    reason = models.TextField(blank=True, default="")
    judge = models.CharField(max_length=128, blank=True, default="")
    run = models.ForeignKey(DreamRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="items")
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    remind_at = models.DateTimeField()
    reminded_at = models.DateTimeField(null=True, blank=True)
    claimed_by = models.CharField(max_length=256, blank=True, default="")
    claimed_until = models.DateTimeField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=256, blank=True, default="")
    decision_reason = models.TextField(blank=True, default="")
    edited = models.JSONField(default=dict)
    undo_until = models.DateTimeField(null=True, blank=True)
    undo_state = models.JSONField(default=dict)  # what an undo restores (engine snapshot)

    class Meta:
        db_table = "review_items"
        indexes = [
            models.Index(fields=["agent_id", "status", "kind"], name="idx_review_agent_status"),
            models.Index(fields=["agent_id", "status", "expires_at"], name="idx_review_agent_due"),
        ]
        constraints = [
            # a proposal is never made twice while one like it is pending or decided (dry ones do not count)
            models.UniqueConstraint(
                fields=["agent_id", "fingerprint"], condition=~Q(status="dry"), name="uniq_review_fingerprint"
            )
        ]


class ReviewPolicy(models.Model):
    """SPEC B7: the auto-apply confidence per verdict type (calibrated from human verdicts, bounded)."""

    verdict_type = models.CharField(max_length=64, primary_key=True)  # e.g. "conflict:MERGE", "lint:retract"
    auto_apply_confidence = models.FloatField(default=0.8)
    decisions_seen = models.IntegerField(default=0)  # human decisions counted at the last calibration
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "review_policy"
