"""SPEC G8: optional embedding seeding: off by default, pluggable, vectors cached in entity_embedding,
failures fall back to plain (entity-name) seeding."""

from __future__ import annotations

import hashlib
import logging

import numpy as np
import pytest

from memory import engine
from memory.engine import embeddings as emb
from memory.engine import graph as g
from memory.models import EntityEmbedding
from tests.memory.conftest import A, fact

pytestmark = pytest.mark.django_db
# A tiny "semantic" space: words of one theme share an axis, so cosine finds related names.
THEMES = {"cat": 0, "kitten": 0, "feline": 0, "dog": 1, "puppy": 1, "car": 2, "engine": 2, "tea": 3}


class ThemeEmbedder:
    """A real (if small) embedder: a bag of theme axes plus a hashed tail, normalised later by the engine."""

    model_name = "test/themes-v1"

    def __init__(self):
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        out = []
        for text in texts:
            v = np.zeros(8)
            for word in text.lower().split():
                word = word.strip("?.,!")
                if word in THEMES:
                    v[THEMES[word]] += 1.0
                else:
                    v[4 + int(hashlib.sha1(word.encode()).hexdigest(), 16) % 4] += 0.05
            out.append(v.tolist())
        return out


class BrokenEmbedder:
    model_name = "test/broken"

    def embed(self, texts):
        raise RuntimeError("model server is down")


class WrongShapeEmbedder:
    model_name = "test/wrong-shape"

    def embed(self, texts):
        return [[1.0, 0.0]]  # one vector whatever the input


@pytest.fixture(autouse=True)
def _reset(settings, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "none.toml"))
    emb.reset_embedder()
    g.clear_cache()
    yield
    emb.reset_embedder()
    g.clear_cache()


def world():
    return {
        "kitten": fact(
            "kitten", "sleeps_on", "sofa", content="the little one naps on the sofa", origin="user"
        ),
        "dog": fact("dog", "chews", "slipper", content="the slipper got chewed", origin="user"),
        "car": fact("car", "needs", "oil change", content="service booked for tuesday", origin="user"),
    }


def test_off_by_default_and_name_seeding_is_unchanged():
    ids = world()
    assert emb.active_embedder()[0] is None
    assert g.graph_scores(agent_id=A, query="where is the feline") is None  # no entity named
    assert EntityEmbedding.objects.count() == 0
    assert g.graph_scores(agent_id=A, query="kitten").top[0] == ids["kitten"]


def test_settings_file_turns_it_on_with_top_k(tmp_path, monkeypatch):
    path = tmp_path / "memdesk.toml"
    path.write_text(
        '[graph]\nembed_seed = true\nembed_top_k = 2\nembedder = "tests.memory.test_graph_embeddings:ThemeEmbedder"\n'
    )
    monkeypatch.setenv("MEMDESK_CONFIG", str(path))
    settings = emb.graph_settings()
    assert (settings.embed_seed, settings.embed_top_k) == (True, 2)
    embedder, k = emb.active_embedder()
    assert isinstance(embedder, ThemeEmbedder) and k == 2
    path.write_text("[graph]\nembed_seed = 'yes please'\nembed_top_k = 0\n")
    assert emb.graph_settings() == emb.GraphSettings()  # malformed values: the defaults (off)


def test_nearest_entity_vectors_seed_the_graph_and_are_cached_per_model():
    ids = world()
    embedder = ThemeEmbedder()
    emb.set_embedder(embedder, top_k=1)
    scores = g.graph_scores(agent_id=A, query="where is the feline")
    assert scores is not None and scores.seeds == ["kitten"]
    assert scores.top[0] == ids["kitten"]
    stored = EntityEmbedding.objects.filter(agent_id=A, model="test/themes-v1")
    graph = g.agent_graph(agent_id=A)
    assert sorted(stored.values_list("entity", flat=True)) == sorted(graph.entities)
    assert {row.dim for row in stored} == {8}
    entity_calls = sum(len(c) for c in embedder.calls)
    # same graph object (or a rebuilt one): vectors come from memory or the table, only the query is embedded
    g.graph_scores(agent_id=A, query="a puppy?")
    g.clear_cache()
    fresh = ThemeEmbedder()
    emb.set_embedder(fresh, top_k=1)
    assert g.graph_scores(agent_id=A, query="a puppy?").seeds == ["dog"]
    assert fresh.calls == [["a puppy?"]]  # entities came from entity_embedding
    assert sum(len(c) for c in embedder.calls) == entity_calls + 1
    # name hits and vector hits are united
    emb.set_embedder(fresh, top_k=2)
    both = g.graph_scores(agent_id=A, query="car and a puppy")
    assert set(both.seeds) == {"car", "dog"}


def test_search_uses_embedding_seeds_end_to_end():
    ids = world()
    assert engine.search(agent_id=A, query="feline napping", touch=False) == []
    emb.set_embedder(ThemeEmbedder(), top_k=1)
    result = [h.id for h in engine.search(agent_id=A, query="feline napping", touch=False)]
    assert result[0] == ids["kitten"]


@pytest.mark.parametrize("broken", [BrokenEmbedder, WrongShapeEmbedder])
def test_an_embedder_failure_falls_back_to_name_seeding(broken, caplog):
    ids = world()
    emb.set_embedder(broken())
    with caplog.at_level(logging.WARNING, logger="memdesk.embeddings"):
        scores = g.graph_scores(agent_id=A, query="the kitten and the feline")
        hits = engine.search(agent_id=A, query="the kitten and the feline", touch=False)
    assert scores is not None and scores.seeds == ["kitten"]  # the name hit only
    assert hits[0].id == ids["kitten"]
    assert g.graph_scores(agent_id=A, query="feline") is None  # no name, no vectors: FTS-only
    assert "embedding seeding failed" in caplog.text
    assert EntityEmbedding.objects.count() == 0


def test_an_unloadable_configured_embedder_falls_back(tmp_path, monkeypatch):
    path = tmp_path / "memdesk.toml"
    path.write_text('[graph]\nembed_seed = true\nembedder = "no_such_module_here:Embedder"\n')
    monkeypatch.setenv("MEMDESK_CONFIG", str(path))
    ids = world()
    assert g.graph_scores(agent_id=A, query="kitten").top[0] == ids["kitten"]


def test_set_embedder_rejects_things_that_are_not_embedders():
    with pytest.raises(TypeError):
        emb.set_embedder(object())
