"""Evaluate the injection detector (SPEC P4); prints JSON and a Markdown table (``make eval-injection``).

    python benchmarks/eval_injection.py --data ../shared/data/injection/train.jsonl
    (../shared/ is the development machine's data folder; a clone has none: pass your own labelled JSON lines)
    python benchmarks/eval_injection.py --data PATH --record      # also rewrite the figures kept in the repo
    python benchmarks/eval_injection.py --data PATH --sources rebuff,gsm8k   # hold out only these

The headline is **leave-one-source-out**: for each source of the data (and the project's own corpus,
``memdesk``), the classifier is trained and its thresholds calibrated on every other source, then the held-out
source is scanned, as a collection the detector never saw would be. The rules are the same in every fold (they
are not trained). Reported per held-out source and per attack kind: blocked (the verdict), suspicious (the
quarantine band), and what the rules and the classifier block alone; and the benign false positives per source
and per group (chat turns, documents, code, instructions, facts, hard negatives: security discussion and
benign text full of trigger words).

Beside it, the shipped model (trained on everything) on the project's own held-out splits (``heldout``,
``heldout2``, ``heldout3``: e-mails), which no model or rule was tuned on. ``--record`` writes the figures to
``memory/engine/injection/model/evaluation.json`` (the README table and the benchmark report read them).

The package is loaded by path, without Django.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "memory" / "engine" / "injection"
DEFAULT_DATA = REPO.parent / "shared" / "data" / "injection" / "train.jsonl"
CORPUS = REPO / "tests" / "data" / "injection_corpus" / "corpus.jsonl"
RECORD = PACKAGE / "model" / "evaluation.json"
GOAL_DETECTION = 0.90
GOAL_FP = 0.01


def load_package() -> ModuleType:
    """``memory/engine/injection`` as the top-level package ``memdesk_injection`` (no Django set-up)."""
    if "memdesk_injection" in sys.modules:
        return sys.modules["memdesk_injection"]
    spec = importlib.util.spec_from_file_location(
        "memdesk_injection", PACKAGE / "__init__.py", submodule_search_locations=[str(PACKAGE)]
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def compiled_ready(pkg: ModuleType) -> bool:
    """Load the package's compiled classifier now, if it has one (it loads in the background on a process's
    first text): timings and comparisons then measure it, not the warm-up. False for code without it."""
    try:
        return bool(importlib.import_module(f"{pkg.__name__}.kernel").available())
    except ModuleNotFoundError:  # code from before the compiled classifier
        return False


def load_corpus(path: Path = CORPUS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _rate(rows: list, hit: Any) -> float | None:
    """The share of ``rows`` for which ``hit`` holds, to four places; None for no rows (the e-mail splits have no chat)."""
    return round(sum(bool(hit(r)) for r in rows) / len(rows), 4) if rows else None


def own_heldout(pkg: ModuleType) -> dict[str, Any]:
    """The shipped model and the rules alone on the own corpus's held-out splits."""
    scan = importlib.import_module(f"{pkg.__name__}.scan")
    out: dict[str, Any] = {}
    for split in ("heldout", "heldout2", "heldout3"):
        items = [i for i in load_corpus() if i["split"] == split]
        report: dict[str, Any] = {}
        for name, fn in (("rules", scan.scan_rules), ("rules+classifier", scan.scan_text)):
            res = [(i, fn(i["text"])) for i in items]
            attacks = [r for i, r in res if i["label"] == "attack"]
            benign = [(i, r) for i, r in res if i["label"] == "benign"]
            chat = [r for i, r in benign if i.get("conversational")]
            report[name] = {
                "attacks": len(attacks),
                "blocked": _rate(attacks, lambda r: r.blocked),
                "blocked_or_suspicious": _rate(attacks, lambda r: r.blocked or r.suspicious),
                "benign": len(benign),
                "benign_blocked": _rate(benign, lambda ir: ir[1].blocked),
                "benign_suspicious": _rate(benign, lambda ir: ir[1].suspicious),
                "chat": len(chat),
                "chat_blocked": _rate(chat, lambda r: r.blocked),
            }
        out[split] = report
    return out


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f} %"


