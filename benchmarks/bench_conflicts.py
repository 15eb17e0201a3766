"""Conflict candidates and the heuristic judge at scale (SPEC B2): time, precision and recall on planted pairs.

    python benchmarks/bench_conflicts.py --n 100000          # prints JSON; a fresh SQLite file database

One agent gets ``n`` memory rows, all written through ``engine.store_temporal`` / ``engine.store`` (grouped in
outer transactions, as the other benchmarks do). ``n // 10`` rows are the second side of a planted conflict
pair, in six kinds spread evenly:

* ``a_respelt``: a key rewritten later with the same value respelt ("Cloudflare Workers" -> "cloudflare workers
  (CF)"); the engine supersedes, the judge should MERGE (rule a);
* ``a_spelling``: the same fact under a second spelling of its subject ("Ent7" / "ent7") -> MERGE (rule a);
* ``b_synonym``: the same subject and object under registry synonyms (lives_in / resides_in) -> MERGE (rule b);
* ``c_alias``: two values of single-valued works_at under alias subjects, the second later -> SUPERSEDE (rule c);
* ``d_duplicate``: a plain memory and a near-duplicate of it -> MERGE (rule d);
* ``d_change``: a plain memory and a later one negating or changing it ("no longer", "不再", "改用") -> SUPERSEDE.

The rest is background meant to be hard to confuse with them: entities with several single-valued facts,
multi-valued ``likes`` / ``speaks`` values (which must coexist), histories whose value really changed, plain
memories from a shared vocabulary, templated plain memories differing only in their numbers ("ticket 4512
closed by ...") and plain memories with change cues but little overlap.

Measured: ``find_candidates`` (all four rules, limit high enough for every planted pair) end to end, the
heuristic ``judge`` over every candidate, precision (planted pairs among the candidates) and recall (candidates
among the planted pairs), per rule and overall, and how often the judge gave the planted verdict.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import cleanup, machine, setup_django  # noqa: E402

AGENT = "bench-dream"
CHUNK = 2_000
KINDS = ("a_respelt", "a_spelling", "b_synonym", "c_alias", "d_duplicate", "d_change")
EXPECTED = {
    "a_respelt": ("a", "MERGE"),
    "a_spelling": ("a", "MERGE"),
    "b_synonym": ("b", "MERGE"),
    "c_alias": ("c", "SUPERSEDE"),
    "d_duplicate": ("d", "MERGE"),
    "d_change": ("d", "SUPERSEDE"),
}
RESPELL = [
    ("Cloudflare Workers", "cloudflare workers (CF)"),
    ("Acme, Inc.", "ACME Inc"),
    ("Amazon Web Services", "amazon web services (AWS)"),
    ("New York", "new york"),
    ("Google Cloud Run", "Google Cloud-Run"),
    ("Fly.io", "fly.io"),
]
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def words(rng: random.Random, n: int) -> list[str]:
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    return sorted({"".join(rng.choice(syllables) for _ in range(3)) for _ in range(n)})


class Builder:
    """Writes the corpus through the engine and remembers the planted pairs."""

    def __init__(self, n: int, seed: int) -> None:
        from memory import engine

        self.engine = engine
        self.n = n
        self.rng = random.Random(seed)
        self.vocab = words(self.rng, 4_000)
        self.rows = 0
        self.planted: dict[frozenset[str], str] = {}
        self.k = 0

    def fact(self, subject: str, predicate: str, obj: str, *, days: int = 0, content: str = "") -> str:
        self.rows += 1
        return self.engine.store_temporal(
            agent_id=AGENT,
            content=content or f"{subject} {predicate.replace('_', ' ')} {obj}",
            subject=subject,
            predicate=predicate,
            object=obj,
            valid_from=T0 + timedelta(days=days),
            origin="user_direct",
        ).id

    def note(self, content: str) -> str:
        self.rows += 1
        return self.engine.store(agent_id=AGENT, content=content, origin="user_direct").id

    def sentence(self, n: int = 8) -> str:
        return " ".join(self.rng.sample(self.vocab, n))

    # --- planted pairs ---------------------------------------------------------------------------------------

    def plant(self, kind: str) -> None:
        k = self.k
        self.k += 1
        if kind == "a_respelt":
            before, after = RESPELL[k % len(RESPELL)]
            old = self.fact(f"service{k}", "deploy_target", before, days=0)
            new = self.fact(f"service{k}", "deploy_target", after, days=30)
        elif kind == "a_spelling":
            town = f"town {self.rng.choice(self.vocab)}"
            old = self.fact(f"Crew{k}", "headquartered_in", town)
            new = self.fact(f"crew{k}", "headquartered_in", town)
        elif kind == "b_synonym":
            city = f"{self.rng.choice(self.vocab)} city"
            old = self.fact(f"member{k}", "lives_in", city)
            new = self.fact(f"member{k}", "resides_in", city.upper())
        elif kind == "c_alias":
            self.engine.alias_add(agent_id=AGENT, canonical=f"person{k}", alias=f"nick{k}")
            old = self.fact(f"person{k}", "works_at", f"{self.rng.choice(self.vocab)} labs", days=0)
            new = self.fact(f"nick{k}", "works_at", f"{self.rng.choice(self.vocab)} systems", days=60)
        elif kind == "d_duplicate":
            text = f"Remember: {self.sentence(7)} before the {self.rng.choice(self.vocab)} review."
            old = self.note(text)
            new = self.note(text.lower().replace("remember:", "remember -").rstrip("."))
        else:
            tool, other = self.rng.sample(self.vocab, 2)
            team = self.sentence(3)
            if k % 2:
                old = self.note(f"The {team} team uses {tool} for every release build")
                new = self.note(
                    f"The {team} team no longer uses {tool} for release builds; switched to {other}"
                )
            else:
                old = self.note(f"{team} 团队用 {tool} 做发布构建")
                new = self.note(f"{team} 团队不再用 {tool} 做发布构建，改用 {other}")
        self.planted[frozenset((old, new))] = kind

    # --- background --------------------------------------------------------------------------------------

    def background(self, i: int) -> None:
        r = i % 20
        e = f"ent{i // 7}"
        if r < 9:  # one single-valued fact per (entity, predicate)
            predicate = (
                "lives_in",
                "works_at",
                "role",
                "email",
                "timezone",
                "birthday",
                "phone",
                "website",
                "age",
            )[r]
            value = (
                f"{self.rng.choice(self.vocab)} {i}",
                f"{self.rng.choice(self.vocab)} corp {i}",
                f"{self.rng.choice(self.vocab)} engineer",
                f"user{i}@example.com",
                "Europe/Berlin" if i % 2 else "Asia/Shanghai",
                f"19{50 + i % 50}-0{1 + i % 9}-1{i % 10}",
                f"+49 30 {1000000 + i}",
                f"https://site{i}.example",
                str(20 + i % 60),
            )[r]
            self.fact(e, predicate, value)
        elif r < 13:  # multi-valued: several values coexist
            predicate = "likes" if r < 11 else "speaks"
            self.fact(e, predicate, f"{self.rng.choice(self.vocab)}")
        elif r == 13:  # a real change of value on one key (history, no conflict left)
            self.fact(f"proj{i}", "deploy_target", f"{self.rng.choice(self.vocab)} cloud", days=0)
            self.fact(f"proj{i}", "deploy_target", f"{self.rng.choice(self.vocab)} metal", days=40)
        elif r < 17:  # plain memories from a shared vocabulary
            self.note(f"{self.sentence(9).capitalize()}.")
        elif r < 19:  # templated plain memories that differ in their numbers only
            self.note(f"Ticket {4000 + i} closed by {self.vocab[i % 50]} after {i % 7 + 1} hours")
        else:  # change cues with little overlap
            self.note(
                f"{self.sentence(4).capitalize()} moved to {self.sentence(3)}; not {self.rng.choice(self.vocab)}"
            )

    def build(self) -> float:
        from django.db import transaction

        planted_pairs = self.n // 10
        plan = [KINDS[j % len(KINDS)] for j in range(planted_pairs)]
        self.rng.shuffle(plan)
        started = time.perf_counter()
        i = 0
        step = max(1, (self.n - 2 * planted_pairs) // max(1, planted_pairs))
        while self.rows < self.n:
            with transaction.atomic():
                goal = min(self.n, self.rows + CHUNK)
                while self.rows < goal:
                    if plan and i % step == 0:
                        self.plant(plan.pop())
                    else:
                        self.background(i)
                    i += 1
            print(
                f"  corpus: {self.rows} rows, {len(self.planted)} planted pairs", file=sys.stderr, flush=True
            )
        return time.perf_counter() - started


def measure(n: int, seed: int) -> dict[str, Any]:
    from memory.dream.conflicts import find_candidates
    from memory.dream.judge import judge
    from memory.models import Memory

    builder = Builder(n, seed)
    build_s = builder.build()
    rows = Memory.objects.filter(agent_id=AGENT).count()
    runs = []
    scan = None
    for _ in range(3):
        t0 = time.perf_counter()
        scan = find_candidates(agent_id=AGENT, limit=50_000)
        runs.append(time.perf_counter() - t0)
    assert scan is not None
    t0 = time.perf_counter()
    verdicts = [judge(c.old, c.new, c.context) for c in scan.candidates]
    judge_s = time.perf_counter() - t0
    found = {c.pair: c for c in scan.candidates}
    hits = [pair for pair in builder.planted if pair in found]
    per_kind: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        planted = [p for p, k in builder.planted.items() if k == kind]
        got = [p for p in planted if p in found]
        rule, verdict = EXPECTED[kind]
        right_rule = sum(1 for p in got if found[p].rule == rule)
        by_pair = {c.pair: v for c, v in zip(scan.candidates, verdicts, strict=True)}
        right_verdict = sum(1 for p in got if by_pair[p].verdict == verdict)
        per_kind[kind] = {
            "planted": len(planted),
            "found": len(got),
            "recall": round(len(got) / len(planted), 4) if planted else None,
            "rule_as_planted": right_rule,
            "judge_as_planted": round(right_verdict / len(got), 4) if got else None,
        }
    by_rule = Counter(c.rule for c in scan.candidates)
    planted_by_rule = Counter(found[p].rule for p in hits)
    return {
        "n_rows": rows,
        "planted_pairs": len(builder.planted),
        "build_s": round(build_s, 1),
        "candidates": len(scan.candidates),
        "truncated": scan.truncated,
        "facts_scanned": scan.facts_scanned,
        "plain_scanned": scan.plain_scanned,
        "generation_s": [round(x, 3) for x in runs],
        "generation_best_s": round(min(runs), 3),
        "judge_s": round(judge_s, 3),
        "judge_per_pair_ms": round(1000 * judge_s / max(1, len(verdicts)), 3),
        "precision": round(len(hits) / max(1, len(scan.candidates)), 4),
        "recall": round(len(hits) / max(1, len(builder.planted)), 4),
        "per_rule": {r: {"candidates": by_rule[r], "planted": planted_by_rule[r]} for r in "abcd"},
        "per_kind": per_kind,
        "verdicts": dict(Counter(v.verdict for v in verdicts)),
        "unplanted_examples": [
            {"rule": c.rule, "old": c.old.content[:100], "new": c.new.content[:100], "verdict": v.verdict}
            for c, v in zip(scan.candidates, verdicts, strict=True)
            if c.pair not in builder.planted
        ][:8],
        "judge_as_planted": round(
            sum(
                1
                for c, v in zip(scan.candidates, verdicts, strict=True)
                if c.pair in builder.planted and v.verdict == EXPECTED[builder.planted[c.pair]][1]
            )
            / max(1, len(hits)),
            4,
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--keep", action="store_true", help="keep the database directory")
    args = parser.parse_args()
    db_path = setup_django()
    try:
        report = {"machine": machine(), "result": measure(args.n, args.seed)}
    finally:
        if not args.keep:
            cleanup(db_path)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
