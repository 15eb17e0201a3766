"""The exact top-k of ``vectors.nearest`` past ``EXACT_ROWS`` rows: the int8 copy (``vector_kernel``) keeps every
row that can be in the top k, so the answer is the one scoring every row in float32 gives (issue 17)."""

from __future__ import annotations

import numpy as np
import pytest

from memory.engine import vector_kernel, vectors


def unit_rows(rng: np.random.Generator, n: int, d: int, clusters: int = 6) -> np.ndarray:
    """Clustered unit rows stored as the engine stores them (float16), with exact duplicates (ties)."""
    centers = rng.standard_normal((clusters, d))
    m = centers[rng.integers(0, clusters, n)] + 0.35 * rng.standard_normal((n, d))
    m[::9] = m[4]  # every ninth row is the same vector: ties at any cut
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m.astype("<f2").astype(np.float32)


def brute_force(matrix: vectors.AgentMatrix, q: np.ndarray, k: int) -> list[tuple[str, float]]:
    scores = np.einsum("ij,j->i", matrix.matrix, q)
    ranked = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), matrix.ids[i]))[:k]
    return [(matrix.ids[i], float(scores[i])) for i in ranked if scores[i] > 0]


@pytest.mark.parametrize("seed", range(6))
def test_candidates_hold_every_row_of_the_exact_top_k_and_few_others(seed):
    rng = np.random.default_rng(seed)
    d = [12, 128, 384][seed % 3]
    m = unit_rows(rng, 9_000, d)
    q = m[rng.integers(0, len(m))] + 0.1 * rng.standard_normal(d).astype(np.float32)
    q = (q / np.linalg.norm(q)).astype(np.float32)
    k = int(rng.integers(1, 60))
    exact = np.einsum("ij,j->i", m, q)
    kth = np.sort(exact)[-k]
    top = set(np.flatnonzero(exact >= kth).tolist())  # the top k with every row tied at the cut
    found = vector_kernel.candidates(*vector_kernel.quantize(m), q, k)
    assert top <= set(found.tolist())
    assert len(found) < len(m) // 2  # it does filter: the float32 product runs on a fraction of the rows


@pytest.mark.parametrize("seed", range(4))
def test_nearest_past_the_exact_size_is_the_brute_force_answer(seed):
    rng = np.random.default_rng(100 + seed)
    m = unit_rows(rng, vectors.EXACT_ROWS + 3_000, 128)
    ids = [f"m{i:06d}" for i in rng.permutation(len(m))]  # ids not in row order: ties go by id, not row
    matrix = vectors.AgentMatrix(ids, m, top=1)
    for _ in range(5):
        q = rng.standard_normal(128).astype(np.float32)
        q /= np.linalg.norm(q)
        for k in (1, 10, 30):
            assert vectors.nearest(matrix, q, k) == brute_force(matrix, q, k)
    assert matrix._quant is not None  # the int8 path ran


def test_an_append_quantises_the_new_rows_like_a_whole_read():
    rng = np.random.default_rng(7)
    m = unit_rows(rng, 5_000, 64)
    whole = vector_kernel.quantize(m)
    first = vectors.AgentMatrix([f"a{i}" for i in range(3_000)], m[:3_000], top=1)
    first.quantized()
    grown = first.appended([f"a{i}" for i in range(3_000, 5_000)], m[3_000:], top=2)
    assert grown._quant is not None
    for mine, theirs in zip(grown._quant, whole, strict=True):
        assert np.array_equal(mine, theirs)
    q = m[10]
    assert vectors.nearest(grown, q, 10)[0][0] == "a10"


def test_nearest_on_a_small_matrix_breaks_ties_by_id():
    m = np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (5, 1))
    matrix = vectors.AgentMatrix(["e", "c", "a", "d", "b"], m, top=1)
    assert [mid for mid, _ in vectors.nearest(matrix, np.array([1.0, 0.0], dtype=np.float32), 3)] == [
        "a",
        "b",
        "c",
    ]
