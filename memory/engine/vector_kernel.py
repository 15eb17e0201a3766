"""Exact top-k cosine search over an agent's vectors through an int8 copy (issue 17, ``vectors.nearest``).

The float32 product of a query with 100k × 128 vectors reads 51 MB and cost 3–6 ms here, most of the vector
side of a search. The int8 copy (one scale per row) is a quarter of that, and its product (a compiled loop,
numba) gives every row's score to within a known bound: ``|x·q − a| ≤ err + ε`` where ``err = ‖x − x̂‖`` is the
row's quantisation error (Cauchy–Schwarz, ``q`` of unit length) and ε covers the float32 rounding of both
products. So the k-th largest lower bound ``a − err − ε`` is a floor of the k-th largest exact score, every row
whose upper bound ``a + err + ε`` is under that floor is out, and the exact float32 scores of the few rows left
(tens, not thousands) give the same top k as scoring every row: the search is exact, not approximate.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# float32 rounding of a 128-term product of unit vectors is ~1e-6; this is ten times the worst case's margin
ROUNDING = 3e-5


def quantize(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q8, scale, err)`` of float32 rows: ``q8 · scale`` approximates each row, ``err`` bounds (from above)
    the Euclidean distance between a row and its approximation."""
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    n, d = matrix.shape
    q8 = np.empty((n, d), dtype=np.int8)
    scale = np.empty(n, dtype=np.float32)
    err = np.empty(n, dtype=np.float32)
    _quantize(matrix, q8, scale, err)
    return q8, scale, err


@njit(cache=True, nogil=True)
def _quantize(m, q8, scale, err):  # pragma: no cover - compiled; tested through ``quantize``
    n, d = m.shape
    for i in range(n):
        peak = 0.0
        for j in range(d):
            peak = max(peak, abs(float(m[i, j])))
        s = float(np.float32(peak / 127.0)) if peak > 0 else 1.0  # the float32 scale the product uses
        e = 0.0
        for j in range(d):
            v = min(127.0, max(-127.0, np.rint(float(m[i, j]) / s)))
            q8[i, j] = np.int8(v)
            diff = float(m[i, j]) - v * s
            e += diff * diff
        scale[i] = np.float32(s)
        err[i] = np.float32(np.sqrt(e) * 1.001 + 1e-7)


@njit(cache=True, nogil=True, fastmath=True)
def _bounds(q8, scale, err, q, slack):  # pragma: no cover - compiled; tested through ``candidates``
    n, d = q8.shape
    lower = np.empty(n, dtype=np.float32)
    upper = np.empty(n, dtype=np.float32)
    for i in range(n):
        acc = np.float32(0.0)
        for j in range(d):
            acc += np.float32(q8[i, j]) * q[j]
        a = acc * scale[i]
        margin = err[i] + scale[i] * slack + np.float32(ROUNDING)
        lower[i] = a - margin
        upper[i] = a + margin
    return lower, upper


@njit(cache=True, nogil=True)
def _kth_largest(x, k):  # pragma: no cover - compiled; tested through ``candidates``
    heap = np.sort(x[:k])  # ascending: a min-heap of the k largest seen
    for i in range(k, x.shape[0]):
        v = x[i]
        if v > heap[0]:
            heap[0] = v
            p = 0
            while True:
                c = 2 * p + 1
                if c >= k:
                    break
                if c + 1 < k and heap[c + 1] < heap[c]:
                    c += 1
                if heap[c] < heap[p]:
                    heap[c], heap[p] = heap[p], heap[c]
                    p = c
                else:
                    break
    return heap[0]


def candidates(q8: np.ndarray, scale: np.ndarray, err: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    """Row numbers (ascending) that include every row of the exact top ``k`` by ``x·q``, ties included; ``q``
    float32 of unit length, ``0 < k <= n``."""
    q = np.ascontiguousarray(q, dtype=np.float32)
    # float32 rounding of the int8 product: at most d·u·Σ|q8·q| ≤ d·u·127·‖q‖₁ (u = 2⁻²⁴), doubled
    slack = np.float32(q8.shape[1] * 127.0 * float(np.abs(q).sum()) * 2.0**-23)
    lower, upper = _bounds(q8, scale, err, q, slack)
    floor = _kth_largest(lower, k)
    return np.flatnonzero(upper >= floor)
