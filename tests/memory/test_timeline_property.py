"""SPEC T2 as a property: random write sequences, random ingestion order, checked against the reference model.

The reference model (``reference_value``) is written here from the SPEC text, independently of the engine's
``memory.engine.timeline``: at world time t the value is the object of the believed write covering t with the
greatest (valid_from, ingestion order).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import engine
from memory.engine.temporal import rederive_key
from memory.models import RETRACT_EVENTS, Memory

BASE = datetime(2020, 1, 1, tzinfo=UTC)
RECORD_BASE = datetime(2024, 1, 1, tzinfo=UTC)
ORIGINS = ["user_direct", "channel:tg-1", "operator"]


@dataclass(frozen=True)
class W:
    obj: str
    start: int  # days after BASE
    length: int | None  # None = open
    origin: str


writes_strategy = st.lists(
    st.builds(
        W,
        obj=st.sampled_from(["alpha", "beta", "gamma"]),
        start=st.integers(0, 20),
        length=st.one_of(st.none(), st.integers(1, 8)),
        origin=st.sampled_from(ORIGINS),
    ),
    min_size=1,
    max_size=14,
)


def reference_value(writes: list[W], t: datetime, believed: set[int]) -> str | None:
    best: tuple[int, int] | None = None
    value = None
    for order, w in enumerate(writes):
        if order not in believed:
            continue
        start = BASE + timedelta(days=w.start)
        end = None if w.length is None else start + timedelta(days=w.length)
        if start <= t and (end is None or t < end):
            if best is None or (w.start, order) > best:
                best, value = (w.start, order), w.obj
    return value


PROBES = [BASE + timedelta(hours=12 * k) for k in range(-2, 62)]


def apply_writes(agent_id: str, writes: list[W]) -> list[datetime]:
    record_times = []
    for order, w in enumerate(writes):
        start = BASE + timedelta(days=w.start)
        when = RECORD_BASE + timedelta(seconds=order)
        with time_machine.travel(when, tick=False):
            engine.store_temporal(
                agent_id=agent_id,
                content=f"x is {w.obj}",
                subject="x",
                predicate="is",
                object=w.obj,
                valid_from=start,
                valid_until=None if w.length is None else start + timedelta(days=w.length),
                origin=w.origin,
                source_event=f"ev-{order}",
            )
        record_times.append(when)
    return record_times


def check_invariants(agent_id: str) -> None:
    # The rows are exactly the full re-derivation of the writes, whichever write path produced them.
    assert not rederive_key(agent_id, "x", "is", at=RECORD_BASE + timedelta(days=1)), (
        "rows differ from derivation"
    )
    rows = [
        m
        for m in Memory.objects.filter(agent_id=agent_id, subject="x", predicate="is")
        if not m.quarantined
        and m.invalidated_by_event not in RETRACT_EVENTS
        and m.valid_until != m.valid_from
    ]
    assert sum(1 for m in rows if m.valid_until is None) <= 1, "more than one open believed row"
    rows.sort(key=lambda m: m.valid_from)
    for a, b in zip(rows, rows[1:], strict=False):
        assert a.valid_until is not None and a.valid_until <= b.valid_from, f"overlap: {a.id} and {b.id}"


def check_against_model(agent_id: str, writes: list[W], believed: set[int], as_of: datetime | None = None):
    for t in PROBES:
        got = engine.get_at(agent_id=agent_id, subject="x", predicate="is", at=t, as_of=as_of)
        expected = reference_value(writes, t, believed)
        assert (got.object if got else None) == expected, (
            f"at {t} (as_of {as_of}): {got and got.object} != {expected}"
        )


def run_property(writes: list[W], purge_origin: str | None, as_of_step: int) -> None:
    agent_id = f"prop-{uuid.uuid4().hex[:12]}"
    record_times = apply_writes(agent_id, writes)
    everything = set(range(len(writes)))
    check_invariants(agent_id)
    check_against_model(agent_id, writes, everything)
    # what was believed just after write k (record time), T7 as_of
    k = min(as_of_step, len(writes) - 1)
    check_against_model(
        agent_id, writes, set(range(k + 1)), as_of=record_times[k] + timedelta(milliseconds=500)
    )
    if purge_origin is not None:
        with time_machine.travel(RECORD_BASE + timedelta(hours=1), tick=False):
            engine.invalidate_by_origin(agent_id=agent_id, origin=purge_origin)
        kept = {i for i, w in enumerate(writes) if w.origin != purge_origin}
        check_invariants(agent_id)
        check_against_model(agent_id, writes, kept)
        # before the purge, the purged writes were still believed
        check_against_model(agent_id, writes, everything, as_of=RECORD_BASE + timedelta(minutes=30))


PROPERTY = given(
    writes=writes_strategy,
    purge_origin=st.one_of(st.none(), st.sampled_from(ORIGINS)),
    as_of_step=st.integers(0, 13),
)


@pytest.mark.django_db
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@PROPERTY
def test_timeline_matches_reference_model(writes, purge_origin, as_of_step):
    run_property(writes, purge_origin, as_of_step)


@pytest.mark.postgres
@pytest.mark.django_db
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@PROPERTY
def test_timeline_matches_reference_model_on_postgres(writes, purge_origin, as_of_step, on_postgres):
    assert on_postgres, "this test must run against PostgreSQL"
    run_property(writes, purge_origin, as_of_step)
