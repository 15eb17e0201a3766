"""SPEC P1–P3: trust ceilings, derived trust, purge by origin with re-derivation, expire by subject."""

from __future__ import annotations

import pytest

from memory import engine
from memory.engine.provenance import ceiling, origin_class
from memory.models import AuditEvent, FactWrite, Memory
from tests.conftest import dt
from tests.memory.conftest import A

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "origin,expected",
    [
        ("user_direct", 1.0),
        ("user", 1.0),
        ("user_profile", 1.0),
        ("user:alice", 1.0),
        ("operator", 1.0),
        ("import", 0.7),
        ("agent_derived", 0.6),
        ("tool_echo", 0.5),
        ("channel:telegram-123", 0.3),
        ("mcp_external", 0.3),
        ("unattributed", 0.6),
        ("martian", 0.6),
    ],
)
def test_trust_ceilings(origin, expected):
    assert ceiling(origin) == expected
    r = engine.store(agent_id=A, content="x", origin=origin, origin_trust=1.0)
    assert Memory.objects.get(id=r.id).origin_trust == expected


def test_origin_class_is_the_part_before_the_first_colon():
    assert origin_class("channel:telegram:123") == "channel"


def test_requested_trust_is_capped_and_derived_sources_cap_it_further():
    src = engine.store(agent_id=A, content="from a channel", origin="channel:tg").id  # 0.3
    r = engine.store_temporal(
        agent_id=A, content="derived", subject="s", predicate="p", origin="user_direct", derived_from=[src]
    )
    assert Memory.objects.get(id=r.id).origin_trust == 0.3
    r2 = engine.store_temporal(
        agent_id=A,
        content="from unknown",
        subject="s2",
        predicate="p",
        origin="user_direct",
        derived_from=["m_missing"],
    )
    assert Memory.objects.get(id=r2.id).origin_trust == 0.0
    foreign = engine.store(agent_id="other", content="x", origin="user_direct").id
    r3 = engine.store_temporal(
        agent_id=A,
        content="cites other agent",
        subject="s3",
        predicate="p",
        origin="user_direct",
        derived_from=[foreign],
    )
    assert Memory.objects.get(id=r3.id).origin_trust == 0.0
    r4 = engine.store_temporal(
        agent_id=A, content="asks low", subject="s4", predicate="p", origin="user_direct", origin_trust=0.42
    )
    assert Memory.objects.get(id=r4.id).origin_trust == 0.42


def store(obj, origin, day, subject="proj", predicate="deploy_target"):
    return engine.store_temporal(
        agent_id=A,
        content=f"{subject} {predicate} {obj}",
        subject=subject,
        predicate=predicate,
        object=obj,
        valid_from=dt(day),
        origin=origin,
    ).id


def current_object(subject="proj", predicate="deploy_target"):
    from datetime import UTC, datetime

    r = engine.get_at(agent_id=A, subject=subject, predicate=predicate, at=datetime.now(UTC))
    return r.object if r else None


def test_purge_restores_the_clean_fact_the_poison_superseded():
    clean = store("Cloudflare", "user_direct", "2026-01-01")
    poison = store("evil.example", "channel:telegram-1", "2026-02-01")
    assert current_object() == "evil.example"
    result = engine.invalidate_by_origin(agent_id=A, origin="channel:telegram-1", actor="user:ada")
    assert (result.retracted, result.restored) == (1, 1)
    assert current_object() == "Cloudflare"
    p, c = Memory.objects.get(id=poison), Memory.objects.get(id=clean)
    assert p.invalidated_by_event == "origin_purge" and p.invalidated_at is not None
    assert c.valid_until is None and c.superseded_by is None and c.invalidated_by_event is None
    history = engine.get_history(agent_id=A, subject="proj", predicate="deploy_target")
    assert {h.id for h in history} == {clean, poison}  # never deleted
    event = AuditEvent.objects.get(action="origin_purge")
    assert event.actor == "user:ada" and poison in event.details["retracted"]


def test_purge_matches_the_whole_origin_string_exactly():
    a = store("a", "channel:telegram-1", "2026-01-01", subject="s1")
    b = store("b", "channel:telegram-12", "2026-01-01", subject="s2")
    c = store("c", "channel", "2026-01-01", subject="s3")
    d = engine.store(agent_id=A, content="plain from telegram-1", origin="channel:telegram-1").id
    r = engine.invalidate_by_origin(agent_id=A, origin="channel:telegram-1")
    assert r.retracted == 2
    retracted = set(Memory.objects.filter(invalidated_by_event="origin_purge").values_list("id", flat=True))
    assert retracted == {a, d} and b not in retracted and c not in retracted


