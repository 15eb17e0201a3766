"""Multi-signal entity edges (SPEC B4): each signal against a hand-computed example, min-max with equal values,
redistribution of a missing signal's weight, the composite and the floor, the hub and session caps."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memory.dream import edges as E
from memory.dream.registry import default_registry

REL = "rel"  # a predicate the registry does not know: no types


def pair_values(e: E.Edges, values: np.ndarray) -> dict[tuple[str, str], float]:
    names = e.facts.entities
    return {(names[a], names[b]): float(v) for a, b, v in zip(e.a, e.b, values, strict=True)}


@pytest.fixture
def square():
    """a–b, a–c (session s1), b–c, c–d (session s2): every pair of a..d is a candidate."""
    rows = [
        ("m1", "A", REL, "B", "s1"),
        ("m2", "A", REL, "C", "s1"),
        ("m3", "B", REL, "C", "s2"),
        ("m4", "C", REL, "D", "s2"),
    ]
    return E.compute_edges(E.facts_from_rows(rows, registry=default_registry()))


def test_cooccurrence_counts_memories_and_sessions_log_minmax(square):
    raw = pair_values(square, square.cooccurrence)
    # facts linking the pair + sessions naming both
    assert raw == {
        ("a", "b"): 2,
        ("a", "c"): 2,
        ("b", "c"): 3,
        ("c", "d"): 2,
        ("b", "d"): 1,
        ("a", "d"): 0,
    }
    scaled = pair_values(square, square.signals["cooccurrence"])
    assert scaled[("b", "c")] == 1.0 and scaled[("a", "d")] == 0.0
    assert scaled[("a", "b")] == pytest.approx(math.log(3) / math.log(4))
    assert scaled[("b", "d")] == pytest.approx(math.log(2) / math.log(4))


def test_session_jaccard(square):
    j = pair_values(square, square.signals["session_jaccard"])
    # S(a)={s1}, S(b)={s1,s2}, S(c)={s1,s2}, S(d)={s2}
    assert j == pytest.approx(
        {("a", "b"): 0.5, ("a", "c"): 0.5, ("b", "c"): 1.0, ("c", "d"): 0.5, ("b", "d"): 0.5, ("a", "d"): 0.0}
    )


def test_adamic_adar_raw_and_minmax(square):
    raw = pair_values(square, square.adamic_adar_raw)
    # neighbours: a{b,c} b{a,c} c{a,b,d} d{c}; AA = sum over shared z of 1/log(deg z)
    third, half = 1 / math.log(3), 1 / math.log(2)
    assert raw == pytest.approx(
        {
            ("a", "b"): third,
            ("a", "c"): half,
            ("b", "c"): half,
            ("a", "d"): third,
            ("b", "d"): third,
            ("c", "d"): 0,
        }
    )
    scaled = pair_values(square, square.signals["adamic_adar"])
    assert scaled[("a", "c")] == 1.0 and scaled[("c", "d")] == 0.0
    assert scaled[("a", "b")] == pytest.approx(third / half)


def test_missing_signals_redistribute_their_weight_and_the_composite_is_the_weighted_sum(square):
    assert set(square.missing) == {"type_affinity", "embedding"}
    assert "registry types none" in square.missing["type_affinity"]
    w = square.weights
    assert w["type_affinity"] == w["embedding"] == 0.0
    assert w["cooccurrence"] == pytest.approx(0.25 / 0.65)
    assert w["session_jaccard"] == pytest.approx(0.20 / 0.65) == pytest.approx(w["adamic_adar"])
    assert sum(w.values()) == pytest.approx(1.0)
    expected = sum(w[k] * square.signals[k] for k in ("cooccurrence", "session_jaccard", "adamic_adar"))
    assert np.allclose(square.composite, expected)
    ab = pair_values(square, square.composite)[("a", "b")]
    assert ab == pytest.approx(
        w["cooccurrence"] * math.log(3) / math.log(4)
        + w["session_jaccard"] * 0.5
        + w["adamic_adar"] * (math.log(2) / math.log(3))
    )
    assert square.report["weights"] == pytest.approx(w) and square.report["missing"] == square.missing


def test_redistribute():
    w = E.redistribute(E.WEIGHTS, {"cooccurrence", "adamic_adar"})
    assert w == pytest.approx(
        {
            "cooccurrence": 0.25 / 0.45,
            "adamic_adar": 0.20 / 0.45,
            "session_jaccard": 0,
            "type_affinity": 0,
            "embedding": 0,
        }
    )
    assert E.redistribute(E.WEIGHTS, set(E.WEIGHTS)) == pytest.approx(E.WEIGHTS)
    assert all(v == 0 for v in E.redistribute(E.WEIGHTS, set()).values())


def test_minmax_including_all_equal_values():
    assert E.minmax(np.array([1.0, 3.0, 2.0])).tolist() == [0.0, 1.0, 0.5]
    assert E.minmax(np.array([2.0, 2.0, 2.0])).tolist() == [1.0, 1.0, 1.0]  # equally strong: all full
    assert E.minmax(np.array([0.0, 0.0])).tolist() == [0.0, 0.0]
    assert E.minmax(np.array([])).tolist() == []


def test_the_floor_keeps_only_edges_above_it(square):
    comps = pair_values(square, square.composite)
    at = comps[("b", "d")]
    kept = E.compute_edges(square.facts, floor=at)
    names = kept.facts.entities
    kept_pairs = {(names[a], names[b]) for a, b in zip(kept.a[kept.keep], kept.b[kept.keep], strict=True)}
    assert ("b", "d") not in kept_pairs  # at the floor is not above it
    assert kept_pairs == {p for p, v in comps.items() if v > at}
    assert kept.report["edges"] == len(kept_pairs) and kept.report["candidates"] == 6
    assert E.DEFAULT_FLOOR == 0.1


def test_every_signal_but_one_missing():
    e = E.compute_edges(E.facts_from_rows([("m1", "A", REL, "B", None)], registry=default_registry()))
    assert set(e.missing) == {"session_jaccard", "adamic_adar", "type_affinity", "embedding"}
    assert e.weights["cooccurrence"] == 1.0
    # one pair: min-max of one value is the all-equal case, so the edge is at full strength
    assert e.composite.tolist() == [1.0] and e.keep.tolist() == [True]


def test_no_facts_and_one_entity():
    empty = E.compute_edges(E.facts_from_rows([], registry=default_registry()))
    assert empty.a.size == 0 and empty.report["candidates"] == 0 and empty.report["edges"] == 0
    one = E.compute_edges(E.facts_from_rows([("m1", "A", "age", None, None), ("m2", "a", REL, None, None)]))
    assert one.facts.n_entities == 1 and one.report["candidates"] == 0 and one.report["edges"] == 0


def test_type_affinity_from_the_registry():
    rows = [
        ("m1", "Aiko", "works_at", "Acme", None),  # acme: organisation
        ("m2", "Ben", "knows", "Aiko", None),  # aiko: person
        ("m3", "Acme", "headquartered_in", "Osaka", None),  # osaka: place
        ("m4", "Cara", "employer", "Initech", None),  # a synonym? no: unknown, cara untyped by it
        (
            "m5",
            "Dan",
            "works_at",
            "Initech",
            None,
        ),  # dan: only a subject of works_at, whose subjects are people
        ("m6", "Cara", "knows", "Dan", None),
    ]
    facts = E.facts_from_rows(rows, registry=default_registry())
    types = E.entity_types(facts)
    label = {name: E.type_label(types[i]) for i, name in enumerate(facts.entities)}
    assert label["aiko"] == "person" and label["acme"] == "organisation" and label["osaka"] == "place"
    assert label["dan"] == "person"  # object of knows
    assert label["ben"] == "untyped"  # only the subject of knows, whose subjects nobody typed
    idx = {n: i for i, n in enumerate(facts.entities)}

    def aff(x: str, y: str) -> float:
        return float(E.type_affinity(types, np.array([idx[x]]), np.array([idx[y]]))[0])

    assert aff("aiko", "acme") == pytest.approx(E.AFFINITY[0, 1]) == 1.0
    assert aff("acme", "osaka") == pytest.approx(0.9)
    assert aff("aiko", "osaka") == pytest.approx(0.8) != aff("aiko", "dan") == pytest.approx(0.9)
    assert aff("ben", "aiko") == E.UNTYPED_AFFINITY


def test_a_hub_is_no_evidence_and_adds_no_pairs():
    leaves = [(f"m{i}", "hub", REL, f"leaf{i}", None) for i in range(E.HUB_NEIGHBOURS + 1)]
    e = E.compute_edges(E.facts_from_rows(leaves))
    assert e.report["candidates"] == E.HUB_NEIGHBOURS + 1  # the hub's own edges only, no leaf–leaf pair
    small = E.compute_edges(E.facts_from_rows(leaves[:3]))
    assert small.report["candidates"] == 3 + 3  # three edges, three leaf pairs through the hub


def test_a_session_naming_too_many_entities_is_left_out():
    rows = [(f"m{i}", f"e{i}", REL, f"f{i}", "import-1") for i in range(E.MAX_SESSION_ENTITIES)]
    e = E.compute_edges(E.facts_from_rows(rows))
    assert e.report["sessions_left_out"] == 1 and "session_jaccard" in e.missing
    assert e.report["candidates"] == E.MAX_SESSION_ENTITIES  # the facts themselves only


def test_two_hop_pairs_beyond_the_budget_are_the_weakest_left_out(monkeypatch):
    # a path a-b-c-d-e: two-hop pairs a–c, b–d, c–e; plus a star through a busier neighbour (lower AA)
    rows = [(f"m{i}", x, REL, y, None) for i, (x, y) in enumerate(["ab", "bc", "cd", "de"])]
    rows += [(f"h{i}", "hub", REL, f"leaf{i}", None) for i in range(4)]
    full = E.compute_edges(E.facts_from_rows(rows))
    assert full.report["two_hop_pairs_left_out"] == 0
    monkeypatch.setattr(E, "MAX_TWO_HOP", 3)
    cut = E.compute_edges(E.facts_from_rows(rows))
    assert cut.report["two_hop_pairs_left_out"] == full.report["candidates"] - cut.report["candidates"] == 6
    names = cut.facts.entities
    two_hop = {(names[a], names[b]) for a, b, k in zip(cut.a, cut.b, cut.linked, strict=True) if not k}
    assert two_hop == {("a", "c"), ("b", "d"), ("c", "e")}  # 1/log 2 each; the leaves share a degree-4 hub


def test_type_affinity_table_and_per_pair_agree():
    rng = np.random.default_rng(5)
    dist = rng.random((50, len(E.TYPES)))
    dist[rng.random(50) < 0.3] = 0  # some untyped
    dist = dist / np.maximum(dist.sum(axis=1, keepdims=True), 1e-12)
    a, b = rng.integers(0, 50, 300), rng.integers(0, 50, 300)
    fast = E.type_affinity(dist, a, b)
    slow = np.einsum("pi,ij,pj->p", dist[a], E.AFFINITY, dist[b])
    untyped = dist.sum(axis=1) == 0
    slow[untyped[a] | untyped[b]] = E.UNTYPED_AFFINITY
    assert np.allclose(fast, slow, atol=1e-5)
