"""The classifier's features: hashed character n-grams and word uni- and bigrams of the normalised text view.

Hashing is numpy arithmetic (character n-grams: a polynomial over code points, mixed; words: CRC-32), so the
same text gives the same features on every machine and in every process, with no vocabulary to ship. A long
text is scored in overlapping windows (:func:`windows`), so an instruction hidden in a long document is not
diluted by the document around it; the n-gram hashes are computed once for the whole text.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import asdict, dataclass

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
    char_ngrams: tuple[int, ...] = (3, 4, 5)
    word_bigrams: bool = True
    window: int = 600  # characters; longer texts are scored window by window (0: never)
    stride: int = 300

    @property
    def n_features(self) -> int:
        return 1 << self.hash_bits

    def to_json(self) -> dict[str, object]:
        return {**asdict(self), "char_ngrams": list(self.char_ngrams)}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> FeatureConfig:
        values = dict(data)
        values["char_ngrams"] = tuple(int(n) for n in values.get("char_ngrams", ()))  # type: ignore[union-attr]
        return cls(**values)  # type: ignore[arg-type]


def _mix(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> _S33)
    h = h * _MIX
    return h ^ (h >> _S33)


class HashedText:
    """The hashed n-grams of one view with the character span each covers, so any window's features are a
    selection of them (an n-gram belongs to a window when its whole span lies inside it)."""

    __slots__ = ("config", "length", "_starts", "_ends", "_hashes")

    def __init__(self, view: str, config: FeatureConfig) -> None:
        self.config = config
        self.length = n_chars = len(view)
        starts: list[np.ndarray] = []
        ends: list[np.ndarray] = []
        hashes: list[np.ndarray] = []
        padded = f" {view} "
        codes = np.frombuffer(padded.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
        with np.errstate(over="ignore"):
            for n in config.char_ngrams:
                count = len(codes) - n + 1
                if count <= 0:
                    continue
                h = np.full(count, np.uint64(n), dtype=np.uint64)
                for k in range(n):
                    h = h * _P + codes[k : k + count]
                # n-gram i of the padded text covers view[i - 1 : i - 1 + n] (the padding counts as inside)
                first = np.arange(count, dtype=np.int64) - 1
                starts.append(np.maximum(first, 0))
                ends.append(np.minimum(first + n, n_chars))
                hashes.append(_mix(h))
            spans = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(view)]
            if spans:
                w_start = np.fromiter((s for s, _e, _w in spans), dtype=np.int64, count=len(spans))
                w_end = np.fromiter((e for _s, e, _w in spans), dtype=np.int64, count=len(spans))
                words = np.fromiter(
                    (zlib.crc32(w.encode("utf-8", "surrogatepass")) for _s, _e, w in spans),
                    dtype=np.uint64,
                    count=len(spans),
                )
                starts.append(w_start)
                ends.append(w_end)
                hashes.append(_mix(words + _SALT_WORD))
                if config.word_bigrams and len(spans) > 1:
                    starts.append(w_start[:-1])
                    ends.append(w_end[1:])
                    hashes.append(_mix(words[:-1] * _P + words[1:] + _SALT_BIGRAM))
        self._starts = np.concatenate(starts) if starts else np.zeros(0, np.int64)
        self._ends = np.concatenate(ends) if ends else np.zeros(0, np.int64)
        self._hashes = np.concatenate(hashes) if hashes else np.zeros(0, np.uint64)

    def features(self, lo: int = 0, hi: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(sorted feature indices, L2-normalised 1 + log(count) values) for the n-grams inside view[lo:hi]."""
        hi = self.length if hi is None else hi
        hashes = self._hashes
        if lo > 0 or hi < self.length:
            hashes = hashes[(self._starts >= lo) & (self._ends <= hi)]
        if hashes.size == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        idx, counts = np.unique(
            (hashes % np.uint64(self.config.n_features)).astype(np.int64), return_counts=True
        )
        values = (1.0 + np.log(counts)).astype(np.float32)
        values /= np.float32(np.sqrt(float(np.dot(values, values))))
        return idx, values


def windows(length: int, config: FeatureConfig) -> list[tuple[int, int]]:
    """The windows a text of ``length`` characters is scored in: the whole text when it fits one window."""
    if config.window <= 0 or length <= config.window:
        return [(0, length)]
    out = []
    lo = 0
    while True:
        hi = min(length, lo + config.window)
        out.append((lo, hi))
        if hi >= length:
            return out
        lo += config.stride
