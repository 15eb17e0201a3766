"""The classifier's compiled scoring path (numba): the same hashed features as ``features.HashedText`` and the
same windows, scored in one compiled call per text (``_score``) instead of a dozen numpy calls per window.

``hash_view`` computes the buckets ``HashedText`` computes (character n-gram polynomials, the CRC-32 of each
token, word bigrams; mixed and masked), in the same layout: each character n-gram size, then words, then
bigrams. ``_best_logit`` then, for every window, counts the window's buckets in a dense scratch array (one per
thread, 1 MB, left zeroed), takes the float32 ``1 + log(count)`` of each distinct bucket from the same table as
``features``, L2-normalises them in float32 as ``HashedText.features`` does and adds up ``weight · value`` in
float64. The numpy path's dot products are float32 (BLAS order), so a logit can differ from it by float32
rounding (~1e-7); nothing else differs.

:func:`best_logit` returns None when numba is missing or the kernels fail (logged once): the caller then uses
the numpy path. Compiled code is cached on disk (``cache=True``, ~430 KB in ``__pycache__``), so only the first
process pays the compile (3-7 s here); later ones pay ~1 s on their first text (importing numba, loading the
cache). That happens in a background thread started by the first text; until it is done the scan uses the
numpy path (the same verdicts), so the first write of a process never waits for it.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
from typing import Any

import numpy as np

from .features import _MIX, _ONE_PLUS_LOG, _P, _SALT_BIGRAM, _SALT_WORD, FeatureConfig

log = logging.getLogger("memdesk.injection")

try:
    from numba import njit
except ImportError:  # pragma: no cover - numba is a pinned dependency
    njit = None  # type: ignore[assignment]


def _crc_table() -> np.ndarray:
    """zlib's CRC-32 table (reflected polynomial 0xEDB88320)."""
    table = np.zeros(256, dtype=np.uint64)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table[i] = c
    return table


_CRC = _crc_table()
_U0 = np.uint64(0)
_U8 = np.uint64(8)
_U33 = np.uint64(33)
_UFF = np.uint64(0xFF)
_CRC_INIT = np.uint64(0xFFFFFFFF)


def _bucket(h, mask):  # pragma: no cover - compiled
    """``features._mix`` of one unmixed hash, masked to a bucket."""
    h = h ^ (h >> _U33)
    h = h * _MIX
    h = h ^ (h >> _U33)
    return np.int64(h & mask)


