"""Multi-signal entity edges (SPEC B4): five signals between two entities, their weighted composite and the
floor below which no edge is kept. Everything is computed in bulk with NumPy and SciPy sparse matrices.

The input is the agent's current, believed facts (``load_facts``). Entities are the facts' subjects and
objects, normalised and alias-resolved like the graph's nodes. The signals of a pair (a, b):

* **co-occurrence** (weight 0.25): the memories naming both (a fact whose subject and object they are) plus the
  sessions naming both; the composite uses ``log(1 + count)`` min-max scaled over the candidate pairs.
* **session Jaccard** (0.20): ``|S(a) ∩ S(b)| / |S(a) ∪ S(b)|`` over the sessions whose facts name each.
* **Adamic-Adar** (0.20): ``Σ 1 / log(deg z)`` over the neighbours z they share in the fact graph, min-max
  scaled. A neighbour with more than ``HUB_NEIGHBOURS`` neighbours is a hub: it is no evidence that two of its
  neighbours belong together, and is left out (it would also make the pairs quadratic in its degree).
* **type affinity** (0.15): ``D(a)ᵀ · AFFINITY · D(b)``, where D is an entity's distribution over the types
  person, organisation, place, concept, value, read from the predicate registry's value types: an entity is
  typed by the value types of the predicates it is the object of; one that is only ever a subject takes the
  subject types of its predicates (learned from the subjects typed by the first rule). An untyped entity has
  affinity ``UNTYPED_AFFINITY`` with anything.
* **embedding cosine** (0.20): the cosine of the two names' vectors (negative as 0), when an embedder is
  configured (``memory.engine.embeddings``); vectors are cached in ``entity_embedding``.

Candidate pairs are those with a co-occurrence or a shared neighbour (the dense signals never create a
candidate). A signal is missing for a run when nothing could produce it (no sessions, no shared neighbour, no
predicate the registry types, no embedder or a failing one): its weight is redistributed over the others in
proportion to theirs, and the report says so. An edge is kept when its composite is above the floor
(``DEFAULT_FLOOR``). Min-max scaling of values that are all equal gives 1 where the value is positive, else 0.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from scipy import sparse

from .registry import Registry, get_registry

log = logging.getLogger("memdesk.discovery")

WEIGHTS = {
    "cooccurrence": 0.25,
    "session_jaccard": 0.20,
    "adamic_adar": 0.20,
    "type_affinity": 0.15,
    "embedding": 0.20,
}
SIGNALS = tuple(WEIGHTS)
DEFAULT_FLOOR = 0.1
HUB_NEIGHBOURS = 100
# At most this many pairs become candidates through shared neighbours alone (no co-occurrence): the strongest
# by Adamic-Adar. A million facts link some ten million pairs two hops apart, most through one neighbour.
MAX_TWO_HOP = 2_000_000
MAX_SESSION_ENTITIES = 100  # a session naming more entities is an import, not a conversation: left out
TYPES = ("person", "organisation", "place", "concept", "value")
TYPE_OF_VALUE = {
    "person": 0,
    "organisation": 1,
    "place": 2,
    "text": 3,
    "enum": 3,
    "date": 4,
    "integer": 4,
    "url": 4,
    "email": 4,
}
# The prior of how much a link between two kinds of entity means ("a person and a place are not as close as
# two people"): person, organisation, place, concept, value.
AFFINITY = np.array(
    [
        [0.9, 1.0, 0.8, 0.6, 0.1],
        [1.0, 0.8, 0.9, 0.6, 0.1],
        [0.8, 0.9, 0.5, 0.3, 0.1],
        [0.6, 0.6, 0.3, 0.5, 0.1],
        [0.1, 0.1, 0.1, 0.1, 0.0],
    ]
)
UNTYPED_AFFINITY = 0.3
EMBED_BATCH = 256


# --- input ----------------------------------------------------------------------------------------------


@dataclass
class Facts:
    """An agent's current, believed facts as columns: entity codes of subject and object (-1: none), the
    value type of each fact's predicate (an index into ``TYPES``, -1 when the registry does not type it), its
    canonical predicate code (-1 when unknown to the registry), its session code (-1: none)."""

    ids: Any  # Arrow large_string
    predicates: Any  # Arrow large_string, as stored
    subjects: np.ndarray
    objects: np.ndarray
    types: np.ndarray
    canonical: np.ndarray
    sessions: np.ndarray
    entities: list[str]
    session_names: list[str]
    raw_names: Any = None  # Arrow: the names as written; raw_names[label_index[e]] is one of entity e's
    label_index: np.ndarray | None = None

    @property
    def n_entities(self) -> int:
        return len(self.entities)

    def label(self, entity: int) -> str:
        """Entity ``entity`` as it was written in a fact (its normalised name when none is known)."""
        if self.raw_names is None or self.label_index is None or self.label_index[entity] < 0:
            return self.entities[entity]
        return str(self.raw_names[int(self.label_index[entity])].as_py()).strip()

    def __len__(self) -> int:
        return int(self.subjects.size)


def facts_from_rows(
    rows: list[tuple[str, str, str, str | None, str | None]],
    *,
    aliases: dict[str, str] | None = None,
    registry: Registry | None = None,
) -> Facts:
    """``Facts`` from ``(id, subject, predicate, object, session_id)`` tuples (tests, small inputs)."""
    import pyarrow as pa

    cols = list(zip(*rows, strict=True)) if rows else [(), (), (), (), ()]
    return _facts(
        pa.array(list(cols[0]), pa.large_string()),
        pa.array(list(cols[1]), pa.large_string()),
        pa.array([o or "" for o in cols[3]], pa.large_string()),
        pa.array(list(cols[2]), pa.large_string()),
        pa.array([s or "" for s in cols[4]], pa.large_string()),
        aliases or {},
        registry or get_registry(),
    )


def load_facts(*, agent_id: str, at: datetime, registry: Registry | None = None) -> Facts:
    """The agent's facts current at ``at`` (believed: neither quarantined nor retracted), read as one row of
    aggregated columns like the graph's scan (row by row when a value holds the separator)."""
    import pyarrow as pa
    from django.db import connection

    from memory.engine.graph.aliases import _alias_map
    from memory.engine.graph.scan import _SEP, _aggregate_sql, _fact_scan_sql, _split_joined

    now = connection.ops.adapt_datetimefield_value(at)
    agg, sep, _ = _aggregate_sql()
    texts = ["m.id", "m.subject", "COALESCE(m.object, '')", "m.predicate", "COALESCE(m.session_id, '')"]
    select = "COUNT(*), " + ", ".join(f"{agg}({t}, {sep})" for t in texts)
    where = " AND (m.valid_from IS NULL OR m.valid_from <= %s)"
    with connection.cursor() as cur:
        cur.execute(_fact_scan_sql(select) + where, [agent_id, now, now])
        count, *joined = cur.fetchone()
        columns = _split_joined(joined, [_SEP] * len(texts), count) if count else []
        del joined
        if columns is None:
            cur.execute(_fact_scan_sql(", ".join(texts)) + where, [agent_id, now, now])
            rows = list(zip(*cur.fetchall(), strict=True))
            columns = [pa.array([str(v) for v in col], pa.large_string()) for col in rows]
    if not columns:
        columns = [pa.array([], pa.large_string())] * len(texts)
    ids, subjects, objects, predicates, sessions = columns
    return _facts(
        ids, subjects, objects, predicates, sessions, _alias_map(agent_id), registry or get_registry()
    )


