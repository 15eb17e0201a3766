"""The classifier's features: hashed character n-grams and word uni- and bigrams of the normalised text view.

Hashing is numpy arithmetic (character n-grams: a polynomial over code points, mixed; words: CRC-32), so the
same text gives the same features on every machine and in every process, with no vocabulary to ship. A long
text is scored in overlapping windows (:func:`windows`), so an instruction hidden in a long document is not
diluted by the document around it; the n-gram hashes are computed once for the whole text.
"""

from __future__ import annotations

import math
import re
import zlib
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

_P = np.uint64(1_000_003)
_MIX = np.uint64(0xFF51AFD7ED558CCD)
_SALT_WORD = np.uint64(0x9E3779B97F4A7C15)
_SALT_BIGRAM = np.uint64(0x1234567)
_S33 = np.uint64(33)
# ASCII words, and single Chinese characters (their n-grams come from the character features)
_TOKEN = re.compile(r"[a-z0-9]+|[\u3400-\u4dbf\u4e00-\u9fff]")


@dataclass(frozen=True)
class FeatureConfig:
    """Recorded in the model's manifest; the scan builds features exactly as the model was trained."""

    hash_bits: int = 18
    char_ngrams: tuple[int, ...] = (3, 4)
    word_bigrams: bool = True
    window: int = 600  # characters; longer texts are scored window by window (0: never)
    stride: int = 300
    max_windows: int = 48  # a longer text gets proportionally longer windows (bounded time)

    @property
    def n_features(self) -> int:
        return 1 << self.hash_bits

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "char_ngrams": list(self.char_ngrams)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FeatureConfig:
        values = dict(data)
        values["char_ngrams"] = tuple(int(n) for n in values.get("char_ngrams", ()))
        return cls(**values)


def _ngram_salt(n: int) -> np.uint64:
    """``n * P**n``, added to a character n-gram's polynomial (n-grams of different sizes hash apart)."""
    with np.errstate(over="ignore"):
        return np.uint64(n) * _P ** np.uint64(n)


def _mix(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> _S33)
    h = h * _MIX
    return h ^ (h >> _S33)


_ALNUM_ASCII = np.zeros(128, dtype=bool)  # [a-z0-9], by code point
_ALNUM_ASCII[97:123] = True
_ALNUM_ASCII[48:58] = True
_LOG_COUNTS = 1 << 12  # 1 + log(count) as float32, looked up for counts below this
_ONE_PLUS_LOG = (1.0 + np.log(np.arange(1, _LOG_COUNTS, dtype=np.int64))).astype(np.float32)


def _token_starts(codes: np.ndarray, ascii_only: bool = False) -> np.ndarray:
    """Start positions of ``_TOKEN``'s matches, from the code points: a run of ASCII letters and digits starts
    where the previous character is not one; every Chinese character is a token of its own."""
    if ascii_only:
        alnum = _ALNUM_ASCII[codes]
    else:
        alnum = ((codes >= 97) & (codes <= 122)) | ((codes >= 48) & (codes <= 57))
    first = alnum.copy()
    first[1:] &= ~alnum[:-1]
    if not ascii_only:
        first |= ((codes >= 0x3400) & (codes <= 0x4DBF)) | ((codes >= 0x4E00) & (codes <= 0x9FFF))
    return np.flatnonzero(first)


def _one_plus_log(counts: np.ndarray) -> np.ndarray:
    """``(1.0 + np.log(counts)).astype(np.float32)``, from a table when the counts are small (the same values)."""
    if int(counts.max()) < _LOG_COUNTS:
        return _ONE_PLUS_LOG[counts - 1]
    return (1.0 + np.log(counts)).astype(np.float32)


