from __future__ import annotations

from django.db import models
from django.db.models import Q

LAYERS = ("episodic", "semantic", "procedural")

# invalidated_by_event values that remove a row from belief (SPEC 0, "retracted").
RETRACT_EVENTS = ("origin_purge", "quarantine_reject", "curator_retract")


class Memory(models.Model):
    """One row of the ``memories`` table (SPEC M1). Column names are exactly the engine's."""

    id = models.CharField(primary_key=True, max_length=40)
    agent_id = models.CharField(max_length=128, db_index=False)
    content = models.TextField()
    timestamp = models.DateTimeField()
    tags = models.JSONField(default=list)
    created_at = models.DateTimeField()
    layer = models.CharField(max_length=16, default="episodic")
    importance = models.FloatField(default=5.0)
    access_count = models.IntegerField(default=0)
    last_accessed = models.DateTimeField(null=True, blank=True)
    source_event = models.TextField(default="", blank=True)
    # temporal columns
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    superseded_by = models.CharField(max_length=40, null=True, blank=True)
    supersedes = models.CharField(max_length=40, null=True, blank=True)
    subject = models.CharField(max_length=512, null=True, blank=True)
    predicate = models.CharField(max_length=512, null=True, blank=True)
    object = models.TextField(null=True, blank=True)
    # SPEC B3: "" for a single-valued predicate, the normalised object for a multi-valued one; part of the key
    # (agent_id, subject, predicate, value_key) everywhere (memory.engine.cardinality).
    value_key = models.CharField(max_length=256, default="", blank=True)
    confidence = models.FloatField(default=1.0)
    metadata = models.JSONField(default=dict)
    # provenance columns
    origin = models.CharField(max_length=256, default="unattributed")
    origin_trust = models.FloatField(default=1.0)
    derived_from = models.JSONField(default=list)
    ingested_at = models.DateTimeField(null=True, blank=True)
    invalidated_by_event = models.CharField(max_length=256, null=True, blank=True)
    invalidated_at = models.DateTimeField(null=True, blank=True)
    reaffirmed_by = models.JSONField(default=list)
    quarantined = models.BooleanField(default=False)
    session_id = models.CharField(max_length=256, null=True, blank=True)

    class Meta:
        db_table = "memories"
        indexes = [
            models.Index(
                fields=["agent_id", "subject", "predicate", "value_key"],
                condition=Q(valid_until__isnull=True),
                name="idx_mem_open_value_key",
            ),
            models.Index(fields=["agent_id", "valid_until"], name="idx_mem_agent_valid_until"),
            models.Index(
                fields=["agent_id", "subject", "predicate", "value_key", "valid_from"],
                name="idx_mem_vkey_from",
            ),
            models.Index(fields=["agent_id", "timestamp"], name="idx_mem_agent_ts"),
            models.Index(fields=["agent_id", "origin"], name="idx_mem_agent_origin"),
            # a search hit's neighbouring turns in its session (issue 17, retrieval._session_expand)
            models.Index(fields=["agent_id", "session_id", "id"], name="idx_mem_agent_session"),
            # the agent home (issue 19): its counts read every row's state from this index alone
            # (engine.summarize), its recent keys walk the newest rows (recent_fact_keys)
            models.Index(
                fields=[
                    "agent_id",
                    "layer",
                    "quarantined",
                    "invalidated_by_event",
                    "valid_from",
                    "valid_until",
                    "subject",
                ],
                name="idx_mem_agent_state",
            ),
            models.Index(fields=["agent_id", "ingested_at"], name="idx_mem_agent_ingested"),
        ]
        constraints = [
            # SPEC M2, B3: at most one open, believed (not quarantined, not retracted) row per key.
            models.UniqueConstraint(
                fields=["agent_id", "subject", "predicate", "value_key"],
                condition=Q(valid_until__isnull=True, quarantined=False, subject__isnull=False)
                & (Q(invalidated_by_event__isnull=True) | ~Q(invalidated_by_event__in=RETRACT_EVENTS)),
                name="uniq_mem_open_believed_vkey",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.id}: {self.content[:60]}"

    @property
    def is_fact(self) -> bool:
        return bool(self.subject) and bool(self.predicate)


class FactWrite(models.Model):
    """The write log of facts: one row per accepted write (new row or reaffirm).

    Rows of ``memories`` are *derived* from the believed writes of a key (SPEC T2); keeping every write with
    its requested interval makes re-derivation exact after purges and quarantine verdicts (SPEC P2, P5, P8).
    """

    STATE_BELIEVED = "believed"
    STATE_QUARANTINED = "quarantined"
    STATE_RETRACTED = "retracted"

    agent_id = models.CharField(max_length=128)
    subject = models.CharField(max_length=512)
    predicate = models.CharField(max_length=512)
    object = models.TextField(null=True, blank=True)
    value_key = models.CharField(max_length=256, default="", blank=True)  # as on Memory (SPEC B3)
    content = models.TextField()
    req_from = models.DateTimeField()
    req_until = models.DateTimeField(null=True, blank=True)
    ingested_at = models.DateTimeField()
    origin = models.CharField(max_length=256)
    origin_trust = models.FloatField()
    source_event = models.TextField(default="", blank=True)
    session_id = models.CharField(max_length=256, null=True, blank=True)
    memory_id = models.CharField(max_length=40)
    is_reaffirm = models.BooleanField(default=False)
    state = models.CharField(max_length=16, default=STATE_BELIEVED)
    # Record time during which this write was believed (for ``get_at(as_of=…)``): from ingestion or release
    # from quarantine, until a purge or reject. NULL believed_from: never believed yet.
    believed_from = models.DateTimeField(null=True, blank=True)
    believed_until = models.DateTimeField(null=True, blank=True)
    # A curator's restore (SPEC D6) believes a retracted write again through a copy believed from the restore
    # on: the copy ranks in ingestion order (SPEC T2) as the write it copies. NULL: as its own id.
    ranks_as = models.BigIntegerField(null=True, blank=True)

    class Meta:
        db_table = "memory_fact_writes"
        indexes = [
            models.Index(
                fields=["agent_id", "subject", "predicate", "value_key", "state", "req_from"],
                name="idx_fw_vkey_state_from",
            ),
            models.Index(fields=["agent_id", "origin"], name="idx_fw_agent_origin"),
            models.Index(fields=["memory_id"], name="idx_fw_memory"),
        ]

    @property
    def order(self) -> int:
        """Ingestion order (SPEC T2): the id, or the id of the write this one is a restored copy of."""
        return int(self.ranks_as or self.id)

    def believed_at(self, when) -> bool:  # type: ignore[no-untyped-def]
        return (
            self.believed_from is not None
            and self.believed_from <= when
            and (self.believed_until is None or self.believed_until > when)
        )


class GraphGeneration(models.Model):
    """SPEC T9: bumped by every write that changes a triple; every process reads it from here.

    ``changes`` is the change log of the last bumps (SPEC G5), newest first, written by the bump's own UPDATE:
    one line per bump, ``<generation> <token> <memory ids as JSON>`` (``*`` when not known), cut to
    ``CHANGES_MAX`` characters (a partial last line is ignored). The graph cache brings a cached graph forward by
    it. On PostgreSQL the UPDATE locks the row until commit, so the bumps of an agent apply one after another
    and none is lost. ``token`` is random: it tells a generation of this history from the same number in a
    rolled-back or restored one."""

    CHANGES_MAX = 1_800  # characters: stays in the row (below PostgreSQL's TOAST threshold)

    agent_id = models.CharField(max_length=128, primary_key=True)
    generation = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
    changes = models.TextField(null=True, blank=True)

    class Meta:
        db_table = "graph_generation"