def markdown(loso: dict[str, Any]) -> str:
    """The README table: held-out attack sources, attack kinds, benign groups."""
    lines = [
        "| held-out source (attacks) | n | blocked | + suspicious | rules alone | classifier alone |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for source, r in loso["attacks_by_source"].items():
        lines.append(
            f"| {source} | {r['n']} | {pct(r['blocked'])} | {pct(r['blocked'] + r['suspicious'])} "
            f"| {pct(r['rules_blocked'])} | {pct(r['classifier_blocked'])} |"
        )
    m, a = loso["attacks_macro_by_source"], loso["attacks"]
    lines.append(
        f"| **mean over public sources** | | **{pct(m['blocked'])}** | {pct(m['blocked'] + m['suspicious'])} "
        f"| {pct(m['rules_blocked'])} | {pct(m['classifier_blocked'])} |"
    )
    lines.append(
        f"| all public attacks | {a['n']} | {pct(a['blocked'])} | {pct(a['blocked'] + a['suspicious'])} "
        f"| {pct(a['rules_blocked'])} | {pct(a['classifier_blocked'])} |"
    )
    lines += ["", "| attack kind (held out by source) | n | blocked | + suspicious |", "|---|---:|---:|---:|"]
    for kind, r in loso["attacks_by_kind"].items():
        lines.append(f"| {kind} | {r['n']} | {pct(r['blocked'])} | {pct(r['blocked'] + r['suspicious'])} |")
    lines += ["", "| benign, held out by source | n | blocked | suspicious |", "|---|---:|---:|---:|"]
    for group, r in loso["benign_by_group"].items():
        if r["n"]:
            lines.append(
                f"| {group.replace('_', ' ')} | {r['n']} | {pct(r['blocked'])} | {pct(r['suspicious'])} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="labelled JSON lines (default: ../shared/data/injection/train.jsonl, on the development machine only)",
    )
    ap.add_argument("--sources", help="comma-separated sources to hold out (default: every source)")
    ap.add_argument("--out", type=Path, help="also write the JSON report here")
    ap.add_argument("--record", action="store_true", help=f"write the figures to {RECORD.relative_to(REPO)}")
    args = ap.parse_args(argv)
    if not args.data.is_file():
        print(f"no training data at {args.data} (pass --data PATH)", file=sys.stderr)
        return 2

    started = time.perf_counter()
    pkg = load_package()
    training = importlib.import_module(f"{pkg.__name__}.training")
    classifier = importlib.import_module(f"{pkg.__name__}.classifier")
    rows = training.read_rows(args.data) + training.own_rows()
    config = training.TrainConfig.from_manifest(classifier.current().manifest)
    print(f"rules over {len(rows)} rows ...", file=sys.stderr, flush=True)
    rules = training.rule_verdicts(rows)
    sources = args.sources.split(",") if args.sources else None
    own = own_heldout(pkg)  # first: cheap, and a fault here should not wait for the folds
    print("leave-one-source-out ...", file=sys.stderr, flush=True)
    outcomes = training.leave_one_source_out(rows, config, rules, sources)
    loso = training.summarise(rows, outcomes)
    report = {
        "figure": "injection_detection",
        "protocol": "leave-one-source-out: train and calibrate on every other source, scan the held-out one",
        "data": [training.file_record(args.data, rows[: len(rows) - len(training.own_rows())])],
        "model_parameters": config.to_json(),
        "goals": {"blocked": GOAL_DETECTION, "benign_blocked_chat_documents": GOAL_FP},
        "leave_one_source_out": loso,
        "shipped_model_on_own_heldout": own,
        "seconds": round(time.perf_counter() - started, 1),
    }
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    print("\n" + markdown(loso), file=sys.stderr)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    if args.record:
        if sources is not None:
            print("--record needs every source held out (no --sources)", file=sys.stderr)
            return 2
        RECORD.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