def _facts(
    ids: Any, subjects: Any, objects: Any, predicates: Any, sessions: Any, aliases: dict, registry: Registry
) -> Facts:
    import pyarrow as pa
    import pyarrow.compute as pc

    from memory.engine.graph.names import _encode_names, _entity_nodes

    n = len(ids)
    codes, distinct = _encode_names(subjects, objects)
    node_of_raw, names = _entity_nodes(distinct, aliases)
    nodes = node_of_raw[codes]
    subj, obj = nodes[:n], nodes[n:]
    encoded = predicates.dictionary_encode()
    kinds, canon = _predicate_types(encoded.dictionary, registry)
    pcode = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    sess = pc.if_else(
        pc.equal(sessions, ""), pa.scalar(None, pa.large_string()), sessions
    ).dictionary_encode()
    label_index = np.full(len(names), -1, np.int64)
    named = np.flatnonzero(node_of_raw[:-1] >= 0)
    if named.size:
        entity_of, first = np.unique(node_of_raw[named], return_index=True)
        label_index[entity_of] = named[first]
    return Facts(
        ids=ids,
        predicates=predicates,
        subjects=subj,
        objects=obj,
        types=kinds[pcode] if n else np.zeros(0, np.int64),
        canonical=canon[pcode] if n else np.zeros(0, np.int64),
        sessions=sess.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64),
        entities=names.to_pylist(),
        session_names=sess.dictionary.to_pylist(),
        raw_names=distinct,
        label_index=label_index,
    )