class HashedText:
    """The hashed n-grams of one view, each kind in the order they start, so a window's features are slices: an
    n-gram belongs to the window its first character is in. Character n-gram ``i`` of the padded text starts at
    ``view[i - 1]`` (the leading pad counts as position 0), so its slice is arithmetic; words are looked up.
    All kinds are mixed and masked together, in one array (``_parts`` holds where each kind lies in it)."""

    __slots__ = ("config", "length", "_buckets", "_parts", "_word_starts", "_words_at", "_bigrams_at")

    def __init__(self, view: str, config: FeatureConfig) -> None:
        self.config = config
        self.length = len(view)
        self._word_starts = np.zeros(0, np.int64)
        padded = f" {view} "
        ascii_only = padded.isascii()
        if ascii_only:
            codes = np.frombuffer(padded.encode("ascii"), dtype=np.uint8).astype(np.uint64)
        else:
            codes = np.frombuffer(padded.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(
                np.uint64
            )
        raw: list[np.ndarray] = []  # unmixed hashes: each character n-gram size, then words, then bigrams
        with np.errstate(over="ignore"):
            # the n-gram at i hashes to n * P**n + sum(codes[i + k] * P**(n - 1 - k)); longer n-grams extend
            # shorter ones by one character
            poly: np.ndarray | None = None
            length = 0
            for n in sorted(config.char_ngrams):
                if len(codes) - n + 1 <= 0:
                    break
                while length < n:
                    poly = codes.copy() if poly is None else poly[:-1] * _P + codes[length:]
                    length += 1
                assert poly is not None
                raw.append(poly + _ngram_salt(n))
            n_chars = len(raw)
            tokens = _TOKEN.findall(view)
            if tokens:
                # where each token starts (the same tokens, in order)
                self._word_starts = _token_starts(codes[1:-1], ascii_only)
                # tokens are ASCII letters and digits or single Chinese characters: UTF-8 encodes them all
                words = np.fromiter(
                    map(zlib.crc32, map(str.encode, tokens)), dtype=np.uint64, count=len(tokens)
                )
                raw.append(words + _SALT_WORD)
                if config.word_bigrams and len(tokens) > 1:
                    raw.append(words[:-1] * _P + words[1:] + _SALT_BIGRAM)
            joined = np.concatenate(raw) if raw else np.zeros(0, np.uint64)
            # int32 when the buckets fit (numpy sorts 32-bit integers about twice as fast as 64-bit ones)
            self._buckets = (_mix(joined) & np.uint64(config.n_features - 1)).astype(
                np.int32 if config.hash_bits <= 30 else np.int64
            )
        ends = np.cumsum([len(r) for r in raw]).tolist()
        bounds = list(zip([0, *ends], ends, strict=False))  # (start, end) of each kind
        self._parts = bounds[:n_chars]  # (start, end) in _buckets of each character n-gram size
        self._words_at = bounds[n_chars] if len(bounds) > n_chars else (0, 0)
        self._bigrams_at = bounds[n_chars + 1] if len(bounds) > n_chars + 1 else (0, 0)

    def _chunks(self, lo: int, hi: int, w_lo: int, w_hi: int) -> list[np.ndarray]:
        """The slices of ``_buckets`` holding the n-grams that start in view[lo:hi] (words ``w_lo:w_hi``)."""
        buckets = self._buckets
        a = 0 if lo <= 0 else lo + 1  # character n-gram i starts at max(i - 1, 0)
        chunks = [
            buckets[start + min(a, end - start) : start + min(hi + 1, end - start)]
            for start, end in self._parts
        ]
        for start, end in (self._words_at, self._bigrams_at):  # bigram j starts where word j does
            chunks.append(buckets[start + min(w_lo, end - start) : start + min(w_hi, end - start)])
        return chunks

    def features(self, lo: int = 0, hi: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(sorted feature indices, L2-normalised 1 + log(count) values) of the n-grams starting in
        view[lo:hi] (all of them by default)."""
        buckets = self._buckets
        if lo <= 0 and (hi is None or hi >= self.length):
            joined = np.sort(buckets)
        else:
            hi = self.length if hi is None else hi
            w_lo, w_hi = np.searchsorted(self._word_starts, (lo, hi)).tolist()
            joined = np.concatenate(self._chunks(lo, hi, w_lo, w_hi))
            joined.sort()
        if joined.size == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        # np.unique(joined, return_counts=True) without its overhead: where each value of the sorted buckets starts
        first = np.empty(joined.size, dtype=bool)
        first[0] = True
        np.not_equal(joined[1:], joined[:-1], out=first[1:])
        at = np.flatnonzero(first)
        idx = joined[at].astype(np.int64)
        counts = np.empty_like(at)  # np.diff(at, append=joined.size), without its overhead
        np.subtract(at[1:], at[:-1], out=counts[:-1])
        counts[-1] = joined.size - at[-1]
        values = _one_plus_log(counts)
        values /= np.float32(math.sqrt(float(np.dot(values, values))))
        return idx, values


def windows(length: int, config: FeatureConfig) -> list[tuple[int, int]]:
    """The windows a text of ``length`` characters is scored in: the whole text when it fits one window, else
    windows overlapping by half, at most ``max_windows`` of them (then wider)."""
    if config.window <= 0 or length <= config.window:
        return [(0, length)]
    stride = max(config.stride, -(-length // config.max_windows))
    width = max(config.window, 2 * stride)
    out = []
    lo = 0
    while True:
        hi = min(length, lo + width)
        out.append((lo, hi))
        if hi >= length:
            return out
        lo += stride
