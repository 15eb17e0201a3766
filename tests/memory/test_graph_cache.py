"""SPEC G5, T9: the per-agent graph cache, keyed on the graph generation in the database."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.db import connections, transaction
from django.utils import timezone

from memory import engine
from memory.engine import graph as g
from memory.engine.graph import cache as graph_cache
from memory.models import ApprovalRequest
from tests.memory import graph_workers
from tests.memory.conftest import A

pytestmark = pytest.mark.django_db
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _fresh_cache():
    g.clear_cache()
    yield
    g.clear_cache()


def many(n, agent_id=A, prefix="p"):
    with transaction.atomic():
        for i in range(n):
            engine.store_temporal(
                agent_id=agent_id,
                content=f"{prefix}{i} likes thing{i % 50}",
                subject=f"{prefix}{i}",
                predicate="likes",
                object=f"thing{i % 50}",
                origin="user",
            )


def builds():
    return g.stats["builds"]


def deltas():
    return g.stats["deltas"]


def test_the_cache_starts_above_500_current_triples():
    assert g.GRAPH_CACHE_MIN_TRIPLES == 500
    many(500)
    b = builds()
    g.graph_scores(agent_id=A, query="thing3")
    g.graph_scores(agent_id=A, query="thing3")
    assert builds() == b + 2 and A not in graph_cache._cache  # small: built per query
    many(1, prefix="extra")
    g.graph_scores(agent_id=A, query="thing3")
    assert A in graph_cache._cache and graph_cache._cache[A].triples == 501
    for _ in range(3):
        g.graph_scores(agent_id=A, query="thing4")
    assert builds() == b + 3  # reused


def test_every_triple_change_alias_and_retract_moves_the_generation():
    """A write or a retract moves the generation and the cached graph follows by their delta; an alias (whose
    change the log does not describe) rebuilds it."""
    many(501)
    g.graph_scores(agent_id=A, query="thing1")
    b, d = builds(), deltas()
    gen = engine.graph_generation(agent_id=A)
    new = engine.store_temporal(
        agent_id=A, content="ada likes thing1", subject="ada", predicate="likes", object="thing1"
    ).id
    assert engine.graph_generation(agent_id=A) == gen + 1
    assert new in g.graph_scores(agent_id=A, query="ada").top
    assert (builds(), deltas()) == (b, d + 1)
    again = engine.store_temporal(
        agent_id=A, content="ada likes thing1", subject="ada", predicate="likes", object="thing1"
    )
    assert again.outcome == "reaffirmed"
    g.graph_scores(agent_id=A, query="ada")
    assert (builds(), deltas()) == (b, d + 1)  # a reaffirm changes no triple: same generation, same graph
    engine.alias_add(agent_id=A, canonical="ada", alias="countess")
    assert new in g.graph_scores(agent_id=A, query="the countess").top
    assert (builds(), deltas()) == (b + 1, d + 1)
    engine.retract_fact(agent_id=A, memory_id=new, reason="wrong", actor="user:cora")
    assert g.graph_scores(agent_id=A, query="ada") is None  # ada has no current fact left
    assert (builds(), deltas()) == (b + 1, d + 2)


def test_world_time_expires_the_cache_without_any_write():
    many(501)
    t0 = timezone.now()
    brief = engine.store_temporal(
        agent_id=A,
        content="ada likes thing1",
        subject="ada",
        predicate="likes",
        object="thing1",
        valid_until=t0 + timedelta(hours=1),
    ).id
    later = engine.store_temporal(
        agent_id=A,
        content="bea likes thing2",
        subject="bea",
        predicate="likes",
        object="thing2",
        valid_from=t0 + timedelta(hours=2),
    ).id
    assert brief in g.graph_scores(agent_id=A, query="ada").top
    assert g.graph_scores(agent_id=A, query="bea") is None
    b = builds()
    with time_machine.travel(t0 + timedelta(minutes=30)):
        g.graph_scores(agent_id=A, query="ada")
        assert builds() == b
    with time_machine.travel(t0 + timedelta(minutes=90)):
        assert g.graph_scores(agent_id=A, query="ada") is None
        assert builds() == b + 1
    with time_machine.travel(t0 + timedelta(hours=3)):
        assert later in g.graph_scores(agent_id=A, query="bea").top
        assert builds() == b + 2


def burst(subject, origin="channel:burst"):
    facts = [
        {"content": f"{subject} p{i}", "subject": subject, "predicate": f"p{i}", "object": "thing1"}
        for i in range(5)
    ]
    results = engine.store_facts_protected(agent_id=A, facts=facts, origin=origin)
    assert {r.outcome for r in results} == {"quarantined"}
    return [r.id for r in results]


@pytest.mark.parametrize("verdict", ["approve", "reject"])
def test_quarantine_release_and_reject_bump_the_generation(verdict):
    many(501)
    ids = burst("mallory")
    assert g.graph_scores(agent_id=A, query="mallory") is None  # quarantined rows are inert
    gen = engine.graph_generation(agent_id=A)
    request = ApprovalRequest.objects.get(agent_id=A)
    if verdict == "approve":
        engine.quarantine_approve(request.id, actor="user:rex", reason="checked")
        assert engine.graph_generation(agent_id=A) > gen
        assert set(g.graph_scores(agent_id=A, query="mallory").top) <= set(ids)
    else:
        engine.quarantine_reject(request.id, actor="user:rex", reason="spam")
        assert engine.graph_generation(agent_id=A) > gen
        assert g.graph_scores(agent_id=A, query="mallory") is None


def test_origin_purge_bumps_the_generation_and_the_graph_drops_the_facts():
    many(501)
    bad = engine.store_temporal(
        agent_id=A,
        content="eve likes thing1",
        subject="eve",
        predicate="likes",
        object="thing1",
        origin="channel:spam",
    ).id
    assert bad in g.graph_scores(agent_id=A, query="eve").top
    gen = engine.graph_generation(agent_id=A)
    engine.invalidate_by_origin(agent_id=A, origin="channel:spam")
    assert engine.graph_generation(agent_id=A) == gen + 1
    assert g.graph_scores(agent_id=A, query="eve") is None


def test_a_purge_that_only_crushes_derived_trust_still_bumps_the_generation():
    source = engine.store(agent_id=A, content="heard in a channel", origin="channel:rumours").id
    derived = engine.store_temporal(
        agent_id=A,
        content="eve likes thing1",
        subject="eve",
        predicate="likes",
        object="thing1",
        origin="user",
        derived_from=[source],
    ).id
    gen = engine.graph_generation(agent_id=A)
    result = engine.invalidate_by_origin(agent_id=A, origin="channel:rumours")
    assert result.trust_crushed == 1
    assert engine.graph_generation(agent_id=A) == gen + 1
    graph = g.agent_graph(agent_id=A)
    i = graph.memory_node(derived) + graph.n_entities
    assert graph.degree[i] == pytest.approx(0.2)  # two edges at the crushed trust 0.1


def test_a_write_from_another_process_invalidates_the_cache(tmp_path, monkeypatch):
    """A reader process holds a cached graph of a real SQLite file; a second process writes a triple; the
    reader's next query rebuilds (the generation row moved) and sees the new fact."""
    db_path = tmp_path / "graph-cache.sqlite3"
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("MEMDESK_SQLITE_PATH", str(db_path))
    monkeypatch.setenv("MEMDESK_VAR_DIR", str(tmp_path))
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "config.settings")
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=REPO,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert migrate.returncode == 0, migrate.stderr
    ctx = multiprocessing.get_context("spawn")
    commands, replies = ctx.Queue(), ctx.Queue()
    connections.close_all()
    reader = ctx.Process(target=graph_workers.reader, args=(str(db_path), "xproc", 600, commands, replies))
    reader.start()
    try:

        def ask(query):
            commands.put(query)
            kind, payload = replies.get(timeout=120)
            assert kind == "ok", payload
            return payload

        kind, payload = replies.get(timeout=180)
        assert kind == "ready", payload
        first = ask("thing1")
        assert first["cached"] is True
        assert ask("thing1")["builds"] == first["builds"]  # warm
        assert ask("ada")["top"] == []  # nobody called ada yet

        writer_replies = ctx.Queue()
        writer = ctx.Process(target=graph_workers.writer, args=(str(db_path), "xproc", writer_replies))
        writer.start()
        kind, new_id = writer_replies.get(timeout=180)
        writer.join(timeout=60)
        assert kind == "ok", new_id

        after = ask("ada")
        assert after["generation"] > first["generation"]
        assert after["builds"] + after["deltas"] == first["builds"] + first["deltas"] + 1
        assert after["deltas"] == first["deltas"] + 1  # the writer's change row reached the reader
        assert after["top"][0] == new_id
        assert ask("ada")["builds"] == after["builds"]
    finally:
        commands.put(None)
        reader.join(timeout=60)
        if reader.is_alive():
            reader.kill()
            reader.join()
