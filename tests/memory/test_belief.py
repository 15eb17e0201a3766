"""``memory.engine.belief``: the ORM filter, the SQL fragment and the Python predicate say the same thing.

Random rows (quarantined or not, closed by a retraction, a supersession or nothing, any world interval) are
written to the real database; at random moments the three forms of "current" (and of "believed") must pick
the same rows.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.engine import belief
from memory.models import RETRACT_EVENTS, Memory

BASE = datetime(2024, 1, 1, tzinfo=UTC)
EVENTS = [None, "", "supersede:m_x", "ev-1", "auto_page_removed", "rederived", *RETRACT_EVENTS]

row_strategy = st.fixed_dictionaries(
    {
        "quarantined": st.booleans(),
        "event": st.sampled_from(EVENTS),
        "start": st.one_of(st.none(), st.integers(0, 10)),
        "length": st.one_of(st.none(), st.integers(0, 6)),
    }
)


def _rows(specs: list[dict]) -> list[Memory]:
    rows = []
    for k, spec in enumerate(specs):
        start = None if spec["start"] is None else BASE + timedelta(days=spec["start"])
        until = None
        if spec["length"] is not None:
            until = (start or BASE) + timedelta(days=spec["length"])
        rows.append(
            Memory(
                id=f"m_belief_{k:03d}",
                agent_id="belief-agent",
                content=f"row {k}",
                timestamp=BASE,
                created_at=BASE,
                ingested_at=BASE,
                subject=f"s{k}",  # one key per row: the one-open-row constraint never interferes
                predicate="p",
                valid_from=start,
                valid_until=until,
                quarantined=spec["quarantined"],
                invalidated_by_event=spec["event"],
            )
        )
    Memory.objects.bulk_create(rows)
    return rows


def _sql_ids(where: str, params: list) -> set[str]:
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT m.id FROM memories m WHERE m.agent_id = %s AND {where}", ["belief-agent", *params]
        )
        return {r[0] for r in cur.fetchall()}


@pytest.mark.django_db
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs=st.lists(row_strategy, min_size=1, max_size=12), probe=st.integers(-1, 18))
def test_three_forms_of_current_agree(specs, probe):
    Memory.objects.filter(agent_id="belief-agent").delete()
    rows = _rows(specs)
    at = BASE + timedelta(days=probe, hours=12 * (probe % 2))
    adapted = connection.ops.adapt_datetimefield_value(at)

    python = {m.id for m in rows if belief.is_current(m, at)}
    orm = set(
        Memory.objects.filter(agent_id="belief-agent")
        .filter(belief.current_q(at))
        .values_list("id", flat=True)
    )
    sql = _sql_ids(belief.current_sql("m"), [adapted, adapted])
    assert python == orm == sql

    believed_py = {m.id for m in rows if belief.is_believed(m)}
    believed_orm = set(
        Memory.objects.filter(agent_id="belief-agent").filter(belief.BELIEVED).values_list("id", flat=True)
    )
    assert believed_py == believed_orm == _sql_ids(belief.believed_sql("m"), [])

    retracted_py = {m.id for m in rows if belief.is_retracted(m.invalidated_by_event)}
    retracted_orm = set(
        Memory.objects.filter(agent_id="belief-agent").filter(belief.RETRACTED).values_list("id", flat=True)
    )
    assert retracted_py == retracted_orm
    assert believed_py | retracted_py | {m.id for m in rows if m.quarantined} == {m.id for m in rows}


def test_a_retracted_row_is_never_believed_and_a_held_row_never_current():
    retracted = Memory(
        quarantined=False, invalidated_by_event="origin_purge", valid_from=None, valid_until=None
    )
    held = Memory(quarantined=True, invalidated_by_event=None, valid_from=None, valid_until=None)
    superseded = Memory(
        quarantined=False, invalidated_by_event="supersede:m_1", valid_from=None, valid_until=BASE
    )
    assert not belief.is_believed(retracted) and not belief.is_current(held, BASE)
    assert belief.is_believed(superseded) and not belief.is_current(superseded, BASE)
    assert belief.is_current(superseded, BASE - timedelta(seconds=1))


@pytest.mark.django_db
def test_approval_effects_supersede_reaffirm_and_new():
    from memory import engine

    a = "belief-effects"
    engine.store_temporal(
        agent_id=a, content="deploy to fly", subject="proj", predicate="deploy", object="fly"
    )
    engine.store_temporal(
        agent_id=a, content="team is blue", subject="team", predicate="colour", object="blue"
    )
    held = [
        Memory(
            id=f"m_held_{k}",
            agent_id=a,
            content=f"held {k}",
            timestamp=BASE,
            created_at=datetime.now(UTC),
            ingested_at=BASE,
            subject=s,
            predicate=p,
            object=o,
            valid_from=None,
            quarantined=True,
        )
        for k, (s, p, o) in enumerate(
            [
                ("proj", "deploy", "vercel"),
                ("team", "colour", "blue"),
                ("new", "thing", "x"),
                (None, None, None),
            ]
        )
    ]
    Memory.objects.bulk_create(held)
    effects = belief.approval_effects(a, held)
    assert [effects[m.id].effect for m in held] == ["supersede", "reaffirm", "new", "new"]
    assert effects["m_held_0"].other.object == "fly"
