"""Dense vectors of memories: the R2 ``w_vec`` term (SPEC R2, issue 17).

* **Write time**: ``write_vectors`` embeds the rows a write stored and inserts their ``memory_vector`` rows (one
  per memory and model, float16 little-endian, unit length). It runs after the write's transaction: an embedder
  that fails to load or raises never fails the write (logged once per process); the backfill picks the row up.
* **Backfill**: ``backfill`` embeds, in id order and in batches each committed on its own, the rows that have no
  vector of the active model. Idempotent (``ignore_conflicts`` on (memory, model)) and resumable (a stopped run
  leaves whole batches; the next run starts from the rows still missing).
* **Search**: ``dense_hits`` ranks the agent's vectors by cosine with exact search over a per-(agent, model)
  matrix cached in the process (``AgentMatrix``): past ``EXACT_ROWS`` rows an int8 copy of it, with a per-row
  error bound, picks the few rows that can be in the top k and only those are scored in float32
  (``vector_kernel``; the same top k as scoring every row). The cache is checked against the largest
  ``memory_vector.id`` of the agent and model (one index seek per search), so a write or backfill in another
  process is seen at the next search: new rows are appended, a shrink (erasure) reloads. Rows that are no longer
  current, quarantined, retracted or erased may still sit in the matrix: the caller loads every hit through
  ``belief.current_sql()`` and the agent's id, so they never reach a result.
* **Which embedder**: ``memory.engine.embeddings.memory_embedder`` (``[retrieval] embedder`` in memdesk.toml,
  the ``MEMDESK_EMBEDDER`` environment variable, or ``set_memory_embedder``); none → no vector term, and search
  is exactly the lexical + graph ranking.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from memory.models import MemoryVector

from . import rawsql
from .embeddings import EMBED_BATCH, Embedder, memory_embedder, unit_matrix

log = logging.getLogger("memdesk.embeddings")

DTYPE = "<f2"  # stored as float16 little-endian: half the bytes of float32, cosine error < 1e-3
MAX_EMBED_CHARS = 4_000  # the embedder reads at most this many characters of a memory or query
CACHE_AGENTS = 16  # matrices kept in one process (least recently used dropped first)
# A matrix is read whole again after this long. Appending "rows above the largest id read" misses a row whose
# transaction took its id before, but committed after, the rows read (concurrent writers on PostgreSQL); such
# a row is found by lexical search meanwhile and joins the dense side at the next whole read.
RELOAD_SECONDS = 600.0

_logged: set[str] = set()
_logged_lock = threading.Lock()


def log_once(key: str, message: str) -> None:
    """A warning the first time ``key`` fails in this process (an embedder failing on every write would
    otherwise flood the log); later failures of the same kind go to debug."""
    with _logged_lock:
        first = key not in _logged
        _logged.add(key)
    if first:
        log.warning(message, exc_info=True)
    else:
        log.debug(message, exc_info=True)


def _model(embedder: Embedder) -> str:
    return str(embedder.model_name)[:200]


def _clip(text: str) -> str:
    return text[:MAX_EMBED_CHARS]


def embed_passages(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Unit float32 vectors of memory texts (raises on any embedder failure or a wrong shape)."""
    out = []
    for i in range(0, len(texts), EMBED_BATCH):
        batch = [_clip(t) for t in texts[i : i + EMBED_BATCH]]
        out.append(unit_matrix(embedder.embed(batch), len(batch)))
    return np.concatenate(out) if out else np.zeros((0, 1), dtype=np.float32)


def embed_query(embedder: Embedder, query: str) -> np.ndarray:
    """The unit vector of a query (an embedder with ``embed_query`` gets its query side, e.g. E5's prefix)."""
    fn = getattr(embedder, "embed_query", None) or embedder.embed
    return unit_matrix(fn([_clip(query)]), 1)[0]


_INSERT = (
    "INSERT INTO memory_vector (memory_id, agent_id, model, dim, vector, created_at)"
    " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (memory_id, model) DO NOTHING"
)


def _insert(agent_id: str, model: str, ids: Sequence[str], vectors: np.ndarray) -> int:
    """One executemany under a savepoint (a failure leaves the caller's transaction usable); a vector already
    stored for (memory, model) is kept (idempotent)."""
    t = rawsql.convert(MemoryVector, "created_at", timezone.now())
    rows = [
        (mid, agent_id, model, int(vec.shape[0]), vec.astype(DTYPE).tobytes(), t)
        for mid, vec in zip(ids, vectors, strict=True)
    ]
    with transaction.atomic():
        rawsql.run_many(_INSERT, rows)
    return len(rows)


