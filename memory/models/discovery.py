"""Discovery's tables (SPEC B4, B5, D4): the runs, the entity edges and communities they computed, and the
inbox items people act on. Only ``memory.engine.inbox`` writes them."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class DiscoveryRun(models.Model):
    """One computation of an agent's entity edges, communities and discoveries, with its report (signals
    present, the weights used after redistribution, counts, percentiles, timings, errors)."""

    DONE, EMPTY = "done", "empty"
    STATUSES = [(s, s) for s in (DONE, EMPTY)]

    agent_id = models.CharField(max_length=128)
    status = models.CharField(max_length=16, choices=STATUSES, default=DONE)
    actor = models.CharField(max_length=256)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    dream_run_id = models.BigIntegerField(null=True, blank=True)  # the dream loop's run, when it was a phase
    report = models.JSONField(default=dict)

    class Meta:
        db_table = "discovery_runs"
        indexes = [models.Index(fields=["agent_id", "-started_at"], name="idx_discovery_run_agent")]


class EntityEdge(models.Model):
    """A multi-signal edge between two entities (SPEC B4), as the run ``run`` computed it: ``entity_a`` sorts
    before ``entity_b``; the five signals (scaled as the composite used them; ``embedding`` NULL when that
    signal was missing) and the composite, which is above the run's floor."""

    agent_id = models.CharField(max_length=128)
    run = models.ForeignKey(DiscoveryRun, on_delete=models.CASCADE, related_name="edges")
    entity_a = models.CharField(max_length=512)
    entity_b = models.CharField(max_length=512)
    composite = models.FloatField()
    cooccurrence = models.IntegerField(default=0)  # memories + sessions naming both (raw count)
    cooccurrence_scaled = models.FloatField(default=0.0)
    session_jaccard = models.FloatField(default=0.0)
    adamic_adar = models.FloatField(default=0.0)  # min-max scaled
    type_affinity = models.FloatField(default=0.0)
    embedding = models.FloatField(null=True, blank=True)

    class Meta:
        db_table = "entity_edges"
        # one index: a run replaces the agent's edges (many rows are written per run; each index slows that)
        indexes = [models.Index(fields=["agent_id", "run"], name="idx_entity_edge_agent_run")]


class Community(models.Model):
    """A Leiden community of an agent's entities. ``number`` is its stable id: a later run that finds a
    community overlapping this one most keeps the number and the name; one that matches none is retired."""

    agent_id = models.CharField(max_length=128)
    number = models.IntegerField()
    name = models.CharField(max_length=512)
    size = models.IntegerField(default=0)
    members = models.JSONField(default=list)  # entity names, sorted
    run = models.ForeignKey(DiscoveryRun, null=True, on_delete=models.SET_NULL, related_name="communities")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "entity_communities"
        constraints = [
            models.UniqueConstraint(fields=["agent_id", "number"], name="uniq_community_agent_number"),
        ]
        indexes = [models.Index(fields=["agent_id", "retired_at"], name="idx_community_agent_live")]


class DiscoveryItem(models.Model):
    """An inbox item (SPEC B5, D4): a connection between two entities nobody wrote down, with its evidence.
    A pair enters an agent's inbox once (``fingerprint``), whatever becomes of it."""

    KINDS = ("cross_community", "indirect_strong", "knowledge_gap")
    OPEN, PINNED, SNOOZED, DISMISSED = "open", "pinned", "snoozed", "dismissed"
    STATUSES = [(s, s) for s in (OPEN, PINNED, SNOOZED, DISMISSED)]

    agent_id = models.CharField(max_length=128)
    kind = models.CharField(max_length=32)
    fingerprint = models.CharField(max_length=64)
    entity_a = models.CharField(max_length=512)
    entity_b = models.CharField(max_length=512)
    score = models.FloatField()
    explanation = models.TextField()
    # signals, shared neighbours, sessions, facts (memory ids with their triples), communities, the path
    evidence = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=STATUSES, default=OPEN)
    snoozed_until = models.DateTimeField(null=True, blank=True)
    run = models.ForeignKey(DiscoveryRun, null=True, on_delete=models.SET_NULL, related_name="items")
    created_at = models.DateTimeField()
    decided_by = models.CharField(max_length=256, blank=True, default="")
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "discovery_items"
        constraints = [
            models.UniqueConstraint(fields=["agent_id", "fingerprint"], name="uniq_discovery_fingerprint"),
            models.CheckConstraint(
                condition=~Q(status="snoozed") | Q(snoozed_until__isnull=False),
                name="discovery_snooze_has_until",
            ),
        ]
        indexes = [
            models.Index(fields=["agent_id", "status", "kind"], name="idx_discovery_agent_status"),
            models.Index(fields=["agent_id", "-score"], name="idx_discovery_agent_score"),
        ]
