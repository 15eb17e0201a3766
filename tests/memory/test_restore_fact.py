"""A curator's restore of a retracted fact (issue 19 item 3): ``engine.restore_fact`` takes back a
``curator_retract`` as a new audited event (``curator_restore``), bi-temporally: between the retract and the
restore the record still says retracted; after the restore the key reads as if the retract had never happened
(SPEC T2), including a write that arrived since."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
import time_machine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import engine
from memory.models import AuditEvent, FactWrite, GraphGeneration, Memory
from tests.conftest import dt
from tests.memory.conftest import OTHER, A, fact
from tests.memory.test_timeline_property import (
    RECORD_BASE,
    W,
    apply_writes,
    check_against_model,
    check_invariants,
    write_strategy,
)

pytestmark = pytest.mark.django_db

T0 = dt("2026-03-01T09:00:00")
KEY = {"agent_id": A, "subject": "ana", "predicate": "works_at"}


def at(minutes: int):
    return time_machine.travel(T0 + timedelta(minutes=minutes), tick=False)


def current_objects() -> list[str | None]:
    return [engine.get_at(at=p, **KEY) for p in (dt("2026-01-15"), dt("2026-02-15"), dt("2026-12-01"))]


def retract(memory_id: str, minutes: int, agent_id: str = A):  # noqa: ANN201
    with at(minutes):
        return engine.retract_fact(agent_id=agent_id, memory_id=memory_id, reason="wrong", actor="user:cora")


def restore(memory_id: str, minutes: int, agent_id: str = A):  # noqa: ANN201
    with at(minutes):
        return engine.restore_fact(
            agent_id=agent_id, memory_id=memory_id, reason="it was right", actor="user:cora"
        )


def snapshot() -> list[tuple]:
    probes = [dt("2025-06-01"), dt("2026-01-15"), dt("2026-02-15"), dt("2026-12-01")]
    out = []
    for p in probes:
        r = engine.get_at(at=p, **KEY)
        out.append(None if r is None else (r.id, r.object, r.valid_from, r.valid_until))
    return out


def test_retract_then_restore_reads_as_before_and_as_of_between_says_retracted():
    with at(0):
        fact("ana", "works_at", "Acme", valid_from=dt("2026-01-01"))
    with at(1):
        globex = fact("ana", "works_at", "Globex", valid_from=dt("2026-02-01"))
    before = snapshot()
    assert before[3][1] == "Globex"
    retract(globex, 10)
    assert engine.get_at(at=dt("2026-12-01"), **KEY).object == "Acme"  # the retract brought Acme back
    generation = GraphGeneration.objects.get(agent_id=A).generation
    record = restore(globex, 20)
    assert record.id == globex and record.invalidated_by_event is None and record.valid_until is None
    assert snapshot() == before
    assert GraphGeneration.objects.get(agent_id=A).generation > generation
    # bi-temporal: between the retract and the restore the record says Globex was not believed
    between = T0 + timedelta(minutes=15)
    assert engine.get_at(at=dt("2026-12-01"), as_of=between, **KEY).object == "Acme"
    after = T0 + timedelta(minutes=25)
    assert engine.get_at(at=dt("2026-12-01"), as_of=after, **KEY).object == "Globex"
    assert engine.get_at(at=dt("2026-12-01"), as_of=T0 + timedelta(minutes=5), **KEY).object == "Globex"
    event = AuditEvent.objects.get(agent_id=A, action="curator_restore")
    assert event.memory_id == globex and event.actor == "user:cora" and event.reason == "it was right"
    # the originals keep their belief interval; the copies rank as them
    writes = FactWrite.objects.filter(agent_id=A, memory_id=globex).order_by("id")
    assert [(w.state, w.order) for w in writes] == [
        (FactWrite.STATE_RETRACTED, writes[0].id),
        (FactWrite.STATE_BELIEVED, writes[0].id),
    ]


def test_a_newer_write_since_the_retract_keeps_winning():
    with at(0):
        acme = fact("ana", "works_at", "Acme", valid_from=dt("2026-01-01"))
    retract(acme, 5)
    with at(6):  # learned after the retract: same start, so only ingestion order decides (T2)
        initech = fact("ana", "works_at", "Initech", valid_from=dt("2026-01-01"))
    restore(acme, 10)
    assert engine.get_at(at=dt("2026-01-15"), **KEY).object == "Initech"
    assert Memory.objects.get(id=acme).valid_until == Memory.objects.get(id=acme).valid_from  # shadowed
    assert Memory.objects.get(id=initech).valid_until is None
    assert not engine.is_retracted(Memory.objects.get(id=acme).invalidated_by_event)


def test_a_restored_later_start_wins_over_a_write_since_as_without_the_retract():
    with at(0):
        globex = fact("ana", "works_at", "Globex", valid_from=dt("2026-02-01"))
    retract(globex, 5)
    with at(6):
        fact("ana", "works_at", "Acme", valid_from=dt("2026-01-01"))
    restore(globex, 10)
    assert [r.object for r in current_objects()] == ["Acme", "Globex", "Globex"]


def test_restoring_twice_is_not_retracted_and_a_second_retract_restores_again():
    with at(0):
        globex = fact("ana", "works_at", "Globex", valid_from=dt("2026-02-01"))
    retract(globex, 5)
    restore(globex, 10)
    with pytest.raises(engine.NotRetracted) as err:
        restore(globex, 11)
    assert err.value.code == "not_retracted"
    with pytest.raises(engine.NotRetracted):  # a fact never retracted
        with at(12):
            acme = fact("ana", "works_at", "Acme", valid_from=dt("2026-01-01"))
        restore(acme, 13)
    retract(globex, 20)
    assert engine.get_at(at=dt("2026-12-01"), **KEY).object == "Acme"
    restore(globex, 30)
    assert engine.get_at(at=dt("2026-12-01"), **KEY).object == "Globex"
    assert engine.get_at(at=dt("2026-12-01"), as_of=T0 + timedelta(minutes=25), **KEY).object == "Acme"
    assert AuditEvent.objects.filter(agent_id=A, action="curator_restore").count() == 2


def test_another_agents_fact_is_not_found_like_an_unknown_id():
    with at(0):
        theirs = fact("ana", "works_at", "Globex", agent_id=OTHER)
    retract(theirs, 5, agent_id=OTHER)
    with pytest.raises(engine.NotFound) as other:
        restore(theirs, 10)
    with pytest.raises(engine.NotFound) as unknown:
        restore("m_00000000000000000000000000", 10)
    assert (other.value.code, str(other.value)) == (unknown.value.code, str(unknown.value))
    assert Memory.objects.get(id=theirs).invalidated_by_event == "curator_retract"


def test_a_purged_fact_is_not_restorable_and_the_message_names_its_path():
    with at(0):
        rumour = fact("ana", "works_at", "Globex", origin="channel:tg-1")
    with at(5):
        engine.invalidate_by_origin(agent_id=A, origin="channel:tg-1")
    with pytest.raises(engine.NotRestorable) as err:
        restore(rumour, 10)
    assert err.value.code == "not_restorable" and "purge" in str(err.value)
    assert Memory.objects.get(id=rumour).invalidated_by_event == "origin_purge"
    assert not FactWrite.objects.filter(agent_id=A, memory_id=rumour, state=FactWrite.STATE_BELIEVED).exists()


def test_a_reason_is_required():
    with at(0):
        globex = fact("ana", "works_at", "Globex")
    retract(globex, 5)
    with pytest.raises(engine.InvalidArgument):
        engine.restore_fact(agent_id=A, memory_id=globex, reason="  ", actor="user:cora")
    assert Memory.objects.get(id=globex).invalidated_by_event == "curator_retract"


def test_only_the_writes_the_retract_took_come_back():
    """A reaffirming write purged before the retract stays purged: the restore brings back what the retract took."""
    with at(0):
        globex = fact("ana", "works_at", "Globex", valid_from=dt("2026-02-01"), origin="user_direct")
    with at(1):
        again = fact("ana", "works_at", "Globex", valid_from=dt("2026-02-01"), origin="channel:tg-1")
    assert again == globex  # a reaffirmation (T5)
    with at(2):
        engine.invalidate_by_origin(agent_id=A, origin="channel:tg-1")
    retract(globex, 5)
    restore(globex, 10)
    believed = FactWrite.objects.filter(agent_id=A, memory_id=globex, state=FactWrite.STATE_BELIEVED)
    assert sorted(w.origin for w in believed) == ["user_direct"]
    assert engine.get_at(at=dt("2026-12-01"), **KEY).object == "Globex"


# --- SPEC T2 as a property: retract one row, write more, restore it --------------------------------------------


def _writes_of(agent_id: str, memory_id: str) -> set[int]:
    events = FactWrite.objects.filter(agent_id=agent_id, memory_id=memory_id).values_list(
        "source_event", flat=True
    )
    return {int(e.split("-")[1]) for e in events}


def run_restore_property(before: list[W], after: list[W], pick: int) -> None:
    agent_id = f"rst-{uuid.uuid4().hex[:12]}"
    apply_writes(agent_id, before)
    rows = list(Memory.objects.filter(agent_id=agent_id, subject="x").order_by("id"))
    target = rows[pick % len(rows)]
    if engine.is_retracted(target.invalidated_by_event):
        return
    retract_at = RECORD_BASE + timedelta(hours=1)
    with time_machine.travel(retract_at, tick=False):
        engine.retract_fact(agent_id=agent_id, memory_id=target.id, reason="wrong", actor="user:cora")
    primary = (target.metadata or {}).get("continuation_of") or target.id
    taken = _writes_of(agent_id, primary)
    writes = list(before)
    for n, w in enumerate(after):  # learned after the retract, ingested in order after `before`
        with time_machine.travel(retract_at + timedelta(minutes=1 + n), tick=False):
            start = dt("2020-01-01") + timedelta(days=w.start)
            engine.store_temporal(
                agent_id=agent_id,
                content=f"x is {w.obj}",
                subject="x",
                predicate="is",
                object=w.obj,
                valid_from=start,
                valid_until=None if w.length is None else start + timedelta(days=w.length),
                origin=w.origin,
                source_event=f"ev-{len(before) + n}",
            )
        writes.append(w)
    everything = set(range(len(writes)))
    restore_at = RECORD_BASE + timedelta(hours=2)
    with time_machine.travel(restore_at, tick=False):
        engine.restore_fact(agent_id=agent_id, memory_id=target.id, reason="right", actor="user:cora")
    check_invariants(agent_id)
    check_against_model(agent_id, writes, everything)  # as if the retract had never happened
    between = retract_at + timedelta(minutes=len(after) + 5)
    check_against_model(agent_id, writes, everything - taken, as_of=between)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    before=st.lists(write_strategy, min_size=1, max_size=8),
    after=st.lists(write_strategy, min_size=0, max_size=4),
    pick=st.integers(0, 20),
)
def test_restore_matches_the_reference_model(before, after, pick):
    run_restore_property(before, after, pick)


@pytest.mark.postgres
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    before=st.lists(write_strategy, min_size=1, max_size=8),
    after=st.lists(write_strategy, min_size=0, max_size=4),
    pick=st.integers(0, 20),
)
def test_restore_matches_the_reference_model_on_postgres(before, after, pick, on_postgres):
    assert on_postgres, "this test must run against PostgreSQL"
    run_restore_property(before, after, pick)


def test_a_row_no_write_speaks_for_is_restored_as_a_row_unless_another_holds_its_key():
    """A legacy row imported without history (simulated: its write log removed) is retracted and restored as a
    row; once a newer fact holds the key open, restoring it would make two open rows: not_restorable."""
    with at(0):
        legacy = fact("ana", "works_at", "Acme", valid_from=dt("2026-01-01"))
    FactWrite.objects.filter(agent_id=A, memory_id=legacy).delete()
    retract(legacy, 5)
    assert engine.get_at(at=dt("2026-12-01"), **KEY) is None
    restore(legacy, 10)
    assert engine.get_at(at=dt("2026-12-01"), **KEY).id == legacy
    retract(legacy, 15)
    with at(20):
        fact("ana", "works_at", "Globex", valid_from=dt("2026-02-01"))
    with pytest.raises(engine.NotRestorable) as err:
        restore(legacy, 25)
    assert "holds this key" in str(err.value)
    assert Memory.objects.get(id=legacy).invalidated_by_event == "curator_retract"