def write_vectors(*, agent_id: str, items: Iterable[tuple[str, str]]) -> int:
    """Embed and store the vectors of rows a write just stored (``(memory id, text)`` pairs). Never raises:
    without an embedder it does nothing; on a failure it logs once and leaves the rows to the backfill."""
    pairs = [(mid, text) for mid, text in items if mid and isinstance(text, str)]
    if not pairs:
        return 0
    try:
        embedder = memory_embedder()
        if embedder is None:
            return 0
        vectors = embed_passages(embedder, [text for _, text in pairs])
        return _insert(agent_id, _model(embedder), [mid for mid, _ in pairs], vectors)
    except Exception:  # noqa: BLE001 - vectors are optional: the write has already succeeded
        log_once("write", "memory vectors were not written (the backfill will add them)")
        return 0


@dataclass(frozen=True)
class Pending:
    """A vector computed before a write's transaction, inserted inside it (``insert_pending``)."""

    model: str
    vector: np.ndarray


def embed_for_write(text: str) -> Pending | None:
    """The vector of a memory about to be written, computed outside the write lock; None when vectors are off
    or the embedder failed (logged once; the backfill adds it later). Never raises."""
    try:
        embedder = memory_embedder()
        if embedder is None:
            return None
        return Pending(_model(embedder), embed_passages(embedder, [text])[0])
    except Exception:  # noqa: BLE001 - vectors are optional: the write goes on without one
        log_once("write", "memory vectors were not written (the backfill will add them)")
        return None


def insert_pending(agent_id: str, memory_id: str, pending: Pending | None) -> None:
    """Insert a pending vector inside the write's transaction (one commit for the row and its vector), under a
    savepoint: a failure (no table on an old database) is logged once and leaves the write whole."""
    if pending is None:
        return
    try:
        _insert(agent_id, pending.model, [memory_id], pending.vector[None, :])
    except Exception:  # noqa: BLE001 - the savepoint rolled the insert back; the memory row stays
        log_once("write", "memory vectors were not written (the backfill will add them)")


@dataclass
class BackfillReport:
    model: str = ""
    embedded: int = 0
    batches: int = 0
    remaining: int = 0
    failed: bool = False
    agents: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "embedded": self.embedded,
            "batches": self.batches,
            "remaining": self.remaining,
            "failed": self.failed,
        }


def _missing_q(model: str, agent_id: str | None) -> tuple[str, list[str]]:
    where = "NOT EXISTS (SELECT 1 FROM memory_vector v WHERE v.memory_id = m.id AND v.model = %s)"
    params: list[str] = [model]
    if agent_id is not None:
        where = "m.agent_id = %s AND " + where
        params = [agent_id, *params]
    return where, params


def missing_count(*, model: str, agent_id: str | None = None) -> int:
    where, params = _missing_q(model, agent_id)
    with connection.cursor() as cur:
        cur.execute(f"SELECT COUNT(*) FROM memories m WHERE {where}", params)
        return int(cur.fetchone()[0])


def backfill(
    *,
    agent_id: str | None = None,
    batch_size: int = EMBED_BATCH,
    max_batches: int | None = None,
    embedder: Embedder | None = None,
) -> BackfillReport:
    """Embed the memories (of ``agent_id``, or all agents) that have no vector of the active model, oldest id
    first, ``batch_size`` rows per committed batch, at most ``max_batches`` batches (None: until none is left).
    Safe to run twice or concurrently (a row embedded twice is inserted once); a stopped run resumes where the
    rows without a vector start. An embedder failure stops the run (``failed``) and is logged once."""
    embedder = embedder or memory_embedder()
    report = BackfillReport()
    if embedder is None:
        return report
    model = report.model = _model(embedder)
    where, params = _missing_q(model, agent_id)
    after = ""
    while max_batches is None or report.batches < max_batches:
        with connection.cursor() as cur:
            cur.execute(
                f"SELECT m.id, m.agent_id, m.content FROM memories m WHERE {where}"
                f"{' AND m.id > %s' if after else ''} ORDER BY m.id LIMIT %s",
                [*params, *([after] if after else []), batch_size],
            )
            rows = cur.fetchall()
        if not rows:
            break
        try:
            vectors = embed_passages(embedder, [r[2] or "" for r in rows])
        except Exception:  # noqa: BLE001 - report and stop; the rows stay missing for the next run
            log_once("backfill", "the vector backfill stopped: the embedder failed")
            report.failed = True
            break
        by_agent: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            by_agent.setdefault(r[1], []).append(i)
        for agent, idx in by_agent.items():
            _insert(agent, model, [rows[i][0] for i in idx], vectors[idx])
        report.embedded += len(rows)
        report.batches += 1
        after = rows[-1][0]  # rows a failed insert skipped are retried by the next run, not looped on
    report.remaining = missing_count(model=model, agent_id=agent_id)
    return report


