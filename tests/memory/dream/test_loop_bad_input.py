"""SPEC B0/B1 bad input: a run with the LLM endpoint down, slow, returning invalid JSON or an out-of-range verdict,
out of budget, or with a malformed registry file completes with the affected phase's error in its report and
nothing half-applied: every conflict the LLM should have judged waits for a person, its rows untouched."""

from __future__ import annotations

import json
import socket

import pytest
import time_machine

from memory import engine
from memory.models import Memory, ReviewItem
from tests.fake_llm import FakeLLM
from tests.memory.dream import world as w
from tests.memory.dream.world import NOW, A

pytestmark = pytest.mark.django_db

EMPTY_LINT = {"findings": []}


def configure(tmp_path, monkeypatch, *, registry: str | None = None, **llm) -> None:
    lines = []
    if llm:
        lines.append("[llm]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in llm.items()]
    if registry is not None:
        (tmp_path / "predicates.toml").write_text(registry, encoding="utf-8")
        lines += ["[registry]", 'path = "predicates.toml"']
    path = tmp_path / "memdesk.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("MEMDESK_CONFIG", str(path))


def dream() -> engine.DreamRunRecord:
    engine.dream_mode_set(agent_id=A, mode="apply", actor="user:ada")
    with time_machine.travel(NOW, tick=False):
        return engine.dream_run(agent_id=A, force=True)


def conflict_items() -> dict[tuple[str, ...], ReviewItem]:
    return {tuple(i.memory_ids): i for i in ReviewItem.objects.filter(agent_id=A, kind="conflict")}


def assert_llm_pairs_wait_untouched(ids: dict[str, str]) -> None:
    """The three pairs the LLM judges (the MERGE is the heuristic's) are pending, their rows as proposed."""
    items = conflict_items()
    for pair in (("carl_a", "carl_b"), ("ana_old", "ana_new"), ("jenkins_old", "jenkins_new")):
        item = items[(ids[pair[0]], ids[pair[1]])]
        assert item.status == "pending", (pair, item.status)
        assert item.payload["fallback"] is True and item.payload["llm_error"]
        rows = list(Memory.objects.filter(id__in=item.memory_ids))
        assert engine.state_fingerprint(rows) == item.state  # nothing applied to them
    merge = items[(ids["cf_old"], ids["cf_new"])]
    assert merge.status == "applied" and merge.judge == "heuristic"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_llm_down(tmp_path, monkeypatch):
    configure(tmp_path, monkeypatch, base_url=f"http://127.0.0.1:{closed_port()}/v1", model="m", timeout_s=2)
    ids = w.build()
    run = dream()
    assert run.status == "done"
    assert any("semantic lint: LLM connection" in e for e in run.phases["signal"]["errors"])
    errors = run.phases["consolidate"]["errors"]
    assert "LLM connection: the LLM is not asked again in this run" in errors
    assert "LLM connection on 3 pair(s): the heuristic verdict waits for review" in errors
    assert_llm_pairs_wait_untouched(ids)
    assert run.phases["prune"]["counts"]["ended"] == 2  # the other phases did their work


def test_llm_slow_beyond_its_timeout(tmp_path, monkeypatch, fake_llm):
    configure(tmp_path, monkeypatch, base_url=fake_llm.base_url, model="m", timeout_s=0.3)
    fake_llm.script(*[FakeLLM.slow() for _ in range(6)])
    ids = w.build()
    run = dream()
    assert run.status == "done"
    assert (
        "LLM timeout on 3 pair(s): the heuristic verdict waits for review"
        in run.phases["consolidate"]["errors"]
    )
    assert (
        len(fake_llm.chat_requests) == 2
    )  # one semantic lint call, one judge call: then the run stops asking
    assert_llm_pairs_wait_untouched(ids)


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        (FakeLLM.text("I think they are the same, probably."), "invalid_json"),
        (FakeLLM.json({"verdict": "MAYBE", "confidence": 3, "reason": "out of range"}), "schema"),
        (FakeLLM.hostile(), "schema"),
    ],
)
def test_llm_replies_that_are_not_verdicts(tmp_path, monkeypatch, fake_llm, reply, code):
    configure(tmp_path, monkeypatch, base_url=fake_llm.base_url, model="m", timeout_s=5)
    fake_llm.script(FakeLLM.json(EMPTY_LINT), FakeLLM.json(EMPTY_LINT), reply, reply, reply)
    ids = w.build()
    run = dream()
    assert run.status == "done"
    assert (
        f"LLM {code} on 3 pair(s): the heuristic verdict waits for review"
        in run.phases["consolidate"]["errors"]
    )
    assert run.phases["consolidate"]["llm_calls"] == 3 and run.llm_calls == 5
    assert_llm_pairs_wait_untouched(ids)


def test_an_exhausted_budget_stops_asking(tmp_path, monkeypatch, fake_llm):
    configure(tmp_path, monkeypatch, base_url=fake_llm.base_url, model="m", max_calls_per_run=2)
    fake_llm.script(FakeLLM.json(EMPTY_LINT), FakeLLM.json(EMPTY_LINT))
    ids = w.build()
    run = dream()
    assert run.llm_calls == 2 and run.phases["signal"]["llm_calls"] == 2
    assert (
        "LLM budget_exhausted: the LLM is not asked again in this run" in run.phases["consolidate"]["errors"]
    )
    assert_llm_pairs_wait_untouched(ids)


def test_llm_verdicts_are_counted_and_routed(tmp_path, monkeypatch, fake_llm):
    configure(tmp_path, monkeypatch, base_url=fake_llm.base_url, model="judge", timeout_s=5)
    fake_llm.script(
        FakeLLM.json(EMPTY_LINT, prompt_tokens=100, completion_tokens=5),
        FakeLLM.json(EMPTY_LINT, prompt_tokens=100, completion_tokens=5),
        *[FakeLLM.verdict("COEXIST", 0.95, "two different things", prompt_tokens=50, completion_tokens=10)]
        * 3,
    )
    ids = w.build()
    run = dream()
    consolidate = run.phases["consolidate"]
    assert consolidate["errors"] == [] and consolidate["llm_calls"] == 3 and consolidate["llm_tokens"] == 180
    assert (run.llm_calls, run.llm_tokens) == (5, 390)
    items = conflict_items()
    carl = items[
        (ids["carl_a"], ids["carl_b"])
    ]  # the heuristic was unsure: COEXIST applies (nothing changes)
    assert (carl.status, carl.judge, carl.payload["action"]["verdict"]) == ("applied", "llm:judge", "COEXIST")
    ana = items[(ids["ana_old"], ids["ana_new"])]  # the heuristic said SUPERSEDE: the verdicts disagree
    assert ana.status == "pending" and ana.payload["routing"] == "verdicts on these memories disagree"


def test_a_malformed_registry_file_is_reported_and_the_shipped_one_used(tmp_path, monkeypatch):
    configure(tmp_path, monkeypatch, registry="[predicates.lives_in\ntype = ")
    w.build()
    run = dream()
    assert run.status == "done"
    [error] = run.phases["signal"]["errors"]
    assert error.startswith("registry:") and "not valid TOML" in error
    assert run.phases["signal"]["counts"]["candidates"] == 4
    assert run.phases["consolidate"]["counts"]["applied"] >= 2
