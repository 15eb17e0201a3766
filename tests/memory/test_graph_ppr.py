"""SPEC G1–G4: the entity–memory graph, seeds, Personalized PageRank (exact and forward push), fusion."""

from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pytest
import time_machine

from memory import engine
from memory.engine import graph as g
from memory.engine import retrieval
from memory.engine.types import RetrievalWeights
from tests.conftest import dt
from tests.memory.conftest import A, fact

pytestmark = pytest.mark.django_db


def load():
    return g.load_graph(agent_id=A, at=engine_now(), generation=0)


def engine_now():
    from django.utils import timezone

    return timezone.now()


def edges_of(graph):
    """{(entity, memory_id): weight} from the symmetric weight structure behind the walk matrix."""
    out = {}
    coo = graph.rows.tocoo()
    for i, j in zip(coo.row.tolist(), coo.col.tolist(), strict=True):
        if i < graph.n_entities <= j:
            out[(graph.entities[i], graph.memory_id(j - graph.n_entities))] = (
                graph.degree[i] * graph.rows[i, j]
            )
    return out


# --- G1: the graph ----------------------------------------------------------------------------------------


def test_graph_has_entity_and_memory_nodes_with_trust_weighted_edges_of_current_facts_only():
    keep = fact("Alice", "works_at", "Acme", origin="channel:x")
    solo = fact("alice", "likes_tea", origin="user")
    old = fact("svc", "port", "80", valid_from=dt("2026-01-01"), origin="user")
    new = fact("svc", "port", "8080", valid_from=dt("2026-02-01"), origin="user")
    fact("gone", "is", "purged", origin="channel:spam")
    engine.invalidate_by_origin(agent_id=A, origin="channel:spam")
    burst = [
        {"content": f"mallory p{i}", "subject": "mallory", "predicate": f"p{i}", "object": "alice"}
        for i in range(5)
    ]
    assert {
        r.outcome for r in engine.store_facts_protected(agent_id=A, facts=burst, origin="tool_echo:x")
    } == {"quarantined"}
    engine.store(agent_id=A, content="a plain memory about Alice")
    graph = load()
    assert sorted(graph.entities) == ["8080", "acme", "alice", "svc"]
    assert sorted(graph.memory_ids.to_pylist()) == sorted([keep, solo, new])
    assert old not in graph.memory_ids.to_pylist()
    edges = edges_of(graph)
    assert edges == pytest.approx(
        {
            ("alice", keep): 0.3,
            ("acme", keep): 0.3,
            ("alice", solo): 1.0,
            ("svc", new): 1.0,
            ("8080", new): 1.0,
        }
    )


def test_aliases_merge_surface_forms_into_one_node():
    a = fact("李老闆", "owns", "tea shop")
    b = fact("zhixu", "lives_in", "Taipei")
    c = fact("customer", "calls", "老闆")
    assert {"李老闆", "zhixu", "老闆"} <= set(load().entities)
    engine.alias_add(agent_id=A, canonical="李老闆", alias="老闆")
    engine.alias_add(agent_id=A, canonical="李老闆", alias="Zhixu")
    graph = load()
    assert "zhixu" not in graph.entities and "老闆" not in graph.entities
    hub = {e for (e, m) in edges_of(graph) if m in (a, b, c)} & {"李老闆"}
    assert hub == {"李老闆"}
    assert {m for (e, m) in edges_of(graph) if e == "李老闆"} == {a, b, c}


# --- G2: seeds --------------------------------------------------------------------------------------------


def test_seeds_are_whole_words_case_insensitive_multiword_cjk_substrings_and_aliases():
    fact("Bob", "knows", "New York")
    fact("李老闆", "owns", "茶館")
    fact("c++", "is", "a language")
    engine.alias_add(agent_id=A, canonical="bob", alias="Robert")
    graph = load()

    def seeds(q):
        return sorted(graph.entities[i] for i in graph.seeds(q))

    assert seeds("what does BOB know?") == ["bob"]
    assert seeds("bobby and bobs") == []
    assert seeds("flights to new   york, please") == ["new york"]
    assert seeds("york alone") == []
    assert seeds("robert's city") == ["bob"]  # alias seeds its canonical
    assert seeds("我想找李老闆喝茶") == ["李老闆"]  # CJK: substring, no spaces needed
    assert seeds("茶館在哪裡") == ["茶館"]
    assert seeds("I write c++ daily") == ["c++"]
    assert seeds("nothing relevant") == []
    assert seeds("x" * 20_000) == []


# --- G3: PPR ----------------------------------------------------------------------------------------------


def random_rows(n_triples, n_entities, seed):
    rng = random.Random(seed)
    rows = []
    for i in range(n_triples):
        s = f"e{int(rng.paretovariate(1.2)) % n_entities}"
        o = f"e{rng.randrange(n_entities)}"
        rows.append((f"m_{i:07d}", s, o if rng.random() > 0.05 else None, round(rng.uniform(0.3, 1.0), 3)))
    return rows


