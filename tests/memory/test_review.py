"""SPEC B7, D2: review items - proposal without duplicates, decisions (exactly one wins), stale items, undo and
revert that restore reads exactly, reminders that never decide, the policy and its calibration."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
import time_machine

from memory import engine
from memory.engine import review_policy
from memory.models import AuditEvent, FactWrite, Memory, ReviewItem, ReviewPolicy
from tests.conftest import dt
from tests.memory.conftest import OTHER, A, fact

pytestmark = pytest.mark.django_db

T1, T2, T3 = dt("2026-01-10"), dt("2026-03-01"), dt("2026-06-01")


def conflict(old: str, new: str, *, verdict: str = "MERGE", confidence: float = 0.6, agent: str = A):
    rows = list(Memory.objects.filter(id__in=[old, new]))
    state = engine.state_fingerprint(rows)
    return engine.Proposal(
        kind="conflict",
        fingerprint=hashlib.sha256(f"a|{old}|{new}|{state}".encode()).hexdigest()[:32],
        title=f"{verdict}?",
        payload={"action": {"verdict": verdict, "old_id": old, "new_id": new}},
        memory_ids=[old, new],
        confidence=confidence,
        state=state,
        verdict_type=f"conflict:{verdict}",
    )


def pair(agent: str = A) -> tuple[str, str]:
    with time_machine.travel(T3, tick=False):
        old = fact("proj", "deploy_target", "Cloudflare Workers", valid_from=T1, agent_id=agent)
        new = fact("proj", "deploy_target", "cloudflare workers (CF)", valid_from=T2, agent_id=agent)
    return old, new


def now_value(agent: str = A):
    r = engine.get_at(agent_id=agent, subject="proj", predicate="deploy_target", at=T3 + timedelta(days=1))
    return r.id if r else None


def test_a_proposal_is_made_once_and_a_dry_one_becomes_real_later():
    old, new = pair()
    p = conflict(old, new)
    dry = engine.review_propose(agent_id=A, proposal=p, dry=True)
    assert dry.item.status == "dry"
    assert engine.review_propose(agent_id=A, proposal=p, dry=True).item is None  # a dry rerun: nothing new
    assert engine.review_list(agent_id=A) == []  # dry items are not in the queue
    real = engine.review_propose(agent_id=A, proposal=p)
    assert real.item.id == dry.item.id and real.item.status == "pending"
    assert engine.review_propose(agent_id=A, proposal=p).item is None
    assert ReviewItem.objects.count() == 1


def test_approving_a_conflict_applies_the_verdict_and_undo_restores_it():
    old, new = pair()
    item = engine.review_propose(agent_id=A, proposal=conflict(old, new)).item
    assert now_value() == new
    with time_machine.travel(T3 + timedelta(hours=1), tick=False):
        decided = engine.review_decide(item_id=item.id, decision="approve", actor="user:rex")
        assert decided.status == "approved" and now_value() == old
        undone = engine.review_undo(item_id=item.id, actor="user:rex")
    assert undone.status == "pending" and undone.claimed_by == "user:rex"
    assert now_value() == new
    assert AuditEvent.objects.filter(action="review_approved").count() == 1
    assert AuditEvent.objects.filter(action="review_undo").count() == 1


def test_edit_then_approve_writes_the_corrected_value_and_bad_edits_write_nothing():
    old, new = pair()
    item = engine.review_propose(agent_id=A, proposal=conflict(old, new, verdict="UNSURE")).item
    writes = FactWrite.objects.count()
    for bad in (
        {"verdict": "MAYBE"},
        {"verdict": "MERGE", "content": ""},
        {"verdict": "MERGE", "content": "x\x00"},
    ):
        with pytest.raises(engine.EngineError) as err:
            engine.review_decide(item_id=item.id, decision="approve", actor="user:rex", edited=bad)
        assert err.value.code == "invalid_edit"
    with pytest.raises(engine.EngineError) as err:  # UNSURE cannot be approved as is
        engine.review_decide(item_id=item.id, decision="approve", actor="user:rex")
    assert err.value.code == "invalid_edit"
    assert FactWrite.objects.count() == writes and ReviewItem.objects.get().status == "pending"
    with time_machine.travel(T3 + timedelta(hours=1), tick=False):
        engine.review_decide(
            item_id=item.id,
            decision="approve",
            actor="user:rex",
            edited={
                "verdict": "MERGE",
                "content": "proj deploys to Cloudflare Workers",
                "object": "Cloudflare Workers",
            },
        )
    r = engine.get_at(agent_id=A, subject="proj", predicate="deploy_target", at=T3 + timedelta(days=1))
    assert r.object == "Cloudflare Workers" and r.origin == "operator:review"


def test_reject_needs_a_reason_and_a_decision_is_final():
    old, new = pair()
    item = engine.review_propose(agent_id=A, proposal=conflict(old, new)).item
    with pytest.raises(engine.EngineError) as err:
        engine.review_decide(item_id=item.id, decision="reject", actor="user:rex", reason=" ")
    assert err.value.code == "invalid_argument"
    engine.review_decide(item_id=item.id, decision="reject", actor="user:rex", reason="not the same value")
    assert now_value() == new  # reject changes nothing
    with pytest.raises(engine.EngineError) as err:
        engine.review_decide(item_id=item.id, decision="approve", actor="user:cora")
    assert err.value.code == "already_decided"


def test_a_claimed_item_is_refused_to_others_and_another_agents_item_is_not_found():
    old, new = pair()
    item = engine.review_propose(agent_id=A, proposal=conflict(old, new)).item
    engine.review_claim(item_id=item.id, actor="user:rex")
    with pytest.raises(engine.EngineError) as err:
        engine.review_decide(item_id=item.id, decision="approve", actor="user:cora")
    assert err.value.code == "claimed_by_other" and err.value.details["holder"] == "user:rex"
    with pytest.raises(engine.EngineError) as err:
        engine.review_decide(item_id=item.id, decision="approve", actor="user:rex", agent_id=OTHER)
    assert err.value.code == "not_found"
    engine.review_release(item_id=item.id, actor="user:rex")
    engine.review_decide(item_id=item.id, decision="approve", actor="user:cora")


def test_a_stale_item_is_refused_marked_and_nothing_is_applied():
    old, new = pair()
    item = engine.review_propose(agent_id=A, proposal=conflict(old, new)).item
    with time_machine.travel(T3 + timedelta(hours=1), tick=False):
        fact("proj", "deploy_target", "fly.io")  # the pair's newer row is superseded meanwhile
    with pytest.raises(engine.EngineError) as err:
        engine.review_decide(item_id=item.id, decision="approve", actor="user:rex")
    assert err.value.code == "stale"
    assert ReviewItem.objects.get().status == "stale"
    assert (
        engine.get_at(agent_id=A, subject="proj", predicate="deploy_target", at=dt("2030-01-01")).object
        == "fly.io"
    )


def test_revert_after_the_window_is_a_new_decision():
    old, new = pair()
    item = engine.review_propose(agent_id=A, proposal=conflict(old, new, confidence=0.95), auto_apply=True)
    assert item.applied and now_value() == old
    with pytest.raises(engine.EngineError) as err:
        engine.review_undo(item_id=item.item.id, actor="user:rex")
    assert err.value.code == "undo_not_yours"
    reverted = engine.review_revert(item_id=item.item.id, actor="user:rex", reason="they differ")
    assert reverted.status == "rejected" and reverted.decided_by == "user:rex" and now_value() == new


def test_past_the_ttl_an_item_is_reminded_once_and_stays_pending():
    old, new = pair()
    with time_machine.travel(T3, tick=False):
        item = engine.review_propose(agent_id=A, proposal=conflict(old, new)).item
    with time_machine.travel(T3 + timedelta(days=6), tick=False):
        assert engine.review_sweep() == {"reminded": 0}
    with time_machine.travel(T3 + timedelta(days=8), tick=False):
        assert engine.review_sweep() == {"reminded": 1}
        assert engine.review_sweep() == {"reminded": 0}
    assert engine.review_get(agent_id=A, item_id=item.id).status == "pending"


def test_bulk_decides_each_item_and_reports_the_held_ones():
    items = []
    for k in range(3):
        with time_machine.travel(T3, tick=False):
            a = fact(f"p{k}", "deploy_target", "Fly", valid_from=T1)
            b = fact(f"p{k}", "deploy_target", "fly", valid_from=T2)
        items.append(engine.review_propose(agent_id=A, proposal=conflict(a, b)).item)
    engine.review_claim(item_id=items[1].id, actor="user:cora")
    out = engine.review_bulk(
        agent_id=A, item_ids=[i.id for i in items], decision="reject", actor="user:rex", reason="duplicate"
    )
    assert [(o.outcome, o.code, o.holder) for o in out] == [
        ("rejected", "", ""),
        ("skipped", "claimed_by_other", "user:cora"),
        ("rejected", "", ""),
    ]
    assert AuditEvent.objects.filter(action="review_rejected").count() == 2


def test_routing_follows_confidence_impact_run_size_and_kind():
    assert review_policy.route(
        kind="conflict", verdict_type="t", confidence=0.9, impact=1, applied_in_run=0
    ).auto_apply
    assert not review_policy.route(
        kind="conflict", verdict_type="t", confidence=0.8, impact=1, applied_in_run=0
    ).auto_apply
    assert not review_policy.route(
        kind="conflict", verdict_type="t", confidence=0.9, impact=5, applied_in_run=0
    ).auto_apply
    assert not review_policy.route(
        kind="conflict", verdict_type="t", confidence=0.9, impact=1, applied_in_run=20
    ).auto_apply
    assert not review_policy.route(
        kind="attitude", verdict_type="t", confidence=1.0, impact=0, applied_in_run=0
    ).auto_apply
    assert not review_policy.route(
        kind="conflict", verdict_type="t", confidence=0.9, impact=1, applied_in_run=0, disputed=True
    ).auto_apply


def test_impact_counts_ended_rows_edges_dependents_and_wiki_pointers():
    with time_machine.travel(T3, tick=False):
        base = fact("proj", "deploy_target", "fly")
        fact("proj", "region", "ams", derived_from=[base])
        pointer = fact("wiki:auto/sop/deploy", "documented_in", "auto/sop/deploy")
    index = review_policy.impact_index(A)
    rows = {m.id: m for m in Memory.objects.all()}
    assert review_policy.impact(index, [rows[base]]) == 1 + 1 + 2  # the row, one dependent, two edges
    assert review_policy.impact(index, [rows[pointer]]) >= review_policy.IMPACT_THRESHOLD


def _decide_many(n: int, reject_every: int, vtype: str, start: int = 0) -> None:
    for k in range(start, start + n):
        with time_machine.travel(T3, tick=False):
            a = fact(f"c{vtype}{k}", "deploy_target", "Fly", valid_from=T1)
            b = fact(f"c{vtype}{k}", "deploy_target", "fly", valid_from=T2)
        p = conflict(a, b)
        p = engine.Proposal(**{**p.__dict__, "verdict_type": vtype})
        item = engine.review_propose(agent_id=A, proposal=p).item
        if reject_every and k % reject_every == 0:
            engine.review_decide(item_id=item.id, decision="reject", actor="user:rex", reason="no")
        else:
            engine.review_decide(item_id=item.id, decision="approve", actor="user:rex")


def test_calibration_raises_on_rejections_lowers_on_approvals_and_is_audited():
    _decide_many(20, 4, "conflict:MERGE")  # 5 of 20 rejected: 25 % > 20 %
    assert ReviewPolicy.objects.get(verdict_type="conflict:MERGE").auto_apply_confidence == pytest.approx(
        0.85
    )
    _decide_many(19, 0, "conflict:MERGE", start=100)  # not yet 20 new decisions: unchanged
    assert ReviewPolicy.objects.get(verdict_type="conflict:MERGE").auto_apply_confidence == pytest.approx(
        0.85
    )
    _decide_many(1, 0, "conflict:MERGE", start=200)  # 20 approvals: lower
    assert ReviewPolicy.objects.get(verdict_type="conflict:MERGE").auto_apply_confidence == pytest.approx(
        0.80
    )
    changes = AuditEvent.objects.filter(action="review_threshold_changed").order_by("id")
    assert [(e.details["before"], e.details["after"]) for e in changes] == [(0.8, 0.85), (0.85, 0.8)]