def _predicate_types(distinct: Any, registry: Registry) -> tuple[np.ndarray, np.ndarray]:
    """For each distinct predicate: its value type's index in ``TYPES`` and its canonical predicate's code
    (both -1 when the registry does not know it). Normalised in Arrow (ASCII) or Python (the others), so a
    million distinct predicate names cost no million registry calls."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .text import normalize_predicate

    known: dict[str, str] = {}
    for name in registry.names:
        spec = registry.spec(name)
        if spec is None:
            continue
        known[name] = name
        for synonym in spec.synonyms:
            known[normalize_predicate(synonym)] = name
    if not len(distinct) or not known:
        return np.full(len(distinct), -1, np.int64), np.full(len(distinct), -1, np.int64)
    norm = pc.utf8_lower(distinct)
    norm = pc.replace_substring_regex(norm, pattern=r"[\s\-]+", replacement="_")
    norm = pc.utf8_trim(norm, "_")
    ascii_mask = pc.string_is_ascii(distinct)
    if not pc.all(ascii_mask).as_py():
        others = pc.invert(ascii_mask)
        fixed = [normalize_predicate(x) for x in distinct.filter(others).to_pylist()]
        norm = pc.replace_with_mask(norm, others, pa.array(fixed, type=norm.type))
    keys = sorted(known)
    hit = pc.index_in(norm, value_set=pa.array(keys, norm.type)).fill_null(-1).to_numpy(zero_copy_only=False)
    canon_names = sorted(set(known.values()))
    canon_of_key = np.array([canon_names.index(known[k]) for k in keys] + [-1], np.int64)
    type_of_key = np.array(
        [TYPE_OF_VALUE.get(registry.value_type(known[k]), -1) for k in keys] + [-1], np.int64
    )
    return type_of_key[hit], canon_of_key[hit]


# --- the signals ----------------------------------------------------------------------------------------


def minmax(values: np.ndarray) -> np.ndarray:
    """Min-max scaled to [0, 1]; all values equal: 1 where positive, else 0."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return v
    lo, hi = float(v.min()), float(v.max())
    if hi - lo <= 1e-12:
        return (v > 0).astype(np.float64)
    return (v - lo) / (hi - lo)


def redistribute(weights: dict[str, float], present: set[str]) -> dict[str, float]:
    """The weights of the present signals scaled to sum to 1 (a missing signal's weight goes to the others in
    proportion to theirs); missing ones are 0."""
    total = sum(w for k, w in weights.items() if k in present)
    if total <= 0:
        return {k: 0.0 for k in weights}
    return {k: (w / total if k in present else 0.0) for k, w in weights.items()}


def fact_matrix(facts: Facts) -> sparse.csr_matrix:
    """Counts of the facts linking each pair of entities (subject and object), upper triangle (a < b)."""
    linked = (facts.subjects >= 0) & (facts.objects >= 0) & (facts.subjects != facts.objects)
    s, o = facts.subjects[linked], facts.objects[linked]
    lo, hi = np.minimum(s, o), np.maximum(s, o)
    n = facts.n_entities
    return sparse.coo_matrix((np.ones(lo.size), (lo, hi)), shape=(n, n)).tocsr()