def _hash_view(
    codes, sizes, salts, mask, bigrams, crc
):  # pragma: no cover - compiled; tested through hash_view
    """(buckets, bounds, word_starts) of the padded text's code points: ``bounds[p]`` is the (start, end) in
    ``buckets`` of character n-gram size ``sizes[p]`` (the sizes that fit), then of words, then of bigrams."""
    n = codes.shape[0]
    length = n - 2
    n_parts = 0
    total = 0
    for s in sizes:
        if n - s + 1 <= 0:
            break
        n_parts += 1
        total += n - s + 1
    # tokens: runs of [a-z0-9], and each character in U+3400..U+4DBF, U+4E00..U+9FFF (their start, their CRC-32)
    starts = np.empty(length, dtype=np.int64)
    crcs = np.empty(length, dtype=np.uint64)
    n_tokens = 0
    j = 0
    while j < length:
        c = codes[j + 1]
        if (97 <= c <= 122) or (48 <= c <= 57):
            r = _CRC_INIT
            starts[n_tokens] = j
            while j < length:
                c = codes[j + 1]
                if not ((97 <= c <= 122) or (48 <= c <= 57)):
                    break
                r = crc[np.int64((r ^ np.uint64(c)) & _UFF)] ^ (r >> _U8)
                j += 1
            crcs[n_tokens] = r ^ _CRC_INIT
            n_tokens += 1
        elif (0x3400 <= c <= 0x4DBF) or (0x4E00 <= c <= 0x9FFF):
            r = _CRC_INIT
            cc = np.uint64(c)
            for byte in (  # UTF-8
                np.uint64(0xE0) | (cc >> np.uint64(12)),
                np.uint64(0x80) | ((cc >> np.uint64(6)) & np.uint64(0x3F)),
                np.uint64(0x80) | (cc & np.uint64(0x3F)),
            ):
                r = crc[np.int64((r ^ byte) & _UFF)] ^ (r >> _U8)
            starts[n_tokens] = j
            crcs[n_tokens] = r ^ _CRC_INIT
            n_tokens += 1
            j += 1
        else:
            j += 1
    starts = starts[:n_tokens].copy()
    n_bigrams = n_tokens - 1 if bigrams and n_tokens > 1 else 0
    buckets = np.empty(total + n_tokens + n_bigrams, dtype=np.int64)
    bounds = np.zeros((n_parts + 2, 2), dtype=np.int64)
    # character n-grams: poly[i] = sum(codes[i + k] * P**(width - 1 - k)), widened one character at a time
    poly = np.empty(n, dtype=np.uint64)
    for i in range(n):
        poly[i] = np.uint64(codes[i])
    width = 1
    at = 0
    for p in range(n_parts):
        s = sizes[p]
        while width < s:
            for i in range(n - width):
                poly[i] = poly[i] * _P + np.uint64(codes[i + width])
            width += 1
        count = n - s + 1
        bounds[p, 0] = at
        bounds[p, 1] = at + count
        salt = salts[p]
        for i in range(count):
            buckets[at + i] = _bucket(poly[i] + salt, mask)
        at += count
    bounds[n_parts, 0] = at
    bounds[n_parts, 1] = at + n_tokens
    for t in range(n_tokens):
        buckets[at + t] = _bucket(crcs[t] + _SALT_WORD, mask)
    at += n_tokens
    bounds[n_parts + 1, 0] = at
    bounds[n_parts + 1, 1] = at + n_bigrams
    for t in range(n_bigrams):
        buckets[at + t] = _bucket(crcs[t] * _P + crcs[t + 1] + _SALT_BIGRAM, mask)
    return buckets, bounds, starts


def _best_logit(buckets, bounds, starts, wins, length, weights, table, counts):  # pragma: no cover - compiled
    """The largest over ``wins`` of each window's ``weights · features`` (without the bias); ``counts`` is a
    zeroed int32 scratch array of ``len(weights)``, left zeroed.

    Per window: count its buckets in ``counts``; walk them again, keeping each bucket the first time (its count
    not yet reset to 0) without a branch; then the float32 ``1 + log(count)`` values, their float32 L2 norm
    (as ``HashedText.features``) and the float64 sum of ``weight * value / norm``. (Numbering the text's
    distinct buckets first, to count in arrays of the text's size, measured slower.)"""
    n_parts = bounds.shape[0] - 2
    distinct = np.empty(buckets.shape[0], dtype=np.int64)
    values = np.empty(buckets.shape[0], dtype=np.float32)
    found = np.empty(buckets.shape[0], dtype=np.int64)
    ranges = np.empty((n_parts + 2, 2), dtype=np.int64)
    best = -np.inf
    for w in range(wins.shape[0]):
        lo = wins[w, 0]
        hi = wins[w, 1]
        full = lo <= 0 and hi >= length
        a = 0 if lo <= 0 else lo + 1  # character n-gram i starts at max(i - 1, 0)
        w_lo = np.searchsorted(starts, lo)
        w_hi = np.searchsorted(starts, hi)
        for p in range(n_parts + 2):
            start = bounds[p, 0]
            size = bounds[p, 1] - start
            if full:
                first, last = 0, size
            elif p < n_parts:
                first, last = min(a, size), min(hi + 1, size)
            else:  # words, then bigrams: bigram j starts where word j does
                first, last = min(w_lo, size), min(w_hi, size)
            ranges[p, 0] = start + first
            ranges[p, 1] = start + max(first, last)
        for p in range(n_parts + 2):
            for i in range(ranges[p, 0], ranges[p, 1]):
                counts[buckets[i]] += 1
        nd = 0
        for p in range(n_parts + 2):
            for i in range(ranges[p, 0], ranges[p, 1]):
                b = buckets[i]
                c = counts[b]
                distinct[nd] = b
                found[nd] = c
                nd += c != 0  # the first time this window meets b
                counts[b] = 0
        squares = 0.0
        for k in range(nd):
            c = found[k]
            v = table[c - 1] if c <= table.shape[0] else np.float32(1.0 + math.log(c))
            values[k] = v
            squares += float(v) * float(v)
        if nd == 0:
            best = max(best, 0.0)
            continue
        norm = float(np.float32(math.sqrt(squares)))
        acc = 0.0
        for k in range(nd):
            acc += float(weights[distinct[k]]) * float(np.float32(float(values[k]) / norm))
        best = max(best, acc)
    return best


