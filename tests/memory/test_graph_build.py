"""The graph's column-wise build (SPEC G1, G6) and its read (G5): names normalised in Arrow exactly as
``normalize_entity`` does, the CSR laid out directly equal to a plain COO reference, scores looked up among the
nodes a query reached, and on SQLite the scan answered from its covering index alone."""

from __future__ import annotations

import dataclasses
import random
import string

import numpy as np
import pyarrow as pa
import pytest
from django.db import connection
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from memory import engine
from memory.engine import graph as g
from memory.engine.graph import aliases as graph_aliases
from memory.engine.graph import build as graph_build
from memory.engine.graph import curation as graph_curation
from memory.engine.graph import names as graph_names
from memory.engine.graph import scan as graph_scan
from tests.conftest import dt
from tests.memory.conftest import A, fact

# Characters where the ASCII fast path and Python could part ways: every ASCII whitespace Python's str.split
# knows (\x1c-\x1f included), other control characters, upper case, and non-ASCII that NFKC or lower() change.
_ALPHABET = (
    string.ascii_letters
    + string.digits
    + " \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x00\x07_-."
    + "\u00a0\u3000\u2003ＡＢｃ①ﬁ\ufdfaİÉé李老闆茶館Ωω\u200b"
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=_ALPHABET, max_size=12), min_size=1, max_size=30))
def test_arrow_normalisation_equals_normalize_entity(names):
    got = g.normalize_names(pa.array(names, pa.large_string())).to_pylist()
    assert got == [g.normalize_entity(n) for n in names]


def reference_weights(subj, obj, trust, n_e):
    """W built the plain way: both edges of every fact as COO entries, duplicates summed, zeros dropped."""
    n_m = len(subj)
    rows, cols, data = [], [], []
    for i in range(n_m):
        for e in (subj[i], obj[i]):
            if e >= 0:
                rows += [e, n_e + i]
                cols += [n_e + i, e]
                data += [trust[i], trust[i]]
    w = sparse.csr_matrix((data, (rows, cols)), shape=(n_e + n_m, n_e + n_m))
    w.eliminate_zeros()
    w.sort_indices()
    return w


@pytest.mark.parametrize("seed", range(6))
def test_the_directly_laid_out_csr_equals_the_coo_reference(seed):
    rng = np.random.default_rng(seed)
    n_m, n_e = 400, 37
    subj = rng.integers(-1, n_e, n_m)  # -1: a name that normalises to nothing
    obj = np.where(rng.random(n_m) < 0.3, subj, rng.integers(-1, n_e, n_m))  # many subject == object
    trust = rng.choice([0.0, 0.3, 0.6, 1.0], n_m)  # zero-trust edges are left out
    got, degree = graph_build._weights(subj, obj, trust, n_e)
    want = reference_weights(subj.tolist(), obj.tolist(), trust.tolist(), n_e)
    assert got.shape == want.shape
    assert np.array_equal(got.indptr, want.indptr)
    assert np.array_equal(got.indices, want.indices)  # sorted within every row
    assert np.allclose(got.data, want.data, rtol=0, atol=1e-15)
    assert np.allclose(degree, np.asarray(want.sum(axis=1)).ravel(), rtol=0, atol=1e-12)
    assert got.indices.dtype == np.int32 and got.indptr.dtype == np.int32  # the push kernel's compiled types


def test_a_fact_whose_subject_and_object_are_one_entity_has_one_edge_of_twice_its_trust():
    graph = g.build_graph([("m1", "Loop", " loop ", 0.4), ("m2", "loop", "other", 0.5)], {})
    loop = graph.entities.index("loop")
    row = graph.rows[loop].toarray().ravel() * graph.degree[loop]
    assert graph.degree[loop] == pytest.approx(0.8 + 0.5)
    assert row[graph.n_entities + 0] == pytest.approx(0.8)
    assert graph.degree[graph.n_entities + 0] == pytest.approx(0.8)


def test_aliases_merge_surface_forms_in_the_columnwise_build():
    rows = [("m1", "李老闆", "Lantern", 1.0), ("m2", "老闆", "tea", 0.5), ("m3", "ZhiXu", "tea", 0.5)]
    graph = g.build_graph(rows, {"老闆": "李老闆", "zhixu": "李老闆"})
    assert sorted(graph.entities) == ["lantern", "tea", "李老闆"]
    boss = graph.entities.index("李老闆")
    assert graph.cjk_names["老闆"] == boss and graph.word_names["zhixu"] == boss
    assert graph.rows[boss].nnz == 3