def symmetric_binary(upper: sparse.csr_matrix) -> sparse.csr_matrix:
    """The symmetric 0/1 matrix of an upper-triangular pattern (the fact graph's adjacency)."""
    m = (upper + upper.T).tocsr()
    m.data[:] = 1.0
    return m


def session_incidence(facts: Facts) -> tuple[sparse.csr_matrix, int]:
    """Entity × session incidence (1 where a fact of the session names the entity), sessions naming more
    than ``MAX_SESSION_ENTITIES`` entities left out; and how many were."""
    n_s = len(facts.session_names)
    if n_s == 0:
        return sparse.csr_matrix((facts.n_entities, 0)), 0
    has = facts.sessions >= 0
    ents = np.concatenate([facts.subjects[has], facts.objects[has]])
    sess = np.concatenate([facts.sessions[has], facts.sessions[has]])
    ok = ents >= 0
    b = sparse.coo_matrix(
        (np.ones(int(ok.sum()), np.float64), (ents[ok], sess[ok])), shape=(facts.n_entities, n_s)
    ).tocsr()
    b.data[:] = 1.0  # duplicates summed: presence only
    sizes = np.asarray(b.sum(axis=0)).ravel()
    big = sizes > MAX_SESSION_ENTITIES
    if big.any():
        b = (b @ sparse.diags((~big).astype(np.float64))).tocsr()
        b.eliminate_zeros()
    return b, int(big.sum())


def adamic_adar_matrix(adjacency: sparse.csr_matrix) -> sparse.csr_matrix:
    """``AA[a, b] = Σ_z 1/log(deg z)`` over shared neighbours z with 2 ≤ deg z ≤ ``HUB_NEIGHBOURS``
    (``adjacency`` binary and symmetric), upper triangle (a < b)."""
    deg = np.asarray(adjacency.sum(axis=1)).ravel()
    usable = (deg >= 2) & (deg <= HUB_NEIGHBOURS)
    w = np.zeros(deg.size)
    w[usable] = 1.0 / np.log(deg[usable])
    weighted = (sparse.diags(w) @ adjacency).tocsr()
    weighted.eliminate_zeros()
    return sparse.triu(adjacency @ weighted, k=1).tocsr()


def entity_types(facts: Facts) -> np.ndarray:
    """Each entity's distribution over ``TYPES`` (a zero row: untyped). See the module's docstring."""
    n, t = facts.n_entities, len(TYPES)
    votes = np.zeros((n, t))
    typed = (facts.objects >= 0) & (facts.types >= 0)
    np.add.at(votes, (facts.objects[typed], facts.types[typed]), 1.0)
    obj_dist = _rows_normalised(votes)
    known = (facts.canonical >= 0) & (facts.subjects >= 0)
    if not known.any():
        return obj_dist
    k = int(facts.canonical[known].max()) + 1
    profile = np.zeros((k, t))
    np.add.at(profile, facts.canonical[known], obj_dist[facts.subjects[known]])
    profile = _rows_normalised(profile)
    subject_votes = np.zeros((n, t))
    np.add.at(subject_votes, facts.subjects[known], profile[facts.canonical[known]])
    only_subject = obj_dist.sum(axis=1) == 0
    out = obj_dist.copy()
    out[only_subject] = _rows_normalised(subject_votes)[only_subject]
    return out


def _rows_normalised(m: np.ndarray) -> np.ndarray:
    sums = m.sum(axis=1, keepdims=True)
    return np.divide(m, sums, out=np.zeros_like(m), where=sums > 0)


