"""Process side of ``test_concurrency``: writers and a verifier that run in spawned processes.

Spawned children import this module before Django is configured, so nothing here imports Django at module
level. Each child points the default connection at the database the parent names (the pytest-django test
database on PostgreSQL, a temporary file on SQLite), writes through ``engine.store_temporal`` only, and sends
back either its results or a formatted traceback: an exception in a child must fail the test, never vanish.
"""

from __future__ import annotations

import os
import random
import traceback
from datetime import UTC, datetime, timedelta
from typing import Any

OBJECTS = ("red", "green", "blue", "amber")
WORLD_START = datetime(2020, 1, 1, tzinfo=UTC)
WORLD_DAYS = 5 * 365
DB_NAME_ENV = "MEMDESK_CONCURRENCY_DB_NAME"


def setup_django(db_name: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.db import connections

    # Before the first query: the child opens its own connection to the parent's (test) database.
    connections["default"].settings_dict["NAME"] = db_name


def content_of(subject: str, predicate: str, obj: str) -> str:
    return f"{subject} {predicate} {obj}"


def plan_writes(*, worker: int, n: int, keys: list[tuple[str, str]], seed: int) -> list[dict[str, Any]]:
    """Random writes: ~35% "now" (supersede or reaffirm the open value), ~45% historical and out of order,
    ~20% bounded historical intervals. Objects come from a small set so reaffirms are frequent; day
    granularity makes equal ``valid_from`` values (ties broken by ingestion order) common too."""
    rng = random.Random(seed * 1000 + worker)
    plan = []
    for i in range(n):
        subject, predicate = rng.choice(keys)
        obj = rng.choice(OBJECTS)
        roll = rng.random()
        valid_from = valid_until = None
        if roll >= 0.35:
            valid_from = WORLD_START + timedelta(days=rng.randrange(WORLD_DAYS))
            if roll >= 0.80:
                valid_until = valid_from + timedelta(days=rng.randrange(1, 400))
        plan.append(
            {
                "subject": subject,
                "predicate": predicate,
                "object": obj,
                "content": content_of(subject, predicate, obj),
                "valid_from": valid_from,
                "valid_until": valid_until,
                "source_event": f"w{worker}-{i}",
                "origin": rng.choice(("user_direct", "operator", "import", "channel:test")),
            }
        )
    return plan


def writer(
    db_name: str,
    agent_id: str,
    worker: int,
    n: int,
    keys: list[tuple[str, str]],
    seed: int,
    barrier: Any,
    queue: Any,
) -> None:
    """Store ``n`` facts through the engine, starting together with the other writers at ``barrier``."""
    started = False
    try:
        setup_django(db_name)
        from django.db import connection

        from memory import engine

        plan = plan_writes(worker=worker, n=n, keys=keys, seed=seed)
        connection.ensure_connection()
        barrier.wait(timeout=180)
        started = True
        results = []
        for spec in plan:
            r = engine.store_temporal(agent_id=agent_id, **spec)
            results.append({"source_event": spec["source_event"], "id": r.id, "outcome": r.outcome})
        queue.put(("ok", worker, results))
    except BaseException:  # noqa: BLE001  everything goes back to the parent
        if not started:
            barrier.abort()
        queue.put(("error", worker, traceback.format_exc()))
    finally:
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # noqa: BLE001
            pass


def verifier(
    db_name: str, agent_id: str, keys: list[tuple[str, str]], results: list[dict[str, Any]], queue: Any
) -> None:
    try:
        setup_django(db_name)
        problems = verify(agent_id=agent_id, keys=keys, results=results)
        queue.put(("ok", -1, problems))
    except BaseException:  # noqa: BLE001
        queue.put(("error", -1, traceback.format_exc()))
    finally:
        from django.db import connections

        connections.close_all()


# --- checks (read-only) -----------------------------------------------------------------------------------


def verify(
    *, agent_id: str, keys: list[tuple[str, str]], results: list[dict[str, Any]] | None = None
) -> list[str]:
    """Every invariant the concurrency tests assert; returns human-readable problems (empty = all good)."""
    from memory import engine
    from memory.engine.timeline import WriteSpan, value_at
    from memory.models import RETRACT_EVENTS, FactWrite, Memory

    problems: list[str] = []
    rows = {m.id: m for m in Memory.objects.filter(agent_id=agent_id)}
    writes = list(FactWrite.objects.filter(agent_id=agent_id).order_by("id"))

    def believed(m: Memory) -> bool:
        return not m.quarantined and m.invalidated_by_event not in RETRACT_EVENTS

    def primary_of(m: Memory) -> str:
        return (m.metadata or {}).get("continuation_of") or m.id

    # Every write is accounted for: it created its row, or it reaffirms a row that exists.
    for w in writes:
        row = rows.get(w.memory_id)
        if row is None:
            problems.append(f"write {w.id} ({w.source_event}) points at missing row {w.memory_id}")
        elif (row.subject, row.predicate) != (w.subject, w.predicate):
            problems.append(f"write {w.id} points at row {row.id} of another key")
        elif row.object != w.object:
            problems.append(f"write {w.id} ({w.object}) points at row {row.id} holding {row.object}")
        if w.state != FactWrite.STATE_BELIEVED:
            problems.append(f"write {w.id} is {w.state}, expected believed")
    if results is not None:
        by_event = {w.source_event: w for w in writes}
        if len(by_event) != len(writes):
            problems.append("two writes share a source_event")
        for r in results:
            w = by_event.get(r["source_event"])
            if w is None:
                problems.append(f"{r['source_event']}: {r['outcome']} but no write was logged")
                continue
            if r["outcome"] not in ("stored", "reaffirmed"):
                problems.append(f"{r['source_event']}: unexpected outcome {r['outcome']}")
            if (r["outcome"] == "reaffirmed") != w.is_reaffirm:
                problems.append(
                    f"{r['source_event']}: outcome {r['outcome']} but is_reaffirm={w.is_reaffirm}"
                )
            row = rows.get(r["id"])
            if row is None or primary_of(row) != w.memory_id:
                problems.append(
                    f"{r['source_event']}: result id {r['id']} is not the write's row {w.memory_id}"
                )

    for subject, predicate in keys:
        key_rows = [m for m in rows.values() if (m.subject, m.predicate) == (subject, predicate)]
        live = [m for m in key_rows if believed(m)]
        open_rows = [m.id for m in live if m.valid_until is None]
        if len(open_rows) != 1:
            problems.append(f"{subject}/{predicate}: {len(open_rows)} open believed rows {open_rows}")
        spans = sorted(
            (
                (m.valid_from, m.valid_until, m.id)
                for m in live
                if m.valid_until is None or m.valid_until > m.valid_from
            ),
            key=lambda s: s[0],
        )
        for (a_from, a_until, a_id), (b_from, _b_until, b_id) in zip(spans, spans[1:], strict=False):
            if a_until is None or a_until > b_from:
                problems.append(
                    f"{subject}/{predicate}: rows {a_id} [{a_from}, {a_until}) and {b_id} from {b_from} overlap"
                )

        key_writes = [w for w in writes if (w.subject, w.predicate) == (subject, predicate)]
        spans_w = [WriteSpan(w.id, w.req_from, w.req_until, w.memory_id, w.source_event) for w in key_writes]
        objects = {w.memory_id: w.object for w in key_writes if not w.is_reaffirm}
        points = {datetime.now(UTC), WORLD_START - timedelta(days=1)}
        for w in key_writes:
            for p in (w.req_from, w.req_until):
                if p is not None:
                    points.update({p, p - timedelta(microseconds=1), p + timedelta(hours=12)})
        rng = random.Random(len(key_writes))
        sample = sorted(points)
        if len(sample) > 160:
            sample = sorted(rng.sample(sample, 160))
        for at in sample:
            want = value_at(spans_w, at)
            got = engine.get_at(agent_id=agent_id, subject=subject, predicate=predicate, at=at)
            want_row = want.row if want else None
            got_row = (got.metadata or {}).get("continuation_of") or got.id if got else None
            if want_row != got_row or (got is not None and got.object != objects.get(want_row)):
                problems.append(
                    f"{subject}/{predicate} at {at.isoformat()}: get_at gave "
                    f"{got_row} ({got.object if got else None}), the model says {want_row} "
                    f"({objects.get(want_row)})"
                )
    return problems
