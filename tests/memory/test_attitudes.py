"""Attitudes (SPEC B6): ten categories, versions kept with ``superseded_at``, decay unless reaffirmed, and every
change through the review queue (approve writes a version; reject, undo and revert leave or restore it exactly)."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
import time_machine

from memory import engine
from memory.models import ATTITUDE_CATEGORIES, Attitude, AuditEvent, ReviewItem
from tests.conftest import dt
from tests.memory.conftest import OTHER, A

pytestmark = pytest.mark.django_db

T0 = dt("2030-01-01T09:00:00Z")


def propose(statement: str, category: str = "testing_philosophy", confidence: float = 0.8, **kw):  # noqa: ANN201
    return engine.attitude_propose(
        agent_id=A, category=category, statement=statement, confidence=confidence, actor="token:1", **kw
    )


def approve(item_id: int, who: str = "user:rex"):  # noqa: ANN201
    return engine.review_decide(item_id=item_id, decision="approve", actor=who, reason="agreed")


def state() -> list[tuple]:
    return list(
        Attitude.objects.order_by("id").values_list(
            "id", "category", "version", "statement", "confidence", "affirmed_at", "superseded_at"
        )
    )


def test_a_proposal_waits_for_review_and_writes_nothing_until_approved() -> None:
    with time_machine.travel(T0, tick=False):
        proposal = propose("Write the failing test first", evidence=["three regressions last sprint"])
    assert proposal.outcome == "proposed" and Attitude.objects.count() == 0
    item = ReviewItem.objects.get(id=proposal.item_id)
    assert (item.kind, item.status, item.confidence) == ("attitude", "pending", 0.8)
    assert item.payload["new"] == {
        "statement": "Write the failing test first",
        "confidence": 0.8,
        "evidence": ["three regressions last sprint"],
    }
    assert item.payload["old"] is None and engine.attitudes(agent_id=A) == []
    # the same proposal again is not a second item
    assert propose("Write the failing test first").outcome == "already_proposed"
    assert ReviewItem.objects.count() == 1


def test_approval_writes_a_version_and_a_new_one_supersedes_without_erasing() -> None:
    with time_machine.travel(T0, tick=False):
        approve(propose("Write the failing test first").item_id)
    with time_machine.travel(T0 + timedelta(days=10), tick=False):
        second = propose("Property tests for every parser", confidence=0.9)
        assert (
            ReviewItem.objects.get(id=second.item_id).payload["old"]["statement"]
            == "Write the failing test first"
        )
        approve(second.item_id, who="user:cora")
    current = engine.attitudes(agent_id=A, at=T0 + timedelta(days=10))
    assert [(a.version, a.statement, a.approved_by, a.proposed_by) for a in current] == [
        (2, "Property tests for every parser", "user:cora", "token:1")
    ]
    history = engine.attitudes(agent_id=A, history=True, at=T0 + timedelta(days=10))
    assert [(a.version, a.current, a.superseded_at) for a in history] == [
        (2, True, None),
        (1, False, T0 + timedelta(days=10)),
    ]
    assert history[1].statement == "Write the failing test first"  # the old version is kept as it was


def test_reject_changes_nothing() -> None:
    proposal = propose("Skip tests on Fridays")
    before = state()
    engine.review_decide(item_id=proposal.item_id, decision="reject", actor="user:rex", reason="wrong")
    assert state() == before == []


def test_undo_and_revert_restore_exactly() -> None:
    with time_machine.travel(T0, tick=False):
        approve(propose("Write the failing test first").item_id)
    before = state()
    with time_machine.travel(T0 + timedelta(days=1), tick=False):
        item = propose("Mutation testing on the core", confidence=0.7).item_id
        approve(item)
        assert len(state()) == 2
        engine.review_undo(item_id=item, actor="user:rex")
    assert state() == before
    with time_machine.travel(T0 + timedelta(days=2), tick=False):
        approve(item)
    with time_machine.travel(T0 + timedelta(days=3), tick=False):
        engine.review_revert(item_id=item, actor="user:cora", reason="outdated")
    assert state() == before
    assert ReviewItem.objects.get(id=item).status == "rejected"


def test_a_revert_below_a_newer_version_is_refused() -> None:
    with time_machine.travel(T0, tick=False):
        one = propose("A").item_id
        approve(one)
    with time_machine.travel(T0 + timedelta(days=1), tick=False):
        approve(propose("B").item_id)
    before = state()
    with time_machine.travel(T0 + timedelta(days=2), tick=False):
        with pytest.raises(engine.EngineError) as caught:
            engine.review_revert(item_id=one, actor="user:cora", reason="outdated")
    assert caught.value.code == "undo_conflict" and state() == before


def test_a_proposal_made_against_an_older_version_goes_stale() -> None:
    first = propose("A").item_id
    second = propose("B").item_id  # both proposed while nothing is current
    approve(first)
    with pytest.raises(engine.EngineError) as caught:
        approve(second)
    assert caught.value.code == "stale" and ReviewItem.objects.get(id=second).status == "stale"
    assert [a.statement for a in engine.attitudes(agent_id=A)] == ["A"]


def test_confidence_decays_unless_reaffirmed() -> None:
    with time_machine.travel(T0, tick=False):
        approve(propose("Small pull requests", category="workflow", confidence=0.8).item_id)
    (a,) = engine.attitudes(agent_id=A, at=T0 + timedelta(days=90))
    assert a.confidence == 0.8 and a.decayed_confidence == pytest.approx(0.4)  # one half-life
    (b,) = engine.attitudes(agent_id=A, at=T0 + timedelta(days=30))
    assert b.decayed_confidence == pytest.approx(0.8 * math.exp(-math.log(2) * 30 / 90))
    with time_machine.travel(T0 + timedelta(days=90), tick=False):
        again = propose(" small PULL requests ", category="workflow", confidence=0.5)
    assert again.outcome == "reaffirmed" and again.item_id is None
    assert ReviewItem.objects.filter(kind="attitude").count() == 1  # nothing new to review
    (c,) = engine.attitudes(agent_id=A, at=T0 + timedelta(days=90))
    assert (c.version, c.confidence, c.decayed_confidence) == (1, 0.8, pytest.approx(0.8))
    assert AuditEvent.objects.filter(action="attitude_reaffirmed").count() == 1
    assert engine.attitudes(agent_id=A, floor=0.5, at=T0 + timedelta(days=200)) == []


def test_the_half_life_comes_from_the_insights_section(tmp_path, monkeypatch) -> None:
    toml = tmp_path / "memdesk.toml"
    toml.write_text("[insights]\nattitude_half_life_days = 10\n")
    monkeypatch.setenv("MEMDESK_CONFIG", str(toml))
    with time_machine.travel(T0, tick=False):
        approve(propose("x", confidence=1.0).item_id)
    assert engine.attitudes(agent_id=A, at=T0 + timedelta(days=10))[0].decayed_confidence == pytest.approx(
        0.5
    )


@pytest.mark.parametrize(
    ("kwargs", "code", "field"),
    [
        ({"category": "Testing"}, "unknown_category", "category"),
        ({"category": "mood"}, "unknown_category", "category"),
        ({"category": None}, "unknown_category", "category"),
        ({"statement": "   "}, "invalid_argument", "statement"),
        ({"statement": "x" * 501}, "invalid_argument", "statement"),
        ({"confidence": 1.5}, "invalid_argument", "confidence"),
        ({"evidence": "one string"}, "invalid_argument", "evidence"),
        ({"evidence": ["e"] * 11}, "invalid_argument", "evidence"),
        ({"evidence": ["x" * 301]}, "invalid_argument", "evidence"),
    ],
)
def test_bad_proposals_are_refused_with_stable_codes(kwargs: dict, code: str, field: str) -> None:
    args = {"category": "workflow", "statement": "Small pull requests", "confidence": 0.7, **kwargs}
    with pytest.raises(engine.EngineError) as caught:
        engine.attitude_propose(agent_id=A, **args)
    assert (caught.value.code, caught.value.field) == (code, field)
    assert ReviewItem.objects.count() == 0 and Attitude.objects.count() == 0


def test_the_ten_categories() -> None:
    assert len(ATTITUDE_CATEGORIES) == 10
    for category in ATTITUDE_CATEGORIES:
        assert (
            engine.attitude_propose(
                agent_id=A, category=category, statement=f"about {category}", confidence=0.5
            ).outcome
            == "proposed"
        )


def test_pending_proposals_are_capped_per_agent() -> None:
    for k in range(20):
        propose(f"statement {k}")
    with pytest.raises(engine.EngineError) as caught:
        propose("one too many")
    assert caught.value.code == "rate_limited"
    assert engine.attitude_propose(
        agent_id=OTHER, category="workflow", statement="mine", confidence=0.5
    ).item_id


def test_dry_proposals_store_a_dry_item_and_reaffirm_nothing() -> None:
    with time_machine.travel(T0, tick=False):
        approve(propose("A").item_id)
    dry = propose("B", dry=True)
    assert dry.outcome == "dry" and ReviewItem.objects.get(id=dry.item_id).status == "dry"
    with time_machine.travel(T0 + timedelta(days=5), tick=False):
        assert propose("A", dry=True).outcome == "dry"
    assert Attitude.objects.get().affirmed_at == T0


def test_render_block_escapes_stored_text() -> None:
    approve(propose("Use <b>bold</b> # headers", category="design_preference").item_id)
    block = engine.render_attitudes(engine.attitudes(agent_id=A))
    assert block.startswith(
        engine.ATTITUDES_HEADER + "\n- [design_preference] Use \\<b\\>bold\\</b\\> \\# headers"
    )
