"""Skills (SPEC B6): L1 exposure → L2 competent → L3 generative by uses, half-life decay, level changes reviewed."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from memory import engine
from memory.engine.skills import decayed_score, level_for
from memory.models import ReviewItem, Skill
from tests.conftest import dt
from tests.memory.conftest import OTHER, A

pytestmark = pytest.mark.django_db

T0 = dt("2030-01-01T09:00:00Z")


def use(skill: str, times: int, start, step=timedelta(0)):  # noqa: ANN001, ANN201
    out = None
    for k in range(times):
        with time_machine.travel(start + k * step, tick=False):
            out = engine.skill_use(agent_id=A, skill=skill, actor="token:1")
    return out


def decide(item_id: int, decision: str = "approve"):  # noqa: ANN201
    return engine.review_decide(item_id=item_id, decision=decision, actor="user:rex", reason="checked")


def test_levels_by_decayed_uses() -> None:
    assert [level_for(s) for s in (0, 1, 4.49, 4.5, 14.49, 14.5, 100)] == [1, 1, 1, 2, 2, 3, 3]
    assert decayed_score(8.0, T0, T0 + timedelta(days=30)) == pytest.approx(4.0)


def test_first_use_is_exposure_and_the_climb_waits_for_review() -> None:
    first = use("SQL window functions", 1, T0)
    assert (first.skill.name, first.skill.level, first.skill.level_name, first.proposed_item_id) == (
        "sql window functions",
        1,
        "exposure",
        None,
    )
    fifth = use("sql  window functions", 4, T0)  # same skill, respelled
    assert fifth.skill.uses == 5 and fifth.skill.level == 1 and fifth.skill.called_for == 2
    item = ReviewItem.objects.get(id=fifth.proposed_item_id)
    assert (item.kind, item.status) == ("skill", "pending")
    assert (item.payload["from_level"], item.payload["to_level"], item.payload["skill"]) == (
        1,
        2,
        "sql window functions",
    )
    # one pending change per skill: more uses do not pile up items
    more = use("sql window functions", 12, T0)
    assert more.proposed_item_id is None and ReviewItem.objects.filter(kind="skill").count() == 1
    assert more.skill.pending_item_id == item.id and more.skill.called_for == 3
    with time_machine.travel(T0, tick=False):
        decide(item.id)
        assert Skill.objects.get().level == 2
        nxt = engine.skill_use(agent_id=A, skill="sql window functions")
    up = ReviewItem.objects.get(id=nxt.proposed_item_id)
    assert (up.payload["from_level"], up.payload["to_level"]) == (2, 3)
    decide(up.id)
    (rec,) = engine.skills(agent_id=A, at=T0)
    assert (rec.level, rec.level_name, rec.uses) == (3, "generative", 18)


def test_decay_proposes_a_downgrade_and_reject_keeps_the_level() -> None:
    use("kubernetes", 6, T0)
    decide(ReviewItem.objects.get(kind="skill").id)
    assert Skill.objects.get().level == 2
    with time_machine.travel(T0 + timedelta(days=45), tick=False):  # 6 uses, 1.5 half-lives later: ~2.1
        (rec,) = engine.skills(agent_id=A)
        assert rec.level == 2 and rec.called_for == 1 and rec.score == pytest.approx(6 * 2**-1.5)
        (item_id,) = engine.skills_check(agent_id=A)
        assert engine.skills_check(agent_id=A) == []  # safe to run twice
    down = ReviewItem.objects.get(id=item_id)
    assert (down.payload["direction"], down.payload["to_level"]) == ("down", 1)
    decide(item_id, "reject")
    assert Skill.objects.get().level == 2


def test_undo_and_revert_restore_the_level_exactly() -> None:
    use("terraform", 5, T0)
    item = ReviewItem.objects.get(kind="skill").id
    before = list(Skill.objects.values_list("level", "level_changed_at", "level_changes"))
    with time_machine.travel(T0 + timedelta(seconds=1), tick=False):
        decide(item)
        assert Skill.objects.get().level == 2
        engine.review_undo(item_id=item, actor="user:rex")
    assert list(Skill.objects.values_list("level", "level_changed_at", "level_changes")) == before
    with time_machine.travel(T0 + timedelta(seconds=2), tick=False):
        decide(item)
    with time_machine.travel(T0 + timedelta(days=1), tick=False):
        engine.review_revert(item_id=item, actor="user:cora", reason="outdated")
    assert list(Skill.objects.values_list("level", "level_changed_at", "level_changes")) == before


@pytest.mark.parametrize("bad", ["", "   ", None, 42, "x" * 101, "bell\x07inside"])
def test_bad_skill_names(bad) -> None:  # noqa: ANN001
    with pytest.raises(engine.EngineError) as caught:
        engine.skill_use(agent_id=A, skill=bad)
    assert (caught.value.code, caught.value.field) == ("invalid_argument", "skill")
    assert Skill.objects.count() == 0


def test_skills_are_per_agent() -> None:
    engine.skill_use(agent_id=OTHER, skill="rust")
    assert engine.skills(agent_id=A) == [] and [s.name for s in engine.skills(agent_id=OTHER)] == ["rust"]
