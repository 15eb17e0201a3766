"""Dense vectors of memory rows (SPEC R2 ``w_vec·cosine``, issue 17). Only ``memory.engine.vectors`` writes them."""

from __future__ import annotations

from django.db import models


class MemoryVector(models.Model):
    """One memory's vector under one embedding model: ``dim`` float16 values, little-endian, unit length.

    Keyed by (memory, model) so a second model can be back-filled beside the first. No foreign key, like the
    other companion tables keyed by ``memory_id``: the engine deletes them with their memory (erasure). The
    surrogate ``id`` grows with every insert, so the per-agent search matrix catches up by reading the rows above
    the largest id it holds (index ``(agent_id, model, id)``)."""

    memory_id = models.CharField(max_length=40)
    agent_id = models.CharField(max_length=128)
    model = models.CharField(max_length=200)
    dim = models.IntegerField()
    vector = models.BinaryField()
    created_at = models.DateTimeField()

    class Meta:
        db_table = "memory_vector"
        constraints = [
            models.UniqueConstraint(fields=["memory_id", "model"], name="uniq_memory_vector_memory_model"),
        ]
        indexes = [models.Index(fields=["agent_id", "model", "id"], name="idx_memory_vector_agent_model")]

    def __str__(self) -> str:
        return f"{self.memory_id} ({self.model}, {self.dim})"
