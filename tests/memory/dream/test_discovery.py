"""Discovery (SPEC B5): each kind's percentile rule on a constructed graph, the cap of 10 per kind, no
duplicate of an item already in the inbox (whatever its status), the evidence, and the job end to end: memory
rows untouched, empty and degenerate agents, a failing embedder."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from memory import engine
from memory.dream import discovery as D
from memory.dream import edges as E
from memory.engine.embeddings import reset_embedder, set_embedder
from memory.models import AuditEvent, DiscoveryItem, DiscoveryRun, EntityEdge, Memory
from tests.memory.dream.office import fact, office

N = 40  # entities e0..e39, each with one fact of its own (so the evidence has facts to show)


def make_edges(pairs, *, composite, aa=None, ta=None, cooc=None, linked=None) -> E.Edges:
    rows = [(f"m{i}", f"e{i}", "rel", f"x{i}", None) for i in range(N)]
    facts = E.facts_from_rows(rows)
    idx = {n: i for i, n in enumerate(facts.entities)}
    a = np.array([idx[x] for x, _ in pairs])
    b = np.array([idx[y] for _, y in pairs])
    k = len(pairs)
    signals = {"cooccurrence": np.zeros(k)}
    if aa is not None:
        signals["adamic_adar"] = np.asarray(aa, float)
    if ta is not None:
        signals["type_affinity"] = np.asarray(ta, float)
    return E.Edges(
        facts=facts,
        a=a,
        b=b,
        cooccurrence=np.asarray(cooc if cooc is not None else [0] * k),
        linked=np.asarray(linked if linked is not None else [0] * k),
        shared_sessions=np.zeros(k, int),
        adamic_adar_raw=np.asarray(aa if aa is not None else [0.0] * k, float),
        signals=signals,
        composite=np.asarray(composite, float),
        keep=np.ones(k, bool),
        weights=E.redistribute(E.WEIGHTS, set(signals)),
        missing={},
        floor=0.1,
        adjacency=E.symmetric_binary(E.fact_matrix(facts)),
        incidence=E.session_incidence(facts)[0],
        types=np.zeros((facts.n_entities, len(E.TYPES))),
    )


def communities_of(edges: E.Edges, groups: dict[int, list[str]]) -> np.ndarray:
    out = np.full(edges.facts.n_entities, -1)
    idx = {n: i for i, n in enumerate(edges.facts.entities)}
    for number, members in groups.items():
        out[[idx[m] for m in members]] = number
    return out


TWO = {1: [f"e{i}" for i in range(5)], 2: [f"e{i}" for i in range(5, 10)]}


def found(findings, kind=None) -> list[tuple[str, str]]:
    return [(f.entity_a, f.entity_b) for f in findings if kind is None or f.kind == kind]


def test_cross_community_bridges_at_or_above_the_median_composite():
    pairs = [
        ("e4", "e5"),
        ("e0", "e5"),
        ("e1", "e6"),
        ("e0", "e1"),
        ("e2", "e7"),
        ("e3", "e8"),
        ("e2", "e3"),
        ("e4", "e9"),
        ("e1", "e2"),
    ]
    comp = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]
    edges = make_edges(pairs, composite=comp, linked=[1, 0, 0, 0, 0, 0, 0, 0, 0])
    findings, rules = D.select(edges, communities_of(edges, TWO), {1: "e0", 2: "e5"}, set())
    # p50 of the kept composites is 0.5: the linked bridge (a fact) and the same-community pairs are out
    assert found(findings, "cross_community") == [("e0", "e5"), ("e1", "e6"), ("e2", "e7")]
    assert rules["cross_community"]["threshold"] == 0.5 and rules["cross_community"]["eligible"] == 3
    first = next(f for f in findings if f.kind == "cross_community")
    assert first.score == 0.8 and first.evidence["communities"][0]["number"] == 1
    assert "different communities (around e0 and around e5)" in first.explanation


def test_indirect_strong_needs_the_top_quarter_of_adamic_adar_and_at_most_one_cooccurrence():
    pairs = [
        ("e0", "e1"),
        ("e2", "e3"),
        ("e4", "e5"),
        ("e6", "e7"),
        ("e8", "e9"),
        ("e10", "e11"),
        ("e12", "e13"),
        ("e14", "e15"),
    ]
    aa = [1.0, 0.9, 0.8, 0.7, 0.2, 0.1, 0.05, 0.0]
    cooc = [0, 1, 2, 0, 0, 0, 0, 0]
    edges = make_edges(pairs, composite=[0.5] * 8, aa=aa, cooc=cooc)
    findings, rules = D.select(edges, np.full(edges.facts.n_entities, -1), {}, set())
    assert found(findings, "indirect_strong") == [("e0", "e1"), ("e2", "e3")]  # e4–e5 co-occur twice
    assert rules["indirect_strong"]["threshold"] == pytest.approx(0.825)  # linear interpolation
    assert found(findings, "cross_community") == []  # no communities: no bridge


def test_knowledge_gap_needs_type_affinity_and_the_weakest_quarter():
    pairs = [
        ("e0", "e1"),
        ("e2", "e3"),
        ("e4", "e5"),
        ("e6", "e7"),
        ("e8", "e9"),
        ("e10", "e11"),
        ("e12", "e13"),
        ("e14", "e15"),
    ]
    comp = [0.1, 0.15, 0.2, 0.3, 0.5, 0.6, 0.7, 0.8]  # p25 = 0.1875
    ta = [0.9, 0.6, 0.8, 1.0, 1.0, 0.9, 0.9, 0.9]
    edges = make_edges(pairs, composite=comp, ta=ta)
    findings, rules = D.select(edges, np.full(edges.facts.n_entities, -1), {}, set())
    assert found(findings, "knowledge_gap") == [("e0", "e1")]  # e2–e3: affinity 0.6; e4–e5: above p25
    assert rules["knowledge_gap"]["threshold"] == pytest.approx(0.1875)
    gap = findings[0]
    assert gap.score == pytest.approx(0.9) and "usually linked" in gap.explanation


def test_knowledge_gap_percentile_is_over_the_typed_pairs_when_there_are_any():
    pairs = [
        ("e0", "e1"),
        ("e2", "e3"),
        ("e4", "e5"),
        ("e6", "e7"),
        ("e20", "e21"),
        ("e22", "e23"),
        ("e24", "e25"),
    ]
    comp = [0.3, 0.4, 0.5, 0.6, 0.11, 0.12, 0.13]  # the untyped pairs (e2x) are the weakest
    ta = [0.9, 0.9, 0.9, 0.9, 0.3, 0.3, 0.3]
    edges = make_edges(pairs, composite=comp, ta=ta)
    idx = {n: i for i, n in enumerate(edges.facts.entities)}
    for i in range(8):
        edges.types[idx[f"e{i}"], 0] = 1.0  # people
    findings, rules = D.select(edges, np.full(edges.facts.n_entities, -1), {}, set())
    # over every kept edge the 25th percentile is 0.125 and no typed pair is that weak; over the typed ones,
    # 0.375: e0–e1 is the weakest quarter of the pairs whose kinds are known
    assert rules["knowledge_gap"]["threshold"] == pytest.approx(0.375)
    assert rules["knowledge_gap"]["among"] == "edges with both ends typed"
    assert found(findings, "knowledge_gap") == [("e0", "e1")]


def test_a_kind_whose_signal_is_missing_finds_nothing_and_says_why():
    edges = make_edges([("e0", "e1")], composite=[0.5])
    findings, rules = D.select(edges, np.full(edges.facts.n_entities, -1), {}, set())
    assert findings == []
    assert rules["indirect_strong"]["skipped"] == "Adamic-Adar is missing"
    assert rules["knowledge_gap"]["skipped"] == "type affinity is missing"


def test_at_most_ten_per_kind_best_first():
    pairs = [(f"e{i}", f"e{i + 20}") for i in range(15)]
    edges = make_edges(pairs, composite=[0.5 + i / 100 for i in range(15)])
    groups = {1: [f"e{i}" for i in range(20)], 2: [f"e{i}" for i in range(20, 40)]}
    findings, rules = D.select(edges, communities_of(edges, groups), {1: "a", 2: "b"}, set())
    cross = found(findings, "cross_community")
    assert rules["cross_community"]["eligible"] == 8 and len(cross) == 8  # p50 of 15 values: the top 8
    many = make_edges(pairs, composite=[0.5] * 15)
    findings, rules = D.select(many, communities_of(many, groups), {1: "a", 2: "b"}, set())
    assert rules["cross_community"]["eligible"] == 15 and len(found(findings)) == D.PER_KIND == 10


def test_never_a_duplicate_of_an_item_already_in_the_inbox_nor_twice_in_a_run():
    pairs = [("e0", "e5"), ("e1", "e6"), ("e2", "e7")]
    edges = make_edges(pairs, composite=[0.8, 0.7, 0.6], aa=[1.0, 1.0, 1.0], ta=[0.9, 0.9, 0.9])
    existing = {engine.pair_fingerprint("e5", "e0")}  # either order
    findings, _ = D.select(edges, communities_of(edges, TWO), {1: "a", 2: "b"}, existing)
    # cross (composite ≥ 0.7) picks e0–e5 (already in the inbox: not added again) and e1–e6; indirect (every
    # pair qualifies) passes over those two and picks e2–e7; the knowledge gap (composite ≤ 0.65: e2–e7) finds
    # it picked
    assert found(findings) == [("e1", "e6"), ("e2", "e7")]
    assert [f.kind for f in findings] == ["cross_community", "indirect_strong"]


# --- end to end ------------------------------------------------------------------------------------------------


def memory_state(agent: str) -> str:
    rows = Memory.objects.filter(agent_id=agent).order_by("id").values_list()
    return hashlib.sha256(repr(list(rows)).encode()).hexdigest()


@pytest.mark.django_db
def test_discover_end_to_end_reads_memory_and_never_changes_it():
    a = "office-bot"
    office(a)
    before = memory_state(a)
    out = engine.discover(agent_id=a)
    assert memory_state(a) == before
    run = DiscoveryRun.objects.get(id=out.run_id)
    assert run.status == "done" and run.report["facts"] == 40 and run.report["communities"] == 3
    assert EntityEdge.objects.filter(agent_id=a, run=run).count() == run.report["stored_edges"] > 0
    assert len(out) == len(out.items) >= 1 and sum(run.report["added"].values()) == len(out)
    assert {i.kind for i in out.items} == set(D.RULES)
    (aiko,) = [i for i in out.items if {i.entity_a, i.entity_b} == {"aiko tanaka", "osaka office"}]
    assert aiko.kind == "cross_community"
    ev = aiko.evidence
    assert (
        ev["neighbours_total"] == 4
        and ev["sessions_total"] == 4
        and ev["sessions"] == ["s0", "s1", "s2", "s3"]
    )
    assert set(ev["neighbour_labels"]) == {"Ben", "Chie", "Daisuke", "Emi"}
    assert aiko.explanation.startswith(
        "Aiko Tanaka and Osaka office share 4 neighbours and appear together in 4 sessions, but no fact links them"
    )
    assert ev["types"] == ["person", "organisation"]
    assert {f["id"] for f in ev["facts"]} <= set(
        Memory.objects.filter(agent_id=a).values_list("id", flat=True)
    )
    assert {n["role"] for n in ev["path"]["nodes"]} == {"pair", "neighbour"} and ev["path"]["edges"]
    assert AuditEvent.objects.filter(agent_id=a, action="discovery_run").count() == 1
    # a second run over unchanged memory proposes nothing new, and its edges replace the first run's
    again = engine.discover(agent_id=a)
    assert len(again) == 0 and DiscoveryItem.objects.filter(agent_id=a).count() == len(out)
    assert not EntityEdge.objects.filter(agent_id=a, run=run).exists()
    assert memory_state(a) == before


@pytest.mark.django_db
def test_an_agent_with_no_facts_one_entity_or_one_community():
    empty = engine.discover(agent_id="nobody")
    assert (
        empty.status == "empty"
        and len(empty) == 0
        and empty.report["note"] == "No current facts: nothing to connect."
    )
    engine.store_temporal(
        agent_id="solo", content="x is 3", subject="x", predicate="size", origin="user_direct"
    )
    solo = engine.discover(agent_id="solo")
    assert len(solo) == 0 and solo.report["note"].startswith("Only one entity")
    fact("pair", "a", "rel", "b")
    fact("pair", "b", "rel", "c")
    one = engine.discover(agent_id="pair")
    assert one.report["communities"] == 1 and one.report["note"].startswith("One community")
    assert not any(i.kind == "cross_community" for i in one.items)


class Vectors:
    model_name = "test-vectors"

    def embed(self, texts):
        return [[1.0, float(len(t) % 3), 0.5] for t in texts]


class Broken:
    model_name = "broken"

    def embed(self, texts):
        raise RuntimeError("model server down")


@pytest.mark.django_db
def test_the_embedding_signal_and_an_embedder_that_fails():
    a = "office-bot"
    office(a)
    try:
        set_embedder(Vectors())
        with_vectors = engine.discover(agent_id=a)
        assert "embedding" not in with_vectors.report["missing"]
        assert with_vectors.report["weights"]["embedding"] == pytest.approx(0.20)
        edge = EntityEdge.objects.filter(agent_id=a).first()
        assert edge.embedding is not None and 0 <= edge.embedding <= 1
        set_embedder(Broken())
        broken = engine.discover(agent_id=a)
    finally:
        reset_embedder()
    assert broken.report["missing"]["embedding"] == "the embedder failed (RuntimeError): left out"
    assert broken.report["weights"]["embedding"] == 0.0
    assert sum(broken.report["weights"].values()) == pytest.approx(1.0)
    assert EntityEdge.objects.filter(agent_id=a, embedding__isnull=False).count() == 0


@pytest.mark.django_db
def test_leiden_runs_on_the_strongest_edges_when_there_are_too_many(monkeypatch):
    a = "office-bot"
    office(a)
    monkeypatch.setattr(D, "LEIDEN_MAX_EDGES", 20)
    out = engine.discover(agent_id=a)
    assert out.report["community_edges"] == 20 < out.report["edges"]
    assert out.report["communities"] >= 1
    kept = np.array([0, 3, 5, 7])
    assert D.strongest(kept, np.array([0.1, 0, 0, 0.9, 0, 0.5, 0, 0.7]), 2).tolist() == [3, 7]
