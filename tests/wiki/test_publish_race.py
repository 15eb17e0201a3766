"""Concurrent publishers of one agent (PostgreSQL): the daily limit and one page per slug hold under races."""

from __future__ import annotations

import threading
import time

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


# --- a curator's action racing an agent's republication (rows locked like _publish locks them) ----------------


def _paused_curator_action(monkeypatch, action: str, curator, publish_kw: dict) -> tuple[object, str, int]:
    """Run ``curator()`` in a thread that stops inside its transaction (at its ``action`` audit event, after
    its page and revision writes); republish the page from a second thread while it holds; let the curator
    commit once the publisher waits on a lock. Returns (curator result, publish outcome, lock waits seen)."""
    from wiki import services

    inside, release = threading.Event(), threading.Event()
    real_audit = services.audit

    def audit(**kw):
        if kw["action"] == action:
            inside.set()
            release.wait(60)
        return real_audit(**kw)

    monkeypatch.setattr(services, "audit", audit)
    results: dict[str, object] = {}

    def run(name: str, job) -> None:  # noqa: ANN001
        try:
            results[name] = job()
        except engine.EngineError as exc:
            results[name] = exc.code
        except Exception as exc:  # noqa: BLE001 - reported through the results
            results[name] = f"error: {exc!r}"
        finally:
            connections.close_all()

    first = threading.Thread(target=run, args=("curator", curator))
    first.start()
    assert inside.wait(60)
    second = threading.Thread(target=run, args=("publish", lambda: publish(agent_id=A, **publish_kw).outcome))
    second.start()
    waits = 0
    for _ in range(200):  # until the publisher waits for the curator's transaction (at most ~10 s)
        with connection.cursor() as cur:
            cur.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'"
            )
            waits = cur.fetchone()[0]
        if waits:
            break
        time.sleep(0.05)
    release.set()
    first.join(120)
    second.join(120)
    return results["curator"], str(results["publish"]), waits


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_republication_racing_a_promotion_never_undoes_it(monkeypatch):
    from wiki import selectors, services

    assert connection.vendor == "postgresql"
    page = publish(agent_id=A).page
    promoted, outcome, waits = _paused_curator_action(
        monkeypatch,
        "wiki_promote",
        lambda: services.promote(page=page, actor="user:cora", reason="checked"),
        {"summary": "The agent's newer edition."},
    )
    assert waits >= 1 and isinstance(promoted, WikiPage)
    assert outcome == "proposed"  # it ran after the promotion and saw a curated page
    page.refresh_from_db()
    assert (page.namespace, page.trust_text, page.source_type) == ("curated", "0.800", "user_statement")
    assert page.summary == "How we ship a release safely."
    pointer = selectors.current_pointer(page)
    assert (pointer.origin, pointer.origin_trust, pointer.object) == (
        "operator:wiki-curation",
        0.8,
        "curated/sop/deploy-runbook",
    )
    revs = list(WikiRevision.objects.filter(page=page).order_by("number").values_list("number", "accepted"))
    assert revs == [(1, True), (2, False)]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_republication_racing_a_curators_revision_gets_the_next_number(monkeypatch):
    from wiki import services

    assert connection.vendor == "postgresql"
    page = publish(agent_id=A).page
    services.promote(page=page, actor="user:cora", reason="checked")
    revised, outcome, waits = _paused_curator_action(
        monkeypatch,
        "wiki_revise",
        lambda: services.revise(
            page=page, actor="user:cora", summary="The curator's wording.", reason="tidy"
        ),
        {"summary": "The agent's newer edition."},
    )
    assert waits >= 1 and isinstance(revised, WikiRevision) and revised.number == 2
    assert outcome == "proposed"  # not an IntegrityError on (page, number)
    page.refresh_from_db()
    assert (page.namespace, page.summary) == ("curated", "The curator's wording.")
    revs = WikiRevision.objects.filter(page=page).order_by("number")
    assert [(r.number, r.accepted, r.summary) for r in revs] == [
        (1, True, "How we ship a release safely."),
        (2, True, "The curator's wording."),
        (3, False, "The agent's newer edition."),
    ]
