"""Training, calibrating and evaluating the classifier (``manage.py train_injection_model``, ``make
eval-injection``). Needs scikit-learn (a main dependency); the scan itself needs only numpy.

Data: JSON lines ``{"text", "label" (1 attack, 0 benign), "source", "kind", "lang"}`` (``--data``, e.g. the
shared ``train.jsonl``: ``../shared/data/injection/`` on the development machine only; a clone has none, so pass
your own labelled file), plus the project's own hand-written corpus (the ``dev`` split of
``tests/data/injection_corpus/corpus.jsonl``, source ``memdesk``; its held-out splits stay out).

Model: logistic regression over the hashed features of ``features.py``, each source weighted equally within
its label (so no single collection dominates what "attack" means), L2-regularised, with planted pairs built
from the training rows themselves (:func:`augment`). Thresholds are calibrated
on *out-of-source* scores: the sources are split into folds, each fold is scored by a model trained without
it, and the block threshold is the score that at most ``block_fp`` of the benign texts of each group (chat,
documents, code, instructions, facts) reach, the highest over the groups (the review threshold: ``review_fp``).
Everything is deterministic: same data and parameters, same weights file bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import classifier
from .features import FeatureConfig, HashedText, windows
from .normalise import prepare
from .scan import MAX_SCAN_CHARS, SUSPICIOUS_SCORE, scan_rules

REPO = Path(__file__).resolve().parents[3]
OWN_CORPUS = REPO / "tests" / "data" / "injection_corpus" / "corpus.jsonl"
OWN_SOURCE = "memdesk"
# the own corpus's categories as the shared data's kinds
_OWN_KIND = {
    "instruction_override": "direct_override",
    "role_hijack": "roleplay_jailbreak",
    "tool_abuse": "tool_abuse",
    "data_exfiltration": "exfiltration",
    "system_prompt_extraction": "extraction",
    "termination_manipulation": "termination",
    "encoding_bypass": "obfuscated",
    "chat": "chat_turn",
    "support": "chat_turn",
    "hardneg": "hard_negative",
    "fact": "fact",
    "deploy": "document",
    "doc": "document",
}
# benign kinds reported together (the categories)
BENIGN_GROUPS = {
    "chat": ("chat_turn",),
    "documents": ("document", "email"),
    "code": ("code",),
    "instructions": ("instruction",),
    "facts": ("fact",),
    "hard_negatives": ("hard_negative",),
}


CALIBRATION_GROUPS = ("chat", "documents", "code", "instructions", "facts")


class TrainingError(ValueError):
    """The training data is missing or malformed."""


@dataclass(frozen=True)
class Row:
    text: str
    label: int
    source: str
    kind: str
    lang: str


@dataclass(frozen=True)
class TrainConfig:
    features: FeatureConfig = field(default_factory=FeatureConfig)
    c: float = 0.3  # inverse L2 strength
    block_fp: float = 0.005
    review_fp: float = 0.03
    calibration_folds: int = 4  # source folds for the out-of-source calibration scores
    augment: int = 1500  # planted pairs added to each fit (see :func:`augment`); 0: none
    seed: int = 0
    max_iter: int = 1000

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "features": self.features.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrainConfig:
        return cls(**{**data, "features": FeatureConfig.from_json(data["features"])})

    @classmethod
    def from_manifest(cls, manifest: dict[str, Any]) -> TrainConfig:
        """The parameters a model was trained with."""
        return cls.from_json(manifest["training"]["parameters"])


def read_rows(path: Path) -> list[Row]:
    """The shared training file (or any file in its format)."""
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TrainingError(f"cannot read {path}: {exc}") from exc
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            row = Row(
                text=str(item["text"]),
                label=int(item["label"]),
                source=str(item["source"]),
                kind=str(item["kind"]),
                lang=str(item.get("lang", "")),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise TrainingError(f"{path}:{n}: not a training row ({exc})") from exc
        if row.label not in (0, 1) or not row.text or not row.source:
            raise TrainingError(f"{path}:{n}: label must be 0 or 1, text and source non-empty")
        rows.append(row)
    if not rows:
        raise TrainingError(f"{path}: no rows")
    return rows


def own_rows(path: Path = OWN_CORPUS) -> list[Row]:
    """The ``dev`` split of the project's hand-written corpus, as training rows (source ``memdesk``)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        if item["split"] != "dev":
            continue
        attack = item["label"] == "attack"
        key = item["family"] if attack else item["category"]
        out.append(Row(item["text"], int(attack), OWN_SOURCE, _OWN_KIND.get(key, key), item["lang"]))
    return out


