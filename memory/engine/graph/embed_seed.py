"""Embedding seeding of PPR (SPEC G8): the entities nearest a query by cosine join its name seeds.

Entity vectors are cached in the ``entity_embedding`` table and in memory beside the agent's graph; the embedder
and its settings live in ``memory.engine.embeddings``. Any failure falls back to the name seeds.
"""

from __future__ import annotations

import logging

import numpy as np
from django.db import transaction
from django.utils import timezone

from memory.models import EntityEmbedding

from ..embeddings import EMBED_BATCH, Embedder, active_embedder, unit_matrix
from .build import Graph

log = logging.getLogger("memdesk.embeddings")


def entity_vectors(*, agent_id: str, graph: Graph, embedder: Embedder) -> np.ndarray:
    """Unit vectors of the graph's entities (row i = graph.entities[i]): from the graph's memo, else the
    ``entity_embedding`` table, else the embedder (and then stored)."""
    model = str(embedder.model_name)[:200]
    memo = graph.embeddings.get(model)
    if memo is not None:
        return memo
    out = entity_vectors_for(agent_id=agent_id, entities=graph.entities, embedder=embedder)
    graph.embeddings[model] = out
    return out


def entity_vectors_for(*, agent_id: str, entities: list[str], embedder: Embedder) -> np.ndarray:
    """Unit vectors of ``entities`` (row i = entities[i]): from the ``entity_embedding`` table, else the
    embedder (and then stored). Raises on an embedder failure or vectors of different dimensions."""
    model = str(embedder.model_name)[:200]
    stored = {
        e: (dim, bytes(v))
        for e, dim, v in EntityEmbedding.objects.filter(agent_id=agent_id, model=model).values_list(
            "entity", "dim", "vector"
        )
    }
    missing = [e for e in dict.fromkeys(entities) if e not in stored]
    fresh: dict[str, np.ndarray] = {}
    for i in range(0, len(missing), EMBED_BATCH):
        batch = missing[i : i + EMBED_BATCH]
        for name, vec in zip(batch, unit_matrix(embedder.embed(batch), len(batch)), strict=True):
            fresh[name] = vec
    if fresh:
        t = timezone.now()
        with transaction.atomic():
            EntityEmbedding.objects.bulk_create(
                [
                    EntityEmbedding(
                        agent_id=agent_id,
                        entity=name,
                        model=model,
                        dim=int(vec.shape[0]),
                        vector=vec.astype("<f4").tobytes(),
                        created_at=t,
                    )
                    for name, vec in fresh.items()
                ],
                ignore_conflicts=True,
            )
    dims = {v.shape[0] for v in fresh.values()} | {dim for dim, _ in stored.values()}
    if len(dims) > 1:
        raise ValueError(f"entity vectors of model {model!r} have different dimensions {sorted(dims)}")
    dim = dims.pop() if dims else 1
    out = np.zeros((len(entities), dim), dtype=np.float32)
    for i, name in enumerate(entities):
        if name in fresh:
            out[i] = fresh[name]
        else:
            out[i] = np.frombuffer(stored[name][1], dtype="<f4")
    return out


def nearest_entities(*, agent_id: str, graph: Graph, query: str, embedder: Embedder, top_k: int) -> list[int]:
    vectors = entity_vectors(agent_id=agent_id, graph=graph, embedder=embedder)
    if vectors.shape[0] == 0:
        return []
    q = unit_matrix(embedder.embed([query]), 1)[0]
    if q.shape[0] != vectors.shape[1]:
        raise ValueError("the query vector and the entity vectors have different dimensions")
    cosine = vectors @ q
    k = min(top_k, cosine.size)
    best = np.argpartition(-cosine, k - 1)[:k]
    ranked = sorted(best.tolist(), key=lambda i: (-float(cosine[i]), graph.entities[i]))
    return [i for i in ranked if cosine[i] > 0]


def embed_seeds(*, agent_id: str, graph: Graph, query: str, seeds: list[int]) -> list[int]:
    """G8: ``seeds`` ∪ the nearest entities by cosine when an embedder is on; on any failure, ``seeds``."""
    try:
        embedder, top_k = active_embedder()
        if embedder is None or not query.strip():
            return seeds
        near = nearest_entities(agent_id=agent_id, graph=graph, query=query, embedder=embedder, top_k=top_k)
    except Exception:  # noqa: BLE001 - an embedder is optional; never let it break search
        log.warning("embedding seeding failed; using entity-name seeds only", exc_info=True)
        return seeds
    return sorted(set(seeds) | set(near))
