"""Companion tables of graph retrieval (SPEC M3, G6, G8). Only ``memory.engine.graph`` writes them."""

from __future__ import annotations

from django.db import models


class EntityAlias(models.Model):
    """``entity_alias(agent_id, canonical, alias)``: one alias per (agent, alias) (SPEC M3, G6).

    Django wants a single-column primary key, so a surrogate id carries it and a unique constraint on
    ``(agent_id, alias)`` is the spec's key. Both names are stored normalised (trimmed, lower-cased,
    whitespace folded) and chains are flattened at store time: ``canonical`` is never itself an alias.
    """

    agent_id = models.CharField(max_length=128)
    canonical = models.CharField(max_length=512)
    alias = models.CharField(max_length=512)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    actor = models.CharField(max_length=256, default="system")

    class Meta:
        db_table = "entity_alias"
        constraints = [
            models.UniqueConstraint(fields=["agent_id", "alias"], name="uniq_entity_alias_agent_alias"),
        ]
        indexes = [models.Index(fields=["agent_id", "canonical"], name="idx_entity_alias_canonical")]

    def __str__(self) -> str:
        return f"{self.agent_id}: {self.alias} -> {self.canonical}"


class EntityEmbedding(models.Model):
    """A cached vector of one (normalised, alias-resolved) entity name under one embedding model (SPEC G8)."""

    agent_id = models.CharField(max_length=128)
    entity = models.CharField(max_length=512)
    model = models.CharField(max_length=200)
    dim = models.IntegerField()
    vector = models.BinaryField()  # float32, little-endian, ``dim`` values
    created_at = models.DateTimeField()

    class Meta:
        db_table = "entity_embedding"
        constraints = [
            models.UniqueConstraint(
                fields=["agent_id", "model", "entity"], name="uniq_entity_embedding_agent_model_entity"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.agent_id}: {self.entity} ({self.model})"


class MemoryEntity(models.Model):
    """``memory_entity(agent_id, memory_id, entity)``: a plain memory mentions an entity (issue 17), so graph
    search can hop from one conversation turn to another through a name they share.

    ``entity`` is the name normalised (``normalize_entity``) but not alias-resolved: search resolves it through
    the agent's alias map when it reads, so an alias or merge added later applies to old links at once. A link
    is read only while its memory is current (``belief.current_sql``): a retracted, quarantined or expired memory
    links nothing, and a restored one links again. Erasure deletes the rows (``erasure``)."""

    agent_id = models.CharField(max_length=128)
    memory_id = models.CharField(max_length=40)
    entity = models.CharField(max_length=512)

    class Meta:
        db_table = "memory_entity"
        constraints = [
            models.UniqueConstraint(fields=["memory_id", "entity"], name="uniq_memory_entity"),
        ]
        indexes = [models.Index(fields=["agent_id", "entity"], name="idx_memory_entity_agent")]

    def __str__(self) -> str:
        return f"{self.agent_id}: {self.memory_id} -> {self.entity}"
