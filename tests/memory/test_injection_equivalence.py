"""Speed work on the scan must not change what it decides: every input of the snapshot
(tests/data/injection_equivalence, written by the scan before the latency work, rewritten only for deliberate
rule changes) gets the same blocked, suspicious, score, families, matched rule ids and classifier probability
(within ``PROB_TOL``).

The scan's classifier now sums its float32 features in float64 (memory/engine/injection/kernel.py) where the
snapshot's numpy path took float32 dot products (BLAS order): probabilities moved by up to ~1.5e-7, verdicts not
at all. ``PROB_TOL`` allows that rounding and nothing like a changed feature (which moves a logit by 1e-3 or
more)."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

from memory.engine.injection.scan import scan_text

PROB_TOL = 1e-6
HERE = Path(__file__).resolve().parents[1] / "data" / "injection_equivalence"


def _build_module():
    spec = importlib.util.spec_from_file_location("injection_equivalence_build", HERE / "build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_scan_decides_every_snapshot_input_as_before():
    build = _build_module()
    expected = {
        row["key"]: row
        for row in map(json.loads, gzip.decompress(build.EXPECTED.read_bytes()).decode().splitlines())
    }
    inputs = build.inputs()
    assert len(inputs) == len(expected) >= 3_000  # the inputs are the snapshot's (same texts, same order)
    differences = []
    for name, text in inputs:
        key = build.key(name, text)
        want = expected[key]
        got = build.outcome(scan_text(text))
        p_want, p_got = want.pop("probability"), got.pop("probability")
        want.pop("key")
        close = (p_want is None) == (p_got is None) and (p_want is None or abs(p_want - p_got) <= PROB_TOL)
        if got != want or not close:
            differences.append((name, want, p_want, got, p_got))
    assert not differences, f"{len(differences)} verdicts changed, first: {differences[:3]}"
