"""Memory vectors (SPEC R2 ``w_vec``, issue 17): written with the row, back-filled, searched only over the
caller's current, non-quarantined rows, and never able to break a write or a search."""

from __future__ import annotations

import hashlib
import logging
from datetime import timedelta

import numpy as np
import pytest
import time_machine
from django.core.management import call_command
from django.utils import timezone

from memory import engine
from memory.engine import embeddings as emb
from memory.engine import vectors
from memory.engine.types import RetrievalWeights
from memory.models import Memory, MemoryVector
from tests.conftest import dt
from tests.memory.conftest import OTHER, A

pytestmark = pytest.mark.django_db

# Words of one theme share an axis: "feline" and "cat" are near, though they share no letters.
THEMES = {"cat": 0, "cats": 0, "feline": 0, "kitten": 0, "dog": 1, "puppy": 1, "car": 2, "engine": 2}
VEC = RetrievalWeights(w_graph=0.0, w_vec=0.15, w_vec_rank=0.35)


class ThemeEmbedder:
    """A small real embedder: theme axes plus a hashed tail for other words."""

    model_name = "test/themes-v2"

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        out = []
        for text in texts:
            v = np.zeros(12)
            for word in text.lower().split():
                word = word.strip("?.,!")
                if word in THEMES:
                    v[THEMES[word]] += 1.0
                elif word:
                    v[4 + int(hashlib.sha1(word.encode()).hexdigest(), 16) % 8] += 0.05
            out.append(v.tolist())
        return out


class BrokenEmbedder:
    model_name = "test/broken"

    def embed(self, texts):
        raise RuntimeError("model server is down")


class OneBadTextEmbedder(ThemeEmbedder):
    """Throws on one text only (a poisoned input), embeds the others."""

    model_name = "test/one-bad"

    def embed(self, texts):
        if any("poison" in t for t in texts):
            raise ValueError("cannot embed this text")
        return super().embed(texts)


@pytest.fixture
def themes():
    e = ThemeEmbedder()
    emb.set_memory_embedder(e)
    yield e
    emb.set_memory_embedder(None)


def ids(hits):
    return [h.id for h in hits]


def test_a_write_stores_its_vector_and_search_finds_it_without_a_shared_word(themes):
    cat = engine.store(agent_id=A, content="my cat sleeps on the sofa").id
    engine.store(agent_id=A, content="the car needs new tyres")
    row = MemoryVector.objects.get(memory_id=cat)
    assert (row.agent_id, row.model, row.dim) == (A, "test/themes-v2", 12)
    vec = np.frombuffer(bytes(row.vector), dtype="<f2").astype(np.float32)
    assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-3
    # lexical search alone finds nothing: no word in common
    assert (
        engine.search(
            agent_id=A, query="feline", weights=RetrievalWeights(w_vec=0.0, w_vec_rank=0.0), touch=False
        )
        == []
    )
    assert ids(engine.search(agent_id=A, query="feline", weights=VEC, touch=False))[0] == cat


def test_vector_search_returns_only_current_unquarantined_rows_of_the_caller(themes, guard_defaults):
    mine = engine.store(agent_id=A, content="kitten").id
    theirs = engine.store(agent_id=OTHER, content="kitten").id
    retracted = engine.store(agent_id=A, content="kitten", origin="channel:bad").id
    engine.invalidate_by_origin(agent_id=A, origin="channel:bad")
    # a burst of low-trust facts about one subject: the guard quarantines it (SPEC P5)
    burst = [
        engine.store_temporal(
            agent_id=A, content=f"kitten fact {k}", subject="tom", predicate=f"p{k}", object=str(k),
            origin="channel:anon", protect=True, valid_from="2025-12-01T00:00:00Z",
        )
        for k in range(6)
    ]  # fmt: skip
    held = [r.id for r in burst if r.outcome == "quarantined"]
    assert held and Memory.objects.filter(id__in=held, quarantined=True).count() == len(held)
    expiring = engine.store(agent_id=A, content="kitten", valid_until=timezone.now() + timedelta(hours=1)).id
    assert MemoryVector.objects.filter(
        memory_id__in=[mine, theirs, retracted, *held, expiring]
    ).count() == 4 + len(held)
    with time_machine.travel(timezone.now() + timedelta(days=2), tick=False):
        found = ids(engine.search(agent_id=A, query="feline", weights=VEC, touch=False))
    believed = set(
        Memory.objects.filter(agent_id=A, quarantined=False, id__in=found).values_list("id", flat=True)
    )
    assert mine in found and set(found) == believed
    assert not {theirs, retracted, expiring, *held} & set(found)
    # the other agent sees only its own row, and A's rows behave as absent for it
    assert ids(engine.search(agent_id=OTHER, query="feline", weights=VEC, touch=False)) == [theirs]


