"""What the agent uses and believes (SPEC B6, B8, B9): the query journal, feedback weights, knowledge gaps,
interest snapshots, attitudes, skills and memory tiers. Written by the engine only."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

ATTITUDE_CATEGORIES = (
    "workflow",
    "tool_behavior",
    "config",
    "architecture",
    "preference",
    "testing_philosophy",
    "autonomy_level",
    "safety",
    "design_preference",
    "system_feedback",
)
TIERS = ("hot", "warm", "cold", "frozen")


class QueryJournal(models.Model):
    """One agent search (``engine.agent_search``): its id is the ``query_id`` the agent gives feedback on."""

    id = models.CharField(primary_key=True, max_length=40)  # q_<ulid>
    agent_id = models.CharField(max_length=128)
    signature = models.CharField(max_length=255)  # normalised: distinct content words, sorted
    query = models.CharField(max_length=300)  # the text as asked (cut), for people
    created_at = models.DateTimeField()
    result_ids = models.JSONField(default=list)

    class Meta:
        db_table = "query_journal"
        indexes = [
            models.Index(fields=["agent_id", "created_at"], name="idx_journal_agent_ts"),
            models.Index(fields=["agent_id", "signature", "created_at"], name="idx_journal_signature"),
            models.Index(fields=["created_at"], name="idx_journal_ts"),
        ]


class FeedbackWeight(models.Model):
    """Per memory: the feedback weight ``w ← w + α(r − w)`` (SPEC B9), a term of the R2 score."""

    memory_id = models.CharField(primary_key=True, max_length=40)
    agent_id = models.CharField(max_length=128)
    weight = models.FloatField(default=0.0)
    verdicts = models.IntegerField(default=0)
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "memory_feedback_weights"
        indexes = [models.Index(fields=["agent_id"], name="idx_fbweight_agent")]


class KnowledgeGap(models.Model):
    """A query signature the agent keeps failing to answer (≥ 2 INCORRECT verdicts in 7 days, SPEC B8)."""

    OPEN, RESOLVED = "open", "resolved"

    agent_id = models.CharField(max_length=128)
    signature = models.CharField(max_length=255)
    query = models.CharField(max_length=300)  # the latest failing query's text
    fail_count = models.IntegerField(default=0)
    first_failure_at = models.DateTimeField()
    last_failure_at = models.DateTimeField()
    status = models.CharField(max_length=16, default=OPEN)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by_query = models.CharField(max_length=40, blank=True, default="")

    class Meta:
        db_table = "knowledge_gaps"
        indexes = [models.Index(fields=["agent_id", "status", "signature"], name="idx_gap_agent_status")]
        constraints = [
            models.UniqueConstraint(
                fields=["agent_id", "signature"], condition=Q(status="open"), name="uniq_gap_open_signature"
            )
        ]


class InterestSnapshot(models.Model):
    """The interest profile of one UTC day and its delta against the day before (SPEC B8). Never pruned."""

    agent_id = models.CharField(max_length=128)
    day = models.DateField()
    created_at = models.DateTimeField()
    profile = models.JSONField(default=dict)
    delta = models.JSONField(default=dict)

    class Meta:
        db_table = "interest_snapshots"
        constraints = [models.UniqueConstraint(fields=["agent_id", "day"], name="uniq_snapshot_day")]


class Attitude(models.Model):
    """One version of an agent's attitude in a category (SPEC B6). A new version supersedes the current one
    (``superseded_at``) and never erases it."""

    agent_id = models.CharField(max_length=128)
    category = models.CharField(max_length=32)
    version = models.IntegerField()
    statement = models.TextField()
    confidence = models.FloatField()
    evidence = models.JSONField(default=list)
    proposed_by = models.CharField(max_length=256)
    approved_by = models.CharField(max_length=256)
    review_item_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField()
    affirmed_at = models.DateTimeField()  # decay runs from here; a reaffirmation moves it
    superseded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "attitudes"
        constraints = [
            models.UniqueConstraint(fields=["agent_id", "category", "version"], name="uniq_attitude_version"),
            models.UniqueConstraint(
                fields=["agent_id", "category"],
                condition=Q(superseded_at__isnull=True),
                name="uniq_attitude_current",
            ),
        ]


class Skill(models.Model):
    """A skill the agent uses (SPEC B6): its reviewed level and its uses, decayed by a half-life."""

    agent_id = models.CharField(max_length=128)
    name = models.CharField(max_length=100)
    level = models.IntegerField(default=1)  # 1 exposure, 2 competent, 3 generative
    score = models.FloatField(default=0.0)  # decayed uses at ``last_used_at``
    uses = models.IntegerField(default=0)
    first_used_at = models.DateTimeField()
    last_used_at = models.DateTimeField()
    level_changed_at = models.DateTimeField(null=True, blank=True)
    level_changes = models.IntegerField(default=0)

    class Meta:
        db_table = "skills"
        constraints = [models.UniqueConstraint(fields=["agent_id", "name"], name="uniq_skill_name")]


class MemoryTier(models.Model):
    """A memory row's tier (SPEC B9); a row without one is hot. ``original`` is the archive: the exact text
    the row had before its content became a digest (``depth`` cold) or a headline (``depth`` frozen)."""

    memory_id = models.CharField(primary_key=True, max_length=40)
    agent_id = models.CharField(max_length=128)
    tier = models.CharField(max_length=8)
    changed_at = models.DateTimeField()
    depth = models.CharField(max_length=8, blank=True, default="")  # "", cold or frozen: how short it got
    original = models.TextField(null=True, blank=True)
    method = models.CharField(max_length=80, blank=True, default="")  # extractive | llm:<model>

    class Meta:
        db_table = "memory_tiers"
        indexes = [models.Index(fields=["agent_id", "tier"], name="idx_tier_agent")]
