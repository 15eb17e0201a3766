"""The graph itself (SPEC G1): an agent's entity-memory graph as CSR matrices, built column-wise."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from scipy import sparse

from .aliases import _alias_map
from .names import _CJK_CHAR, _encode_names, _entity_nodes, _strings
from .scan import FactColumns, scan_facts


@dataclass
class Graph:
    """One agent's entity–memory graph. ``walk`` is Aᵀ (A = row-normalised weights) as CSR for the power
    iteration; ``rows`` is A itself (CSR) for the forward push; ``degree`` the weighted degree. Entity nodes
    come first (``entities``), then one node per memory (``memory_ids``, an Arrow string array: a million ids
    stay one buffer, not a million Python strings; ``memory_id`` and ``memory_node`` read it)."""

    generation: Any  # the generation key it was built at
    expires: datetime | None  # next moment a fact starts or stops being current
    entities: list[str]
    memory_ids: Any  # pyarrow LargeStringArray, node n_entities + i is memory_ids[i]
    walk: sparse.csr_matrix
    rows: sparse.csr_matrix
    degree: np.ndarray
    word_names: dict[str, int]
    cjk_names: dict[str, int]
    word_max: int
    cjk_max: int
    triples: int
    # idle work arrays of the push (push_kernel.Scratch), one per query that ran at once
    _scratch: list[Any] = field(default_factory=list, repr=False)
    _scratch_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    embeddings: dict[str, np.ndarray] = field(default_factory=dict)  # entity vectors by model (G8)
    # what a delta needs to patch it (``delta``): each memory's subject and object entity (-1: none) and trust,
    # how many memories name each entity, and the aliases it was resolved with
    fact_subjects: np.ndarray | None = field(default=None, repr=False)
    fact_objects: np.ndarray | None = field(default=None, repr=False)
    fact_trusts: np.ndarray | None = field(default=None, repr=False)
    entity_facts: np.ndarray | None = field(default=None, repr=False)
    aliases: dict[str, str] = field(default_factory=dict, repr=False)

    @contextlib.contextmanager
    def scratch(self) -> Iterator[Any]:
        """Work arrays for one push, reused: taken from the idle ones (one per query running at once)."""
        from .push_kernel import Scratch

        with self._scratch_lock:
            work = self._scratch.pop() if self._scratch else None
        if work is None:
            work = Scratch(self.size)
        yield work  # not put back if the push raised: its arrays may not be clean
        with self._scratch_lock:
            self._scratch.append(work)

    @property
    def n_entities(self) -> int:
        return len(self.entities)

    @property
    def size(self) -> int:
        return len(self.entities) + len(self.memory_ids)

    def memory_id(self, i: int) -> str:
        """The id of memory ``i`` (node ``n_entities + i``)."""
        return str(self.memory_ids[i].as_py())

    def memory_node(self, memory_id: str) -> int | None:
        """Memory number of ``memory_id`` (its node is ``n_entities`` + it), or None. A linear search: for
        curators and tests; the query path looks memories up among the nodes a query reached (GraphScores)."""
        import pyarrow.compute as pc

        i = pc.index(self.memory_ids, memory_id).as_py()
        return None if i < 0 else int(i)

    def seeds(self, query: str) -> list[int]:
        """Entity nodes named in ``query`` (G2): whole words, case-insensitive; names with CJK characters as
        substrings; an alias seeds its canonical entity. Linear in the query (``seeds.seed_nodes``)."""
        from .seeds import seed_nodes

        return seed_nodes(self, query)


def build_graph(
    rows: Sequence[Sequence[Any]],
    aliases: dict[str, str],
    *,
    generation: Any = None,
    expires: datetime | None = None,
) -> Graph:
    """Build the graph from ``(memory_id, subject, object, origin_trust)`` rows of current, believed facts."""
    ids, subjects, objects, trusts = zip(*rows, strict=True) if rows else ((), (), (), ())
    return build_columns(FactColumns(ids, subjects, objects, trusts, expires), aliases, generation=generation)


def build_columns(facts: FactColumns, aliases: dict[str, str], *, generation: Any = None) -> Graph:
    """The graph from fact columns (``scan_facts``), column-wise: Arrow dictionary-encodes the name columns and
    normalises and alias-resolves each distinct name (in C for ASCII names, in Python for the others); NumPy
    maps the codes to nodes and lays out the CSR rows directly (each memory row holds at most two entities;
    the entity rows are a counting sort of the same pairs). W is symmetric, so Aᵀ = W·D⁻¹ needs no transpose
    (A and Aᵀ are W with rows or columns scaled)."""

    ids = _strings(facts.ids)
    n_m = len(ids)
    codes, distinct = _encode_names(facts.subjects, facts.objects)
    node_of_raw, names = _entity_nodes(distinct, aliases)
    entities = names.to_pylist()
    word_names, cjk_names = _seed_names(names, entities, aliases)
    nodes = node_of_raw[codes]  # code -1 (no name) reads the last slot, -1
    trusts = facts.trusts
    w = (
        np.asarray(trusts, dtype=np.float64)
        if isinstance(trusts, np.ndarray)
        else np.fromiter(trusts, dtype=np.float64, count=n_m)
    )
    subjects, objects = nodes[:n_m], nodes[n_m:]
    weights, degree = _weights(subjects, objects, w, len(entities))
    inv = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
    a = weights.copy()
    a.data *= np.repeat(inv, np.diff(a.indptr))  # A = D⁻¹W: rows sum to 1
    walk = weights
    walk.data *= inv[walk.indices]  # Aᵀ = W·D⁻¹ (W symmetric)
    return Graph(
        generation=generation,
        expires=facts.expires,
        entities=entities,
        memory_ids=ids,
        walk=walk,
        rows=a,
        degree=degree,
        word_names=word_names,
        cjk_names=cjk_names,
        word_max=max(map(len, word_names), default=0),
        cjk_max=min(32, max(map(len, cjk_names), default=0)),
        triples=n_m,
        fact_subjects=subjects.astype(np.int32 if len(entities) < 2**31 else np.int64),
        fact_objects=objects.astype(np.int32 if len(entities) < 2**31 else np.int64),
        fact_trusts=w,
        entity_facts=entity_fact_counts(subjects, objects, len(entities)),
        aliases=aliases,
    )


def entity_fact_counts(subjects: np.ndarray, objects: np.ndarray, n_entities: int) -> np.ndarray:
    """How many memories name each entity (as subject, object or both)."""
    other = objects[(objects >= 0) & (objects != subjects)]
    return np.bincount(subjects[subjects >= 0], minlength=n_entities) + np.bincount(
        other, minlength=n_entities
    )


def _seed_names(
    names: Any, entities: list[str], aliases: dict[str, str]
) -> tuple[dict[str, int], dict[str, int]]:
    """The surface forms seeding matches (G2): whole-word names and names with CJK characters (substrings),
    each to its entity node; an alias names its canonical entity's node."""
    import pyarrow.compute as pc

    ascii_mask = pc.string_is_ascii(names).to_numpy(zero_copy_only=False)
    ascii_nodes = np.flatnonzero(ascii_mask)
    word_names = dict(zip(names.filter(ascii_mask).to_pylist(), ascii_nodes.tolist(), strict=True))
    cjk_names: dict[str, int] = {}
    for node in np.flatnonzero(~ascii_mask).tolist():
        name = entities[node]
        (cjk_names if _CJK_CHAR.search(name) else word_names)[name] = node
    add_alias_names(word_names, cjk_names, aliases)
    return word_names, cjk_names


