"""The evaluation harness with vectors (issue 17): the dense baseline's embedder becomes the engine's memory
embedder through one text cache, and the engine ranks with and without vectors in the same run."""

from __future__ import annotations

import pytest

from memory.models import MemoryVector
from tests.memory.test_eval_retrieval import SAMPLE, _harness
from tests.memory.test_vectors import ThemeEmbedder

pytestmark = pytest.mark.django_db


def test_a_whole_run_with_vectors_reports_dense_engine_and_engine_without_vectors():
    h = _harness()
    embedder = ThemeEmbedder()
    dense = h.Dense(embedder)
    side = h.EngineSide({"engine": {}, "engine-novec": h.NOVEC}, h.CachedEmbedder(dense))
    convs, _ = h.load(SAMPLE, "lme-oracle")
    rows = h.evaluate(convs, "lme-oracle", dense=dense, engine_side=side)
    stored = sum(len(c.docs) for c in convs)
    assert MemoryVector.objects.filter(model="test/themes-v2").count() == stored  # written at store time
    calls = embedder.calls
    assert {"bm25", "dense", "engine", "engine-novec"} <= set(rows[0]["metrics"])
    summary = h.aggregate(rows, ["bm25", "dense", "engine", "engine-novec"])
    cell = summary["lme-oracle"][rows[0]["split"]]["all"]
    assert {"dense", "engine", "engine-novec"} <= set(cell)
    # the engine re-uses the baseline's vectors: storing and asking the same texts again embeds nothing new
    agent, to_doc = side.ingest(convs[0])
    assert side.rank(agent, to_doc, convs[0].questions[0].query)
    assert embedder.calls == calls


def test_load_dense_none_and_an_explicit_factory():
    h = _harness()
    assert h.load_dense("none")[0] is None
    with pytest.raises(ImportError):
        h.load_dense("memory.engine.no_such_module:factory")
