"""Evaluate the injection scanner (SPEC P4) on the labelled corpus; prints JSON.

    python benchmarks/eval_injection.py                    # dev, held-out and heldout2 figures, dev misclassifications
    python benchmarks/eval_injection.py --reveal-heldout   # also list held-out (and heldout2) misclassifications

"Detected" means blocked (score >= 60 or a family that blocks alone). "Flagged" means any family matched,
blocked or not. Every attack carries ``expect``: SPEC P4 scores system-prompt extraction and termination
manipulation 30 each and does not block either alone, so an attack that is *only* that is expected to be flagged;
every other attack is expected to be blocked.

Goals: >= 90 % of block-expected attacks blocked, >= 90 % of flag-expected attacks flagged, <= 1 % of benign chat
turns blocked. The plain "all attacks blocked" rate is reported too. The rules are tuned on the dev split only;
held-out misclassifications stay hidden unless asked for, so they are not tuned against.

Splits: ``dev`` (tuned on), ``heldout`` (the first held-out split, about 25 % of the seed groups) and ``heldout2``
(fresh text written and frozen before the second tuning round; see tests/data/injection_corpus/build.py).
``summary`` repeats the headline figures and corpus sizes of every split.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "data" / "injection_corpus" / "corpus.jsonl"
GOAL_DETECTION = 0.90
GOAL_CHAT_FP = 0.01
SPLITS = ("dev", "heldout", "heldout2", "all")
SUMMARY_KEYS = (
    "attacks",
    "attacks_expected_blocked",
    "attacks_expected_flagged",
    "benign",
    "benign_chat",
    "detection_rate",
    "flag_rate_flag_expected",
    "false_positive_rate_chat",
    "false_positive_rate",
    "goals_met",
)


def load_scanner() -> ModuleType:
    """Import memory/engine/injection.py by path: it is standard-library only, so no Django set-up."""
    path = REPO / "memory" / "engine" / "injection.py"
    spec = importlib.util.spec_from_file_location("memdesk_injection", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def load_corpus(path: Path = CORPUS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _rate(hits: int, total: int) -> float | None:
    return round(hits / total, 4) if total else None


def _bucket(rows: list[tuple[dict[str, Any], Any]], key: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[tuple[dict[str, Any], Any]]] = defaultdict(list)
    for item, res in rows:
        groups[str(item.get(key))].append((item, res))
    return {
        name: {"n": len(g), "blocked": _rate(sum(r.blocked for _, r in g), len(g))}
        for name, g in sorted(groups.items())
    }


def evaluate(items: list[dict[str, Any]], scan: Any) -> dict[str, Any]:
    rows = [(item, scan(item["text"])) for item in items]
    attacks = [(i, r) for i, r in rows if i["label"] == "attack"]
    benign = [(i, r) for i, r in rows if i["label"] == "benign"]
    chat = [(i, r) for i, r in benign if i.get("conversational")]
    blocked_attacks = sum(r.blocked for _, r in attacks)
    to_block = [(i, r) for i, r in attacks if i.get("expect", "block") == "block"]
    to_flag = [(i, r) for i, r in attacks if i.get("expect") == "flag"]
    blocked_to_block = sum(r.blocked for _, r in to_block)
    flagged_to_flag = sum(bool(r.rules) for _, r in to_flag)
    blocked_benign = sum(r.blocked for _, r in benign)
    blocked_chat = sum(r.blocked for _, r in chat)
    return {
        "attacks": len(attacks),
        "attacks_expected_blocked": len(to_block),
        "attacks_expected_flagged": len(to_flag),
        "benign": len(benign),
        "benign_chat": len(chat),
        "detection_rate": _rate(blocked_to_block, len(to_block)),
        "flag_rate_flag_expected": _rate(flagged_to_flag, len(to_flag)),
        "blocked_rate_all_attacks": _rate(blocked_attacks, len(attacks)),
        "attack_flagged_rate": _rate(sum(bool(r.rules) for _, r in attacks), len(attacks)),
        "false_positive_rate": _rate(blocked_benign, len(benign)),
        "false_positive_rate_chat": _rate(blocked_chat, len(chat)),
        "benign_flagged_rate": _rate(sum(bool(r.rules) for _, r in benign), len(benign)),
        "benign_chat_flagged_rate": _rate(sum(bool(r.rules) for _, r in chat), len(chat)),
        "goals_met": {
            "block_expected_blocked>=0.90": bool(to_block)
            and blocked_to_block / len(to_block) >= GOAL_DETECTION,
            "flag_expected_flagged>=0.90": not to_flag or flagged_to_flag / len(to_flag) >= GOAL_DETECTION,
            "chat_fp<=0.01": bool(chat) and blocked_chat / len(chat) <= GOAL_CHAT_FP,
            "all_attacks_blocked>=0.90 (literal)": bool(attacks)
            and blocked_attacks / len(attacks) >= GOAL_DETECTION,
        },
        "attacks_by_family": _bucket(attacks, "family"),
        "attacks_by_lang": _bucket(attacks, "lang"),
        "attacks_by_variant": _bucket(attacks, "variant"),
        "benign_by_category": _bucket(benign, "category"),
        "benign_by_lang": _bucket(benign, "lang"),
        "_rows": rows,
    }


def _miss(item: dict[str, Any], res: Any) -> dict[str, Any]:
    return {
        "id": item["id"],
        "family": item.get("family") or item.get("category"),
        "lang": item["lang"],
        "score": res.score,
        "rules": res.rules,
        "text": item["text"][:200],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--reveal-heldout", action="store_true", help="list held-out misclassifications too")
    args = ap.parse_args(argv)

    scanner = load_scanner()
    items = load_corpus(args.corpus)
    report: dict[str, Any] = {
        "ruleset": scanner.RULESET_VERSION,
        "corpus": str(args.corpus.relative_to(REPO)),
    }
    for split in SPLITS:
        subset = [i for i in items if split == "all" or i["split"] == split]
        result = evaluate(subset, scanner.scan_injection)
        rows = result.pop("_rows")
        if split == "dev" or (split.startswith("heldout") and args.reveal_heldout):
            result["missed_attacks"] = [
                _miss(i, r)
                for i, r in rows
                if i["label"] == "attack" and (not r.rules if i.get("expect") == "flag" else not r.blocked)
            ]
            result["false_positives"] = [_miss(i, r) for i, r in rows if i["label"] == "benign" and r.blocked]
        report[split] = result
    report["summary"] = {split: {key: report[split][key] for key in SUMMARY_KEYS} for split in SPLITS}
    print(json.dumps(report, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