def test_purge_since_only_touches_later_writes():
    import time_machine

    with time_machine.travel(dt("2026-03-01"), tick=False):
        early = store("early", "channel:x", "2026-01-01", subject="s1")
    with time_machine.travel(dt("2026-03-10"), tick=False):
        late = store("late", "channel:x", "2026-01-01", subject="s2")
    r = engine.invalidate_by_origin(agent_id=A, origin="channel:x", since="2026-03-05T00:00:00Z")
    assert r.retracted == 1
    assert Memory.objects.get(id=late).invalidated_by_event == "origin_purge"
    assert Memory.objects.get(id=early).invalidated_by_event is None


def test_rows_derived_from_purged_rows_have_their_trust_crushed():
    bad = engine.store(agent_id=A, content="poisoned source", origin="channel:x").id
    derived = engine.store_temporal(
        agent_id=A, content="inferred", subject="s", predicate="p", origin="channel:y", derived_from=[bad]
    ).id
    unrelated = engine.store(agent_id=A, content="fine", origin="operator").id
    r = engine.invalidate_by_origin(agent_id=A, origin="channel:x")
    assert r.trust_crushed == 1
    assert Memory.objects.get(id=derived).origin_trust == 0.1
    assert Memory.objects.get(id=derived).invalidated_by_event is None  # crushed, not retracted
    assert Memory.objects.get(id=unrelated).origin_trust == 1.0


def test_trust_crush_sets_derived_rows_to_at_most_point_one():
    bad = engine.store(agent_id=A, content="poisoned source", origin="import").id  # 0.7
    derived = engine.store_temporal(
        agent_id=A, content="inferred", subject="s", predicate="p", origin="operator", derived_from=[bad]
    ).id
    assert Memory.objects.get(id=derived).origin_trust == 0.7
    r = engine.invalidate_by_origin(agent_id=A, origin="import")
    assert r.trust_crushed == 1
    assert Memory.objects.get(id=derived).origin_trust == 0.1
    assert FactWrite.objects.get(memory_id=derived).origin_trust == 0.1


def test_a_fact_a_user_also_said_survives_purging_the_channel():
    row = store("Cloudflare", "channel:tg", "2026-01-01")
    again = store("Cloudflare", "user_direct", "2026-01-05")
    assert again == row  # reaffirm
    r = engine.invalidate_by_origin(agent_id=A, origin="channel:tg")
    assert r.retracted == 0
    assert current_object() == "Cloudflare"
    m = Memory.objects.get(id=row)
    assert m.valid_from == dt("2026-01-05")  # interval follows the remaining support
    assert engine.get_at(agent_id=A, subject="proj", predicate="deploy_target", at=dt("2026-01-03")) is None


def test_purge_is_scoped_to_the_agent():
    mine = store("x", "channel:tg", "2026-01-01")
    theirs = engine.store_temporal(
        agent_id="other", content="x", subject="s", predicate="p", origin="channel:tg"
    ).id
    engine.invalidate_by_origin(agent_id=A, origin="channel:tg")
    assert Memory.objects.get(id=theirs).invalidated_by_event is None
    assert Memory.objects.get(id=mine).invalidated_by_event == "origin_purge"


def test_purge_bumps_the_graph_generation():
    store("x", "channel:tg", "2026-01-01")
    g = engine.graph_generation(agent_id=A)
    engine.invalidate_by_origin(agent_id=A, origin="channel:tg")
    assert engine.graph_generation(agent_id=A) == g + 1


def test_purge_rejects_empty_origin():
    with pytest.raises(engine.EngineError) as err:
        engine.invalidate_by_origin(agent_id=A, origin="")
    assert err.value.code == "invalid_argument"


def test_expire_by_subject_ends_current_rows_with_the_reason():
    a = store("v1", "channel", "2026-01-01", subject="wiki:auto/sop/deploy", predicate="documented_in")
    b = store("x", "channel", "2026-01-01", subject="wiki:auto/sop/deploy-2", predicate="documented_in")
    n = engine.expire_by_subject(agent_id=A, subject="wiki:auto/sop/deploy", reason="auto_page_removed")
    assert n == 1
    m = Memory.objects.get(id=a)
    assert m.valid_until is not None and m.invalidated_by_event == "auto_page_removed"
    assert current_object("wiki:auto/sop/deploy", "documented_in") is None
    assert current_object("wiki:auto/sop/deploy-2", "documented_in") == "x"
    assert Memory.objects.get(id=b).invalidated_by_event is None
    # a later write on the same key does not resurrect the expired value
    store("v2", "channel", "2026-01-02", subject="wiki:auto/sop/deploy", predicate="other")
    assert current_object("wiki:auto/sop/deploy", "documented_in") is None
