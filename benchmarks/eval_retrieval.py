"""Retrieval quality on public long-term conversational memory benchmarks (issue 17; SPEC R2, G).

``make eval-retrieval`` (or ``python benchmarks/eval_retrieval.py --data ../shared/data/retrieval``) stores every
conversation through the public engine API as an agent would, one memory per turn (``engine.store`` with the
session id; the session's date and the turn's role go in ``metadata``, since a plain store takes no time of its
own), in a fresh agent per conversation, then asks each question with ``engine.search(limit=10, touch=False)``.
Two baselines rank the same texts in the same run:

* ``bm25``: Okapi BM25 (``rank_bm25.BM25Okapi``, k1=1.5, b=0.75) over the engine's own text units (NFKC, lower
  case, words, CJK bigrams), so only the scoring differs from the engine's lexical side;
* ``dense``: cosine over the vectors of an embedder: by default the default memory embedder (the static table in
  the repository), ``--dense e5`` / ``minilm`` / ``module:factory`` for another, ``--dense none`` for none.

With a dense embedder the engine writes and searches memory vectors with the same embedder (``--vectors on``,
the default; one text cache serves both), and ``engine-novec`` ranks without vectors in the same run.

Data (never in the repository; ``--data``, default ``../shared/data/retrieval``, which exists only on the
development machine: in a clone, pass your own download of the two public sets; schemas in its SOURCES.md):

* ``lme-oracle``: LongMemEval oracle, 500 questions, each haystack only its evidence sessions;
* ``lme-s``: the 72-question LongMemEval_S subset, 42–55 sessions per haystack (evidence plus distractors);
* ``madial-en`` / ``madial-zh``: MADial-Bench, a user's archive of dated event memories, queried with the
  dialogue before the turn where the assistant should recall them. Question type: the scene of the first
  relevant memory.

Metrics per question (binary relevance, the evidence turns ``has_answer``; as upstream, ``_abs`` questions and
questions without an evidence turn are left out): ``r@5``/``r@10`` = recall_any (some evidence in the top k),
``rall@10`` = recall_all (every evidence item in the top 10), ``ndcg@10``. Reported per question type and overall
(``all``: the mean over questions).

Splits: each question falls in ``dev`` or ``heldout`` by a hash of its id (about half each). Tune on ``dev`` only;
``heldout`` is reported beside it and never looked at while tuning.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

REPO = HERE.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "retrieval"
# MADial first: its long dialogue queries are cheap while the shared FTS index is still small.
DATASETS = ("madial-en", "madial-zh", "lme-oracle", "lme-s")
K = 10
MAX_TEXT_BYTES = 60_000  # under the engine's 64 KB content limit; every retriever sees the same cut text
METRICS = ("r@5", "r@10", "rall@10", "ndcg@10")


# --- data -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Doc:
    id: str
    text: str
    session_id: str | None = None
    date: str | None = None
    role: str | None = None


@dataclass(frozen=True)
class Question:
    id: str
    type: str
    query: str
    relevant: frozenset[str]
    split: str
    date: str | None = None


@dataclass
class Conversation:
    key: str
    docs: list[Doc]
    questions: list[Question] = field(default_factory=list)


def split_of(key: str) -> str:
    """``dev`` or ``heldout``, fixed by a hash of the question id (about half each)."""
    return "dev" if int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 2 == 0 else "heldout"


def _cut(text: str) -> str:
    raw = text.replace("\x00", " ").encode("utf-8")
    if len(raw) <= MAX_TEXT_BYTES:
        return text.replace("\x00", " ")
    return raw[:MAX_TEXT_BYTES].decode("utf-8", errors="ignore")


def load_longmemeval(folder: Path, dataset: str) -> tuple[list[Conversation], dict[str, int]]:
    """One conversation per question (its own haystack), one document per non-empty turn (``<session>_<n>``)."""
    convs: list[Conversation] = []
    skipped = {"abstention": 0, "no_evidence_turn": 0}
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        qid = str(data["question_id"])
        if qid.endswith("_abs"):
            skipped["abstention"] += 1
            continue
        docs: list[Doc] = []
        relevant: set[str] = set()
        for sid, date, session in zip(
            data["haystack_session_ids"], data["haystack_dates"], data["haystack_sessions"], strict=True
        ):
            for i, turn in enumerate(session):
                content = turn.get("content") or ""
                if not content.strip():
                    continue
                doc = Doc(f"{sid}_{i + 1}", _cut(content), str(sid), str(date), turn.get("role"))
                docs.append(doc)
                if turn.get("has_answer"):
                    relevant.add(doc.id)
        if not relevant:
            skipped["no_evidence_turn"] += 1
            continue
        question = Question(
            qid,
            str(data["question_type"]),
            str(data["question"]),
            frozenset(relevant),
            split_of(qid),
            str(data.get("question_date") or ""),
        )
        convs.append(Conversation(f"{dataset}:{qid}", docs, [question]))
    return convs, skipped


_SPEAKER = re.compile(r"^\s*<[^>]*>\s*[:：]\s*")


def _dialogue_line(line: str) -> str:
    text = _SPEAKER.sub("", line.strip())
    return text.strip().strip('"“”「」')


def load_madial(folder: Path, lang: str) -> tuple[list[Conversation], dict[str, int]]:
    """One conversation per simulated user (their memory archive); one question per dialogue: the dialogue lines
    before its first ``test-turn``, the relevant memories as evidence."""
    sub = "en" if lang == "en" else "ch"
    memories: dict[str, dict[str, Any]] = {}
    for line in (folder / sub / f"MADial-Bench-{lang}-memory.json").read_text(encoding="utf-8").splitlines():
        if line.strip():
            memories.update(json.loads(line))
    owners: dict[str, int] = {}
    for line in (folder / "ch" / "MADial-Bench-zh-memory.json").read_text(encoding="utf-8").splitlines():
        if line.strip():
            for mid, mem in json.loads(line).items():
                owners[str(mid)] = int(mem["user-id"])
    convs: dict[int, Conversation] = {}
    for mid, mem in sorted(memories.items(), key=lambda kv: int(kv[0])):
        user = owners.get(str(mid))
        if user is None:
            continue
        conv = convs.setdefault(user, Conversation(f"madial-{lang}:user{user}", []))
        conv.docs.append(Doc(str(mid), _cut(str(mem["event"])), None, str(mem.get("time") or ""), None))
    skipped = {"no_evidence": 0}
    lines = (folder / sub / f"MADial-Bench-{lang}-dialogue.json").read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(x for x in lines if x.strip()):
        item = json.loads(line)
        relevant = frozenset(str(r) for r in item.get("relevant-id") or [])
        user = int(item["user-id"])
        if not relevant or user not in convs:
            skipped["no_evidence"] += 1
            continue
        first = min(int(t) for t in item["test-turn"])
        context = [_dialogue_line(x) for x in item["dialogue"][:first]]
        query = "\n".join(x for x in context if x and x not in ("<BOD>", "<EOD>"))
        scenes = {d.id: m for d, m in ((d, memories[d.id]) for d in convs[user].docs)}
        first_rel = sorted(relevant, key=int)[0]
        qtype = str(scenes.get(first_rel, {}).get("scene", "unknown"))
        qid = f"madial-{lang}-{item.get('id', n)}"
        convs[user].questions.append(Question(qid, qtype, query, relevant, split_of(qid)))
    return [c for c in convs.values() if c.questions], skipped


def load(data: Path, dataset: str) -> tuple[list[Conversation], dict[str, int]]:
    if dataset == "lme-oracle":
        return load_longmemeval(data / "longmemeval" / "oracle", dataset)
    if dataset == "lme-s":
        return load_longmemeval(data / "longmemeval" / "s_subset", dataset)
    if dataset in ("madial-en", "madial-zh"):
        return load_madial(data / "madial-bench" / "data", dataset.rsplit("-", 1)[1])
    raise ValueError(f"unknown dataset {dataset!r}")


def subset(convs: list[Conversation], per_split: int | None) -> list[Conversation]:
    """The first ``per_split`` questions of each split (in id order), with their conversations."""
    if per_split is None:
        return convs
    taken: dict[str, int] = defaultdict(int)
    out = []
    for conv in sorted(convs, key=lambda c: c.key):
        keep = []
        for q in sorted(conv.questions, key=lambda q: q.id):
            if taken[q.split] < per_split:
                taken[q.split] += 1
                keep.append(q)
        if keep:
            out.append(Conversation(conv.key, conv.docs, keep))
    return out


# --- metrics --------------------------------------------------------------------------------------------------


def question_metrics(ranked: Sequence[str], relevant: frozenset[str]) -> dict[str, float]:
    """Binary-relevance metrics of one ranked list (best first; duplicates count once)."""
    seen: list[str] = []
    for doc in ranked:
        if doc not in seen:
            seen.append(doc)
    hits = [doc in relevant for doc in seen[:K]]
    dcg = sum(1.0 / math.log2(i + 2) for i, hit in enumerate(hits) if hit)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), K)))
    return {
        "r@5": 1.0 if any(hits[:5]) else 0.0,
        "r@10": 1.0 if any(hits) else 0.0,
        "rall@10": 1.0 if relevant and relevant <= set(seen[:K]) else 0.0,
        "ndcg@10": dcg / ideal if ideal else 0.0,
    }


def aggregate(rows: list[dict[str, Any]], retrievers: Sequence[str]) -> dict[str, Any]:
    """Mean metrics per (dataset, split, question type) and per (dataset, split) as type ``all``."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["dataset"], row["split"], row["type"])].append(row)
        groups[(row["dataset"], row["split"], "all")].append(row)
    out: dict[str, Any] = {}
    for (dataset, split, qtype), members in sorted(groups.items()):
        cell: dict[str, Any] = {"n": len(members)}
        for name in retrievers:
            scored = [r["metrics"][name] for r in members if name in r["metrics"]]
            if scored:
                cell[name] = {m: round(sum(s[m] for s in scored) / len(scored), 4) for m in METRICS}
        out.setdefault(dataset, {}).setdefault(split, {})[qtype] = cell
    return out


