"""SPEC T1–T9: store, supersede, historical segments, reaffirm, history, get_at, generation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from memory import engine
from memory.models import Agent, FactWrite, GraphGeneration, Memory
from tests.conftest import dt
from tests.memory.conftest import A

pytestmark = pytest.mark.django_db


def deploy(obj, *, subject="proj", predicate="deploy_target", content=None, **kw):
    """A write to the key these tests share; unlike the shared ``fact`` it returns the whole result."""
    return engine.store_temporal(
        agent_id=kw.pop("agent_id", A),
        content=content or f"deploy target is {obj}",
        subject=subject,
        predicate=predicate,
        object=obj,
        **kw,
    )


def test_plain_store_is_timestamped_and_not_a_fact():
    r = engine.store(
        agent_id=A, content="met Ann for coffee", layer="episodic", tags=["social"], importance=3
    )
    m = Memory.objects.get(id=r.id)
    assert r.outcome == "stored" and r.id.startswith("m_")
    assert m.subject is None and m.predicate is None and m.valid_until is None
    assert m.tags == ["social"] and m.importance == 3 and m.layer == "episodic"
    assert not FactWrite.objects.filter(memory_id=r.id).exists()


def test_supersede_closes_open_segment_and_links_rows():
    old = deploy("Vercel", valid_from=dt("2026-01-01"), source_event="ev-1", origin="user_direct")
    new = deploy("Cloudflare Workers", valid_from=dt("2026-03-01"), source_event="ev-2", origin="user_direct")
    o, n = Memory.objects.get(id=old.id), Memory.objects.get(id=new.id)
    assert o.valid_until == dt("2026-03-01")
    assert o.superseded_by == n.id and n.supersedes == o.id
    assert o.invalidated_by_event == "ev-2" and o.invalidated_at is not None
    assert n.valid_until is None and n.invalidated_by_event is None
    assert (
        engine.get_at(agent_id=A, subject="proj", predicate="deploy_target", at=dt("2026-02-01")).object
        == "Vercel"
    )
    now = datetime.now(UTC)
    assert (
        engine.get_at(agent_id=A, subject="proj", predicate="deploy_target", at=now).object
        == "Cloudflare Workers"
    )


def test_supersede_without_source_event_still_marks_the_old_row():
    old = deploy("Vercel", valid_from=dt("2026-01-01"))
    new = deploy("Fly", valid_from=dt("2026-02-01"))
    assert Memory.objects.get(id=old.id).invalidated_by_event == f"supersede:{new.id}"


def test_learning_divorce_before_marriage_resolves_at_every_time():
    deploy(
        "divorced",
        subject="ann",
        predicate="marital_status",
        content="Ann divorced",
        valid_from=dt("2020-06-01"),
    )
    deploy(
        "married",
        subject="ann",
        predicate="marital_status",
        content="Ann married",
        valid_from=dt("2015-06-01"),
    )

    def at(day):
        r = engine.get_at(agent_id=A, subject="ann", predicate="marital_status", at=dt(day))
        return r.object if r else None

    assert at("2014-01-01") is None
    assert at("2015-06-01") == "married"
    assert at("2019-12-31") == "married"
    assert at("2020-06-01") == "divorced"
    assert at("2030-01-01") == "divorced"
    history = engine.get_history(agent_id=A, subject="ann", predicate="marital_status")
    assert [h.object for h in history] == ["married", "divorced"]
    assert history[0].valid_until == dt("2020-06-01") and history[1].valid_until is None


def test_historical_write_inside_a_segment_cuts_it_and_keeps_the_current_fact():
    deploy("A", valid_from=dt("2020-01-01"))
    deploy("C", valid_from=dt("2022-01-01"))
    deploy("B", valid_from=dt("2021-01-01"))  # learned late, falls inside A's segment
    objs = {
        h.object: (h.valid_from, h.valid_until)
        for h in engine.get_history(agent_id=A, subject="proj", predicate="deploy_target")
    }
    assert objs == {
        "A": (dt("2020-01-01"), dt("2021-01-01")),
        "B": (dt("2021-01-01"), dt("2022-01-01")),
        "C": (dt("2022-01-01"), None),
    }


def test_bounded_write_inside_open_fact_restores_the_value_after_it():
    deploy("Acme", subject="bob", predicate="employer", content="Bob at Acme", valid_from=dt("2020-01-01"))
    deploy(
        "Beta",
        subject="bob",
        predicate="employer",
        content="Bob at Beta",
        valid_from=dt("2021-01-01"),
        valid_until=dt("2021-06-01"),
    )
    get = lambda d: engine.get_at(agent_id=A, subject="bob", predicate="employer", at=dt(d)).object  # noqa: E731
    assert (get("2020-06-01"), get("2021-03-01"), get("2022-01-01")) == ("Acme", "Beta", "Acme")
    open_rows = Memory.objects.filter(agent_id=A, subject="bob", valid_until__isnull=True)
    assert open_rows.count() == 1 and open_rows.get().metadata["continuation_of"]


def test_reaffirm_creates_no_row_and_records_support():
    first = deploy("Vercel", valid_from=dt("2026-01-01"), origin="agent_derived", confidence=0.5)
    again = deploy("Vercel", valid_from=dt("2026-02-01"), origin="user_direct", source_event="chat-9")
    assert again.outcome == "reaffirmed" and again.id == first.id
    m = Memory.objects.get(id=first.id)
    assert Memory.objects.filter(agent_id=A).count() == 1
    assert m.access_count == 1 and m.confidence == pytest.approx(0.6)
    entry = m.reaffirmed_by[0]
    assert entry["source_event"] == "chat-9" and entry["origin"] == "user_direct"
    assert set(entry) == {"source_event", "origin", "valid_from", "valid_until", "ingested_at"}


def test_reaffirm_confidence_only_for_new_corroborating_classes():
    first = deploy("Vercel", valid_from=dt("2026-01-01"), origin="user_direct", confidence=0.5)
    deploy("Vercel", valid_from=dt("2026-01-02"), origin="agent_derived")  # never corroborates
    deploy("Vercel", valid_from=dt("2026-01-03"), origin="tool_echo")  # never corroborates
    deploy("Vercel", valid_from=dt("2026-01-04"), origin="user:profile")  # same class as user_direct
    assert Memory.objects.get(id=first.id).confidence == pytest.approx(0.5)
    deploy("Vercel", valid_from=dt("2026-01-05"), origin="channel:slack")
    deploy("Vercel", valid_from=dt("2026-01-06"), origin="channel:telegram")  # class already counted
    assert Memory.objects.get(id=first.id).confidence == pytest.approx(0.6)


def test_reaffirm_entries_are_deduplicated_and_capped_at_20():
    first = deploy("Vercel", valid_from=dt("2026-01-01"))
    for _ in range(2):
        deploy("Vercel", valid_from=dt("2026-01-02"), source_event="same", origin="operator")
    assert len(Memory.objects.get(id=first.id).reaffirmed_by) == 1
    for k in range(25):
        deploy("Vercel", valid_from=dt("2026-01-03") + timedelta(hours=k), source_event=f"e{k}")
    entries = Memory.objects.get(id=first.id).reaffirmed_by
    assert len(entries) == 20 and entries[-1]["source_event"] == "e24"


def test_different_content_same_object_is_a_new_row():
    a = deploy("Vercel", valid_from=dt("2026-01-01"), content="we deploy on Vercel")
    b = deploy("Vercel", valid_from=dt("2026-01-02"), content="deploys go to Vercel now")
    assert b.outcome == "stored" and b.id != a.id


def test_history_marks_retracted_and_quarantined_rows_and_is_oldest_first():
    deploy("Vercel", valid_from=dt("2026-01-01"), origin="user_direct")
    deploy("Evil", valid_from=dt("2026-02-01"), origin="channel:spam")
    engine.invalidate_by_origin(agent_id=A, origin="channel:spam")
    hist = engine.get_history(agent_id=A, subject="proj", predicate="deploy_target")
    assert [h.object for h in hist] == ["Vercel", "Evil"]
    assert hist[1].retracted and hist[1].invalidated_by_event == "origin_purge"
    assert hist[0].valid_until is None and not hist[0].retracted
    for h in hist:
        assert h.ingested_at is not None and h.origin and h.origin_trust is not None


def test_get_at_as_of_answers_what_was_believed_then():
    with time_machine.travel(dt("2026-05-01T10:00:00"), tick=False):
        deploy("Vercel", valid_from=dt("2026-01-01"))
    with time_machine.travel(dt("2026-06-01T10:00:00"), tick=False):
        deploy("Cloudflare", valid_from=dt("2026-01-01"))  # correction of the same period
    now_view = engine.get_at(agent_id=A, subject="proj", predicate="deploy_target", at=dt("2026-02-01"))
    then_view = engine.get_at(
        agent_id=A, subject="proj", predicate="deploy_target", at=dt("2026-02-01"), as_of=dt("2026-05-15")
    )
    before = engine.get_at(
        agent_id=A, subject="proj", predicate="deploy_target", at=dt("2026-02-01"), as_of=dt("2026-04-01")
    )
    assert now_view.object == "Cloudflare" and then_view.object == "Vercel" and before is None
    assert then_view.valid_until is None  # as believed in May: still open


def test_times_are_parsed_from_rfc3339_and_naive_times_rejected():
    r = deploy("Vercel", valid_from="2026-01-01T00:00:00Z", valid_until="2026-02-01T00:00:00+08:00")
    m = Memory.objects.get(id=r.id)
    assert m.valid_from == dt("2026-01-01") and m.valid_until == datetime(2026, 1, 31, 16, tzinfo=UTC)
    for bad in (datetime(2026, 1, 1), "2026-01-01T00:00:00", "yesterday"):
        with pytest.raises(engine.EngineError) as err:
            deploy("X", valid_from=bad)
        assert err.value.code == "invalid_time"
    with pytest.raises(engine.EngineError) as err:
        engine.get_at(agent_id=A, subject="proj", predicate="deploy_target", at=datetime(2026, 1, 1))
    assert err.value.code == "invalid_time"


def test_every_triple_write_bumps_the_graph_generation_and_registers_the_agent():
    assert not Agent.objects.filter(agent_id="brand-new").exists()
    deploy("Vercel", agent_id="brand-new", valid_from=dt("2026-01-01"))
    agent = Agent.objects.get(agent_id="brand-new")
    assert agent.team is None
    g1 = engine.graph_generation(agent_id="brand-new")
    deploy("Fly", agent_id="brand-new", valid_from=dt("2026-02-01"))
    assert engine.graph_generation(agent_id="brand-new") == g1 + 1
    engine.store(agent_id="brand-new", content="plain note")
    assert engine.graph_generation(agent_id="brand-new") == g1 + 1
    engine.store(agent_id="plain-only", content="hello")
    assert Agent.objects.filter(agent_id="plain-only").exists()
    assert GraphGeneration.objects.get(agent_id="plain-only").generation == 0


BAD_WRITES = [
    ({"valid_from": datetime(2026, 1, 1)}, "invalid_time"),
    ({"layer": "dreams"}, "invalid_argument"),
    ({"subject": ""}, "invalid_argument"),
    ({"predicate": "   "}, "invalid_argument"),
    ({"content": "x" * (64 * 1024 + 1)}, "content_too_large"),
    ({"agent_id": ""}, "invalid_argument"),
    ({"agent_id": "a" * 129}, "invalid_argument"),
    ({"confidence": 1.5}, "invalid_argument"),
    ({"valid_from": "2026-02-01T00:00:00Z", "valid_until": "2026-01-01T00:00:00Z"}, "invalid_time"),
    ({"derived_from": "m_1"}, "invalid_argument"),
    ({"derived_from": [f"m_{i}" for i in range(101)]}, "too_many_ids"),
    ({"source_event": "origin_purge"}, "invalid_argument"),
    ({"content": "nul\x00byte"}, "invalid_argument"),
]


@pytest.mark.parametrize("override,code", BAD_WRITES)
def test_bad_input_gives_a_stable_code_and_writes_nothing(override, code):
    args = {
        "agent_id": A,
        "content": "deploy target is Vercel",
        "subject": "proj",
        "predicate": "deploy_target",
    }
    args.update(override)
    with pytest.raises(engine.EngineError) as err:
        engine.store_temporal(**args)
    assert err.value.code == code
    assert Memory.objects.count() == 0 and FactWrite.objects.count() == 0 and Agent.objects.count() == 0


def test_plain_store_rejects_bad_input():
    for kw, code in [
        ({"layer": "nope"}, "invalid_argument"),
        ({"content": "y" * 70000}, "content_too_large"),
        ({"agent_id": " "}, "invalid_argument"),
        ({"importance": 11}, "invalid_argument"),
        ({"tags": "notalist"}, "invalid_argument"),
    ]:
        args = {"agent_id": A, "content": "hello", **kw}
        with pytest.raises(engine.EngineError) as err:
            engine.store(**args)
        assert err.value.code == code
    assert Memory.objects.count() == 0


def test_partial_unique_index_allows_one_open_believed_row_per_key():
    from django.db import IntegrityError, transaction

    r = deploy("Vercel", valid_from=dt("2026-01-01"))
    row = Memory.objects.get(id=r.id)
    row.pk = "m_duplicate"
    with pytest.raises(IntegrityError), transaction.atomic():
        row.save(force_insert=True)
    row.quarantined = True  # an inert, quarantined open row does not count
    row.save(force_insert=True)