def file_record(path: Path, rows: Sequence[Row]) -> dict[str, Any]:
    """What the manifest says about one training file: name, sha256 and row counts by source and label."""
    by_source: dict[str, list[int]] = {}
    for row in rows:
        counts = by_source.setdefault(row.source, [0, 0])
        counts[row.label] += 1
    return {
        "file": path.name,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "rows": len(rows),
        "attacks": sum(r.label for r in rows),
        "benign": sum(1 - r.label for r in rows),
        "sources": {s: {"benign": c[0], "attack": c[1]} for s, c in sorted(by_source.items())},
    }


# --- features and fitting ----------------------------------------------------------------------------------


def view_of(text: str) -> str:
    """The text view the classifier reads (as the scan computes it)."""
    return prepare(text, MAX_SCAN_CHARS).text_view if text else ""


def hashed(rows: Sequence[Row], config: FeatureConfig) -> list[HashedText]:
    return [HashedText(view_of(r.text), config) for r in rows]


def matrix(texts: Sequence[HashedText], config: FeatureConfig) -> Any:
    """The whole-text feature rows as a CSR matrix."""
    from scipy import sparse

    indices, values, indptr = [], [], [0]
    for h in texts:
        idx, val = h.features()
        indices.append(idx)
        values.append(val)
        indptr.append(indptr[-1] + len(idx))
    return sparse.csr_matrix(
        (np.concatenate(values), np.concatenate(indices).astype(np.int32), np.array(indptr, dtype=np.int64)),
        shape=(len(texts), config.n_features),
    )


def sample_weights(rows: Sequence[Row]) -> np.ndarray:
    """Each source has the same total weight within its label; the two labels weigh the same."""
    w = np.zeros(len(rows))
    for label in (0, 1):
        members = [i for i, r in enumerate(rows) if r.label == label]
        sizes: dict[str, int] = {}
        for i in members:
            sizes[rows[i].source] = sizes.get(rows[i].source, 0) + 1
        for i in members:
            w[i] = 1.0 / (sizes[rows[i].source] * len(sizes))
    return w * (len(rows) / w.sum())


def fit(x: Any, rows: Sequence[Row], config: TrainConfig) -> tuple[np.ndarray, float]:
    """(weights, bias) of the logistic regression."""
    from sklearn.linear_model import LogisticRegression

    y = np.array([r.label for r in rows])
    if len(set(y.tolist())) < 2:
        raise TrainingError("training needs both attacks and benign texts")
    model = LogisticRegression(
        C=config.c, solver="liblinear", max_iter=config.max_iter, random_state=config.seed, tol=1e-6
    )
    model.fit(x, y, sample_weight=sample_weights(rows))
    return model.coef_.ravel().astype(np.float64), float(model.intercept_[0])


AUGMENTED_SOURCE = "augmented"
_HOST_KINDS = ("document", "email", "code", "hard_negative")


