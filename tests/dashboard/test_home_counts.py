"""The agent home's counts at volume (issue 19 "Done when"): ``engine.summarize``'s index-only aggregates give
the same counts as plain per-state filters, and ``recent_fact_keys`` the same keys as ``fact_keys`` without grouping every
row."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db.models import Q
from django.utils import timezone

from dashboard import selectors
from memory import engine
from memory.engine.belief import NOT_RETRACTED, RETRACTED, current_q
from memory.models import LAYERS, Memory
from tests.conftest import make_burst
from tests.dashboard.conftest import make_memories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("guard_defaults")]


def test_counts_match_engine_summarize_over_every_state(agent, history):
    aid = agent.agent_id
    make_memories(aid, 6)
    engine.store(agent_id=aid, content="a procedure", layer="procedural")
    make_burst(aid, "held")  # quarantined rows
    future = timezone.now() + timedelta(days=30)
    engine.store_temporal(
        agent_id=aid, content="later", subject="bob", predicate="plan", object="pro", valid_from=future
    )
    summary = engine.summarize(agent_id=aid)
    rows = Memory.objects.filter(agent_id=aid)
    current = rows.filter(current_q(timezone.now()))
    assert summary == {  # the counts, each by its own plain filter
        "agent_id": aid,
        "current": current.count(),
        "by_layer": {layer: current.filter(layer=layer).count() for layer in LAYERS},
        "current_facts": current.filter(subject__isnull=False).count(),
        "quarantined": rows.filter(Q(quarantined=True) & NOT_RETRACTED).count(),
        "retracted": rows.filter(RETRACTED).count(),
        "total": rows.count(),
    }
    assert summary["quarantined"] > 0 and summary["retracted"] > 0 and summary["by_layer"]["procedural"] == 1
    assert summary["current"] < summary["total"]


def test_recent_keys_match_the_grouped_query(agent):
    aid = agent.agent_id
    start = timezone.now() - timedelta(hours=2)
    for i in range(14):
        with time_machine.travel(start + timedelta(minutes=i), tick=False):
            engine.store_temporal(
                agent_id=aid, content=f"k{i % 9} v{i}", subject=f"k{i % 9}", predicate="p", object=f"v{i}"
            )
    with time_machine.travel(start + timedelta(minutes=30), tick=False):  # two keys tied at one time
        for s in ("tie-a", "tie-b"):
            engine.store_temporal(agent_id=aid, content=s, subject=s, predicate="p", object="x")
    for limit in (1, 3, 5, 10, 20):
        assert selectors.recent_fact_keys(aid, limit=limit) == selectors.fact_keys(aid, limit=limit), limit
