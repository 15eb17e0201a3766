"""SPEC B3: knowledge lint - structure, grounding (the registry's value domains), volatile keys, the semantic
check through a local OpenAI-compatible server; three-phase confirmation of a retraction; bounded queries."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from memory import engine
from memory.config import LLMSettings
from memory.dream.lint import SEMANTIC_SCHEMA
from memory.dream.registry import default_registry
from memory.llm import Budget, LLMClient
from memory.models import Memory
from tests.conftest import dt
from tests.fake_llm import FakeLLM
from tests.memory.dream.world import fact, note

pytestmark = pytest.mark.django_db

A = "lint-a"
NOW = dt("2026-03-01T12:00:00")


@pytest.fixture(autouse=True)
def _shipped_registry(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))


def run_lint(**kw):
    with time_machine.travel(NOW, tick=False):
        return engine.lint(agent_id=A, **kw)


def by_rule(report) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in report.findings:
        out.setdefault(f.rule, []).append(f)
    return out


def written(**kw):
    return time_machine.travel(NOW - timedelta(days=2), tick=False)


def test_a_clean_agent_has_no_findings():
    with written():
        fact("ana", "lives_in", "Lisbon", agent_id=A)
        fact("ana", "email", "ana@example.com", agent_id=A)
        fact("ana", "birthday", "1990-04-01", agent_id=A)
        fact("ana", "reports_to", "bea", agent_id=A)
        fact("bea", "reports_to", "cid", agent_id=A)
        note("ana likes quiet offices", agent_id=A)
    report = run_lint()
    assert report.findings == [] and report.counts == {} and report.errors == [] and list(report) == []
    assert report.checked["facts"] == 5


def test_a_reporting_cycle_is_one_finding_naming_its_facts():
    with written():
        ids = [
            fact("ana", "reports_to", "bea", agent_id=A),
            fact("bea", "reports_to", "cid", agent_id=A),
            fact("cid", "mentor_of", "ana", agent_id=A),  # not declared acyclic: not part of the cycle
            fact("Cid", "reports_to", "ANA", agent_id=A),
            fact("dan", "reports_to", "ana", agent_id=A),  # leads into the cycle, not part of it
        ]
    [cycle] = by_rule(run_lint())["cycle"]
    assert cycle.kind == "structure" and cycle.severity == "error"
    assert set(cycle.ids) == {ids[0], ids[1], ids[3]}
    assert "ana -> bea -> cid" in cycle.message and cycle.fix == {"action": "none"}


def test_malformed_triples_and_dangling_derivations():
    with written():
        empty = fact("ana", "lives_in", None, content="Ana lives somewhere", agent_id=A)
        loop = fact("ops team", "part_of", "Ops Team", agent_id=A)
        fact("ana", "note", None, content="an unknown predicate may have no object", agent_id=A)
        source = note("the original observation", agent_id=A)
        derived = fact("ana", "works_at", "Acme", derived_from=[source, "m_missing"], agent_id=A)
        fact("ana", "speaks", "Portuguese", derived_from=[source], agent_id=A)
    found = by_rule(run_lint())
    [e] = found["empty_object"]
    assert e.ids == (empty,) and e.fix == {"action": "retract", "memory_id": empty} and e.high_impact
    [s] = found["self_loop"]
    assert s.ids == (loop,) and s.severity == "error"  # part_of is acyclic
    [d] = found["dangling_derived_from"]
    assert d.ids == (derived,) and "m_missing" in d.message and source not in d.message


def test_grounding_checks_the_registrys_value_domains():
    with written():
        future = fact("bob", "birthday", "2099-01-01", agent_id=A)
        email = fact("bob", "email", "bob(at)example", agent_id=A)
        age = fact("bob", "age", "212", agent_id=A)
        fact("bob", "website", "https://bob.example", agent_id=A)
        fact("cat", "age", "40", agent_id=A)
    found = {f.ids[0]: f for f in by_rule(run_lint())["value_domain"]}
    assert set(found) == {future, email, age}
    assert "in the future" in found[future].message
    assert "not an email address" in found[email].message
    assert "above the maximum 150" in found[age].message
    assert all(f.kind == "grounding" and f.fix["action"] == "retract" for f in found.values())


def test_a_key_with_more_than_five_changes_in_thirty_days_is_volatile():
    for k in range(7):
        with time_machine.travel(NOW - timedelta(days=20 - k), tick=False):
            fact("deploy", "status", f"state {k}", agent_id=A)
    for k in range(5):  # five changes: not volatile
        with time_machine.travel(NOW - timedelta(days=20 - k), tick=False):
            fact("build", "status", f"state {k}", agent_id=A)
    for k in range(7):  # long ago
        with time_machine.travel(NOW - timedelta(days=90 - k), tick=False):
            fact("old", "status", f"state {k}", agent_id=A)
    for k in range(7):  # seven values of a multi-valued predicate (SPEC B3): seven keys, none volatile
        with time_machine.travel(NOW - timedelta(days=20 - k), tick=False):
            fact("ana", "likes", f"dish {k}", agent_id=A)
    [v] = by_rule(run_lint())["volatile_key"]
    assert (
        v.kind == "volatile" and v.severity == "info" and "deploy status changed value 7 times" in v.message
    )


def test_an_alias_of_an_entity_nothing_mentions_is_an_orphan():
    with written():
        engine.alias_add(agent_id=A, canonical="ana", alias="ana b.")
        engine.alias_add(agent_id=A, canonical="ghost", alias="spook")
        fact("ana b.", "lives_in", "Lisbon", agent_id=A)
    [o] = by_rule(run_lint())["orphan_entity"]
    assert "'spook' -> 'ghost'" in o.message and o.severity == "info"


def test_findings_are_limited_but_all_counted():
    with written():
        for k in range(6):
            fact(f"p{k}", "birthday", "2099-01-01", agent_id=A)
    report = run_lint(limit=4)
    assert len(report.findings) == 4 and report.counts == {"value_domain": 6} and report.truncated
    assert [(f.kind, f.severity) for f in report] == [("grounding", "warning")] * 4 and len(report) == 4


def test_lint_reads_in_a_fixed_number_of_queries(django_assert_max_num_queries):
    def grow(n: int, start: int) -> None:
        with written():
            for k in range(start, start + n):
                fact(f"p{k}", "birthday", "2099-01-01" if k % 3 else "1980-01-01", agent_id=A)
                fact(f"p{k}", "reports_to", f"p{k + 1}", agent_id=A, derived_from=["m_gone"])

    grow(10, 0)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as small:
        run_lint()
    grow(200, 10)
    with django_assert_max_num_queries(len(small.captured_queries)):
        report = run_lint()
    assert report.counts["dangling_derived_from"] == 210


# --- three-phase confirmation ------------------------------------------------------------------------------


def test_a_retraction_is_flagged_reviewed_and_committed_only_on_approval():
    with written():
        future = fact("bob", "birthday", "2099-01-01", agent_id=A)
        fact("bob", "birthday_note", "x", agent_id=A)
    engine.dream_mode_set(agent_id=A, mode="apply", actor="user:ada")
    with time_machine.travel(NOW, tick=False):
        run = engine.dream_run(agent_id=A, force=True)
    assert run.phases["consolidate"]["counts"]["applied"] == 0
    [item] = engine.review_list(agent_id=A, kind="lint")
    assert item.payload["fix"] == {"action": "retract", "memory_id": future}
    assert "high-impact" in item.payload["routing"]
    assert engine.get_at(agent_id=A, subject="bob", predicate="birthday", at=NOW).id == future
    with time_machine.travel(NOW + timedelta(minutes=5), tick=False):
        engine.review_decide(item_id=item.id, decision="approve", actor="user:rex", agent_id=A)
    assert engine.get_at(agent_id=A, subject="bob", predicate="birthday", at=NOW) is None
    assert Memory.objects.get(id=future).invalidated_by_event == "curator_retract"


# --- the semantic check (LLM) ------------------------------------------------------------------------------


def client(fake: FakeLLM) -> LLMClient:
    settings = LLMSettings(
        base_url=fake.base_url, model="lint-small", strong_model="lint-strong", timeout_s=5
    )
    return LLMClient(settings, budget=Budget(max_calls=10))


def test_the_semantic_check_keeps_only_ids_it_sent(fake_llm):
    with written():
        a = fact("ana", "lives_in", "Lisbon", agent_id=A)
        b = fact("ana", "works_at", "Lisbon Tram Company (in Berlin)", agent_id=A)
    fake_llm.script(
        FakeLLM.json(
            {
                "findings": [
                    {"ids": [a, b, "m_invented"], "severity": "warning", "message": "works far from home"},
                    {"ids": ["m_other_agent"], "severity": "info", "message": "ignored"},
                ]
            }
        )
    )
    report = run_lint(registry=default_registry(), llm=client(fake_llm))
    [s] = by_rule(report)["semantic"]
    assert set(s.ids) == {a, b} and s.message == "works far from home" and s.kind == "semantic"
    [request] = fake_llm.chat_requests
    assert "lint-small" == request.body["model"] and a in request.message("user")
    assert SEMANTIC_SCHEMA["required"] == ["findings"]


def test_a_failing_semantic_check_is_an_error_in_the_report_not_a_crash(fake_llm):
    with written():
        fact("ana", "lives_in", "Lisbon", agent_id=A)
        fact("ana", "works_at", "Acme", agent_id=A)
    fake_llm.script(FakeLLM.text("this is not json"))
    report = run_lint(llm=client(fake_llm))
    assert report.findings == []
    assert len(report.errors) == 1 and "invalid_json" in report.errors[0]