def test_layer_and_tag_filters_apply_to_dense_hits(themes):
    engine.store(agent_id=A, content="kitten", layer="semantic")
    tagged = engine.store(agent_id=A, content="cat", tags=["pets"]).id
    hits = engine.search(agent_id=A, query="feline", tags=["pets"], weights=VEC, touch=False)
    assert ids(hits) == [tagged]
    hits = engine.search(agent_id=A, query="feline", layer="semantic", weights=VEC, touch=False)
    assert len(hits) == 1 and hits[0].id != tagged


def test_the_matrix_cache_sees_new_and_erased_rows(themes):
    first = engine.store(agent_id=A, content="cat", origin="user:x").id
    assert ids(engine.search(agent_id=A, query="feline", weights=VEC, touch=False)) == [first]
    loads = dict(vectors.stats)
    second = engine.store(agent_id=A, content="kitten").id
    assert set(ids(engine.search(agent_id=A, query="feline", weights=VEC, touch=False))) == {first, second}
    assert vectors.stats["appends"] == loads["appends"] + 1  # caught up by the new rows only
    engine.erase(agent_id=A, origin="user:x", actor="curator", reason="asked to")
    assert not MemoryVector.objects.filter(memory_id=first).exists()
    assert ids(engine.search(agent_id=A, query="feline", weights=VEC, touch=False)) == [second]


def test_an_embedder_that_throws_never_fails_the_write_and_is_logged_once(caplog):
    emb.set_memory_embedder(BrokenEmbedder())
    vectors._logged.clear()
    with caplog.at_level(logging.WARNING, logger="memdesk.embeddings"):
        a = engine.store(agent_id=A, content="cat on the mat")
        b = engine.store(agent_id=A, content="another cat")
        hits = engine.search(agent_id=A, query="cat", weights=VEC, touch=False)
    assert a.outcome == b.outcome == "stored"
    assert not MemoryVector.objects.exists()
    # search degrades to the lexical ranking
    assert ids(hits) == ids(
        engine.search(agent_id=A, query="cat", weights=RetrievalWeights(w_vec=0, w_vec_rank=0), touch=False)
    )
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warnings] == [
        "memory vectors were not written (the backfill will add them)",
        "vector search failed; searching lexical + graph only",
    ]


def test_an_embedder_that_throws_on_one_text_leaves_that_row_to_the_backfill():
    emb.set_memory_embedder(OneBadTextEmbedder())
    good = engine.store(agent_id=A, content="cat").id
    bad = engine.store(agent_id=A, content="poison cat").id
    assert set(MemoryVector.objects.values_list("memory_id", flat=True)) == {good}
    report = vectors.backfill(agent_id=A, batch_size=10)
    assert (
        report.failed
        and report.remaining == 1
        and bad not in set(MemoryVector.objects.values_list("memory_id", flat=True))
    )


def test_an_embedder_that_fails_to_load_means_no_vectors(monkeypatch, caplog):
    emb.reset_memory_embedder()
    monkeypatch.setenv("MEMDESK_EMBEDDER", "memory.engine.no_such_module:factory")
    with caplog.at_level(logging.WARNING, logger="memdesk.embeddings"):
        assert emb.memory_embedder() is None
        assert emb.memory_embedder() is None
        r = engine.store(agent_id=A, content="cat")
    assert r.outcome == "stored" and not MemoryVector.objects.exists()
    assert len([x for x in caplog.records if "did not load" in x.getMessage()]) == 1
    monkeypatch.setenv("MEMDESK_EMBEDDER", "off")
    assert emb.memory_embedder_path() == ""


def test_backfill_is_idempotent_and_resumable(themes):
    emb.set_memory_embedder(None)
    made = [engine.store(agent_id=A, content=f"cat number {k}").id for k in range(5)]
    other = engine.store(agent_id=OTHER, content="dog").id
    assert not MemoryVector.objects.exists()
    emb.set_memory_embedder(themes)
    # a run stopped after one batch of two ...
    first = vectors.backfill(agent_id=A, batch_size=2, max_batches=1)
    assert (first.embedded, first.remaining) == (2, 3)
    assert set(MemoryVector.objects.values_list("memory_id", flat=True)) == set(made[:2])
    # ... resumes with the rows still missing
    rest = vectors.backfill(agent_id=A, batch_size=2)
    assert (rest.embedded, rest.batches, rest.remaining) == (3, 2, 0)
    again = vectors.backfill(agent_id=A, batch_size=2)
    assert (again.embedded, again.remaining) == (0, 0)
    assert MemoryVector.objects.filter(agent_id=A).count() == 5
    assert not MemoryVector.objects.filter(memory_id=other).exists()  # another agent's rows are not touched
    # every agent, from the command line
    call_command("backfill_vectors", "--batch-size", "3")
    assert MemoryVector.objects.filter(memory_id=other, agent_id=OTHER).exists()
    assert MemoryVector.objects.count() == 6