# --- search ---------------------------------------------------------------------------------------------------


@dataclass
class AgentMatrix:
    """The agent's vectors of one model: row i is ``ids[i]``; ``top`` is the largest ``memory_vector.id`` read."""

    ids: list[str]
    matrix: np.ndarray
    top: int
    loaded: float = field(default_factory=time.monotonic)  # when it was last read whole
    _row: dict[str, int] | None = None
    _quant: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def rows_of(self, ids: Iterable[str]) -> dict[str, int]:
        """Row numbers of those ``ids`` that have a vector here (the id index is built on first use)."""
        if self._row is None:
            self._row = {mid: i for i, mid in enumerate(self.ids)}
        return {mid: self._row[mid] for mid in ids if mid in self._row}

    def quantized(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The int8 copy of the matrix that ``nearest`` filters with (``vector_kernel``), built on first use and
        kept with the matrix (an append quantises only the new rows)."""
        if self._quant is None:
            from . import vector_kernel  # numba: imported (and its compiled code loaded) on first use

            self._quant = vector_kernel.quantize(self.matrix)
        return self._quant

    def appended(self, ids: list[str], mat: np.ndarray, top: int) -> AgentMatrix:
        """This matrix with ``ids``/``mat`` (rows of the same dimension) added below."""
        quant = None
        if self._quant is not None:
            from . import vector_kernel

            more = vector_kernel.quantize(mat)
            quant = (
                np.concatenate([self._quant[0], more[0]]),
                np.concatenate([self._quant[1], more[1]]),
                np.concatenate([self._quant[2], more[2]]),
            )
        return AgentMatrix(self.ids + ids, np.concatenate([self.matrix, mat]), top, self.loaded, _quant=quant)


@dataclass
class DenseScores:
    """A query's dense side: ``top`` (memory id, cosine) best first, and the cosine of any other id."""

    top: list[tuple[str, float]]
    matrix: AgentMatrix
    query: np.ndarray

    def cosine(self, ids: Iterable[str]) -> dict[str, float]:
        rows = self.matrix.rows_of(ids)
        if not rows:
            return {}
        sims = np.einsum("ij,j->i", self.matrix.matrix[list(rows.values())], self.query)
        return {mid: max(0.0, float(x)) for mid, x in zip(rows, sims, strict=True)}


_cache: OrderedDict[tuple[str, str], AgentMatrix] = OrderedDict()
_cache_lock = threading.Lock()
stats = {"loads": 0, "appends": 0, "hits": 0}


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


def _top_id(agent_id: str, model: str) -> int:
    with connection.cursor() as cur:
        cur.execute("SELECT MAX(id) FROM memory_vector WHERE agent_id = %s AND model = %s", [agent_id, model])
        row = cur.fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _read(agent_id: str, model: str, above: int, top: int) -> tuple[list[str], np.ndarray]:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT memory_id, dim, vector FROM memory_vector WHERE agent_id = %s AND model = %s"
            " AND id > %s AND id <= %s ORDER BY id",
            [agent_id, model, above, top],
        )
        rows = cur.fetchall()
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32)
    dim = int(rows[0][1])
    keep = [r for r in rows if int(r[1]) == dim]
    raw = b"".join(bytes(r[2]) for r in keep)
    mat = np.frombuffer(raw, dtype=DTYPE).astype(np.float32).reshape(len(keep), dim)
    return [r[0] for r in keep], mat


def agent_matrix(agent_id: str, model: str) -> AgentMatrix:
    """The cached matrix, brought up to the agent's newest vector row (appended, or reloaded after a shrink)."""
    top = _top_id(agent_id, model)
    with _cache_lock:
        cached = _cache.get((agent_id, model))
        fresh_enough = cached is not None and time.monotonic() - cached.loaded < RELOAD_SECONDS
        if cached is not None and cached.top == top and fresh_enough:
            _cache.move_to_end((agent_id, model))
            stats["hits"] += 1
            return cached
    fresh: AgentMatrix | None = None
    kind = "loads"
    if cached is not None and cached.top < top and time.monotonic() - cached.loaded < RELOAD_SECONDS:
        ids, mat = _read(agent_id, model, cached.top, top)
        if not cached.ids:
            fresh, kind = AgentMatrix(ids, mat, top, cached.loaded), "appends"
        elif not ids:
            fresh = AgentMatrix(cached.ids, cached.matrix, top, cached.loaded, _quant=cached._quant)
            kind = "appends"
        elif mat.shape[1] == cached.matrix.shape[1]:
            fresh, kind = cached.appended(ids, mat, top), "appends"
        # else: another dimension under the same model name: start over
    if fresh is None:  # first read, a shrink (erasure), or a change of dimension
        ids, mat = _read(agent_id, model, 0, top)
        fresh = AgentMatrix(ids, mat, top)
    with _cache_lock:
        stats[kind] += 1
        _cache[(agent_id, model)] = fresh
        _cache.move_to_end((agent_id, model))
        while len(_cache) > CACHE_AGENTS:
            _cache.popitem(last=False)
    return fresh


