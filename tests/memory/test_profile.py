"""The interest profile (SPEC B8): 7/30/90-day windows over the query journal, intents by signature cluster,
entities by PPR centrality, most used memories; the daily snapshot with its delta, kept apart from pruning."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
import time_machine

from memory import engine
from memory.models import AuditEvent, InterestSnapshot
from tests.conftest import dt
from tests.memory.conftest import OTHER, A, fact

pytestmark = pytest.mark.django_db

T0 = dt("2030-03-01T09:00:00Z")


def ask(query: str, when, agent_id: str = A):  # noqa: ANN001, ANN201
    with time_machine.travel(when, tick=False):
        return engine.agent_search(agent_id=agent_id, query=query)


@pytest.fixture
def graph_facts():
    with time_machine.travel(T0 - timedelta(days=100), tick=False):
        fact("acme-web", "deploy_target", "cloudflare", content="acme-web deploys to cloudflare")
        fact("acme-web", "owner", "dana", content="acme-web is owned by dana")
        fact("dana", "reports_to", "priya", content="dana reports to priya")
        fact("billing", "owner", "omar", content="billing is owned by omar")
        return engine.store(agent_id=A, content="release checklist for acme-web").id


def test_windows_intents_entities_and_memories(graph_facts) -> None:
    checklist = graph_facts
    for k in range(5):
        ask("where does acme-web deploy?", T0 - timedelta(days=2, hours=k))
    ask("deploy acme-web target", T0 - timedelta(days=3))  # same cluster, other signature
    for k in range(2):
        ask("who owns billing", T0 - timedelta(days=20, hours=k))
    ask("holiday calendar", T0 - timedelta(days=60))
    ask("acme-web", T0 - timedelta(days=200))  # outside every window
    ask("acme-web deploy", T0, agent_id=OTHER)  # another agent's journal
    with time_machine.travel(T0, tick=False):
        week = engine.profile(agent_id=A, days=7)
        month = engine.profile(agent_id=A, days=30)
        quarter = engine.profile(agent_id=A, days=90)
    assert (week.queries, month.queries, quarter.queries) == (6, 8, 9)
    assert [(i.signature, i.count) for i in week.intents] == [("acme deploy web", 6)]
    assert week.intents[0].label == "where does acme-web deploy?"
    assert week.intents[0].signatures == ["acme deploy web", "acme deploy target web"]
    assert [(i.signature, i.count) for i in quarter.intents] == [
        ("acme deploy web", 6),
        ("billing owns", 2),
        ("calendar holiday", 1),
    ]
    assert week.entities[0].entity == "acme-web" and week.entities[0].score == 1.0
    names = [e.entity for e in week.entities]
    assert "cloudflare" in names and "omar" not in names  # the week never asked about billing
    assert "omar" in [e.entity for e in month.entities]
    assert week.memories and all(m.uses >= 1 for m in week.memories)
    assert checklist in [m.id for m in week.memories]
    assert week.to_dict()["intents"][0]["count"] == 6


def test_without_questions_naming_entities_centrality_is_global(graph_facts) -> None:
    ask("something unrelated", T0 - timedelta(days=1))
    with time_machine.travel(T0, tick=False):
        prof = engine.profile(agent_id=A, days=7)
    assert prof.entities and prof.entities[0].score == 1.0
    assert {"acme-web", "dana"} <= {e.entity for e in prof.entities[:3]}


def test_an_agent_with_nothing_has_an_empty_profile() -> None:
    prof = engine.profile(agent_id="quiet-agent", days=30)
    assert (prof.queries, prof.intents, prof.entities, prof.memories) == (0, [], [], [])


@pytest.mark.parametrize("days", [0, 366, "7", True])
def test_bad_windows(days) -> None:  # noqa: ANN001
    with pytest.raises(engine.EngineError) as caught:
        engine.profile(agent_id=A, days=days)
    assert caught.value.field == "days"


def test_daily_snapshots_and_their_delta(graph_facts) -> None:
    d1, d2 = date(2030, 2, 27), date(2030, 2, 28)
    for k in range(3):
        ask("acme-web deploy", dt("2030-02-27T10:00:00Z") + timedelta(minutes=k))
    ask("billing owner", dt("2030-02-28T10:00:00Z"))
    with time_machine.travel(dt("2030-02-27T23:50:00Z"), tick=False):
        first = engine.profile_snapshot(agent_id=A)
    with time_machine.travel(dt("2030-02-28T23:50:00Z"), tick=False):
        second = engine.profile_snapshot(agent_id=A)
    assert (first.day, second.day) == (d1, d2)
    assert first.profile["queries"] == 3 and first.delta["baseline"] is None and first.delta["queries"] == 3
    assert second.profile["queries"] == 1
    assert second.delta["baseline"] == "2030-02-27" and second.delta["queries"] == -2
    assert second.delta["intents_new"] == ["billing owner"] and second.delta["intents_gone"] == [
        "acme-web deploy"
    ]
    assert "omar" in second.delta["entities_new"] and "acme-web" in second.delta["entities_gone"]
    assert [s.day for s in engine.interest_snapshots(agent_id=A)] == [d2, d1]
    assert AuditEvent.objects.filter(action="interest_snapshot").count() == 2


def test_a_snapshot_run_twice_for_a_day_replaces_it() -> None:
    ask("acme-web", dt("2030-02-27T10:00:00Z"))
    with time_machine.travel(dt("2030-02-27T12:00:00Z"), tick=False):
        engine.profile_snapshot(agent_id=A)
    ask("acme-web", dt("2030-02-27T13:00:00Z"))
    with time_machine.travel(dt("2030-02-27T23:00:00Z"), tick=False):
        engine.profile_snapshot(agent_id=A)
    snap = InterestSnapshot.objects.get(agent_id=A)
    assert snap.profile["queries"] == 2
    # an explicit past day
    engine.profile_snapshot(agent_id=A, day="2030-02-26")
    assert InterestSnapshot.objects.filter(agent_id=A).count() == 2


@pytest.mark.parametrize("day", ["yesterday", dt("2030-01-01"), 5])
def test_bad_snapshot_days(day) -> None:  # noqa: ANN001
    with pytest.raises(engine.EngineError) as caught:
        engine.profile_snapshot(agent_id=A, day=day)
    assert caught.value.field == "day"
