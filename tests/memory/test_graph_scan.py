"""The graph's read and query machinery (SPEC G1, G3, G5): the aggregated fact scan and its row-by-row
fallbacks, and the forward push's reusable work arrays (one per query running at once)."""

from __future__ import annotations

import random
import threading

import numpy as np
import pyarrow as pa
import pytest
from django.utils import timezone

from memory import engine
from memory.engine import graph as g
from memory.models import Memory
from tests.conftest import dt
from tests.memory.conftest import A, fact

pytestmark = pytest.mark.django_db


def reference_graph():
    """The graph built from the current, believed fact rows read through the ORM, row by row."""
    rows = (
        Memory.objects.filter(agent_id=A, subject__isnull=False, predicate__isnull=False)
        .filter(engine.belief_current_q())
        .values_list("id", "subject", "object", "origin_trust")
    )
    aliases = {a.alias: a.canonical for a in engine.alias_list(agent_id=A)}
    return g.build_graph(list(rows), aliases)


def same_graph(a, b):
    assert sorted(a.entities) == sorted(b.entities)
    assert sorted(a.memory_ids.to_pylist()) == sorted(b.memory_ids.to_pylist())
    assert a.triples == b.triples

    def edges(graph):
        coo = graph.rows.tocoo()
        names = graph.entities + graph.memory_ids.to_pylist()
        return {
            (names[i], names[j]): round(float(graph.degree[i] * graph.rows[i, j]), 12)
            for i, j in zip(coo.row.tolist(), coo.col.tolist(), strict=True)
        }

    assert edges(a) == edges(b)


def some_facts():
    fact("Alice", "works_at", "Acme", origin="channel:x")
    fact("alice", "likes", origin="user")  # no object
    fact("李老闆", "owns", "茶館", origin="user")
    fact("Ｆｕｌｌ  Width", "is", "NFKC  folded", origin="import")
    fact("svc", "port", "80", origin="user")
    fact("svc", "port", "8080", origin="user")  # supersedes 80
    engine.alias_add(agent_id=A, canonical="alice", alias="Ali")


def test_the_aggregated_scan_reads_the_same_graph_as_the_rows():
    some_facts()
    facts = g.scan_facts(agent_id=A, at=timezone.now())
    assert isinstance(facts.subjects, pa.Array)  # one row of aggregated columns, names never split in Python
    assert len(facts.ids) == 5
    graph = g.load_graph(agent_id=A, at=timezone.now())
    same_graph(graph, reference_graph())
    assert {"alice", "acme", "李老闆", "茶館", "full width", "nfkc folded", "svc", "8080"} == set(
        graph.entities
    )


def test_a_name_holding_the_separator_falls_back_to_the_rows_and_loses_nothing():
    some_facts()
    odd = fact("left\x1fright", "joins", "Acme")
    facts = g.scan_facts(agent_id=A, at=timezone.now())
    assert not isinstance(facts.subjects, pa.Array)  # the pieces would not line up: read row by row
    assert odd in facts.ids and "left\x1fright" in facts.subjects
    graph = g.load_graph(agent_id=A, at=timezone.now())
    same_graph(graph, reference_graph())
    assert "left right" in graph.entities  # \x1f is whitespace to the normaliser


def test_rows_that_start_later_are_left_out_and_set_when_the_graph_expires():
    some_facts()
    later = fact("svc", "owner", "dana", valid_from=dt("2099-01-01"))
    facts = g.scan_facts(agent_id=A, at=timezone.now())
    assert later not in facts.ids and len(facts.ids) == 5
    assert facts.expires == dt("2099-01-01")
    graph = g.load_graph(agent_id=A, at=timezone.now())
    same_graph(graph, reference_graph())
    assert "dana" not in graph.entities and graph.expires == dt("2099-01-01")


def test_an_agent_without_facts_scans_to_an_empty_graph():
    engine.store(agent_id=A, content="a plain memory, no triple")
    facts = g.scan_facts(agent_id=A, at=timezone.now())
    assert (len(facts.ids), facts.expires) == (0, None)
    assert g.load_graph(agent_id=A, at=timezone.now()).triples == 0


# --- the push's work arrays ---------------------------------------------------------------------------------


def random_graph(n_triples=3_000, n_entities=400, seed=3):
    rng = random.Random(seed)
    rows = [
        (
            f"m{i:06d}",
            f"e{int(rng.paretovariate(1.2)) % n_entities}",
            f"e{rng.randrange(n_entities)}",
            0.5 + i % 5 / 10,
        )
        for i in range(n_triples)
    ]
    return g.build_graph(rows, {})


def seed_sets(graph, n, seed=11):
    rng = random.Random(seed)
    return [sorted(rng.sample(range(graph.n_entities), rng.choice([1, 2, 3]))) for _ in range(n)]


def test_the_push_reuses_clean_work_arrays_and_repeats_itself_exactly():
    graph = random_graph()
    fresh = random_graph()
    queries = seed_sets(graph, 12)
    first = [g.ppr_push(graph, s) for s in queries]
    assert len(graph._scratch) == 1  # one query at a time: one set of work arrays, reused
    work = graph._scratch[0]
    for name in ("p", "r", "queued", "seen"):
        assert not getattr(work, name).any(), name  # cleaned node by node after every push
    again = [g.ppr_push(graph, s) for s in reversed(queries)][::-1]
    for a, b, s in zip(first, again, queries, strict=True):
        assert np.array_equal(a, b)
        assert np.array_equal(a, g.ppr_push(fresh, s))
        assert np.abs(a - g.ppr_exact(graph, s)).sum() < 0.02  # it is PPR (the top-10 test pins the ranking)


def test_pushes_running_at_once_on_one_graph_each_get_their_own_work_arrays():
    graph = random_graph()
    queries = seed_sets(graph, 40)
    expected = [g.ppr_push(graph, s) for s in queries]
    results: dict[int, list[np.ndarray]] = {}
    start = threading.Barrier(4)

    def worker(k):
        start.wait()
        results[k] = [g.ppr_push(graph, s) for s in queries[k::4] * 3]

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        for got, want in zip(results[k], expected[k::4] * 3, strict=True):
            assert np.array_equal(got, want)
    assert 1 <= len(graph._scratch) <= 4


def test_sparse_scores_of_the_query_path_equal_the_dense_vectors_scores():
    graph = random_graph()
    for seeds in seed_sets(graph, 10):
        sparse = g.rank(graph, seeds, top=10)
        dense = g.memory_scores(graph, g.ppr_push(graph, seeds), seeds=seeds, top=10)
        assert sparse.top == dense.top
        assert sparse.scores == dense.scores
        some = random.Random(seeds[0]).sample(graph.memory_ids.to_pylist(), 50)
        assert [sparse.get(m) for m in some] == [dense.get(m) for m in some]
        assert sparse.get("not-a-memory") == 0.0