def _windows(length, window, stride, max_windows):  # pragma: no cover - compiled; ``features.windows``
    """``features.windows(length, config)`` as an (n, 2) array."""
    if window <= 0 or length <= window:
        out = np.empty((1, 2), dtype=np.int64)
        out[0, 0] = 0
        out[0, 1] = length
        return out
    stride = max(stride, -(-length // max_windows))
    width = max(window, 2 * stride)
    n = 1
    while (n - 1) * stride + width < length:
        n += 1
    out = np.empty((n, 2), dtype=np.int64)
    for w in range(n):
        out[w, 0] = w * stride
        out[w, 1] = min(length, w * stride + width)
    return out


def _score(
    codes, sizes, salts, mask, bigrams, crc, shape, weights, table, counts
):  # pragma: no cover - compiled
    """The best window logit (without the bias) of the padded text's code points; ``shape`` is the config's
    (window, stride, max_windows)."""
    buckets, bounds, starts = _hash_view(codes, sizes, salts, mask, bigrams, crc)
    length = codes.shape[0] - 2
    wins = _windows(length, shape[0], shape[1], shape[2])
    return _best_logit(buckets, bounds, starts, wins, length, weights, table, counts)


def _compiled(fn: Any) -> Any:
    """``njit(cache=True, nogil=True)(fn)``, cached apart for each name this module is imported under.

    The benchmarks load this package by path as ``memdesk_injection`` (no Django set-up); numba's cache is
    per source file, and loading an entry compiled under the other name imports that module (Django's
    ``memory.engine`` from the benchmarks; an unimportable ``memdesk_injection`` from the app), which fails.
    So the cache files' names carry the module's name (``kernel._score-<line>-<module>.py311.nbi``)."""
    dispatcher: Any = njit(cache=True, nogil=True)(fn)
    dispatcher._cache = _ModuleCache(fn)
    return dispatcher


if njit is not None:
    from numba.core.caching import CompileResultCacheImpl, FunctionCache

    class _ByModule:
        """A locator mixin: the module's name is part of the cache files' names."""

        def __init__(self, py_func: Any, py_file: str) -> None:
            super().__init__(py_func, py_file)  # type: ignore[call-arg]
            self._module = py_func.__module__

        def get_disambiguator(self) -> str:
            return f"{super().get_disambiguator()}-{self._module}"  # type: ignore[misc]

    class _ModuleCacheImpl(CompileResultCacheImpl):  # type: ignore[misc]
        _locator_classes: list[Any] = [
            type(cls.__name__, (_ByModule, cls), {}) for cls in CompileResultCacheImpl._locator_classes
        ]

    class _ModuleCache(FunctionCache):  # type: ignore[misc]
        _impl_class = _ModuleCacheImpl

    _bucket = _compiled(_bucket)
    _hash_view = _compiled(_hash_view)
    _best_logit = _compiled(_best_logit)
    _windows = _compiled(_windows)
    _score = _compiled(_score)

_scratch = threading.local()
_failed: list[BaseException] = []  # the kernels failed once (logged): the numpy path from then on


def _codes(view: str) -> np.ndarray:
    return np.frombuffer(f" {view} ".encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


@functools.lru_cache(maxsize=8)
def _constants(
    config: FeatureConfig,
) -> tuple[np.ndarray, np.ndarray, np.uint64, bool, np.ndarray, np.ndarray]:
    """The kernels' view of ``config``: n-gram sizes, their salts, the bucket mask, bigrams, the CRC table and
    (window, stride, max_windows)."""
    sizes = np.array(sorted(config.char_ngrams), dtype=np.int64)
    with np.errstate(over="ignore"):
        salts = np.array([np.uint64(n) * _P ** np.uint64(n) for n in sizes.tolist()], dtype=np.uint64)
    shape = np.array([config.window, config.stride, config.max_windows], dtype=np.int64)
    return sizes, salts, np.uint64(config.n_features - 1), bool(config.word_bigrams), _CRC, shape


def hash_view(view: str, config: FeatureConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(buckets, bounds, word starts) as ``HashedText`` holds them (``bounds``: (start, end) of each character
    n-gram size that fits, then of words, then of bigrams). Raises when the kernels are unavailable."""
    sizes, salts, mask, bigrams, crc, _shape = _constants(config)
    return _hash_view(_codes(view), sizes, salts, mask, bigrams, crc)  # type: ignore[no-any-return]


def kernel_windows(length: int, config: FeatureConfig) -> list[tuple[int, int]]:
    """The compiled ``features.windows`` (tests compare them)."""
    return [
        (lo, hi) for lo, hi in _windows(length, config.window, config.stride, config.max_windows).tolist()
    ]


def _counts(n: int) -> np.ndarray:
    found: np.ndarray | None = getattr(_scratch, "counts", None)
    if found is None or found.shape[0] != n:
        found = np.zeros(n, dtype=np.int32)
        _scratch.counts = found
    return found


_ready = threading.Event()  # the kernels are compiled (or loaded from the cache), or failed
_warming = threading.Lock()
_warm_started: list[threading.Thread] = []


def _warm_up() -> None:
    """Compile the kernels (or load them from numba's cache) on a tiny text: the types, not the values, decide
    what is compiled."""
    try:
        config = FeatureConfig()
        weights = np.zeros(config.n_features, dtype=np.float32)
        _score(_codes("warm up"), *_constants(config), weights, _ONE_PLUS_LOG, _counts(config.n_features))
    except Exception as exc:
        _failed.append(exc)
        log.warning("injection classifier: compiled scoring unavailable, using numpy: %s", exc)
    finally:
        _ready.set()


def _start_warm_up() -> None:
    with _warming:
        if not _warm_started:
            thread = threading.Thread(target=_warm_up, name="injection-kernel-warm-up", daemon=True)
            _warm_started.append(thread)
            thread.start()


def best_logit(view: str, config: FeatureConfig, weights: np.ndarray, wait: bool = False) -> float | None:
    """The largest window logit of ``view`` (without the bias), or None when the compiled path is unavailable,
    or not ready yet: the first call starts compiling (or loading) the kernels in a background thread, and
    until they are ready the caller uses the numpy path, so no write waits seconds for a compiler. ``wait``
    waits for them instead."""
    if njit is None or _failed or weights.shape != (config.n_features,):  # (the kernels index without checks)
        return None
    if not _ready.is_set():
        _start_warm_up()
        if not wait:
            return None
        _ready.wait()
        if _failed:
            return None
    try:
        counts = _counts(weights.shape[0])
        return float(_score(_codes(view), *_constants(config), weights, _ONE_PLUS_LOG, counts))
    except Exception as exc:  # a compile or runtime failure: fall back for the rest of the process
        _failed.append(exc)
        _scratch.counts = None
        log.warning("injection classifier: compiled scoring unavailable, using numpy: %s", exc)
        return None


def available() -> bool:
    """Whether :func:`best_logit` uses the compiled kernels (waiting for them to compile or load if needed)."""
    config = FeatureConfig()
    return best_logit("", config, np.zeros(config.n_features, np.float32), wait=True) is not None
