"""The default memory embedder (issue 17): the static table shipped in the repository loads offline, is checked
against its manifest, and places related texts nearer than unrelated ones."""

from __future__ import annotations

import logging
import shutil

import numpy as np
import pytest

from memory import engine
from memory.engine import embeddings as emb
from memory.engine import vectors
from memory.models import MemoryVector
from tests.memory.conftest import A


def test_the_default_embedder_is_the_shipped_static_table(monkeypatch, tmp_path):
    monkeypatch.delenv("MEMDESK_EMBEDDER", raising=False)
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    assert emb.memory_embedder_path() == "memory.engine.embeddings:static_minilm"
    (tmp_path / "memdesk.toml").write_text('[retrieval]\nembedder = "off"\n')
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "memdesk.toml"))
    assert emb.memory_embedder_path() == ""


def test_static_vectors_put_related_texts_nearer():
    e = emb.StaticEmbedder()
    v = emb.unit_matrix(
        e.embed(
            ["my cat likes to sleep", "the kitten naps all day", "quarterly tax filing deadline", "", "🐱🐶"]
        ),
        5,
    )
    assert v.shape == (5, 128)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) + 0.1
    assert not v[3].any() and not v[4].any()  # no known token: a zero row, cosine 0 with everything


def test_a_table_that_fails_its_checksum_does_not_load(tmp_path, caplog):
    folder = tmp_path / "static"
    shutil.copytree(emb.STATIC_DIR, folder)
    raw = bytearray((folder / "vectors.npz").read_bytes())
    raw[-100] ^= 0xFF
    (folder / "vectors.npz").write_bytes(bytes(raw))
    with pytest.raises(OSError, match="checksum"):
        emb.StaticEmbedder(folder).load()


@pytest.mark.django_db
def test_writes_and_search_with_the_static_embedder():
    emb.set_memory_embedder(emb.static_minilm())
    cat = engine.store(agent_id=A, content="my cat likes to sleep on the sofa").id
    engine.store(agent_id=A, content="quarterly tax filing deadline")
    row = MemoryVector.objects.get(memory_id=cat)
    assert (row.model, row.dim) == ("static/all-MiniLM-L6-v2-m2v-128", 128)
    hits = vectors.dense_hits(agent_id=A, query="kitten nap", k=2)
    assert hits is not None and hits.top[0][0] == cat
    assert np.isclose(hits.cosine([cat])[cat], hits.top[0][1])


def test_the_default_embedder_missing_its_files_means_no_vectors(monkeypatch, tmp_path, caplog):
    emb.reset_memory_embedder()
    monkeypatch.delenv("MEMDESK_EMBEDDER", raising=False)
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.setitem(emb._loaded, emb.DEFAULT_MEMORY_EMBEDDER, emb.StaticEmbedder(tmp_path / "nowhere"))
    with caplog.at_level(logging.WARNING, logger="memdesk.embeddings"):
        assert emb.memory_embedder() is None
    assert "did not load" in caplog.text


def test_graph_embedding_seeding_without_its_own_embedder_uses_the_memory_embedder(monkeypatch, tmp_path):
    (tmp_path / "memdesk.toml").write_text("[graph]\nembed_seed = true\n")
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "memdesk.toml"))
    emb.reset_embedder()
    static = emb.static_minilm()
    emb.set_memory_embedder(static)
    assert emb.active_embedder()[0] is static