def closed_form(graph, seeds):
    n = graph.size
    s = np.zeros(n)
    s[seeds] = 1.0 / len(seeds)
    m = graph.walk.toarray()
    return np.linalg.solve(np.eye(n) - g.DAMPING * m, (1 - g.DAMPING) * s)


def test_exact_power_iteration_matches_the_closed_form_and_networkx():
    graph = g.build_graph(random_rows(300, 60, seed=1), {})
    seeds = sorted({graph.entities.index("e1"), graph.entities.index("e7")})
    p = g.ppr_exact(graph, seeds)
    assert np.abs(p - closed_form(graph, seeds)).sum() < 1e-5
    nxg = nx.Graph()
    coo = graph.rows.tocoo()
    for i, j in zip(coo.row.tolist(), coo.col.tolist(), strict=True):
        if i < j:
            nxg.add_edge(i, j, weight=float(graph.degree[i] * graph.rows[i, j]))
    ref = nx.pagerank(nxg, alpha=g.DAMPING, personalization={k: 1.0 for k in seeds}, tol=1e-12, max_iter=500)
    ref_vec = np.array([ref.get(i, 0.0) for i in range(graph.size)])
    assert np.abs(p - ref_vec).sum() < 1e-5


def test_memory_scores_are_normalised_to_the_top_and_ties_break_by_id():
    rows = [
        ("m_b", "hub", "x", 1.0),
        ("m_a", "hub", "y", 1.0),
        ("m_d", "x", "far", 1.0),
        ("m_c", "y", "far2", 1.0),
    ]
    graph = g.build_graph(rows, {})
    scores = g.memory_scores(graph, g.ppr_exact(graph, graph.seeds("hub")), seeds=graph.seeds("hub"))
    assert scores.scores["m_a"] == scores.scores["m_b"] == 1.0
    assert 0 < scores.scores["m_c"] == scores.scores["m_d"] < 1.0
    assert scores.top == ["m_a", "m_b", "m_c", "m_d"]
    assert scores.seeds == ["hub"]


NEAR_TIE = 1e-4  # normalised PPR scores closer than this are a tie for ranking (w_graph·1e-4 ≈ 1.5e-5)


@pytest.mark.parametrize(("n_triples", "n_entities"), [(2_000, 300), (20_000, 3_000), (50_000, 8_000)])
def test_forward_push_top10_agrees_with_the_exact_power_iteration(n_triples, n_entities):
    """Up to 100k edges (50k triples, two edges each), several seed sets per graph: the push's i-th memory has
    the exact i-th score (so its top 10 is the exact top 10 up to near-ties), its scores are close, and the
    two lists are identical in most cases (the others only swap near-ties)."""
    graph = g.build_graph(random_rows(n_triples, n_entities, seed=n_triples), {})
    rng = random.Random(5)
    identical = 0
    trials = 8
    for _ in range(trials):
        names = rng.sample(graph.entities, rng.choice([1, 2, 3]))
        seeds = sorted(graph.entities.index(x) for x in names)
        exact = g.memory_scores(graph, g.ppr_exact(graph, seeds), seeds=seeds, top=10)
        push = g.memory_scores(graph, g.ppr_push(graph, seeds), seeds=seeds, top=10)
        assert len(push.top) == len(exact.top) == 10
        for mine, ref in zip(push.top, exact.top, strict=True):
            assert exact.get(mine) == pytest.approx(exact.get(ref), abs=NEAR_TIE), names
        for mid in exact.top:
            assert push.get(mid) == pytest.approx(exact.get(mid), abs=1e-3)
        identical += push.top == exact.top
    assert identical >= trials // 2  # the rest differ only by the order of near-ties


# --- G4: fusion into search -------------------------------------------------------------------------------


def fts_only(query, limit=10, layer=None, tags=None):
    """The R2 ranking with no graph term: the reference search must equal when the graph has nothing to say."""
    at = engine_now()
    w = RetrievalWeights()
    cands = retrieval._fts_candidates(A, query, max(limit * 3, 30), at, layer, list(tags or []))
    ranked = sorted(
        ((retrieval.score(m, pos, at, w), pos, m) for pos, m in enumerate(cands)), key=lambda t: (-t[0], t[1])
    )
    return [(m.id, round(s, 9)) for s, _, m in ranked[:limit]]


def hits(query, **kw):
    return [(h.id, round(h.score, 9)) for h in engine.search(agent_id=A, query=query, touch=False, **kw)]


