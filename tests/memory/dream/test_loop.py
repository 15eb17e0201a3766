"""SPEC B1: the dream loop - five isolated phases, the dual gate and ``force``, dry runs that write nothing but
their report, idempotent reruns, one run per agent, live progress, stale runs abandoned, the report per phase."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.apps import apps

from memory import engine
from memory.dream import loop
from memory.models import (
    AuditEvent,
    Community,
    DiscoveryItem,
    DiscoveryRun,
    DreamRun,
    DreamState,
    EntityEdge,
    FactWrite,
    Memory,
    ReviewItem,
)
from tests.memory.dream import world as w
from tests.memory.dream.world import NOW, A

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_llm(tmp_path, monkeypatch):
    """No memdesk.toml: the heuristic judge, the shipped registry."""
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))


def run(*, force: bool = True, at=NOW, **kw) -> engine.DreamRunRecord:
    with time_machine.travel(at, tick=False):
        return engine.dream_run(agent_id=A, force=force, actor="user:ada", **kw)


def apply_mode(agent_id: str = A) -> None:
    engine.dream_mode_set(agent_id=agent_id, mode="apply", actor="user:ada")


def tables(*, skip=()) -> dict[str, list[str]]:
    """Every row of every table, as text (the dry-run comparison)."""
    out = {}
    for model in apps.get_models():
        if model in skip:
            continue
        fields = [f.attname for f in model._meta.concrete_fields]
        out[model._meta.db_table] = sorted(repr(row) for row in model.objects.values_list(*fields))
    return out


def value_now(subject: str, predicate: str):
    row = engine.get_at(agent_id=A, subject=subject, predicate=predicate, at=NOW)
    return row.id if row else None


# --- the report --------------------------------------------------------------------------------------------


def test_an_empty_agent_runs_every_phase_and_reports_each():
    done = run()
    assert done.status == "done" and done.error == ""
    assert list(done.phases) == list(loop.PHASES)
    for name, phase in done.phases.items():
        assert set(phase) == {"counts", "items", "duration_ms", "errors", "llm_calls", "llm_tokens"}, name
        assert phase["errors"] == [], (name, phase["errors"])
    assert done.phases["orient"]["counts"]["current"] == 0
    assert done.phases["signal"]["counts"]["candidates"] == 0
    assert done.phases["reflect"]["items"] == [
        {"type": "insight", "text": "no current memories: nothing to reflect on"}
    ]
    assert done.phases["consolidate"]["counts"]["judged"] == 0
    assert done.phases["prune"]["counts"]["chosen"] == 0
    assert DreamState.objects.get(agent_id=A).last_dream_at == NOW


def test_an_agent_with_only_plain_memories_merges_duplicates_and_supersedes_a_change():
    apply_mode()
    with time_machine.travel(NOW - timedelta(days=1), tick=False):
        first = w.note("Deploys happen on Tuesday afternoons after the review")
        second = w.note("deploys happen on tuesday afternoons after the review.")
        w.note("The platform team uses Jenkins for every release build")
        w.note("The platform team no longer uses Jenkins for release builds; switched to GitHub Actions")
    done = run()
    assert done.status == "done"
    consolidate = done.phases["consolidate"]
    assert consolidate["errors"] == [] and consolidate["counts"]["judged"] == 2
    assert done.phases["signal"]["counts"]["triples"] == 0
    merged = Memory.objects.get(id=second)
    assert merged.superseded_by == first and merged.invalidated_by_event.startswith(f"dream:{done.id}:")
    assert {i.kind for i in engine.review_list(agent_id=A, status=None)} == {"conflict"}


def test_a_run_reports_what_each_phase_found_and_applies_through_the_engine():
    ids = w.build()
    apply_mode()
    done = run()
    signal, consolidate, prune = (done.phases[p] for p in ("signal", "consolidate", "prune"))
    assert signal["counts"]["candidates_by_rule"] == {"a": 1, "b": 0, "c": 2, "d": 1}
    assert signal["counts"]["lint"] == {"value_domain": 1}
    assert consolidate["counts"]["judged"] == 4 and consolidate["counts"]["lint_items"] == 1
    # MERGE of the respelt value: one current row, the earlier one, reaffirmed
    assert value_now("svc", "deploy_target") == ids["cf_old"]
    # SUPERSEDE under the alias: the later value is current, the old one ends when it starts
    assert value_now("ana b.", "works_at") == ids["ana_new"] and value_now("ana", "works_at") is None
    earlier = engine.get_at(agent_id=A, subject="ana", predicate="works_at", at=w.T0 + timedelta(days=10))
    assert earlier.id == ids["ana_old"]
    # UNSURE and the lint retraction wait for a person
    pending = {(i.kind, tuple(i.memory_ids)) for i in engine.review_list(agent_id=A)}
    assert ("conflict", (ids["carl_a"], ids["carl_b"])) in pending
    assert ("lint", (ids["birthday"],)) in pending
    assert value_now("bob", "birthday") == ids["birthday"]  # nothing retracted without approval
    # prune ended the orphan and the old unread note, deleting nothing
    assert prune["counts"]["ended"] == 2
    for key in ("derived", "old_note"):
        row = Memory.objects.get(id=ids[key])
        assert row.invalidated_by_event == engine.PRUNE_EVENT and row.valid_until == NOW
    # every applied change names the run and the item it came from
    applied = ReviewItem.objects.filter(status="applied")
    assert applied.count() >= 2
    for item in applied:
        event = f"dream:{done.id}:{item.id}"
        assert AuditEvent.objects.filter(action__startswith="verdict_", reason=event).exists()
    assert AuditEvent.objects.filter(
        action="dream_prune", details__source_event__startswith=f"dream:{done.id}:"
    )
    assert AuditEvent.objects.filter(action="dream_run", details__run_id=done.id).count() == 1


def test_a_second_run_over_unchanged_memory_proposes_and_applies_nothing_new():
    w.build()
    apply_mode()
    first = run()
    assert first.phases["consolidate"]["counts"]["applied"] >= 2
    # the run's own records (dream runs, the discovery run's edges and communities) are bookkeeping; what it
    # proposes (review and inbox items) and writes to memory must not change
    bookkeeping = {DreamRun, DreamState, AuditEvent, DiscoveryRun, EntityEdge, Community}
    inbox = DiscoveryItem.objects.count()
    before = (
        tables(skip=bookkeeping),
        ReviewItem.objects.count(),
        FactWrite.objects.count(),
    )
    second = run(at=NOW + timedelta(hours=1))
    counts = second.phases["consolidate"]["counts"]
    assert counts["applied"] == counts["queued"] == 0 and counts["judged"] == 0
    assert second.phases["signal"]["counts"]["already_judged"] >= 1  # the pending pair, unchanged
    assert second.phases["prune"]["counts"]["ended"] == 0
    assert DiscoveryItem.objects.count() == inbox
    after = (
        tables(skip=bookkeeping),
        ReviewItem.objects.count(),
        FactWrite.objects.count(),
    )
    assert after == before
    # the discovery pass audits its own run id and the dream run it ran in (ids differ on PostgreSQL)
    of_run = AuditEvent.objects.filter(details__run_id=second.id).exclude(action="discovery_run")
    assert list(of_run.values_list("action", flat=True)) == ["dream_run"]
    assert list(
        AuditEvent.objects.values_list("action", flat=True).filter(details__dream_run_id=second.id)
    ) == [
        "discovery_run"  # the run's report of its discovery pass, which found nothing new
    ]


# --- dry runs ---------------------------------------------------------------------------------------------


def test_a_dry_run_writes_nothing_but_its_report_and_dry_items():
    ids = w.build()
    assert engine.dream_state(agent_id=A).mode == "dry_run"  # the default of a new agent
    before = tables(skip={DreamRun, DreamState, ReviewItem})
    # the world's purge already proposed its tainted facts for review (pending): the run adds only dry items
    earlier = set(ReviewItem.objects.values_list("id", flat=True))
    assert set(ReviewItem.objects.values_list("kind", flat=True)) <= {"low_confidence"}
    done = run()
    assert done.dry_run and done.status == "done"
    assert tables(skip={DreamRun, DreamState, ReviewItem}) == before
    added = ReviewItem.objects.exclude(id__in=earlier)
    assert set(added.values_list("status", flat=True)) == {"dry"}
    assert added.count() == done.phases["consolidate"]["counts"]["dry"] == 5
    assert ReviewItem.objects.filter(id__in=earlier).exclude(status="pending").count() == 0  # left alone
    assert done.phases["prune"]["counts"] == {"orphans": 1, "stale": 1, "chosen": 2, "ended": 0}
    assert {r.id for r in engine.review_list(agent_id=A)} == earlier  # dry items are not in the queue
    assert value_now("svc", "deploy_target") == ids["cf_new"]
    # a second dry run finds the same and adds nothing; an apply run turns the proposals into real ones
    again = run(at=NOW + timedelta(minutes=5))
    assert again.phases["consolidate"]["counts"]["judged"] == 0 and added.count() == 5
    real = run(at=NOW + timedelta(minutes=10), dry_run=False)
    assert not real.dry_run and real.phases["consolidate"]["counts"]["applied"] >= 2
    assert ReviewItem.objects.filter(status="dry").count() == 0
    assert value_now("svc", "deploy_target") == ids["cf_old"]


def test_the_mode_decides_unless_the_caller_says_and_a_mode_change_is_audited():
    assert run().dry_run
    apply_mode()
    assert not run(at=NOW + timedelta(minutes=1)).dry_run
    assert run(at=NOW + timedelta(minutes=2), dry_run=True).dry_run
    event = AuditEvent.objects.get(action="dream_mode_set")
    assert (event.actor, event.details) == ("user:ada", {"before": "dry_run", "after": "apply"})
    engine.dream_mode_set(agent_id=A, mode="apply", actor="user:ada")  # unchanged: no second event
    assert AuditEvent.objects.filter(action="dream_mode_set").count() == 1
    with pytest.raises(engine.EngineError) as err:
        engine.dream_mode_set(agent_id=A, mode="yolo", actor="user:ada")
    assert err.value.code == "invalid_argument"


# --- the gate ---------------------------------------------------------------------------------------------


def sessions(n: int, at, prefix: str = "s") -> None:
    with time_machine.travel(at, tick=False):
        for k in range(n):
            w.note(f"{prefix} {k}: a question about invoices", session_id=f"{prefix}-{k}")


def test_the_dual_gate_needs_a_day_and_five_sessions_and_force_overrides_it():
    sessions(4, NOW - timedelta(days=3))
    gate = engine.dream_gate(agent_id=A, at=NOW)
    assert not gate.open and gate.sessions_since == 4 and "needs 5" in gate.reason
    with pytest.raises(engine.EngineError) as err:
        run(force=False)
    assert err.value.code == "gate_closed" and not DreamRun.objects.exists()
    sessions(1, NOW - timedelta(days=2), prefix="t")
    assert engine.dream_gate(agent_id=A, at=NOW).open
    assert run(force=False).status == "done"
    # right after a run: closed by time even with new sessions
    sessions(6, NOW + timedelta(hours=2), prefix="u")
    gate = engine.dream_gate(agent_id=A, at=NOW + timedelta(hours=3))
    assert not gate.open and gate.sessions_since == 6 and "24 h" in gate.reason
    assert run(at=NOW + timedelta(hours=3)).force  # force overrides
    later = NOW + timedelta(hours=28)
    assert not engine.dream_gate(agent_id=A, at=later).open  # the forced run reset the clock and sessions
    sessions(5, NOW + timedelta(hours=27), prefix="v")
    assert engine.dream_gate(agent_id=A, at=later).open


# --- isolation, progress, one run at a time ----------------------------------------------------------------


def test_a_phase_that_fails_is_reported_and_the_next_phases_still_run(monkeypatch):
    ids = w.build()
    apply_mode()

    def broken(ctx, report):
        raise RuntimeError("the signal phase broke")

    monkeypatch.setitem(loop.PHASE_FUNCS, "signal", broken)
    done = run()
    assert done.status == "done"
    assert done.phases["signal"]["errors"] == ["signal failed: RuntimeError: the signal phase broke"]
    assert list(done.phases) == list(loop.PHASES)
    assert done.phases["reflect"]["errors"] == [] and done.phases["reflect"]["counts"]["current"] > 0
    assert done.phases["consolidate"]["counts"]["judged"] == 0  # nothing was signalled
    assert done.phases["prune"]["counts"]["ended"] == 2  # prune still ran
    assert Memory.objects.get(id=ids["old_note"]).invalidated_by_event == engine.PRUNE_EVENT


def test_a_failing_step_inside_a_phase_leaves_the_rest_of_the_phase(monkeypatch):
    w.build()

    def broken_lint(**kwargs):
        raise ValueError("lint exploded")

    monkeypatch.setattr(loop, "lint", broken_lint)
    done = run()
    signal = done.phases["signal"]
    assert signal["errors"] == ["lint failed: ValueError: lint exploded"]
    assert signal["counts"]["candidates"] == 4  # the contradiction scan ran anyway


def test_progress_is_readable_while_the_run_works(monkeypatch):
    w.build()
    seen = []
    reflect = loop.PHASE_FUNCS["reflect"]

    def watching(ctx, report):
        seen.append(engine.dream_run_get(agent_id=A, run_id=ctx.run.id))
        reflect(ctx, report)

    monkeypatch.setitem(loop.PHASE_FUNCS, "reflect", watching)
    done = run()
    [mid] = seen
    assert mid.status == "running" and mid.phase == "reflect"
    assert set(mid.phases) == {"orient", "signal"}  # earlier phases' reports are already stored
    assert mid.heartbeat_at == NOW
    assert done.phase == "" and done.finished_at == NOW


def test_one_run_per_agent_and_a_stale_run_is_abandoned():
    with time_machine.travel(NOW, tick=False):
        started = engine.dream_start(agent_id=A, force=True, actor="user:ada")
        with pytest.raises(engine.EngineError) as err:
            engine.dream_run(agent_id=A, force=True, actor="user:bea")
    assert err.value.code == "already_running" and err.value.details["run_id"] == started.id
    assert not engine.dream_gate(agent_id=A, at=NOW).open
    # another agent is not blocked
    with time_machine.travel(NOW, tick=False):
        assert engine.dream_run(agent_id="dream-b", force=True).status == "done"
    # the worker of the first run died: past the heartbeat limit the next start abandons it
    later = NOW + timedelta(seconds=engine.HEARTBEAT_STALE_SECS + 1)
    done = run(at=later)
    assert done.status == "done"
    old = DreamRun.objects.get(id=started.id)
    assert old.status == "abandoned" and "abandoned" in old.error and old.finished_at == later


def test_executing_a_run_twice_does_nothing_the_second_time():
    w.build()
    apply_mode()
    done = run()
    snapshot = tables()
    with time_machine.travel(NOW + timedelta(minutes=1), tick=False):
        again = loop.execute(run_id=done.id)
    assert again.status == "done" and again.id == done.id
    assert tables() == snapshot


def test_another_agents_run_is_not_found():
    done = run()
    with pytest.raises(engine.EngineError) as err:
        engine.dream_run_get(agent_id="dream-b", run_id=done.id)
    assert err.value.code == "not_found"
    assert engine.dream_runs(agent_id="dream-b") == []
    assert [r.id for r in engine.dream_runs(agent_id=A)] == [done.id]


def test_the_signal_samples_every_rule_so_a_backlog_never_hides_a_conflict():
    with time_machine.travel(NOW - timedelta(days=1), tick=False):
        for k in range(6):  # six respelt values: rule (a), first in the scan's order
            w.fact(f"svc{k}", "deploy_target", "Cloudflare Workers", valid_from=w.T0)
            w.fact(f"svc{k}", "deploy_target", "cloudflare workers (CF)", valid_from=w.T0 + timedelta(days=1))
        engine.alias_add(agent_id=A, canonical="carl", alias="carl m.")
        carl = (
            w.fact("carl", "lives_in", "Paris", valid_from=w.T0),
            w.fact("carl m.", "lives_in", "London", valid_from=w.T0),
        )
    with time_machine.travel(NOW, tick=False):
        started = engine.dream_start(agent_id=A, force=True)
        done = loop.execute(run_id=started.id, limits=loop.Limits(signal_pairs=3))
    counts = done.phases["signal"]["counts"]
    assert counts["candidates_found"] == 7 and counts["more_candidates"]
    assert counts["candidates_by_rule"] == {"a": 2, "b": 0, "c": 1, "d": 0}
    assert {tuple(i.memory_ids) for i in ReviewItem.objects.filter(kind="conflict")} >= {carl}


def test_plain_memories_are_scanned_apart_from_facts(monkeypatch):
    monkeypatch.setattr(loop, "SCAN_FACTOR", 1)  # each scan keeps exactly signal_pairs candidates
    with time_machine.travel(NOW - timedelta(days=1), tick=False):
        for k in range(4):
            w.fact(f"svc{k}", "deploy_target", "Cloudflare Workers", valid_from=w.T0)
            w.fact(f"svc{k}", "deploy_target", "cloudflare workers (CF)", valid_from=w.T0 + timedelta(days=1))
        notes = (
            w.note("The platform team uses Jenkins for every release build"),
            w.note("The platform team no longer uses Jenkins for release builds; switched to GitHub Actions"),
        )
    with time_machine.travel(NOW, tick=False):
        started = engine.dream_start(agent_id=A, force=True)
        done = loop.execute(run_id=started.id, limits=loop.Limits(signal_pairs=3))
    counts = done.phases["signal"]["counts"]
    assert counts["candidates_by_rule"] == {"a": 2, "b": 0, "c": 0, "d": 1} and counts["more_candidates"]
    assert notes in {tuple(i.memory_ids) for i in ReviewItem.objects.filter(kind="conflict")}


def test_the_graph_signal_needs_fifty_triples_then_names_hubs_and_orphans():
    with time_machine.travel(NOW - timedelta(days=1), tick=False):
        for k in range(49):
            w.fact(f"customer{k}", "uses_tool", "Zendesk")
    small = run()
    assert small.phases["signal"]["counts"]["graph"] == "skipped: fewer than 50 triples"
    with time_machine.travel(NOW - timedelta(days=1), tick=False):
        w.fact("customer0", "lives_in", "Lisbon")
    big = run(at=NOW + timedelta(minutes=1))
    counts = big.phases["signal"]["counts"]
    assert counts["triples"] == 50 and counts["hubs"] == 10 and counts["orphans"] == 49
    hubs = [i for i in big.phases["signal"]["items"] if i["type"] == "hub"]
    assert hubs[0] == {"type": "hub", "entity": "zendesk", "score": hubs[0]["score"], "facts": 49}
    assert [i["type"] for i in big.phases["signal"]["items"]].count("orphan") == 5


def test_reflect_reports_knowledge_gaps_from_a_registered_finder(monkeypatch):
    monkeypatch.setattr(loop, "_GAP_FINDERS", [])
    assert run().phases["reflect"]["counts"]["knowledge_gaps"] == "no gap finder registered"

    def finder(agent_id: str) -> list[dict]:
        return [{"signature": f"refund window {agent_id}", "failures": 2}]

    loop.register_gap_finder(finder)
    loop.register_gap_finder(finder)  # once only
    reflect = run(at=NOW + timedelta(minutes=1)).phases["reflect"]
    assert reflect["counts"]["knowledge_gaps"] == 1
    assert {"type": "gap", "signature": f"refund window {A}", "failures": 2} in reflect["items"]
