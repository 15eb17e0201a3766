"""``seed_demo``'s discovery story: the support bot's inbox holds one item of each kind, with evidence a person
can follow (the facts exist, the explanation names the pair), and seeding again adds nothing."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from memory import engine
from memory.management import demo_data as d
from memory.models import DiscoveryItem, Memory

pytestmark = pytest.mark.django_db


def test_the_demo_yields_each_kind_with_meaningful_evidence(guard_defaults, monkeypatch):
    monkeypatch.setenv("MEMDESK_DEMO_PASSWORD", "demo-password-for-tests")
    call_command("seed_demo", stdout=io.StringIO())
    items = engine.inbox_list(agent_id=d.SUPPORT_BOT)
    assert {i.kind for i in items} == {"cross_community", "indirect_strong", "knowledge_gap"}
    ids = set(Memory.objects.filter(agent_id=d.SUPPORT_BOT).values_list("id", flat=True))
    for item in items:
        ev = item.evidence
        assert ev["facts"] and {f["id"] for f in ev["facts"]} <= ids
        assert ev["labels"][0] in item.explanation and ev["labels"][1] in item.explanation
    (bridge,) = [i for i in items if {i.entity_a, i.entity_b} == {"haruka ueda", "osaka office"}]
    assert bridge.kind == "cross_community"
    assert bridge.explanation.startswith(
        "Haruka Ueda and Osaka office share 4 neighbours and appear together in 4 sessions, but no fact links them"
    )
    assert len(engine.communities(agent_id=d.SUPPORT_BOT)) >= 3
    before = DiscoveryItem.objects.count()
    call_command("seed_demo", stdout=io.StringIO())
    assert DiscoveryItem.objects.count() == before
