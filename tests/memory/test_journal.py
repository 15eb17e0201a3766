"""The query journal (SPEC B8): agent searches are journaled, people's are not; query ids and retention."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from memory import engine
from memory.models import AuditEvent, Feedback, InterestSnapshot, KnowledgeGap, Memory, QueryJournal
from tests.conftest import dt
from tests.memory.conftest import OTHER, A

pytestmark = pytest.mark.django_db


def test_an_agent_search_is_journaled_with_signature_time_and_returned_ids() -> None:
    with time_machine.travel(dt("2030-01-01T09:00:00Z"), tick=False):
        a = engine.store(agent_id=A, content="We deploy acme-web to Vercel").id
        b = engine.store(agent_id=A, content="The acme-web deploy needs approval").id
    with time_machine.travel(dt("2030-01-02T10:00:00Z"), tick=False):
        found = engine.agent_search(agent_id=A, query="What is the DEPLOY target of acme-web?", limit=5)
    row = QueryJournal.objects.get(id=found.query_id)
    assert row.agent_id == A and row.created_at == dt("2030-01-02T10:00:00Z")
    assert row.signature == "acme deploy target web"
    assert row.query == "What is the DEPLOY target of acme-web?"
    assert row.result_ids == [h.id for h in found.hits] and set(row.result_ids) == {a, b}
    assert found.to_dict()["query_id"] == found.query_id and found.to_dict()["gaps"] == []
    # the read is counted like engine.search counts it
    assert Memory.objects.get(id=a).access_count == 1


def test_signatures_ignore_stop_words_case_order_and_punctuation() -> None:
    sig = engine.query_signature
    assert sig("deploy target acme") == sig("What is the Acme deploy target??") == "acme deploy target"
    assert sig("老闆說 台北") == sig("台北，老闆說") == "台北 老闆說"
    assert sig("the of and") == "" and sig("") == ""
    assert len(sig(" ".join(f"word{i}" for i in range(200)))) <= 255


def test_people_and_internal_searches_are_not_journaled() -> None:
    engine.store(agent_id=A, content="quarterly budget review")
    engine.search(agent_id=A, query="budget")
    engine.search(agent_id=A, query="budget", touch=False)
    assert QueryJournal.objects.count() == 0
    engine.agent_search(agent_id=A, query="budget")
    assert QueryJournal.objects.count() == 1


def test_a_search_with_no_hits_is_journaled_too() -> None:
    found = engine.agent_search(agent_id=A, query="nothing matches this")
    assert found.hits == [] and QueryJournal.objects.get(id=found.query_id).result_ids == []


def test_a_verdict_on_a_journaled_search_is_recorded() -> None:
    engine.store(agent_id=A, content="the printer is on floor 3")
    qid = engine.agent_search(agent_id=A, query="printer").query_id
    result = engine.feedback_record(agent_id=A, verdict="+", query_id=qid, actor="token:1")
    assert (result.target_type, result.target_id, result.verdict) == ("query", qid, "CORRECT")
    assert Feedback.objects.get().query_id == qid
    assert AuditEvent.objects.get(action="feedback").details["target_id"] == qid


def test_unknown_another_agents_and_expired_query_ids_are_the_same_not_found() -> None:
    engine.store(agent_id=OTHER, content="their printer")
    theirs = engine.agent_search(agent_id=OTHER, query="printer").query_id
    with time_machine.travel(dt("2030-01-01T00:00:00Z"), tick=False):
        old = engine.agent_search(agent_id=A, query="printer").query_id
    errors = []
    with time_machine.travel(dt("2030-04-02T00:00:00Z"), tick=False):  # 91 days later: past retention
        for qid in (theirs, engine.new_query_id(), old):
            with pytest.raises(engine.EngineError) as caught:
                engine.feedback(agent_id=A, verdict="-", query_id=qid)
            errors.append(caught.value.as_dict())
    assert errors[0] == errors[1] == errors[2]
    assert errors[0] == {"code": "not_found", "message": "no search with that query_id", "field": "query_id"}
    assert Feedback.objects.count() == 0


def test_within_retention_a_query_id_still_takes_feedback() -> None:
    with time_machine.travel(dt("2030-01-01T00:00:00Z"), tick=False):
        qid = engine.agent_search(agent_id=A, query="printer").query_id
    with time_machine.travel(dt("2030-03-31T00:00:00Z"), tick=False):  # day 89
        assert engine.feedback(agent_id=A, verdict="AMBIGUOUS", query_id=qid).verdict == "AMBIGUOUS"


def test_retention_comes_from_the_insights_section(tmp_path, monkeypatch) -> None:
    toml = tmp_path / "memdesk.toml"
    toml.write_text("[insights]\njournal_retention_days = 10\n")
    monkeypatch.setenv("MEMDESK_CONFIG", str(toml))
    with time_machine.travel(dt("2030-01-01T00:00:00Z"), tick=False):
        qid = engine.agent_search(agent_id=A, query="printer").query_id
    with time_machine.travel(dt("2030-01-12T00:00:00Z"), tick=False):
        with pytest.raises(engine.EngineError) as caught:
            engine.feedback(agent_id=A, verdict="+", query_id=qid)
        assert caught.value.code == "not_found"
        assert engine.journal_sweep()["deleted"] == 1


def test_the_sweep_deletes_old_journal_rows_and_keeps_snapshots_gaps_and_feedback() -> None:
    engine.store(agent_id=A, content="where is the invoice archive")
    with time_machine.travel(dt("2030-01-01T09:00:00Z"), tick=False):
        q1 = engine.agent_search(agent_id=A, query="invoice archive").query_id
        engine.feedback(agent_id=A, verdict="-", query_id=q1)
        q2 = engine.agent_search(agent_id=A, query="invoice archive").query_id
        engine.feedback(agent_id=A, verdict="-", query_id=q2)
        engine.profile_snapshot(agent_id=A)
    with time_machine.travel(dt("2030-03-15T09:00:00Z"), tick=False):
        recent = engine.agent_search(agent_id=A, query="invoice archive").query_id
    with time_machine.travel(dt("2030-04-15T09:00:00Z"), tick=False):
        assert engine.journal_sweep() == {"deleted": 2, "agents": 1}
        assert engine.journal_sweep() == {"deleted": 0, "agents": 0}  # safe to run twice
    assert list(QueryJournal.objects.values_list("id", flat=True)) == [recent]
    assert InterestSnapshot.objects.filter(agent_id=A).count() == 1
    assert KnowledgeGap.objects.filter(agent_id=A).count() == 1 and Feedback.objects.count() == 2
    event = AuditEvent.objects.get(action="journal_swept")
    assert (event.agent_id, event.details["rows"]) == (A, 2)


def test_bad_input() -> None:
    with pytest.raises(engine.EngineError) as caught:
        engine.agent_search(agent_id=A, query="x", at=dt("2999-01-01"))
    assert caught.value.code == "invalid_time"
    with pytest.raises(engine.EngineError) as caught:
        engine.agent_search(agent_id=A, query="x", limit=0)
    assert caught.value.code == "invalid_argument"
    with pytest.raises(engine.EngineError) as caught:
        engine.journal_sweep(retention_days=0)
    assert caught.value.field == "retention_days"
    assert QueryJournal.objects.count() == 0


def test_query_text_is_stored_cut_and_on_one_line() -> None:
    found = engine.agent_search(agent_id=A, query="line one\nline two " + "x" * 400)
    stored = QueryJournal.objects.get(id=found.query_id).query
    assert stored.startswith("line one line two ") and len(stored) == 300


def test_agent_search_dates_its_journal_row_with_at() -> None:
    when = dt("2030-01-01T00:00:00Z")
    with time_machine.travel(when + timedelta(days=3), tick=False):
        found = engine.agent_search(agent_id=A, query="x", at=when)
    assert QueryJournal.objects.get(id=found.query_id).created_at == when