def test_backfill_without_an_embedder_does_nothing():
    engine.store(agent_id=A, content="cat")
    report = vectors.backfill()
    assert (report.embedded, report.model) == (0, "")


@pytest.mark.parametrize(
    "query",
    ["", "   ", "x" * 10_240, "the of and a to", "🐱🐶🚗", "feline 猫 кошка قطة", '"(*)" OR NEAR ^'],
)
def test_hostile_queries_with_vectors_on_return_a_list(themes, query):
    engine.store(agent_id=A, content="cat 猫")
    hits = engine.search(agent_id=A, query=query, weights=VEC, touch=False)
    assert isinstance(hits, list) and len(hits) <= 10


def test_vectors_are_off_by_default_in_weights_zero(themes):
    """w_vec = w_vec_rank = 0: no query is embedded, the ranking is the lexical one."""
    engine.store(agent_id=A, content="cat")
    calls = themes.calls
    engine.search(agent_id=A, query="cat", weights=RetrievalWeights(w_vec=0.0, w_vec_rank=0.0), touch=False)
    assert themes.calls == calls


def test_time_does_not_change_a_vector(themes):
    with time_machine.travel(dt("2026-03-01T00:00:00"), tick=False):
        mid = engine.store(agent_id=A, content="kitten").id
    with time_machine.travel(dt("2026-03-01T00:00:00") + timedelta(days=30), tick=False):
        assert ids(engine.search(agent_id=A, query="cat", weights=VEC, touch=False)) == [mid]


def test_the_matrix_of_an_agent_without_vectors_fills_on_its_first_write(themes):
    engine.store(agent_id=A, content="no vector yet")
    MemoryVector.objects.all().delete()
    vectors.clear_cache()
    assert engine.search(agent_id=A, query="feline", weights=VEC, touch=False) == []  # empty matrix cached
    cat = engine.store(agent_id=A, content="cat").id
    assert ids(engine.search(agent_id=A, query="feline", weights=VEC, touch=False)) == [cat]


def test_a_matrix_older_than_the_reload_time_is_read_whole_again(themes, monkeypatch):
    cat = engine.store(agent_id=A, content="cat").id
    assert ids(engine.search(agent_id=A, query="feline", weights=VEC, touch=False)) == [cat]
    loads = vectors.stats["loads"]
    monkeypatch.setattr(vectors, "RELOAD_SECONDS", 0.0)
    engine.search(agent_id=A, query="feline", weights=VEC, touch=False)
    assert vectors.stats["loads"] == loads + 1


def test_default_weights_use_vectors_when_an_embedder_is_attached(themes):
    cat = engine.store(agent_id=A, content="my cat sleeps").id
    assert RetrievalWeights().w_vec_rank > 0
    assert ids(engine.search(agent_id=A, query="feline", touch=False)) == [cat]
    emb.set_memory_embedder(None)
    assert engine.search(agent_id=A, query="feline", touch=False) == []


def test_a_database_without_the_vector_table_still_writes_and_searches(themes):
    """An old database before migration 0019: writes succeed, search is lexical, nothing raises."""
    from django.db import connection, transaction

    with connection.cursor() as cur:
        cur.execute("DROP TABLE memory_vector")
    vectors._logged.clear()
    r = engine.store(agent_id=A, content="cat on the mat")
    assert r.outcome == "stored"
    with transaction.atomic():  # inside a caller's transaction too
        assert ids(engine.search(agent_id=A, query="cat", weights=VEC, touch=False)) == [r.id]
        assert engine.search(agent_id=A, query="feline", weights=VEC, touch=False) == []


def test_the_backfill_job_embeds_the_missing_rows(themes):
    from memory import tasks

    emb.set_memory_embedder(None)
    mid = engine.store(agent_id=A, content="cat").id
    emb.set_memory_embedder(themes)
    assert tasks.vectors_backfill(A) == {
        "model": "test/themes-v2", "embedded": 1, "batches": 1, "remaining": 0, "failed": False
    }  # fmt: skip
    assert MemoryVector.objects.filter(memory_id=mid).exists()
    assert "vectors_backfill" in tasks.JOBS


def test_batch_writes_get_their_vectors(themes):
    results = engine.store_temporal_many(
        agent_id=A,
        facts=[
            {"content": "tom is a cat", "subject": "tom", "predicate": "is_a", "object": "cat"},
            {"content": "rex is a dog", "subject": "rex", "predicate": "is_a", "object": "dog"},
        ],
    )
    assert {r.outcome for r in results} == {"stored"}
    assert set(MemoryVector.objects.values_list("memory_id", flat=True)) == {r.id for r in results}
