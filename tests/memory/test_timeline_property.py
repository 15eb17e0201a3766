"""SPEC T2 as a property: random write sequences, random ingestion order, checked against the reference model.

The reference model (``reference_values``) is written here from the SPEC text, independently of the engine's
``memory.engine.timeline``: at world time t the value of a key is the object of the believed write covering t
with the greatest (valid_from, ingestion order). Both kinds of key are drawn (SPEC B3): ``is`` is single-valued
(one key per subject), ``likes`` is multi-valued in the shipped registry (one key per normalised object, so
"alpha" and "Alpha" are one value and "beta" another, each with its own timeline).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
import time_machine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import engine
from memory.engine import batch
from memory.engine.temporal import rederive_key
from memory.models import RETRACT_EVENTS, FactWrite, Memory

BASE = datetime(2020, 1, 1, tzinfo=UTC)
RECORD_BASE = datetime(2024, 1, 1, tzinfo=UTC)
ORIGINS = ["user_direct", "channel:tg-1", "operator"]
PREDICATES = ["is", "likes"]  # single-valued, multi-valued (the shipped registry)
VALUES = ["alpha", "beta", "gamma"]  # the value keys of "likes" ("Alpha" is "alpha")


@dataclass(frozen=True)
class W:
    obj: str
    start: int  # days after BASE
    length: int | None  # None = open
    origin: str


write_strategy = st.builds(
    W,
    obj=st.sampled_from(["alpha", "beta", "gamma", "Alpha"]),
    start=st.integers(0, 20),
    length=st.one_of(st.none(), st.integers(1, 8)),
    origin=st.sampled_from(ORIGINS),
)
writes_strategy = st.lists(write_strategy, min_size=1, max_size=14)


def reference_values(writes: list[W], t: datetime, believed: set[int], multi: bool = False) -> dict[str, str]:
    """Per key (the casefolded object for a multi-valued predicate, "" otherwise) the value at ``t``."""
    best: dict[str, tuple[tuple[int, int], str]] = {}
    for order, w in enumerate(writes):
        if order not in believed:
            continue
        start = BASE + timedelta(days=w.start)
        end = None if w.length is None else start + timedelta(days=w.length)
        if start <= t and (end is None or t < end):
            key = w.obj.casefold() if multi else ""
            if key not in best or (w.start, order) > best[key][0]:
                best[key] = ((w.start, order), w.obj)
    return {key: obj for key, (_, obj) in best.items()}


PROBES = [BASE + timedelta(hours=12 * k) for k in range(-2, 62)]


def apply_writes(agent_id: str, writes: list[W], predicate: str = "is") -> list[datetime]:
    record_times = []
    for order, w in enumerate(writes):
        start = BASE + timedelta(days=w.start)
        when = RECORD_BASE + timedelta(seconds=order)
        with time_machine.travel(when, tick=False):
            engine.store_temporal(
                agent_id=agent_id,
                content=f"x {predicate} {w.obj}",
                subject="x",
                predicate=predicate,
                object=w.obj,
                valid_from=start,
                valid_until=None if w.length is None else start + timedelta(days=w.length),
                origin=w.origin,
                source_event=f"ev-{order}",
            )
        record_times.append(when)
    return record_times


def check_invariants(agent_id: str, subject: str = "x", predicate: str = "is") -> None:
    # The rows are exactly the full re-derivation of the writes, whichever write path produced them.
    assert not rederive_key(agent_id, subject, predicate, at=RECORD_BASE + timedelta(days=1)), (
        "rows differ from derivation"
    )
    multi = predicate == "likes"
    keys: dict[str, list[Memory]] = {}
    for m in Memory.objects.filter(agent_id=agent_id, subject=subject, predicate=predicate):
        assert m.value_key == ((m.object or "").casefold() if multi else ""), f"{m.id} keyed {m.value_key!r}"
        if (
            not m.quarantined
            and m.invalidated_by_event not in RETRACT_EVENTS
            and m.valid_until != m.valid_from
        ):
            keys.setdefault(m.value_key, []).append(m)
    for rows in keys.values():  # per key (SPEC B3): T2's invariants
        assert sum(1 for m in rows if m.valid_until is None) <= 1, "more than one open believed row"
        rows.sort(key=lambda m: m.valid_from)
        for a, b in zip(rows, rows[1:], strict=False):
            assert a.valid_until is not None and a.valid_until <= b.valid_from, f"overlap: {a.id} and {b.id}"


def check_against_model(
    agent_id: str,
    writes: list[W],
    believed: set[int],
    as_of: datetime | None = None,
    subject: str = "x",
    predicate: str = "is",
):
    multi = predicate == "likes"
    key = {"agent_id": agent_id, "subject": subject, "predicate": predicate, "as_of": as_of}
    for n, t in enumerate(PROBES):
        expected = reference_values(writes, t, believed, multi)
        got = engine.get_values_at(at=t, **key)
        assert sorted(r.object or "" for r in got) == sorted(expected.values()), (
            f"at {t} (as_of {as_of}): {[r.object for r in got]} != {expected}"
        )
        if n % 4:
            continue
        one = engine.get_at(at=t, **key)  # the latest-starting value
        assert (one.object if one else None) == (got[0].object if got else None)
        if multi:  # each value asked alone
            for value in VALUES:
                alone = engine.get_at(at=t, object=value.upper(), **key)
                assert (alone.object if alone else None) == expected.get(value), f"{value} at {t}"


def run_property(writes: list[W], purge_origin: str | None, as_of_step: int, predicate: str = "is") -> None:
    agent_id = f"prop-{uuid.uuid4().hex[:12]}"
    record_times = apply_writes(agent_id, writes, predicate)
    everything = set(range(len(writes)))
    key = {"predicate": predicate}
    check_invariants(agent_id, **key)
    check_against_model(agent_id, writes, everything, **key)
    # what was believed just after write k (record time), T7 as_of
    k = min(as_of_step, len(writes) - 1)
    check_against_model(
        agent_id, writes, set(range(k + 1)), as_of=record_times[k] + timedelta(milliseconds=500), **key
    )
    if purge_origin is not None:
        with time_machine.travel(RECORD_BASE + timedelta(hours=1), tick=False):
            engine.invalidate_by_origin(agent_id=agent_id, origin=purge_origin)
        kept = {i for i, w in enumerate(writes) if w.origin != purge_origin}
        check_invariants(agent_id, **key)
        check_against_model(agent_id, writes, kept, **key)
        # before the purge, the purged writes were still believed
        check_against_model(agent_id, writes, everything, as_of=RECORD_BASE + timedelta(minutes=30), **key)


PROPERTY = given(
    writes=writes_strategy,
    purge_origin=st.one_of(st.none(), st.sampled_from(ORIGINS)),
    as_of_step=st.integers(0, 13),
    predicate=st.sampled_from(PREDICATES),
)


@pytest.mark.django_db
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@PROPERTY
def test_timeline_matches_reference_model(writes, purge_origin, as_of_step, predicate):
    run_property(writes, purge_origin, as_of_step, predicate)


@pytest.mark.postgres
@pytest.mark.django_db
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@PROPERTY
def test_timeline_matches_reference_model_on_postgres(
    writes, purge_origin, as_of_step, predicate, on_postgres
):
    assert on_postgres, "this test must run against PostgreSQL"
    run_property(writes, purge_origin, as_of_step, predicate)


# --- the batch path (store_temporal_many) ------------------------------------------------------------------

KEYS = ["x", "y", "z"]


def _in_time_order(keyed: list[tuple[str, W]]) -> list[tuple[str, W]]:
    """Starts given as steps become days since the key's first write, so each key's writes never go back."""
    day: dict[str, int] = {}
    out = []
    for subject, w in keyed:
        day[subject] = day.get(subject, 0) + w.start
        out.append((subject, W(w.obj, day[subject], w.length, w.origin)))
    return out


random_keyed = st.lists(st.tuples(st.sampled_from(KEYS), write_strategy), min_size=1, max_size=24)
# mostly what importers send: per key in time order, open-ended, values repeating (supersedes and reaffirms,
# the batch's in-memory path); now and then a bounded write (the key then goes fact by fact)
chronological = st.lists(
    st.tuples(
        st.sampled_from(KEYS),
        st.builds(
            W,
            obj=st.sampled_from(["alpha", "beta", "Alpha"]),
            start=st.integers(0, 3),  # days after the key's previous write
            length=st.one_of(st.none(), st.none(), st.none(), st.none(), st.integers(1, 8)),
            origin=st.sampled_from(ORIGINS),
        ),
    ),
    min_size=1,
    max_size=30,
).map(_in_time_order)
keyed_writes_strategy = st.one_of(random_keyed, chronological)


def as_fact(subject: str, order: int, w: W, predicate: str = "is") -> dict:
    start = BASE + timedelta(days=w.start)
    return {
        "content": f"{subject} {predicate} {w.obj}",
        "subject": subject,
        "predicate": predicate,
        "object": w.obj,
        "valid_from": start,
        "valid_until": None if w.length is None else start + timedelta(days=w.length),
        "origin": w.origin,
        "source_event": f"ev-{order}",
        "confidence": (1.0, 0.8, 0.55)[order % 3],
        "importance": float(order % 10),
        "tags": ["t", f"o{order % 2}"],
    }


def key_snapshot(
    agent_id: str, subject: str, predicate: str = "is"
) -> dict[str, tuple[list[dict], list[dict]]]:
    """Per key (value key: SPEC B3) its rows and write log with ids replaced by their creation rank within the
    key (the batch path creates a (subject, predicate)'s rows key by key, one by one in call order)."""
    rows_by_key: dict[str, list[Memory]] = {}
    for m in Memory.objects.filter(agent_id=agent_id, subject=subject, predicate=predicate).order_by("id"):
        rows_by_key.setdefault(m.value_key, []).append(m)
    writes_by_key: dict[str, list[FactWrite]] = {}
    for w in FactWrite.objects.filter(agent_id=agent_id, subject=subject, predicate=predicate).order_by("id"):
        writes_by_key.setdefault(w.value_key, []).append(w)
    out = {}
    for vk in sorted(set(rows_by_key) | set(writes_by_key)):
        rank = {m.id: f"row{i}" for i, m in enumerate(rows_by_key.get(vk, []))}

        def mapped(value, rank=rank):
            if isinstance(value, str):
                for mid, name in rank.items():
                    value = value.replace(mid, name)
            return value

        out_rows = []
        for m in rows_by_key.get(vk, []):
            values = {f.attname: getattr(m, f.attname) for f in Memory._meta.concrete_fields}
            values.pop("agent_id")
            values["metadata"] = {k: mapped(v) for k, v in (values["metadata"] or {}).items()}
            out_rows.append({k: mapped(v) for k, v in values.items()})
        writes = []
        for w in writes_by_key.get(vk, []):
            values = {f.attname: getattr(w, f.attname) for f in FactWrite._meta.concrete_fields}
            values.pop("id")
            values.pop("agent_id")
            writes.append({k: mapped(v) for k, v in values.items()})
        out[vk] = (out_rows, writes)
    return out


def run_batch_property(
    keyed: list[tuple[str, W]], chunk: int, purge_origin: str | None, predicate: str = "is"
) -> None:
    """The same facts through ``store_temporal_many`` (in chunks of ``chunk``) and one by one through
    ``store_temporal`` at the same frozen moment: the same outcomes, rows and write log per key, and reads that
    match the reference model."""
    batch_agent, one_agent = (f"{kind}-{uuid.uuid4().hex[:12]}" for kind in ("many", "one"))
    facts = [as_fact(subject, order, w, predicate) for order, (subject, w) in enumerate(keyed)]
    with time_machine.travel(RECORD_BASE, tick=False), mock.patch.object(batch, "CHUNK", chunk):
        many = engine.store_temporal_many(agent_id=batch_agent, facts=facts)
        one = [engine.store_temporal(agent_id=one_agent, **f) for f in facts]
    assert [r.outcome for r in many] == [r.outcome for r in one]
    generations = engine.graph_generation(agent_id=batch_agent)
    assert generations <= -(-len(facts) // chunk)  # at most one bump per chunk
    key = {"predicate": predicate}
    for subject in KEYS:
        many_keys, one_keys = (
            key_snapshot(batch_agent, subject, predicate),
            key_snapshot(one_agent, subject, predicate),
        )
        assert many_keys == one_keys, subject
        writes = [w for s, w in keyed if s == subject]
        if writes:
            check_invariants(batch_agent, subject, **key)
            check_against_model(batch_agent, writes, set(range(len(writes))), subject=subject, **key)
    if purge_origin is not None:
        with time_machine.travel(RECORD_BASE + timedelta(hours=1), tick=False):
            engine.invalidate_by_origin(agent_id=batch_agent, origin=purge_origin)
        for subject in KEYS:
            writes = [w for s, w in keyed if s == subject]
            if writes:
                kept = {i for i, w in enumerate(writes) if w.origin != purge_origin}
                check_invariants(batch_agent, subject, **key)
                check_against_model(batch_agent, writes, kept, subject=subject, **key)


BATCH_PROPERTY = given(
    keyed=keyed_writes_strategy,
    chunk=st.integers(1, 30),
    purge_origin=st.one_of(st.none(), st.sampled_from(ORIGINS)),
    predicate=st.sampled_from(PREDICATES),
)


@pytest.mark.django_db
@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@BATCH_PROPERTY
def test_store_temporal_many_matches_one_by_one_and_the_model(keyed, chunk, purge_origin, predicate):
    run_batch_property(keyed, chunk, purge_origin, predicate)


@pytest.mark.postgres
@pytest.mark.django_db
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@BATCH_PROPERTY
def test_store_temporal_many_matches_one_by_one_and_the_model_on_postgres(
    keyed, chunk, purge_origin, predicate, on_postgres
):
    assert on_postgres, "this test must run against PostgreSQL"
    run_batch_property(keyed, chunk, purge_origin, predicate)


@pytest.mark.django_db
def test_a_zero_length_row_at_a_boundary_is_re_pointed_by_the_write_that_starts_there():
    """Found by the batch property on PostgreSQL: beta from day 0, alpha for day 0 only, alpha from day 0 again
    (beta's continuation from day 1 shrinks to a zero-length row at day 1, shadowed by alpha), then beta from
    day 1. The last write's fast path saw only the open alpha row and left the zero-length row pointing at alpha;
    re-derivation points it at the new beta row. Every path must leave exactly the re-derived rows."""
    writes = [
        W(obj="beta", start=0, length=None, origin="user_direct"),
        W(obj="alpha", start=0, length=1, origin="user_direct"),
        W(obj="alpha", start=0, length=None, origin="user_direct"),
        W(obj="beta", start=1, length=None, origin="user_direct"),
    ]
    for chunk in (1, 30):
        run_batch_property([("y", w) for w in writes], chunk, None, "is")
    agent = f"one-{uuid.uuid4().hex[:12]}"
    apply_writes(agent, writes)
    check_invariants(agent)
    check_against_model(agent, writes, set(range(len(writes))))