def test_scores_are_looked_up_among_the_reached_nodes():
    rng = random.Random(5)
    rows = [
        (f"m{i:04d}", f"e{rng.randrange(40)}", f"e{rng.randrange(40)}", 0.5 + i % 3 / 4) for i in range(600)
    ]
    rows += [("island", "far", "away", 1.0)]
    graph = g.build_graph(rows, {})
    scores = g.rank(graph, [graph.entities.index("e3")], top=10)
    dense = scores.scores
    some = rng.sample(sorted(dense), 20)
    assert scores.get_many([*some, "island", "nope", some[0]]) == [
        *(dense[m] for m in some),
        0.0,
        0.0,
        dense[some[0]],
    ]
    assert scores.get_many([]) == []
    assert graph.memory_node("island") == 600 and graph.memory_node("nope") is None
    assert graph.memory_id(600) == "island"


# --- the scan ------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_sqlite_answers_the_scan_from_the_covering_index_alone():
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":  # B-tree entries are capped there: no such index, ever
            cur.execute("SELECT count(*) FROM pg_indexes WHERE indexname = %s", [g.GRAPH_SCAN_INDEX])
            assert cur.fetchone()[0] == 0
            return
        cur.execute(
            "EXPLAIN QUERY PLAN " + graph_scan._fact_scan_sql("COUNT(*), group_concat(m.id)"),
            [A, "2030-01-01"],
        )
        plan = " ".join(str(row[-1]) for row in cur.fetchall())
    assert f"COVERING INDEX {g.GRAPH_SCAN_INDEX}" in plan


@pytest.mark.django_db
def test_a_future_dated_fact_is_left_out_of_the_aggregated_columns_and_sets_the_expiry():
    now = fact("svc", "port", "8080", origin="user")
    soon = fact("svc", "owner", "dana", origin="user", valid_until=dt("2098-06-01"))
    later = fact("svc", "region", "eu", origin="user", valid_from=dt("2099-01-01"))
    facts = g.scan_facts(agent_id=A, at=timezone.now())
    assert isinstance(facts.ids, pa.Array)  # the aggregated read, not the row-by-row fallback
    assert sorted(facts.ids.to_pylist()) == sorted([now, soon])
    assert len(facts.subjects) == len(facts.objects) == len(facts.trusts) == 2
    assert facts.expires == dt("2098-06-01")  # the earliest of the ends and the later starts
    assert later not in g.load_graph(agent_id=A, at=timezone.now()).memory_ids.to_pylist()
    assert g.scan_facts(agent_id=A, at=dt("2098-07-01")).expires == dt("2099-01-01")
    assert "eu" in g.load_graph(agent_id=A, at=dt("2099-02-01")).entities


# --- the curator's graph view on columns ---------------------------------------------------------------------


def reference_view(agent_id, entity=None, depth=1, predicate=None, min_trust=0.0, limit=300):
    """graph_view as it was written row by row over the ORM (the oracle for the column-wise one)."""
    resolve = graph_names._Resolver(graph_aliases._alias_map(agent_id))
    focus = None
    if entity is not None and g.normalize_entity(entity):
        norm = g.normalize_entity(entity)
        focus = resolve.aliases.get(norm, norm)
    all_edges, predicates = [], set()
    for mid, subject, pred, obj, otrust, quarantined in graph_curation._edge_rows(agent_id, timezone.now()):
        predicates.add(pred)
        s, o = resolve(subject), resolve(obj)
        if not s or not o or (predicate and pred != predicate) or otrust < min_trust:
            continue
        all_edges.append(
            {"subject": s, "predicate": pred, "object": o, "memory_id": mid, "origin_trust": otrust,
             "quarantined": bool(quarantined)}
        )  # fmt: skip
    if focus is not None:
        reach, frontier = {focus}, {focus}
        for _ in range(depth - 1):
            nxt = {e["object"] for e in all_edges if e["subject"] in frontier and e["object"] not in reach}
            nxt |= {e["subject"] for e in all_edges if e["object"] in frontier and e["subject"] not in reach}
            reach |= nxt
            frontier = nxt
        all_edges = [e for e in all_edges if e["subject"] in reach or e["object"] in reach]
        all_edges.sort(key=lambda e: 0 if focus in (e["subject"], e["object"]) else 1)
    shown = all_edges[:limit]
    nodes = g.view_nodes(shown, focus)  # degrees of the shown edges (not under test here)
    return g.GraphView(
        nodes, shown, sorted(predicates), len(all_edges), len(shown), len(all_edges) > len(shown), focus
    )


