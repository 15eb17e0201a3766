"""Personalized PageRank over the graph (SPEC G3): the exact iteration, the compiled forward push, scores."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .build import Graph, _arrow_indices

DAMPING = 0.5


MAX_ITERATIONS = 20


TOLERANCE = 1e-6


PPR_TOP = 5  # graph-only hits come from the PPR top 5 (G4) ...


MAX_GRAPH_ONLY = 3  # ... at most 3 of them


PUSH_EPSILON = 2e-6  # forward push: a node pushes while its residual > ε·degree


def _seed_vector(n: int, seeds: Sequence[int]) -> np.ndarray:
    s = np.zeros(n, dtype=np.float64)
    if seeds:
        s[np.asarray(seeds, dtype=np.int64)] = 1.0 / len(seeds)
    return s


def ppr_exact(graph: Graph, seeds: Sequence[int]) -> np.ndarray:
    """The reference: ``p ← (1−d)·s + d·Aᵀp`` from p = s, at most 20 iterations, until the L1 change < 1e-6."""
    s = _seed_vector(graph.size, seeds)
    p = s.copy()
    base = (1.0 - DAMPING) * s
    for _ in range(MAX_ITERATIONS):
        nxt = base + DAMPING * (graph.walk @ p)
        delta = float(np.abs(nxt - p).sum())
        p = nxt
        if delta < TOLERANCE:
            break
    return p


def ppr_push(graph: Graph, seeds: Sequence[int], *, epsilon: float = PUSH_EPSILON) -> np.ndarray:
    """Local forward push (Andersen–Chung–Lang) of the same PPR, as a dense vector (see ``_push``)."""
    p = np.zeros(graph.size, dtype=np.float64)
    nodes, values = _push(graph, seeds, epsilon)
    p[nodes] = values
    return p


def _push(graph: Graph, seeds: Sequence[int], epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """The push (``push_kernel``) from the exact iteration's seed vector: the nodes it reached and their
    estimates. Every residual left is ≤ ε·degree: on an undirected graph the error at a node v is at most
    ε·deg(v); tests pin the top 10 to ``ppr_exact``."""
    if not seeds:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    from . import push_kernel  # numba: imported (and its compiled code loaded) on first use

    distinct = np.unique(np.asarray(seeds, dtype=np.int64))
    rows = graph.rows
    with graph.scratch() as scratch:
        return push_kernel.push(
            rows.indptr, rows.indices, rows.data, graph.degree, distinct, 1.0 / len(seeds), epsilon, DAMPING,
            scratch,
        )  # fmt: skip  # 1/len(seeds) each, as _seed_vector


@dataclass(frozen=True)
class GraphScores:
    """Memory scores of one query, normalised so the top memory is 1.0 (G3), kept sparse: the memory nodes
    PPR reached and their mass (a query reads a few dozen candidates, not every memory). Scores are rounded
    to 12 places so that symmetric memories tie exactly, and ties rank by id."""

    graph: Graph
    nodes: np.ndarray  # memory nodes with mass, numbered in graph.memory_ids order
    values: np.ndarray  # their PPR mass
    peak: float
    top: list[str]  # the PPR top (PPR_TOP by default), ties by id
    seeds: list[str]

    def get(self, memory_id: str) -> float:
        return self.get_many([memory_id])[0]

    def get_many(self, memory_ids: Sequence[str]) -> list[float]:
        """The scores of ``memory_ids`` (0.0 for a memory the query did not reach or the graph lacks). The
        reached nodes' ids are matched against the few wanted ones (a hash of the wanted ids, in C): the cost
        follows what the query touched, with no id index of the whole graph to build or keep."""
        import pyarrow as pa
        import pyarrow.compute as pc

        wanted = list(dict.fromkeys(memory_ids))
        if not wanted:
            return []
        reached = self.graph.memory_ids.take(_arrow_indices(self.nodes))
        where = pc.index_in(reached, value_set=pa.array(wanted, type=pa.large_string()))
        where = where.fill_null(-1).to_numpy(zero_copy_only=False)
        hits = np.flatnonzero(where >= 0)
        found = {
            wanted[k]: round(v / self.peak, 12)
            for k, v in zip(where[hits].tolist(), self.values[hits].tolist(), strict=True)
        }
        return [found.get(m, 0.0) for m in memory_ids]

    @property
    def scores(self) -> dict[str, float]:
        """Every memory with a nonzero score (tests and exports; the query path uses ``get_many``)."""
        ids = self.graph.memory_ids.take(_arrow_indices(self.nodes)).to_pylist()
        return {mid: round(v / self.peak, 12) for mid, v in zip(ids, self.values.tolist(), strict=True)}


def memory_scores(
    graph: Graph, p: np.ndarray, *, seeds: Sequence[int], top: int = PPR_TOP
) -> GraphScores | None:
    """The memory part of a dense PPR vector ``p`` as scores and its top."""
    mem = p[graph.n_entities :]
    nz = np.flatnonzero(mem > 0)
    return _memory_scores(graph, nz, mem[nz], seeds=seeds, top=top)


def _memory_scores(
    graph: Graph, nodes: np.ndarray, values: np.ndarray, *, seeds: Sequence[int], top: int
) -> GraphScores | None:
    """Scores from memory ``nodes`` (numbered from 0, any order) with positive ``values``."""
    if nodes.size == 0:
        return None
    peak = float(values.max())
    k = min(top, values.size)
    kth = float(np.partition(values, values.size - k)[values.size - k])
    kth_rounded = round(kth / peak, 12)
    pool = np.flatnonzero(values >= kth * (1 - 1e-9))
    pool_ids = graph.memory_ids.take(_arrow_indices(nodes[pool])).to_pylist()
    ranked = sorted(
        (-score, mid)
        for j, mid in zip(pool.tolist(), pool_ids, strict=True)
        if (score := round(float(values[j]) / peak, 12)) >= kth_rounded
    )[:top]
    return GraphScores(
        graph=graph,
        nodes=nodes,
        values=values,
        peak=peak,
        top=[mid for _, mid in ranked],
        seeds=[graph.entities[i] for i in seeds],
    )


def rank(
    graph: Graph, seeds: Sequence[int], *, method: str = "push", top: int = PPR_TOP
) -> GraphScores | None:
    """PPR from ``seeds`` and the memory scores: the forward push (the query path) or the exact iteration."""
    if method == "exact":
        return memory_scores(graph, ppr_exact(graph, seeds), seeds=seeds, top=top)
    nodes, values = _push(graph, seeds, PUSH_EPSILON)
    memory = nodes >= graph.n_entities
    values = values[memory]
    positive = values > 0
    return _memory_scores(
        graph, nodes[memory][positive] - graph.n_entities, values[positive], seeds=seeds, top=top
    )
