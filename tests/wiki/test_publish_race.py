"""Concurrent publishers of one agent (PostgreSQL): the daily limit and one page per slug hold under races."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from memory import engine
from wiki.models import WikiPage, WikiRevision

from .conftest import publish

A = "race-bot"


def run_threads(jobs: list[dict]) -> list[str]:
    barrier = threading.Barrier(len(jobs))
    outcomes: list[str] = [""] * len(jobs)

    def work(i: int, kw: dict) -> None:
        try:
            barrier.wait()
            outcomes[i] = publish(agent_id=A, **kw).outcome
        except engine.EngineError as exc:
            outcomes[i] = exc.code
        except Exception as exc:  # noqa: BLE001 - reported through the outcome list
            outcomes[i] = f"error: {exc!r}"
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(i, kw)) for i, kw in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return outcomes


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_racing_publishers_never_exceed_the_daily_limit():
    assert connection.vendor == "postgresql"
    outcomes = run_threads([{"title": f"Race page {i}"} for i in range(26)])
    assert sorted(outcomes) == ["created"] * 20 + ["rate_limited"] * 6
    assert WikiPage.objects.filter(agent_id=A).count() == 20


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_racing_publishers_of_one_slug_make_one_page_and_a_revision_each():
    outcomes = run_threads([{"summary": f"Edition {i}."} for i in range(4)])
    assert sorted(outcomes) == ["created"] + ["revised"] * 3
    page = WikiPage.objects.get(agent_id=A)
    assert sorted(WikiRevision.objects.filter(page=page).values_list("number", flat=True)) == [1, 2, 3, 4]
