"""Check that the working tree's injection scan decides every input exactly as the code at a git ref does.

    python benchmarks/check_injection_equivalence.py --against main
    python benchmarks/check_injection_equivalence.py --against main --data ../shared/data/injection/train.jsonl
    (../shared/ exists only on the development machine; any JSONL with a "text" field will do)

Inputs: every text of the given JSON-lines files (``text`` field), the snapshot inputs of
tests/data/injection_equivalence (the repo's sample and corpus, long joined texts, the pathological inputs)
and the benchmark's texts (bench_injection.py: every pool and size). Compared per input: blocked, suspicious,
score, families, matched rule ids and the classifier probability (within ``--prob-tol``, 1e-9 by default); with
``--matches``, also every recorded match (rule, family, view, snippet). Prints a JSON summary (with the largest
probability difference seen, and how many inputs differ in anything but the probability); exits 1 on any
difference.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import time
from pathlib import Path
from typing import Any

from bench_injection import SIZES, _pools, _texts, pathological
from eval_injection import compiled_ready, load_corpus, load_package
from injection_reference import load_at

REPO = Path(__file__).resolve().parents[1]
SNAPSHOT_BUILD = REPO / "tests" / "data" / "injection_equivalence" / "build.py"


def _snapshot_inputs() -> list[tuple[str, str]]:
    spec = importlib.util.spec_from_file_location("injection_equivalence_build", SNAPSHOT_BUILD)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.inputs()


def inputs(data: list[Path]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in data:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if line.strip():
                out.append((f"{path.name}:{n}", json.loads(line)["text"]))
    out += _snapshot_inputs()
    for pool_name, pool in _pools(load_corpus()).items():
        for size in SIZES:
            count = {200: 60, 1000: 60, 10_000: 12, 65_536: 4}[size]
            out += [
                (f"bench:{pool_name}:{size}:{i}", t) for i, t in enumerate(_texts(pool, size, count, size))
            ]
    out += [(f"bad:{name}", text) for name, text in pathological().items()]
    return out


def outcome(result: Any, matches: bool) -> dict[str, Any]:
    out = {
        "blocked": result.blocked,
        "suspicious": result.suspicious,
        "score": result.score,
        "rules": list(result.rules),
        "rule_ids": result.rule_ids,
        "truncated": result.truncated,
        "binary": result.binary,
        "zero_width": result.zero_width,
    }
    if matches:
        out["matches"] = [(m.rule, m.family, m.view, m.snippet) for m in result.matches]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", default="main", help="git ref of the reference code (default: main)")
    ap.add_argument("--data", type=Path, nargs="*", default=[], help="JSON-lines files with a text field")
    ap.add_argument("--matches", action="store_true", help="also compare every recorded match")
    ap.add_argument(
        "--prob-tol", type=float, default=1e-9, help="largest allowed probability difference (default: 1e-9)"
    )
    ap.add_argument("--rules-only", action="store_true", help="compare scan_rules (no classifier)")
    args = ap.parse_args(argv)
    new_pkg, old_pkg = load_package(), load_at(args.against)
    new = importlib.import_module(f"{new_pkg.__name__}.scan")
    old = importlib.import_module(f"{old_pkg.__name__}.scan")
    for pkg in (new_pkg, old_pkg):  # both sides' compiled classifier, not their warm-up
        compiled_ready(pkg)
    fn_new = new.scan_rules if args.rules_only else new.scan_text
    fn_old = old.scan_rules if args.rules_only else old.scan_text
    items = inputs(args.data)
    diffs: list[dict[str, Any]] = []
    t_new = t_old = 0.0
    max_dp = 0.0
    outcome_diffs = 0
    for name, text in items:
        t0 = time.process_time()
        a = fn_old(text)
        t1 = time.process_time()
        b = fn_new(text)
        t2 = time.process_time()
        t_old += t1 - t0
        t_new += t2 - t1
        oa, ob = outcome(a, args.matches), outcome(b, args.matches)
        pa, pb = a.probability, b.probability
        if pa is not None and pb is not None:
            max_dp = max(max_dp, abs(pa - pb))
        close = (pa is None) == (pb is None) and (pa is None or abs(pa - pb) <= args.prob_tol)
        outcome_diffs += oa != ob
        if oa != ob or not close:
            diffs.append(
                {"input": name, "chars": len(text), "reference": oa, "p_ref": pa, "now": ob, "p_now": pb}
            )
    print(
        json.dumps(
            {
                "against": args.against,
                "inputs": len(items),
                "chars": sum(len(t) for _n, t in items),
                "differences": len(diffs),
                "outcome_differences": outcome_diffs,
                "prob_tol": args.prob_tol,
                "max_prob_difference": max_dp,
                "first": diffs[:5],
                "cpu_s_reference": round(t_old, 2),
                "cpu_s_now": round(t_new, 2),
            },
            indent=2,
            default=str,
        )
    )
    return 1 if diffs else 0


if __name__ == "__main__":
    raise SystemExit(main())
