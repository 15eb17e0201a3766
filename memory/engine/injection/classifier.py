"""The trained classifier shipped with the project (SPEC P4): a linear model over hashed n-grams.

``model/`` holds ``weights.npy`` (one int8 weight per hashed feature) and ``manifest.json`` (the weights'
sha256, scale and bias, the feature configuration, the calibrated thresholds and what the model was trained
on). Loading needs no network and verifies the checksum; a missing, corrupted or inconsistent model makes
:func:`current` raise :class:`ModelUnavailable` (logged once), and the scan then fails closed.

The probability of a text is the largest over its windows (``features.windows``): an instruction planted in a
long document scores as it would alone.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import logging
import math
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from .features import FeatureConfig, HashedText, windows

log = logging.getLogger("memdesk.injection")

MODEL_DIR = Path(__file__).with_name("model")
WEIGHTS_FILE = "weights.npy"
MANIFEST_FILE = "manifest.json"
MANIFEST_FORMAT = 1


class ModelUnavailable(RuntimeError):
    """The classifier cannot be used (missing, corrupted or inconsistent model files)."""


@dataclass(frozen=True)
class Model:
    weights: np.ndarray  # float32, one per hashed feature
    bias: float
    features: FeatureConfig
    block_threshold: float
    review_threshold: float
    sha256: str  # of the weights file
    manifest: dict[str, Any]

    @property
    def version(self) -> str:
        return self.sha256[:12]

    def logit(self, idx: np.ndarray, values: np.ndarray) -> float:
        return float(np.dot(self.weights[idx], values)) + self.bias

    def probability(self, view: str) -> float:
        """P(attack) for a normalised text view: the largest over its windows (compiled, ``kernel``; the numpy
        path when the kernels are unavailable)."""
        kernel = _kernel()
        best = None if kernel is None else kernel.best_logit(view, self.features, self.weights)
        if best is None:
            return self.probability_numpy(view)
        return _sigmoid(best + self.bias)

    def best_logit_numpy(self, view: str) -> float:
        """The largest window logit of ``view`` through ``HashedText.features`` (what training uses)."""
        hashed = HashedText(view, self.features)
        return max(self.logit(*hashed.features(lo, hi)) for lo, hi in windows(len(view), self.features))

    def probability_numpy(self, view: str) -> float:
        """:meth:`probability` through numpy alone (float32 dot products; ``kernel``'s are float64)."""
        return _sigmoid(self.best_logit_numpy(view))


_KERNEL = f"{__package__}.kernel"
_kernel_loader: list[threading.Thread] = []
_kernel_loader_lock = threading.Lock()


def _load_kernel() -> None:
    try:
        importlib.import_module(_KERNEL).available()  # imports numba, compiles or loads the kernels; waits
    except Exception:  # ImportError included: the numpy path stays (``kernel`` logs its own failures)
        log.warning("injection classifier: compiled scoring unavailable, using numpy", exc_info=True)


def _kernel() -> ModuleType | None:
    """The compiled scoring module once it is ready, else None (the numpy path scores). The first text of a
    process starts a background thread that imports it (numba's import alone is ~0.5 s of CPU), compiles or
    loads its kernels and then makes it ready: no write pays for that, neither in time nor in its token's CPU
    share."""
    module = sys.modules.get(_KERNEL)
    # (while the loader imports it, the module is in sys.modules half-built: no ``_ready`` yet)
    ready = getattr(module, "_ready", None)
    if ready is not None and ready.is_set():
        return module
    with _kernel_loader_lock:
        if not _kernel_loader:
            thread = threading.Thread(target=_load_kernel, name="injection-kernel-load", daemon=True)
            _kernel_loader.append(thread)
            thread.start()
    return None


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def weights_bytes(q: np.ndarray) -> bytes:
    """The weights file's bytes (``np.save`` of an int8 vector: deterministic)."""
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(q, dtype=np.int8), allow_pickle=False)
    return buf.getvalue()


def _threshold(manifest: dict[str, Any], key: str) -> float:
    value = manifest.get("thresholds", {}).get(key)
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0.0 < value < 1.0:
        raise ModelUnavailable(f"manifest threshold {key!r} is missing or out of range")
    return float(value)


def load(directory: Path = MODEL_DIR) -> Model:
    """Read and verify the model in ``directory``; :class:`ModelUnavailable` says what is wrong."""
    try:
        manifest = json.loads((directory / MANIFEST_FILE).read_text(encoding="utf-8"))
        data = (directory / WEIGHTS_FILE).read_bytes()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelUnavailable(f"cannot read the injection model in {directory}: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise ModelUnavailable("injection model manifest has an unknown format")
    digest = hashlib.sha256(data).hexdigest()
    if digest != manifest.get("weights_sha256"):
        raise ModelUnavailable(f"injection model checksum mismatch ({digest[:12]} is not the manifest's)")
    try:
        config = FeatureConfig.from_json(manifest["features"])
        q = np.load(io.BytesIO(data), allow_pickle=False)
        scale = float(manifest["scale"])
        bias = float(manifest["bias"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelUnavailable(f"injection model is malformed: {exc}") from exc
    if q.dtype != np.int8 or q.shape != (config.n_features,) or not (scale > 0 and math.isfinite(bias)):
        raise ModelUnavailable("injection model weights do not match the manifest")
    block = _threshold(manifest, "block")
    review = _threshold(manifest, "review")
    if review > block:
        raise ModelUnavailable("injection model review threshold is above its block threshold")
    return Model(
        weights=q.astype(np.float32) * np.float32(scale),
        bias=bias,
        features=config,
        block_threshold=block,
        review_threshold=review,
        sha256=digest,
        manifest=manifest,
    )


_lock = threading.Lock()
_cached: dict[Path, Model | ModelUnavailable] = {}


def current(directory: Path | None = None) -> Model:
    """The shipped model, loaded once per process; raises :class:`ModelUnavailable` (logged once) when it
    cannot be used."""
    key = directory or MODEL_DIR
    found = _cached.get(key)
    if found is None:
        with _lock:
            found = _cached.get(key)
            if found is None:
                try:
                    found = load(key)
                except ModelUnavailable as exc:
                    log.error("injection classifier unavailable, writes will be quarantined: %s", exc)
                    found = exc
                _cached[key] = found
    if isinstance(found, ModelUnavailable):
        raise found
    return found


def reset() -> None:
    """Forget the loaded model (tests; after retraining in the same process)."""
    with _lock:
        _cached.clear()