@time_machine.travel(dt("2026-05-01T12:00:00"), tick=False)
def test_search_equals_fts_only_without_triples_without_seeds_and_with_w_graph_zero():
    for i in range(8):
        engine.store(agent_id=A, content=f"deploy note {i} about the release train", importance=float(i % 10))
    assert hits("deploy release") == fts_only("deploy release") != []  # no triples at all
    fact("release train", "runs_on", "tuesday", content="the release train leaves on tuesday")
    fact("tuesday", "is", "busy", content="tuesdays are busy for deploy")
    assert hits("deploy notes") == fts_only("deploy notes")  # triples, but no entity named
    w0 = RetrievalWeights(w_graph=0.0)
    before = dict(g.stats)
    graph_on = [h.id for h in engine.search(agent_id=A, query="release train deploy", touch=False)]
    graph_off = engine.search(agent_id=A, query="release train deploy", touch=False, weights=w0)
    assert [(h.id, round(h.score, 9)) for h in graph_off] == fts_only("release train deploy")
    assert graph_on != [h.id for h in graph_off]  # the graph does change this one
    assert g.stats["builds"] == before["builds"] + 1  # w_graph = 0 builds nothing


@time_machine.travel(dt("2026-05-01T12:00:00"), tick=False)
def test_a_query_naming_an_entity_reaches_a_fact_two_hops_away():
    near = fact("Alice", "works_at", "Acme", content="Alice works at Acme")
    far = fact("Acme", "located_in", "Paris", content="the head office is located in Paris")
    fact("Zed", "likes", "tea", content="Zed likes tea")
    assert far not in [h for h, _ in fts_only("alice?")]
    result = engine.search(agent_id=A, query="alice?", touch=False)
    assert [h.id for h in result][:2] == [near, far]
    by_id = {h.id: h for h in result}
    assert by_id[far].fts_position is None and by_id[near].fts_position == 0
    # its score is exactly R2 without the text term plus w_graph·ppr, times the trust factor
    ppr = g.graph_scores(agent_id=A, query="alice?")
    assert ppr.get(near) == 1.0 and 0 < ppr.get(far) < 1
    m = engine.get_memory(agent_id=A, memory_id=far)
    w = RetrievalWeights()
    from memory.models import Memory

    expect = retrieval.score(Memory.objects.get(id=far), None, engine_now(), w, ppr=ppr.get(far))
    assert by_id[far].score == pytest.approx(expect, rel=1e-6)
    assert m.id == far


def test_candidates_get_the_graph_term_and_at_most_three_graph_only_hits_from_the_top5():
    hub = fact("Hub", "links", "relay", content="the hub links to the relay")
    spokes = [fact("relay", f"link{i}", f"spoke{i}", content=f"spoke number {i}") for i in range(6)]
    result = engine.search(agent_id=A, query="hub", touch=False)
    graph_only = [h for h in result if h.fts_position is None]
    assert len(graph_only) == 3
    top5 = g.graph_scores(agent_id=A, query="hub").top
    assert {h.id for h in graph_only} <= set(top5)
    assert {h.id for h in graph_only} <= set(spokes)
    fts_hit = next(h for h in result if h.id == hub)
    plain = dict(fts_only("hub"))[hub]
    assert fts_hit.score > plain  # + w_graph·ppr


def test_graph_only_hits_respect_layer_and_tags_and_skip_quarantined_facts():
    fact("alice", "works_at", "acme", content="alice works at acme")
    far = fact("acme", "located_in", "paris", content="head office in paris")
    burst = [
        {"content": f"poison {i}", "subject": "alice", "predicate": f"q{i}", "object": f"bad{i}"}
        for i in range(5)
    ]
    engine.store_facts_protected(agent_id=A, facts=burst, origin="channel:evil")
    result = [h.id for h in engine.search(agent_id=A, query="alice", touch=False)]
    assert far in result
    assert not any(h.startswith("m_") and h not in result for h in result)
    from memory.models import Memory

    assert not Memory.objects.filter(id__in=result, quarantined=True).exists()
    assert far not in [h.id for h in engine.search(agent_id=A, query="alice", touch=False, layer="episodic")]
    assert far not in [h.id for h in engine.search(agent_id=A, query="alice", touch=False, tags=["x"])]


def test_an_alias_in_the_query_reaches_facts_of_every_surface_form():
    boss = fact("李老闆", "owns", "tea shop", content="李老闆 owns the tea shop")
    fact("zhixu", "lives_in", "Taipei", content="zhixu lives in Taipei")
    assert boss not in [h.id for h in engine.search(agent_id=A, query="zhixu", touch=False)]
    engine.alias_add(agent_id=A, canonical="李老闆", alias="zhixu")
    assert boss in [h.id for h in engine.search(agent_id=A, query="zhixu", touch=False)]
    engine.alias_add(agent_id=A, canonical="李老闆", alias="老闆")
    assert boss in [h.id for h in engine.search(agent_id=A, query="老闆在台北嗎", touch=False)]