def seed_table(word_names: dict[str, int], cjk_names: dict[str, int], name: str) -> dict[str, int]:
    """Which of the two seed tables holds ``name`` (names with CJK characters match as substrings)."""
    return word_names if name.isascii() or not _CJK_CHAR.search(name) else cjk_names


def add_alias_names(
    word_names: dict[str, int],
    cjk_names: dict[str, int],
    aliases: dict[str, str],
    only: set[str] | None = None,
) -> None:
    """An alias seeds its canonical entity's node (when the graph has that entity); ``only``: just the aliases of
    these canonical names."""
    for alias, canon in aliases.items():
        if only is not None and canon not in only:
            continue
        target = word_names.get(canon, cjk_names.get(canon))
        if target is not None:
            seed_table(word_names, cjk_names, alias)[alias] = target


def _weights(
    subj: np.ndarray, obj: np.ndarray, trust: np.ndarray, n_e: int
) -> tuple[sparse.csr_matrix, np.ndarray]:
    """W, the symmetric weight matrix (entities first, then memories), as CSR with sorted rows, and its row
    sums. Fact i adds subject–memory and memory–object edges of weight trust_i; a fact whose subject and
    object are one entity adds one edge of twice the weight; an edge of weight 0 is left out. Memory rows are
    laid out directly (at most two entities each, in node order); entity rows are the same pairs counting-
    sorted by entity (scipy's COO→CSR is linear and stable, so each row stays in memory order)."""
    n_m = subj.size
    n = n_e + n_m
    same = (subj == obj) & (subj >= 0)
    obj = np.where(same, -1, obj)
    w_s = np.where(same, 2.0 * trust, trust)
    s_ok = (subj >= 0) & (w_s > 0)
    o_ok = (obj >= 0) & (trust > 0)
    both = s_ok & o_ok
    s_first = ~o_ok | (both & (subj < obj))  # the subject's edge comes first in the memory's row
    pair = np.stack([np.where(s_first, subj, obj), np.where(s_first, obj, subj)], axis=1).ravel()
    pair_w = np.stack([np.where(s_first, w_s, trust), np.where(s_first, trust, w_s)], axis=1).ravel()
    keep = np.stack([s_ok | o_ok, both], axis=1).ravel()
    m_indices = pair[keep]
    m_data = pair_w[keep]
    m_count = s_ok.astype(np.int64) + o_ok
    m_indptr = np.zeros(n_m + 1, dtype=np.int64)
    np.cumsum(m_count, out=m_indptr[1:])
    members = np.repeat(np.arange(n_m, dtype=np.int64), m_count)  # memory of each pair, ascending
    ent = sparse.csr_matrix((m_data, (m_indices, members)), shape=(n_e, n_m))
    index_type = np.int32 if max(n, 2 * m_data.size) < 2**31 else np.int64
    indptr = np.concatenate([ent.indptr, ent.indptr[-1] + m_indptr[1:]]).astype(index_type)
    indices = np.concatenate([ent.indices.astype(np.int64) + n_e, m_indices]).astype(index_type)
    weights = sparse.csr_matrix((np.concatenate([ent.data, m_data]), indices, indptr), shape=(n, n))
    weights.has_sorted_indices = True
    degree = np.concatenate(
        [
            np.bincount(m_indices, weights=m_data, minlength=n_e),
            np.where(s_ok, w_s, 0.0) + np.where(o_ok, trust, 0.0),
        ]
    )
    return weights, degree


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """Building allocates millions of small objects that all survive: the cyclic collector would walk them
    again and again (seconds at 1M triples) and find nothing to free."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def load_graph(*, agent_id: str, at: datetime, generation: Any = None) -> Graph:
    """Read the agent's current, believed facts and build its graph (one scan of the agent's fact rows)."""
    with _no_gc():
        facts = scan_facts(agent_id=agent_id, at=at)
        return build_columns(facts, _alias_map(agent_id) if len(facts.ids) else {}, generation=generation)


def _arrow_indices(nodes: np.ndarray) -> Any:
    import pyarrow as pa

    return pa.array(nodes, type=pa.int64())