def augment(rows: Sequence[Row], count: int, seed: int) -> list[Row]:
    """Planted pairs built from the given rows only: a benign document, code or security text with a short
    attack from another row inserted at a line or sentence boundary (an attack), and the same kind of host with
    an ordinary chat turn or request inserted (benign). They teach the model that an instruction planted in a
    document is the signal, not the document around it. At most one pair per ten rows (small samples stay
    mostly real). Deterministic for the same rows and seed."""
    count = min(count, len(rows) // 10)
    hosts = [r.text for r in rows if r.label == 0 and r.kind in _HOST_KINDS and 200 <= len(r.text) <= 3000]
    payloads = [r for r in rows if r.label == 1 and len(r.text) <= 400 and r.kind != "indirect_document"]
    fillers = [
        r
        for r in rows
        if r.label == 0 and r.kind in ("chat_turn", "instruction") and 20 <= len(r.text) <= 300
    ]
    if not (hosts and payloads and fillers) or count <= 0:
        return []
    rng = random.Random(seed)

    def plant(host: str, text: str) -> str:
        cut = rng.randrange(len(host))
        boundary = max(host.rfind("\n", 0, cut), host.rfind(". ", 0, cut))
        cut = boundary + 1 if boundary >= 0 else 0
        return f"{host[:cut]}\n{text}\n{host[cut:]}"

    out = []
    for _ in range(count):
        payload = rng.choice(payloads)
        out.append(
            Row(
                plant(rng.choice(hosts), payload.text), 1, AUGMENTED_SOURCE, "indirect_document", payload.lang
            )
        )
        filler = rng.choice(fillers)
        out.append(Row(plant(rng.choice(hosts), filler.text), 0, AUGMENTED_SOURCE, "document", filler.lang))
    return out


def fit_rows(
    rows: Sequence[Row], texts: Sequence[HashedText], config: TrainConfig
) -> tuple[np.ndarray, float]:
    """Fit on these rows (with their hashed texts) plus the planted pairs built from them."""
    extra = augment(rows, config.augment, config.seed)
    all_texts = list(texts) + hashed(extra, config.features)
    return fit(matrix(all_texts, config.features), list(rows) + extra, config)


def quantize(weights: np.ndarray) -> tuple[np.ndarray, float]:
    """int8 weights and their scale (the largest weight maps to 127)."""
    peak = float(np.max(np.abs(weights))) if weights.size else 0.0
    scale = peak / 127.0 if peak > 0 else 1.0
    return np.clip(np.rint(weights / scale), -127, 127).astype(np.int8), scale


def as_model(weights: np.ndarray, bias: float, features: FeatureConfig, block: float, review: float) -> Any:
    """A :class:`classifier.Model` from fitted weights, quantized exactly as the shipped file stores them."""
    q, scale = quantize(weights)
    return classifier.Model(
        weights=q.astype(np.float32) * np.float32(scale),
        bias=bias,
        features=features,
        block_threshold=block,
        review_threshold=review,
        sha256=hashlib.sha256(classifier.weights_bytes(q)).hexdigest(),
        manifest={"scale": scale},
    )


def probabilities(model: Any, texts: Sequence[HashedText]) -> np.ndarray:
    """Each text's probability as the scan computes it (the largest over its windows)."""
    out = np.empty(len(texts))
    for i, h in enumerate(texts):
        best = max(model.logit(*h.features(lo, hi)) for lo, hi in windows(h.length, model.features))
        out[i] = 1.0 / (1.0 + math.exp(-best)) if best >= 0 else math.exp(best) / (1.0 + math.exp(best))
    return out


def source_folds(sources: Iterable[str], k: int) -> list[list[str]]:
    """The sources dealt round-robin into ``k`` folds, in sorted order (deterministic)."""
    ordered = sorted(set(sources))
    folds: list[list[str]] = [[] for _ in range(min(k, len(ordered)))]
    for i, source in enumerate(ordered):
        folds[i % len(folds)].append(source)
    return folds


def threshold(benign_scores: np.ndarray, fp: float) -> float:
    """The smallest threshold that at most ``fp`` of these benign scores reach (kept inside (0, 1))."""
    if benign_scores.size == 0:
        return 0.5
    ordered = np.sort(benign_scores)[::-1]
    allowed = int(math.floor(fp * len(ordered)))
    t = float(np.nextafter(ordered[allowed], 1.0)) if allowed < len(ordered) else float(ordered[-1])
    return min(max(t, 1e-6), 1.0 - 1e-9)


def out_of_source_scores(rows: Sequence[Row], texts: Sequence[HashedText], config: TrainConfig) -> np.ndarray:
    """Every row's probability under a model trained without its source's fold (see :func:`source_folds`)."""
    scores = np.zeros(len(rows))
    for fold in source_folds((r.source for r in rows), config.calibration_folds):
        held = [i for i, r in enumerate(rows) if r.source in fold]
        kept = [i for i, r in enumerate(rows) if r.source not in fold]
        kept_rows = [rows[i] for i in kept]
        if len({r.label for r in kept_rows}) < 2:
            continue
        w, b = fit_rows(kept_rows, [texts[i] for i in kept], config)
        model = as_model(w, b, config.features, 0.5, 0.5)
        scores[held] = probabilities(model, [texts[i] for i in held])
    return scores


def calibrate(rows: Sequence[Row], texts: Sequence[HashedText], config: TrainConfig) -> tuple[float, float]:
    """(block, review): for each benign group the calibration covers (chat, instructions, facts, code,
    documents), the threshold its out-of-source scores exceed at most ``block_fp`` (``review_fp``) of the time;
    the highest group's. Hard negatives (security discussion) are reported, not calibrated on."""
    scores = out_of_source_scores(rows, texts, config)
    block = review = 0.0
    for kinds in (BENIGN_GROUPS[g] for g in CALIBRATION_GROUPS):
        group = np.array([scores[i] for i, r in enumerate(rows) if r.label == 0 and r.kind in kinds])
        if group.size:
            block = max(block, threshold(group, config.block_fp))
            review = max(review, threshold(group, config.review_fp))
    if block == 0.0:
        raise TrainingError("no benign rows of the calibrated groups")
    return block, min(review, block)


@dataclass(frozen=True)
class Trained:
    weights: bytes  # the weights file
    manifest: dict[str, Any]


def train(rows: Sequence[Row], config: TrainConfig, data: list[dict[str, Any]]) -> Trained:
    """Fit on every row, calibrate out of source, and build the weights file and manifest."""
    import scipy
    import sklearn

    texts = hashed(rows, config.features)
    weights, bias = fit_rows(rows, texts, config)
    block, review = calibrate(rows, texts, config)
    q, scale = quantize(weights)
    data_bytes = classifier.weights_bytes(q)
    manifest = {
        "format": classifier.MANIFEST_FORMAT,
        "model": "logistic regression over hashed character n-grams and word 1-2-grams (features.py)",
        "weights_file": classifier.WEIGHTS_FILE,
        "weights_sha256": hashlib.sha256(data_bytes).hexdigest(),
        "scale": scale,
        "bias": bias,
        "features": config.features.to_json(),
        "thresholds": {
            "block": block,
            "review": review,
            "block_fp_target": config.block_fp,
            "review_fp_target": config.review_fp,
            "calibration": (
                f"out-of-source scores ({config.calibration_folds} source folds); per benign group "
                f"({', '.join(CALIBRATION_GROUPS)}), the highest group threshold"
            ),
        },
        "training": {
            "command": "manage.py train_injection_model",
            "data": data,
            "rows": len(rows),
            "parameters": config.to_json(),
            "versions": {
                "scikit-learn": sklearn.__version__,
                "numpy": np.__version__,
                "scipy": scipy.__version__,
            },
        },
    }
    return Trained(weights=data_bytes, manifest=manifest)


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def write(trained: Trained, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / classifier.WEIGHTS_FILE).write_bytes(trained.weights)
    (directory / classifier.MANIFEST_FILE).write_bytes(manifest_bytes(trained.manifest))


# --- evaluation ----------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """Per row: the rules' verdict, the probability, and the combined verdict under the fold's thresholds."""

    rules_block: bool
    rules_suspicious: bool
    probability: float
    block_threshold: float
    review_threshold: float

    @property
    def classifier_block(self) -> bool:
        return self.probability >= self.block_threshold

    @property
    def blocked(self) -> bool:
        return self.rules_block or self.classifier_block

    @property
    def suspicious(self) -> bool:
        return not self.blocked and (self.rules_suspicious or self.probability >= self.review_threshold)


def rule_verdicts(rows: Sequence[Row]) -> list[tuple[bool, bool]]:
    """(blocked, suspicious by score) of the rules alone, per row."""
    out = []
    for row in rows:
        r = scan_rules(row.text)
        out.append((r.blocked, r.score >= SUSPICIOUS_SCORE))
    return out


def leave_one_source_out(
    rows: Sequence[Row],
    config: TrainConfig,
    rules: Sequence[tuple[bool, bool]],
    sources: Iterable[str] | None = None,
) -> list[Outcome | None]:
    """Each source held out in turn: trained and calibrated on the others, scored on it. Rows of sources not
    in ``sources`` (default: all) are left None."""
    texts = hashed(rows, config.features)
    wanted = sorted(set(sources) if sources is not None else {r.source for r in rows})
    out: list[Outcome | None] = [None] * len(rows)
    for source in wanted:
        held = [i for i, r in enumerate(rows) if r.source == source]
        kept = [i for i, r in enumerate(rows) if r.source != source]
        kept_rows = [rows[i] for i in kept]
        kept_texts = [texts[i] for i in kept]
        w, b = fit_rows(kept_rows, kept_texts, config)
        block, review = calibrate(kept_rows, kept_texts, config)
        model = as_model(w, b, config.features, block, review)
        for i, p in zip(held, probabilities(model, [texts[i] for i in held]), strict=True):
            out[i] = Outcome(rules[i][0], rules[i][1], float(p), block, review)
    return out


def _rates(items: list[tuple[Row, Outcome]]) -> dict[str, Any]:
    n = len(items)
    if not n:
        return {"n": 0}

    def rate(flags: Iterable[bool]) -> float:
        return round(sum(flags) / n, 4)

    return {
        "n": n,
        "blocked": rate(o.blocked for _r, o in items),
        "suspicious": rate(o.suspicious for _r, o in items),
        "rules_blocked": rate(o.rules_block for _r, o in items),
        "classifier_blocked": rate(o.classifier_block for _r, o in items),
    }


def summarise(rows: Sequence[Row], outcomes: Sequence[Outcome | None]) -> dict[str, Any]:
    """Detection by held-out source and by kind, benign false positives by source and by group."""
    pairs = [(r, o) for r, o in zip(rows, outcomes, strict=True) if o is not None]
    attacks = [(r, o) for r, o in pairs if r.label == 1]
    benign = [(r, o) for r, o in pairs if r.label == 0]

    def by(items: list[tuple[Row, Outcome]], key: str) -> dict[str, Any]:
        groups: dict[str, list[tuple[Row, Outcome]]] = {}
        for r, o in items:
            groups.setdefault(getattr(r, key), []).append((r, o))
        return {k: _rates(v) for k, v in sorted(groups.items())}

    attack_sources = by(attacks, "source")
    public = {s: v for s, v in attack_sources.items() if s != OWN_SOURCE}
    groups = {
        name: _rates([(r, o) for r, o in benign if r.kind in kinds and r.source != OWN_SOURCE])
        for name, kinds in BENIGN_GROUPS.items()
    }
    return {
        "attacks": _rates([(r, o) for r, o in attacks if r.source != OWN_SOURCE]),
        "attacks_macro_by_source": {
            key: round(sum(v[key] for v in public.values()) / len(public), 4) if public else None
            for key in ("blocked", "suspicious", "rules_blocked", "classifier_blocked")
        },
        "attacks_by_source": attack_sources,
        "attacks_by_kind": by([(r, o) for r, o in attacks if r.source != OWN_SOURCE], "kind"),
        "benign": _rates([(r, o) for r, o in benign if r.source != OWN_SOURCE]),
        "benign_by_group": groups,
        "benign_by_source": by(benign, "source"),
        "benign_by_kind": by([(r, o) for r, o in benign if r.source != OWN_SOURCE], "kind"),
    }