# Up to this many rows the float32 product over every row is as cheap as the int8 pass (``vector_kernel``).
EXACT_ROWS = 4_096


def nearest(matrix: AgentMatrix, q: np.ndarray, k: int) -> list[tuple[str, float]]:
    """The ``k`` rows of highest cosine with ``q`` (best first, ties by memory id); positive cosines only.
    Exact: past ``EXACT_ROWS`` rows the int8 copy picks the few rows that can be in the top ``k`` (with its
    error bound, see ``vector_kernel``) and only those are scored in float32, giving the same scores."""
    n = matrix.matrix.shape[0]
    if n == 0 or k <= 0 or matrix.matrix.shape[1] != q.shape[0]:
        return []
    k = min(k, n)
    q = np.ascontiguousarray(q, dtype=np.float32)
    if n > EXACT_ROWS:
        from . import vector_kernel

        rows = vector_kernel.candidates(*matrix.quantized(), q, k)
        # einsum's own loop rather than BLAS: OpenBLAS's threads cost 20-40 ms of synchronisation per product
        # on a busy two-core machine (benchmarks/bench_search.py)
        scores = np.einsum("ij,j->i", matrix.matrix[rows], q)
    else:
        rows = np.arange(n)
        scores = np.einsum("ij,j->i", matrix.matrix, q)
    if k < len(scores):  # every row tied with the k-th stays in, so ties are broken by id below
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = np.flatnonzero(scores >= kth)
        rows, scores = rows[keep], scores[keep]
    ranked = sorted(zip(rows.tolist(), scores.tolist(), strict=True), key=lambda t: (-t[1], matrix.ids[t[0]]))
    return [(matrix.ids[i], s) for i, s in ranked[:k] if s > 0]


def dense_hits(*, agent_id: str, query: str, k: int) -> DenseScores | None:
    """The agent's ``k`` memory ids nearest ``query`` by cosine (best first), or None when vectors are off,
    the query has no text, or the embedder fails (logged once; search is then lexical + graph). The ids still
    have to pass the current/quarantine filter (``Memory`` rows read through ``current_sql``)."""
    if not query.strip():
        return None
    try:
        embedder = memory_embedder()
        if embedder is None:
            return None
        q = embed_query(embedder, query)
        if (
            connection.in_atomic_block
        ):  # a failed read (no table on an old database) must not spoil the caller's
            with transaction.atomic():
                matrix = agent_matrix(agent_id, _model(embedder))
        else:
            matrix = agent_matrix(agent_id, _model(embedder))
        if matrix.matrix.shape[0] == 0:
            return None
        return DenseScores(nearest(matrix, q, k), matrix, q)
    except Exception:  # noqa: BLE001 - vectors are optional: never let them break search
        log_once("search", "vector search failed; searching lexical + graph only")
        return None


def delete_for(memory_ids: Sequence[str]) -> int:
    """Drop the vectors of these memories (every model): erasure calls it with the rows it deletes."""
    n = 0
    for i in range(0, len(memory_ids), 500):
        n += MemoryVector.objects.filter(memory_id__in=list(memory_ids[i : i + 500])).delete()[0]
    return n


__all__ = [
    "AgentMatrix",
    "BackfillReport",
    "DenseScores",
    "agent_matrix",
    "backfill",
    "clear_cache",
    "delete_for",
    "dense_terms",
    "dense_hits",
    "missing_count",
    "write_vectors",
]


def dense_terms(
    dense: DenseScores | None, ids: Sequence[str], *, cosines: bool = True
) -> tuple[dict[str, float], dict[str, int]]:
    """For the ranked candidates ``ids`` (current rows that passed the filters): their cosine (none when
    ``cosines`` is off: ``w_vec = 0`` weighs them by nothing), and the dense position of those in the dense
    top, counted over those rows only (as the full-text position is counted over current rows)."""
    if dense is None:
        return {}, {}
    valid = set(ids)
    pos = {mid: i for i, mid in enumerate(mid for mid, _ in dense.top if mid in valid)}
    return (dense.cosine(ids) if cosines else {}), pos