@pytest.mark.django_db
def test_the_columnwise_graph_view_equals_the_row_by_row_reference():
    rng = random.Random(17)
    forms = [
        "Alice",
        "alice ",
        "ALICE",
        "Bob",
        "bob",
        "李老闆",
        "老闆",
        "Zhixu",
        "Acme Corp",
        "acme  corp",
        "Ｄａｎａ",
        "dana",
        "x",
    ]
    for i in range(160):
        obj = None if i % 9 == 0 else rng.choice(forms)
        trust = rng.choice([None, 0.2, 0.45, 0.9])
        fact(
            rng.choice(forms),
            rng.choice(["knows", "owns", "leads"]) + str(i % 40),
            obj,
            origin="user",
            origin_trust=trust,
        )
    for k in range(5):  # a burst from one origin: quarantined, flagged in the view
        fact("Mallory", f"says{k}", rng.choice(forms), origin="channel:burst", protect=True)
    engine.alias_add(agent_id=A, canonical="李老闆", alias="zhixu")
    engine.alias_add(agent_id=A, canonical="李老闆", alias="老闆")
    check_cases()
    fact("left\x1fright", "joins", "Acme Corp", origin="user")  # a separator in a value: read row by row
    assert not isinstance(g.scan_facts(agent_id=A, at=timezone.now()).ids, pa.Array)
    check_cases()
    assert ("left right", "acme corp") in {
        (e["subject"], e["object"]) for e in g.graph_view(agent_id=A).edges
    }


def unlabelled(view):
    """A view without its display labels (the stored surface forms, issue 19), as the reference has none."""
    nodes = [{k: v for k, v in n.items() if k != "label"} for n in view.nodes]
    return dataclasses.replace(view, nodes=nodes, labels={}, entities=0)


def check_cases():
    cases = [
        {},
        {"limit": 7},
        {"entity": "Alice"},
        {"entity": " ZHIXU ", "depth": 2, "limit": 25},
        {"entity": "dana", "depth": 2},
        {"entity": "nobody"},
        {"predicate": "knows3"},
        {"min_trust": 0.5, "limit": 40},
        {"entity": "acme corp", "min_trust": 0.3, "depth": 2, "limit": 5},
    ]
    for case in cases:
        got, want = g.graph_view(agent_id=A, **case), reference_view(A, **case)
        ids = {n["id"] for n in got.nodes}
        # display labels (the stored surface forms, issue 19) are only ever labels of the nodes shown
        assert set(got.labels) <= ids and all(
            n["label"] == got.labels.get(n["id"], n["id"]) for n in got.nodes
        )
        assert unlabelled(got) == unlabelled(want), case
    assert any(e["quarantined"] for e in g.graph_view(agent_id=A, limit=5000).edges)


@pytest.mark.django_db
def test_a_future_dated_fact_written_between_the_scans_two_reads_leaves_the_current_facts_alone():
    """The scan's second read (rows that start later) can see a row the first, aggregated read did not: only the
    later rows that were read the first time are dropped, so the current facts stay."""
    current = fact("svc", "port", "8080", origin="user")
    fact("svc", "region", "eu", origin="user", valid_from=dt("2099-01-01"))
    wrote = []

    def write_in_between(execute, sql, params, many, context):
        if "m.valid_from > " in sql and "m.id, m.valid_from" in sql and not wrote:
            wrote.append(fact("svc", "owner", "dana", origin="user", valid_from=dt("2098-01-01")))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(write_in_between):
        facts = g.scan_facts(agent_id=A, at=timezone.now())
    assert wrote  # the second read ran, after the extra write
    assert facts.ids.to_pylist() == [current]
    assert facts.expires == dt("2098-01-01")  # the row it saw still bounds the graph's life
