"""SPEC P5/P8 under real concurrency (PostgreSQL): the burst guard trips exactly once with nothing slipping
through, and exactly one decision wins an approval (two reviewers; a reviewer against the TTL job)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import time_machine
from django.db import connections

from memory import config, engine
from memory.models import ApprovalRequest, FactWrite

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def defaults(tmp_path, monkeypatch, on_postgres):
    assert on_postgres, "these races are only meaningful on PostgreSQL"
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    config._cache.clear()


def run_parallel(fns):
    barrier = threading.Barrier(len(fns))
    results, errors = [None] * len(fns), []

    def runner(i, fn):
        try:
            barrier.wait()
            results[i] = fn()
        except BaseException as exc:
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=runner, args=(i, fn)) for i, fn in enumerate(fns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return results, errors


def test_parallel_writers_trip_the_guard_once_and_nothing_slips_through():
    agent, origin = "race-guard", "channel:flood"

    def writer(k):
        return lambda: engine.store_temporal(
            agent_id=agent,
            content=f"target fact {k}",
            subject="target",
            predicate=f"p{k}",
            object=f"v{k}",
            origin=origin,
            protect=True,
        )

    results, _ = run_parallel([writer(k) for k in range(8)])
    assert not [r for r in results if isinstance(r, BaseException)], results
    outcomes = sorted(r.outcome for r in results)
    assert outcomes.count("quarantined") >= 4  # the 5th and every later write
    # nothing slipped through: every write of the burst ended up in quarantine, in one batch
    assert set(FactWrite.objects.filter(agent_id=agent, origin=origin).values_list("state", flat=True)) == {
        "quarantined"
    }
    request = ApprovalRequest.objects.get(agent_id=agent)
    assert len(request.payload["write_ids"]) == 8
    assert engine.search(agent_id=agent, query="target fact", touch=False) == []


def make_batch(agent):
    for k in range(5):
        engine.store_temporal(
            agent_id=agent,
            content=f"x{k}",
            subject="s",
            predicate=f"p{k}",
            object="o",
            origin="channel:x",
            protect=True,
        )
    return ApprovalRequest.objects.get(agent_id=agent)


def test_two_reviewers_exactly_one_decision_wins():
    for round_ in range(4):
        request = make_batch(f"race-review-{round_}")
        results, _ = run_parallel(
            [
                lambda rid=request.id: engine.quarantine_approve(rid, actor="user:a", reason="fine"),
                lambda rid=request.id: engine.quarantine_reject(rid, actor="user:b", reason="poisoning"),
            ]
        )
        won = [r for r in results if not isinstance(r, BaseException)]
        lost = [r for r in results if isinstance(r, BaseException)]
        assert len(won) == 1 and len(lost) == 1 and getattr(lost[0], "code", None) == "already_decided", (
            results
        )
        request.refresh_from_db()
        states = set(FactWrite.objects.filter(agent_id=request.agent_id).values_list("state", flat=True))
        assert states == ({"believed"} if request.status == "approved" else {"retracted"})


def test_reviewer_against_the_ttl_job():
    request = make_batch("race-ttl")
    with time_machine.travel(request.expires_at + timedelta(seconds=1), tick=True):
        results, _ = run_parallel(
            [
                lambda: engine.quarantine_approve(request.id, actor="user:a", reason="late approval"),
                lambda: engine.quarantine_sweep(),
            ]
        )
    request.refresh_from_db()
    assert request.status == "expired" and request.decided_by == "system:ttl"
    assert getattr(results[0], "code", None) == "already_decided"
    assert set(FactWrite.objects.filter(agent_id="race-ttl").values_list("state", flat=True)) == {"retracted"}


def test_a_distill_locks_its_keys_before_its_first_write():
    """``store_facts_protected`` takes every key it may write before writing any: a write holds the agent's
    generation and state-stamp rows until commit, so a key lock taken after one would let a one-key writer of
    that key (holding it, then wanting those rows) close a cycle with the distill."""
    from django.db import OperationalError, connection, transaction

    from memory.engine import common as c

    agent = "race-distill"
    engine.store_temporal(agent_id=agent, content="seed fact", subject="seed", predicate="p", object="o")
    held, release = threading.Event(), threading.Event()
    out: dict = {}

    def holder():
        try:
            with transaction.atomic():
                c.lock_key(agent, "bravo", "p")  # a one-key writer of the distill's second key, mid-write
                held.set()
                release.wait(30)
        finally:
            connections.close_all()

    def distill():
        try:
            held.wait(30)
            out["results"] = engine.store_facts_protected(
                agent_id=agent,
                origin="channel:slack",
                facts=[
                    {"content": "alpha p x", "subject": "alpha", "predicate": "p", "object": "x"},
                    {"content": "bravo p y", "subject": "bravo", "predicate": "p", "object": "y"},
                ],
            )
        finally:
            connections.close_all()

    threads = [threading.Thread(target=holder), threading.Thread(target=distill)]
    for t in threads:
        t.start()
    try:
        assert held.wait(30)
        threads[1].join(1.5)
        assert threads[1].is_alive(), "the distill should be waiting for the key the holder has"
        try:  # the distill has written nothing yet: the agent's stamp and generation rows are free
            with transaction.atomic(), connection.cursor() as cur:
                cur.execute("SET LOCAL lock_timeout = '200ms'")
                cur.execute("SELECT 1 FROM memory_state_stamp WHERE agent_id = %s FOR UPDATE", [agent])
                cur.execute("SELECT 1 FROM graph_generation WHERE agent_id = %s FOR UPDATE", [agent])
        except OperationalError as exc:
            pytest.fail(f"the distill wrote before it held all its keys: {exc}")
    finally:
        release.set()
        for t in threads:
            t.join(60)
    assert [r.outcome for r in out["results"]] == ["stored", "stored"]