def type_affinity(dist: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``D(a)ᵀ · AFFINITY · D(b)`` for each pair; ``UNTYPED_AFFINITY`` when either end is untyped. Entities share
    a handful of distinct type distributions: the affinity is computed once per pair of distinct ones and
    looked up per entity pair (no per-pair matrix products)."""
    if a.size == 0:
        return np.zeros(0)
    rows, which = np.unique(np.round(dist, 6), axis=0, return_inverse=True)
    which = which.ravel()
    if rows.shape[0] > 4096:  # too many mixtures for a table: per pair, in chunks
        out = np.empty(a.size)
        step = 1 << 18
        for lo in range(0, a.size, step):
            da, db = dist[a[lo : lo + step]], dist[b[lo : lo + step]]
            out[lo : lo + step] = np.einsum("pi,ij,pj->p", da, AFFINITY, db)
        untyped = dist.sum(axis=1) == 0
        out[untyped[a] | untyped[b]] = UNTYPED_AFFINITY
        return out
    table = rows @ AFFINITY @ rows.T
    untyped_row = rows.sum(axis=1) == 0
    table[untyped_row, :] = UNTYPED_AFFINITY
    table[:, untyped_row] = UNTYPED_AFFINITY
    return table[which[a], which[b]]


def embedding_cosine(vectors: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The cosine of each pair's unit vectors (negative as 0), in chunks."""
    out = np.zeros(a.size)
    step = 1 << 18
    for lo in range(0, a.size, step):
        hi = lo + step
        out[lo:hi] = np.einsum("pd,pd->p", vectors[a[lo:hi]], vectors[b[lo:hi]])
    return np.clip(out, 0.0, 1.0)


# --- the composite --------------------------------------------------------------------------------------


@dataclass
class Edges:
    """The candidate pairs' signals and the edges kept above the floor (``keep``), with what the report says
    about them. Pair arrays are aligned: ``a[k] < b[k]`` are entity codes of ``facts``."""

    facts: Facts
    a: np.ndarray
    b: np.ndarray
    cooccurrence: np.ndarray  # raw count (memories + sessions)
    linked: np.ndarray  # facts linking the pair
    shared_sessions: np.ndarray
    adamic_adar_raw: np.ndarray
    signals: dict[str, np.ndarray]  # scaled as the composite uses them; missing ones absent
    composite: np.ndarray
    keep: np.ndarray
    weights: dict[str, float]
    missing: dict[str, str]
    floor: float
    adjacency: sparse.csr_matrix
    incidence: sparse.csr_matrix
    types: np.ndarray
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def kept(self) -> np.ndarray:
        return np.flatnonzero(self.keep)


def compute_edges(
    facts: Facts, *, floor: float = DEFAULT_FLOOR, embedder: Any = None, agent_id: str = ""
) -> Edges:
    """The five signals over the candidate pairs, the composite with the weights of the signals present, and
    the floor. ``embedder``: an ``Embedder`` (its failure makes the signal missing, never the run fail)."""
    t0 = time.perf_counter()
    n = facts.n_entities
    missing: dict[str, str] = {}
    linked_m = fact_matrix(facts)
    adjacency = symmetric_binary(linked_m)
    incidence, big_sessions = session_incidence(facts)
    per_entity = np.asarray(incidence.sum(axis=1)).ravel()
    co_session = sparse.triu(incidence @ incidence.T, k=1).tocsr()
    aa = adamic_adar_matrix(adjacency)
    t_matrices = time.perf_counter()

    evidence = ((linked_m > 0).astype(np.float64) + (co_session > 0).astype(np.float64)).tocsr()
    two_hop, left_out = _strongest(aa, MAX_TWO_HOP)
    pattern = (evidence + (two_hop > 0).astype(np.float64)).tocsr()
    pattern.data[:] = 1.0
    pattern.sort_indices()
    del evidence, two_hop
    a = np.repeat(np.arange(n, dtype=np.int64), np.diff(pattern.indptr))
    b = pattern.indices.astype(np.int64)

    def on_pattern(m: sparse.csr_matrix) -> np.ndarray:
        """``m``'s values (upper triangle) at the candidate pairs, in pattern order (0 where m has none)."""
        if pattern.nnz == 0:
            return np.zeros(0)
        s = (m.multiply(pattern).tocsr() + pattern).tocsr()
        s.sort_indices()
        return s.data - 1.0

    linked = np.rint(on_pattern(linked_m)).astype(np.int64)
    shared_sessions = np.rint(on_pattern(co_session)).astype(np.int64)
    aa_raw = on_pattern(aa)
    cooc = linked + shared_sessions
    signals: dict[str, np.ndarray] = {"cooccurrence": minmax(np.log1p(cooc))}
    if incidence.nnz == 0:
        missing["session_jaccard"] = "no fact carries a session id"
    else:
        union = per_entity[a] + per_entity[b] - shared_sessions
        signals["session_jaccard"] = np.divide(shared_sessions, union, out=np.zeros(a.size), where=union > 0)
    if not (aa_raw > 0).any():
        missing["adamic_adar"] = "no two entities share a neighbour"
    else:
        signals["adamic_adar"] = minmax(aa_raw)
    types = entity_types(facts)
    if not (types.sum(axis=1) > 0).any():
        missing["type_affinity"] = "the predicate registry types none of the facts' predicates"
    else:
        signals["type_affinity"] = type_affinity(types, a, b)
    if embedder is None:
        missing["embedding"] = "no embedder is configured"
    elif a.size:
        try:
            vectors = entity_vectors(agent_id, facts, embedder, np.union1d(a, b))
            signals["embedding"] = embedding_cosine(vectors, a, b)
        except Exception as exc:  # noqa: BLE001 - an embedder is optional: its failure drops the signal
            log.warning("discovery: the embedder failed; its signal is left out", exc_info=True)
            missing["embedding"] = f"the embedder failed ({type(exc).__name__}): left out"
    if not a.size:
        missing.setdefault("adamic_adar", "no two entities share a neighbour")
    weights = redistribute(WEIGHTS, set(signals) - set(missing))
    composite = np.zeros(a.size)
    for name, values in signals.items():
        composite += weights[name] * values
    keep = composite > floor
    t_end = time.perf_counter()
    report = {
        "facts": len(facts),
        "entities": n,
        "candidates": int(a.size),
        "edges": int(keep.sum()),
        "floor": floor,
        "weights": {k: round(v, 6) for k, v in weights.items()},
        "missing": missing,
        "sessions_left_out": big_sessions,
        "two_hop_pairs_left_out": left_out,
        "hub_neighbours": HUB_NEIGHBOURS,
        "seconds": {"matrices": round(t_matrices - t0, 3), "signals": round(t_end - t_matrices, 3)},
    }
    return Edges(
        facts=facts,
        a=a,
        b=b,
        cooccurrence=cooc,
        linked=linked,
        shared_sessions=shared_sessions,
        adamic_adar_raw=aa_raw,
        signals=signals,
        composite=composite,
        keep=keep,
        weights=weights,
        missing=missing,
        floor=floor,
        adjacency=adjacency,
        incidence=incidence,
        types=types,
        report=report,
    )


def _strongest(m: sparse.csr_matrix, limit: int) -> tuple[sparse.csr_matrix, int]:
    """``m`` with only its ``limit`` largest entries (about: ties at the cut stay, unless they would make it
    half as many again, then they go); and how many entries were left out."""
    if m.nnz <= limit:
        return m, 0
    values = m.data
    cut = float(np.partition(values, values.size - limit)[values.size - limit])
    keep = values >= cut
    if keep.sum() > 1.5 * limit:
        keep = values > cut
    out = m.copy()
    out.data = np.where(keep, out.data, 0.0)
    out.eliminate_zeros()
    return out, int(m.nnz - out.nnz)


def entity_vectors(agent_id: str, facts: Facts, embedder: Any, wanted: np.ndarray) -> np.ndarray:
    """Unit vectors of the ``wanted`` entities (other rows zero), through the engine's cache of entity vectors
    (``entity_embedding``): only names never embedded before reach the embedder."""
    from memory import engine

    names = [facts.entities[i] for i in wanted.tolist()]
    got = engine.entity_vectors_for(agent_id=agent_id, entities=names, embedder=embedder)
    out = np.zeros((facts.n_entities, got.shape[1] if got.ndim == 2 else 1), dtype=np.float32)
    if got.size:
        out[wanted] = got
    return out


def type_label(dist_row: np.ndarray) -> str:
    """The entity's most likely type, or "untyped"."""
    if dist_row.sum() <= 0:
        return "untyped"
    return TYPES[int(np.argmax(dist_row))]
