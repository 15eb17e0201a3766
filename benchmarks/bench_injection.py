"""Injection-scan latency (SPEC P4): p50/p95 microseconds per ``scan_injection`` call; prints JSON.

    python benchmarks/bench_injection.py            # 200-character, 1 KB and 10 KB inputs
    python benchmarks/bench_injection.py --quick     # fewer repetitions

Inputs are built deterministically from the labelled corpus (tests/data/injection_corpus/corpus.jsonl) by joining
randomly chosen items until the size is reached:

* ``ordinary``: template chat turns, stored facts, support messages and deployment notes (no hard negatives);
* ``chat``: every conversational benign item, including the hard-negative chat that is dense in trigger words;
* ``attack``: attack items (many rules fire; decoding views are built).

The scanner module is loaded by path (it is standard-library only), so no Django set-up is timed. Times are
CPU time of this process (``time.process_time_ns``), which is steadier than wall time on a shared machine.
Goal: < 1 ms for 1 KB of text.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import time

from eval_injection import load_corpus, load_scanner

GOAL_1KB_US = 1000.0
SIZES = (200, 1000, 10_000)


def _pools(items: list[dict]) -> dict[str, list[str]]:
    benign = [i for i in items if i["label"] == "benign"]
    return {
        "ordinary": [
            i["text"]
            for i in benign
            if i.get("variant") == "template" or i.get("category") in ("fact", "support", "deploy")
        ],
        "chat": [i["text"] for i in benign if i.get("conversational")],
        "attack": [i["text"] for i in items if i["label"] == "attack"],
    }


def _texts(pool: list[str], size: int, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        text = ""
        while len(text) < size:
            text += rng.choice(pool) + "\n"
        out.append(text[:size])
    return out


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(quick: bool = False) -> dict:
    scanner = load_scanner()
    pools = _pools(load_corpus())
    results = []
    for name, pool in pools.items():
        for size in SIZES:
            count = (10 if quick else 40) if size >= 10_000 else (50 if quick else 300)
            texts = _texts(pool, size, count, seed=size)
            for text in texts[:5]:  # warm-up
                scanner.scan_injection(text)
            timings = []
            for text in texts:
                start = time.process_time_ns()
                scanner.scan_injection(text)
                timings.append((time.process_time_ns() - start) / 1000)
            results.append(
                {
                    "input": name,
                    "chars": size,
                    "n": count,
                    "p50_us": round(_percentile(timings, 0.50), 1),
                    "p95_us": round(_percentile(timings, 0.95), 1),
                    "mean_us": round(statistics.fmean(timings), 1),
                    "us_per_kb_p50": round(_percentile(timings, 0.50) * 1000 / size, 1),
                }
            )
    one_kb = {r["input"]: r["p50_us"] for r in results if r["chars"] == 1000}
    return {
        "figure": "injection_scan_latency",
        "ruleset": scanner.RULESET_VERSION,
        "python": platform.python_version(),
        "goal": f"p50 < {GOAL_1KB_US:.0f} us for 1 KB",
        "goal_met": {name: p50 < GOAL_1KB_US for name, p50 in one_kb.items()},
        "results": results,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    print(json.dumps(measure(quick=args.quick), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