# --- retrievers -----------------------------------------------------------------------------------------------


def units(text: str) -> list[str]:
    from memory.engine import public

    return [u for unit in public.text_units(text) for u in unit]


class BM25:
    """rank_bm25's Okapi BM25 over the engine's text units."""

    def __init__(self, docs: list[Doc]) -> None:
        from rank_bm25 import BM25Okapi

        self.ids = [d.id for d in docs]
        self.model = BM25Okapi([units(d.text) or [""] for d in docs])

    def rank(self, query: str, k: int = K) -> list[str]:
        toks = units(query)
        if not toks:
            return []
        scores = self.model.get_scores(toks)
        order = sorted(range(len(self.ids)), key=lambda i: (-scores[i], i))
        return [self.ids[i] for i in order[:k] if scores[i] > 0]


class Dense:
    """Exact cosine over an embedder's unit vectors (vectors cached by text for the whole run). Queries go
    through the embedder's query side when it has one (E5's ``query:`` prefix)."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.cache: dict[str, Any] = {}
        self.query_cache: dict[str, Any] = {}

    def _vectors(self, texts: list[str], cache: dict[str, Any], fn: Callable[[list[str]], Any]) -> Any:
        import numpy as np

        from memory.engine.vectors import MAX_EMBED_CHARS

        todo = sorted({t for t in texts if t not in cache})
        for start in range(0, len(todo), 256):
            part = todo[start : start + 256]
            out = np.asarray(fn([t[:MAX_EMBED_CHARS] for t in part]), dtype=np.float32)
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
            for t, v in zip(part, out, strict=True):
                cache[t] = v
        return np.stack([cache[t] for t in texts]) if texts else np.zeros((0, 1), dtype=np.float32)

    def vectors(self, texts: list[str]) -> Any:
        return self._vectors(texts, self.cache, self.embedder.embed)

    def query_vectors(self, texts: list[str]) -> Any:
        fn = getattr(self.embedder, "embed_query", None) or self.embedder.embed
        return self._vectors(texts, self.query_cache, fn)

    def ranker(self, docs: list[Doc]) -> Callable[[str], list[str]]:
        import numpy as np

        ids = [d.id for d in docs]
        mat = self.vectors([d.text for d in docs])

        def rank(query: str, k: int = K) -> list[str]:
            if not query.strip():
                return []
            q = self.query_vectors([query])[0]
            scores = mat @ q
            order = np.lexsort((np.arange(len(ids)), -scores))[:k]
            return [ids[i] for i in order]

        return rank


class CachedEmbedder:
    """The dense baseline's embedder as the engine's memory embedder, through the baseline's text cache: the
    engine stores and searches the same vectors without embedding every text twice."""

    def __init__(self, dense: Dense) -> None:
        self.dense = dense
        self.model_name = dense.embedder.model_name

    def embed(self, texts: list[str]) -> Any:
        return self.dense.vectors(list(texts))

    def embed_query(self, texts: list[str]) -> Any:
        return self.dense.query_vectors(list(texts))


EMBEDDERS = {
    "minilm": "memory.engine.embeddings:minilm",
    "e5": "memory.engine.embeddings:e5_small",
}


def load_dense(choice: str) -> tuple[Dense | None, str]:
    """``auto``: the default memory embedder if it loads, else MiniLM if the extra is installed, else none."""
    if choice == "none":
        return None, "not run (--dense none)"
    from memory.engine import embeddings

    paths = (
        [EMBEDDERS.get(choice, choice)]
        if choice != "auto"
        else [
            embeddings.DEFAULT_MEMORY_EMBEDDER,
            EMBEDDERS["minilm"],
        ]
    )
    errors = []
    for path in paths:
        try:
            embedder = embeddings._load(path)
            if callable(getattr(embedder, "load", None)):
                embedder.load()
        except (ImportError, OSError, ValueError) as exc:
            if choice != "auto":
                raise
            errors.append(f"{path}: {type(exc).__name__}: {exc}")
            continue
        return Dense(embedder), str(embedder.model_name)
    return None, "not run: no embedder installed (" + "; ".join(errors) + ")"


class EngineSide:
    """Stores a conversation into a fresh agent with ``engine.store``; ranks with ``engine.search``."""

    def __init__(
        self, variants: dict[str, dict[str, float]] | None = None, embedder: CachedEmbedder | None = None
    ) -> None:
        """``variants``: name → RetrievalWeights fields changed from the defaults (``engine`` = the defaults).
        ``embedder``: the memory embedder the engine writes and searches vectors with (None: vectors off)."""
        from memory.engine import embeddings

        self.variants = {"engine": {}} if variants is None else variants
        embeddings.set_memory_embedder(embedder)
        self.count = 0
        self.store_seconds = 0.0
        self.search_ms: list[float] = []

    def ingest(self, conv: Conversation) -> tuple[str, dict[str, str]]:
        from memory import engine
        from memory.engine import vectors

        vectors.clear_cache()  # one agent per conversation: keep the process's matrices few

        self.count += 1
        agent = f"eval-{self.count:05d}"
        to_doc: dict[str, str] = {}
        t0 = time.perf_counter()
        for doc in conv.docs:
            metadata = {k: v for k, v in (("date", doc.date), ("role", doc.role)) if v}
            res = engine.store(
                agent_id=agent,
                content=doc.text,
                session_id=doc.session_id,
                metadata=metadata,
                tags=[doc.role] if doc.role else [],
            )
            to_doc[res.id] = doc.id
        self.store_seconds += time.perf_counter() - t0
        return agent, to_doc

    def rank(
        self, agent: str, to_doc: dict[str, str], query: str, k: int = K, variant: str = "engine"
    ) -> list[str]:
        from memory import engine
        from memory.engine.types import RetrievalWeights

        weights = RetrievalWeights(**self.variants[variant])
        t0 = time.perf_counter()
        hits = engine.search(agent_id=agent, query=query, limit=k, touch=False, weights=weights)
        self.search_ms.append((time.perf_counter() - t0) * 1000)
        return [to_doc[h.id] for h in hits if h.id in to_doc]


# --- run ------------------------------------------------------------------------------------------------------


def question_clock(conv: Conversation) -> Any:
    """The engine's clock for one conversation: its question's date (LongMemEval: "2023/05/30 (Tue) 12:18"), so
    "a month ago" in the question means what it meant to the asker; the real clock when there is none (MADial).
    Time runs on from there (``tick``): rows keep their write order."""
    from datetime import UTC, datetime

    import time_machine

    m = (
        re.match(r"(\d{4})/(\d{2})/(\d{2})\D+(\d{2}):(\d{2})", conv.questions[0].date or "")
        if conv.questions
        else None
    )
    if not m:
        return contextlib.nullcontext()
    y, mo, d, hh, mm = (int(x) for x in m.groups())
    return time_machine.travel(datetime(y, mo, d, hh, mm, tzinfo=UTC), tick=True)


def evaluate(
    convs: list[Conversation],
    dataset: str,
    *,
    dense: Dense | None,
    engine_side: EngineSide | None,
    clock: str = "question",
) -> list[dict[str, Any]]:
    rows = []
    for conv in convs:
        with question_clock(conv) if clock == "question" else contextlib.nullcontext():
            rows += _evaluate_one(conv, dataset, dense=dense, engine_side=engine_side)
    return rows


def _evaluate_one(
    conv: Conversation, dataset: str, *, dense: Dense | None, engine_side: EngineSide | None
) -> list[dict[str, Any]]:
    rows = []
    bm25 = BM25(conv.docs)
    dense_rank = dense.ranker(conv.docs) if dense else None
    agent, to_doc = engine_side.ingest(conv) if engine_side else ("", {})
    for q in conv.questions:
        metrics = {"bm25": question_metrics(bm25.rank(q.query), q.relevant)}
        if dense_rank:
            metrics["dense"] = question_metrics(dense_rank(q.query), q.relevant)
        if engine_side:
            for name in engine_side.variants:
                ranked = engine_side.rank(agent, to_doc, q.query, variant=name)
                metrics[name] = question_metrics(ranked, q.relevant)
        rows.append({"dataset": dataset, "id": q.id, "type": q.type, "split": q.split, "metrics": metrics})
    return rows


def table(summary: dict[str, Any], retrievers: Sequence[str], metric: str = "r@10") -> str:
    head = f"{'dataset':<11} {'split':<8} {'type':<26} {'n':>4}  " + "  ".join(f"{r:>7}" for r in retrievers)
    lines = [f"{metric} (recall_any at 10 unless named otherwise)", head, "-" * len(head)]
    for dataset, splits in summary.items():
        for split, types in splits.items():
            for qtype in sorted(types, key=lambda t: (t == "all", t)):
                cell = types[qtype]
                vals = "  ".join(f"{cell[r][metric]:>7.3f}" if r in cell else f"{'-':>7}" for r in retrievers)
                lines.append(f"{dataset:<11} {split:<8} {qtype[:26]:<26} {cell['n']:>4}  {vals}")
    return "\n".join(lines)


NOVEC = {"w_vec": 0.0, "w_vec_rank": 0.0}


def parse_variants(specs: list[str]) -> dict[str, dict[str, float]]:
    """``["sess=w_session:0.5,w_graph:0"]`` → ``{"engine": {}, "sess": {"w_session": 0.5, "w_graph": 0.0}}``."""
    out: dict[str, dict[str, float]] = {"engine": {}}
    for spec in specs:
        name, _, body = spec.partition("=")
        out[name.strip()] = {
            k.strip(): float(v) for k, v in (part.split(":", 1) for part in body.split(",") if part.strip())
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the retrieval data folder (SOURCES.md)")
    ap.add_argument(
        "--datasets", default=",".join(DATASETS), help=f"comma-separated, of {', '.join(DATASETS)}"
    )
    ap.add_argument("--per-split", type=int, default=None, help="quick run: at most N questions per split")
    ap.add_argument(
        "--dense",
        default="auto",
        help="dense baseline embedder: auto (the default memory embedder, else MiniLM), e5, minilm, none, or"
        " module:factory",
    )
    ap.add_argument(
        "--vectors",
        choices=("on", "off"),
        default="on",
        help="on: the engine writes and searches vectors with the dense embedder (and 'engine-novec' ranks"
        " without them in the same run); off: the engine is lexical + graph only",
    )
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=FIELD:VALUE,...",
        help="also rank with these RetrievalWeights changes (e.g. sess=w_session:0.5); repeatable",
    )
    ap.add_argument(
        "--clock",
        choices=("question", "real"),
        default="question",
        help="the engine's clock while a conversation is stored and asked: its question's date, or the real one",
    )
    ap.add_argument("--out", type=Path, default=REPO / "var" / "bench" / "retrieval_eval.json")
    args = ap.parse_args(argv)
    if not args.data.is_dir():
        print(f"no data folder at {args.data} (pass --data)", file=sys.stderr)
        return 2
    from common import cleanup, machine, setup_django

    db_path = setup_django()
    started = time.perf_counter()
    try:
        dense, dense_name = load_dense(args.dense)
        variants = parse_variants(args.variant)
        use_vectors = dense is not None and args.vectors == "on"
        if use_vectors:
            variants = {"engine": variants.pop("engine"), "engine-novec": NOVEC, **variants}
        engine_side = EngineSide(variants, CachedEmbedder(dense) if use_vectors and dense else None)
        rows: list[dict[str, Any]] = []
        skipped: dict[str, Any] = {}
        for dataset in [d.strip() for d in args.datasets.split(",") if d.strip()]:
            convs, skipped[dataset] = load(args.data, dataset)
            convs = subset(convs, args.per_split)
            t0 = time.perf_counter()
            rows += evaluate(convs, dataset, dense=dense, engine_side=engine_side, clock=args.clock)
            print(
                f"{dataset}: {sum(len(c.questions) for c in convs)} questions, "
                f"{sum(len(c.docs) for c in convs)} turns, {time.perf_counter() - t0:.0f} s",
                file=sys.stderr,
            )
        retrievers = ["bm25", *(["dense"] if dense else []), *engine_side.variants]
        summary = aggregate(rows, retrievers)
        ms = sorted(engine_side.search_ms)
        report = {
            "machine": machine(),
            "args": {k: str(v) for k, v in vars(args).items()},
            "retrievers": {
                "bm25": "rank_bm25.BM25Okapi over the engine's text units",
                "dense": dense_name,
                "engine": "engine.search(limit=10, touch=False), default RetrievalWeights"
                + (f", vectors of {dense_name}" if use_vectors else ", no vectors"),
                "engine-novec": "the engine with w_vec = w_vec_rank = 0 (lexical + graph)"
                if use_vectors
                else None,
                "variants": engine_side.variants,
            },
            "skipped": skipped,
            "seconds": round(time.perf_counter() - started, 1),
            "engine_store_seconds": round(engine_side.store_seconds, 1),
            "engine_search_ms_p50": round(ms[len(ms) // 2], 2) if ms else None,
            "summary": summary,
            "questions": rows,
        }
    finally:
        cleanup(db_path)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    print(table(summary, retrievers))
    print()
    print(table(summary, retrievers, "rall@10"))
    print(f"\nJSON: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
