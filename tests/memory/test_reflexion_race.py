"""SPEC X3: consolidation is idempotent when several workers trigger it at once (PostgreSQL row locks)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from memory import engine
from memory.models import Memory, Mistake


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_consolidation_makes_exactly_one_rule(on_postgres):
    assert on_postgres
    for round_ in range(5):
        agent = f"race-{round_}"
        for k in range(4):
            engine.record_mistake(
                agent_id=agent, category="factual", input_summary=f"q{k}", what_went_wrong=f"w{k}"
            )
        barrier = threading.Barrier(4)
        results: list[object] = []
        errors: list[BaseException] = []

        def worker(agent=agent, barrier=barrier, results=results, errors=errors):
            try:
                barrier.wait()
                results.append(engine.maybe_consolidate(agent_id=agent))
            except BaseException as exc:  # reported to the main thread
                errors.append(exc)
            finally:
                connections.close_all()

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors
        made = [c for r in results for c in r]  # type: ignore[attr-defined]
        assert len(made) == 1, made
        rules = Memory.objects.filter(agent_id=agent, subject="category:factual", predicate="requires_care")
        assert rules.count() == 1
        assert set(Mistake.objects.filter(agent_id=agent).values_list("resolution", flat=True)) == {
            f"consolidated:{rules.get().id}"
        }
    connection.close()
