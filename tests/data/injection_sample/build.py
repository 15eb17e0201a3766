"""Build ``sample.jsonl``, a small fixed sample of the shared training data, and record its figures.

    python tests/data/injection_sample/build.py --data ../shared/data/injection/train.jsonl   # sample.jsonl
    python tests/data/injection_sample/build.py --record                                     # loso.json
    (../shared/ is the development machine's data folder; a clone has none: pass your own labelled JSON lines)

The sample lets the tests retrain the classifier without the shared data (tests/memory/test_injection_model.py):
training twice gives the same bytes, and its leave-one-source-out figures (``loso.json``, recorded with the
parameters of the shipped model) must not degrade beyond a tolerance. Selection is deterministic: rows of at
most 1,000 characters, ordered by sha256 of their id, the first 20 of each (source, kind) for attacks and 16
for benign texts. The ShareAlike sources (sgd, owasp_llm) are left out; see README.md for sources and licences.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SAMPLE = HERE / "sample.jsonl"
RECORD = HERE / "loso.json"
LEFT_OUT = {"sgd", "owasp_llm"}
MAX_CHARS = 1_000
PER_GROUP = {1: 20, 0: 16}


def build(data: Path) -> list[dict]:
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    groups: dict[tuple[str, int, str], list[dict]] = {}
    for row in rows:
        if row["source"] in LEFT_OUT or len(row["text"]) > MAX_CHARS:
            continue
        groups.setdefault((row["source"], row["label"], row["kind"]), []).append(row)
    out = []
    for key in sorted(groups):
        ranked = sorted(groups[key], key=lambda r: hashlib.sha256(str(r["id"]).encode()).hexdigest())
        out.extend(ranked[: PER_GROUP[key[1]]])
    keys = ("id", "text", "label", "source", "kind", "lang")
    return [{k: r[k] for k in keys} for r in out]


def figures(path: Path = SAMPLE) -> dict:
    """Leave-one-source-out on the sample with the shipped model's parameters (no own corpus)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from eval_injection import load_package

    pkg = load_package()
    training = importlib.import_module(f"{pkg.__name__}.training")
    classifier = importlib.import_module(f"{pkg.__name__}.classifier")
    rows = training.read_rows(path)
    config = training.TrainConfig.from_manifest(classifier.current().manifest)
    outcomes = training.leave_one_source_out(rows, config, training.rule_verdicts(rows))
    summary = training.summarise(rows, outcomes)
    return {
        "sample_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "parameters": config.to_json(),
        "attacks": summary["attacks"],
        "attacks_macro_by_source": summary["attacks_macro_by_source"],
        "benign": summary["benign"],
        "benign_by_group": summary["benign_by_group"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, help="the shared train.jsonl: rewrite sample.jsonl from it")
    ap.add_argument("--record", action="store_true", help="rewrite loso.json from sample.jsonl")
    args = ap.parse_args()
    if args.data:
        rows = build(args.data)
        SAMPLE.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        print(f"wrote {SAMPLE} ({len(rows)} rows)")
    if args.record:
        RECORD.write_text(json.dumps(figures(), indent=2) + "\n", encoding="utf-8")
        print(f"wrote {RECORD}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
