"""The discovery inbox in the engine (SPEC B5, D4): storing findings once per pair, listing by status, and
people's actions (pin, unpin, dismiss, snooze until a later time, reopen), audited; a snooze that ends; stable
error codes; another agent's item is not found; a run is stored whole or not at all."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from memory import engine
from memory.models import AuditEvent, Community, DiscoveryItem, DiscoveryRun, EntityEdge

pytestmark = pytest.mark.django_db
A, B = "bot-a", "bot-b"


def finding(x: str, y: str, kind: str = "cross_community", score: float = 0.5) -> engine.Finding:
    return engine.Finding(
        kind=kind,
        entity_a=x,
        entity_b=y,
        score=score,
        explanation=f"{x} and {y} share things",
        evidence={
            "facts": [{"id": "m_1"}],
            "sessions": ["s1"],
            "neighbours": ["z"],
            "signals": {"composite": score},
        },
    )


@pytest.fixture
def items():
    stored = engine.inbox_store(
        agent_id=A,
        findings=[
            finding("a", "b", score=0.9),
            finding("c", "d", "knowledge_gap", 0.7),
            finding("e", "f", "indirect_strong", 0.3),
        ],
        actor="system:test",
    )
    return {f"{i.entity_a}{i.entity_b}": i for i in stored}


def test_store_adds_each_pair_once_in_any_order_and_status(items):
    assert [i.status for i in items.values()] == ["open"] * 3
    engine.inbox_act(item_id=items["ab"].id, action="dismiss", actor="user:cora")
    again = engine.inbox_store(agent_id=A, findings=[finding("b", "a"), finding("c", "d"), finding("g", "h")])
    assert [(i.entity_a, i.entity_b) for i in again] == [("g", "h")]
    assert DiscoveryItem.objects.filter(agent_id=A).count() == 4
    # the same pair for another agent is that agent's own
    assert len(engine.inbox_store(agent_id=B, findings=[finding("a", "b")])) == 1
    assert AuditEvent.objects.filter(agent_id=A, action="discovery_store").count() == 2


def test_list_by_status_pinned_first_then_by_kind_and_score(items):
    assert [i.entity_a for i in engine.inbox_list(agent_id=A)] == ["a", "e", "c"]
    engine.inbox_act(item_id=items["ef"].id, action="pin", actor="user:cora")
    engine.inbox_act(item_id=items["cd"].id, action="dismiss", actor="user:cora")
    assert [i.entity_a for i in engine.inbox_list(agent_id=A)] == ["e", "a"]  # not dismissed: pinned first
    assert [i.entity_a for i in engine.inbox_list(agent_id=A, status="open")] == ["a"]
    assert [i.entity_a for i in engine.inbox_list(agent_id=A, status="dismissed")] == ["c"]
    assert [i.entity_a for i in engine.inbox_list(agent_id=A, status="all")] == ["e", "a", "c"]
    assert [i.entity_a for i in engine.inbox_list(agent_id=A, kind="indirect_strong")] == ["e"]
    assert engine.inbox_counts(agent_id=A) == {"open": 1, "pinned": 1, "snoozed": 0, "dismissed": 1}
    with pytest.raises(engine.InvalidArgument) as bad:
        engine.inbox_list(agent_id=A, status="later")
    assert bad.value.code == "invalid_argument" and bad.value.field == "status"
    with pytest.raises(engine.InvalidArgument):
        engine.inbox_list(agent_id=A, kind="surprise")


def test_actions_and_their_audit(items):
    ab = items["ab"].id
    pinned = engine.inbox_act(item_id=ab, action="pin", actor="user:cora")
    assert pinned.status == "pinned" and pinned.decided_by == "user:cora" and pinned.decided_at is not None
    assert (
        engine.inbox_act(item_id=ab, action="pin", actor="user:cora").status == "pinned"
    )  # again: no change
    assert engine.inbox_act(item_id=ab, action="unpin", actor="user:cora").status == "open"
    assert engine.inbox_act(item_id=ab, action="dismiss", actor="user:cora").status == "dismissed"
    assert engine.inbox_act(item_id=ab, action="reopen", actor="user:ada").status == "open"
    actions = list(
        AuditEvent.objects.filter(agent_id=A, action__startswith="discovery_").exclude(action="discovery_store")
        .order_by("id").values_list("action", "actor", "details__before", "details__after")
    )  # fmt: skip
    assert actions == [
        ("discovery_pin", "user:cora", "open", "pinned"),
        ("discovery_unpin", "user:cora", "pinned", "open"),
        ("discovery_dismiss", "user:cora", "open", "dismissed"),
        ("discovery_reopen", "user:ada", "dismissed", "open"),
    ]
    assert engine.inbox_act(item_id=ab, action="unpin", actor="user:cora").status == "open"  # no change
    engine.inbox_act(item_id=ab, action="dismiss", actor="user:cora")
    with pytest.raises(engine.InvalidTransition) as refused:  # a dismissed item is reopened first
        engine.inbox_act(item_id=ab, action="pin", actor="user:cora")
    assert refused.value.code == "invalid_transition"
    assert engine.inbox_get(agent_id=A, item_id=ab).status == "dismissed"
    with pytest.raises(engine.InvalidArgument) as bad:
        engine.inbox_act(item_id=ab, action="approve", actor="user:cora")
    assert bad.value.field == "action"


def test_snooze_until_a_later_time_then_it_is_open_again(items):
    cd = items["cd"].id
    until = timezone.now() + timedelta(days=3)
    snoozed = engine.inbox_act(item_id=cd, action="snooze", actor="user:cora", until=until)
    assert snoozed.status == "snoozed" and snoozed.snoozed_until == until
    assert [i.entity_a for i in engine.inbox_list(agent_id=A, status="open")] == ["a", "e"]
    with time_machine.travel(until + timedelta(seconds=1)):
        assert engine.inbox_get(agent_id=A, item_id=cd).status == "open"
        assert [i.entity_a for i in engine.inbox_list(agent_id=A, status="open")] == ["a", "e", "c"]
        assert engine.inbox_counts(agent_id=A)["snoozed"] == 0
        # an ended snooze can be pinned like any open item
        assert engine.inbox_act(item_id=cd, action="pin", actor="user:cora").status == "pinned"


def test_snoozing_to_the_past_or_without_a_time_is_refused_and_changes_nothing(items):
    cd = items["cd"].id
    for until in (timezone.now() - timedelta(minutes=1), "2001-01-01T00:00:00Z"):
        with pytest.raises(engine.SnoozeInPast) as past:
            engine.inbox_act(item_id=cd, action="snooze", actor="user:cora", until=until)
        assert past.value.code == "snooze_in_past" and past.value.field == "until"
    with pytest.raises(engine.InvalidArgument):
        engine.inbox_act(item_id=cd, action="snooze", actor="user:cora")
    with pytest.raises(engine.InvalidTime):
        engine.inbox_act(item_id=cd, action="snooze", actor="user:cora", until="2030-01-01")  # no offset
    with pytest.raises(engine.InvalidArgument):
        engine.inbox_act(
            item_id=cd, action="pin", actor="user:cora", until=timezone.now() + timedelta(days=1)
        )
    assert engine.inbox_get(agent_id=A, item_id=cd).status == "open"
    assert not AuditEvent.objects.filter(agent_id=A, action="discovery_snooze").exists()


def test_another_agents_item_is_not_found_like_a_missing_one(items):
    ab = items["ab"].id
    errors = []
    for agent_id, item_id in ((B, ab), (A, 999_999), (A, "1")):
        with pytest.raises(engine.NotFound) as nf:
            engine.inbox_act(item_id=item_id, action="pin", actor="user:otto", agent_id=agent_id)
        errors.append((nf.value.code, nf.value.message, nf.value.field))
        with pytest.raises(engine.NotFound):
            engine.inbox_get(agent_id=agent_id, item_id=item_id)
    assert len(set(errors)) == 1 and errors[0][0] == "not_found"
    assert engine.inbox_get(agent_id=A, item_id=ab).status == "open"


def test_a_run_is_stored_whole_or_not_at_all():
    batch = engine.EdgeBatch(["a"], ["b"], [0.5], [1], [1.0], [0.0], [0.0], [0.3])
    ok = engine.discovery_record(
        agent_id=A,
        started_at=timezone.now(),
        report={"facts": 3},
        edges=batch,
        communities=[(1, "a", ["a", "b"])],
        findings=[finding("a", "c")],
        actor="system:test",
    )
    assert ok.status == "done" and len(ok) == 1 and ok.report["added"]["cross_community"] == 1
    runs, edges, items = (
        DiscoveryRun.objects.count(),
        EntityEdge.objects.count(),
        DiscoveryItem.objects.count(),
    )
    bad = finding("x", "x")  # a pair of one entity: refused after the run, edges and communities were written
    with pytest.raises(engine.InvalidArgument):
        engine.discovery_record(
            agent_id=A,
            started_at=timezone.now(),
            report={"facts": 3},
            edges=engine.EdgeBatch(["c"], ["d"], [0.5], [1], [1.0], [0.0], [0.0], [0.3]),
            communities=[(2, "c", ["c", "d"])],
            findings=[finding("a", "d"), bad],
            actor="system:test",
        )
    assert (DiscoveryRun.objects.count(), EntityEdge.objects.count(), DiscoveryItem.objects.count()) == (
        runs,
        edges,
        items,
    )
    assert list(Community.objects.filter(agent_id=A).values_list("number", "retired_at")) == [(1, None)]
