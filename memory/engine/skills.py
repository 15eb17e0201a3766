"""Skills (SPEC B6): L1 exposure → L2 competent → L3 generative by uses, with half-life decay.

``skill_use`` counts one use of a named skill (``memory_skill_use``). A skill's first use records it at L1
(exposure is a fact of use). Its uses decay with a 30-day half-life (``score ← score·2^(−Δt/30 d) + 1``); the
level the decayed uses call for (to the nearest whole use) is L2 from 5 and L3 from 15. A level change, up or
down, is never made here: it is a review item of kind ``skill`` (always queued by the policy), one pending per
skill, and an approval sets the level (undo and revert restore the previous one). ``skills_check`` (the daily
job) proposes the downgrades that decay calls for between uses.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from memory.models import ReviewItem, Skill

from . import common as c
from . import review_apply
from .claims import UndoConflict
from .journal import check_at
from .review import Proposal, review_propose
from .types import InvalidArgument, NotFound, iso
from .verdicts import Stale

LEVELS = {1: "exposure", 2: "competent", 3: "generative"}
THRESHOLDS = ((3, 15.0), (2, 5.0))  # decayed uses at which a level is called for
HALF_LIFE_DAYS = 30.0
MAX_NAME = 100


def level_for(score: float) -> int:
    """The level decayed uses call for, counted to the nearest whole use (5 uses an hour apart are 5)."""
    uses = math.floor(score + 0.5)
    for level, needed in THRESHOLDS:
        if uses >= needed:
            return level
    return 1


def decayed_score(score: float, last_used_at: datetime, at: datetime) -> float:
    days = max(0.0, (at - last_used_at).total_seconds() / 86400.0)
    return score * math.pow(2.0, -days / HALF_LIFE_DAYS)


def check_skill(name: Any) -> str:
    """A skill's name: trimmed, inner whitespace folded, case-folded; 1 to 100 characters."""
    value = c.check_text(name, field="skill", required=True, limit=MAX_NAME * 2)
    assert value is not None
    value = " ".join(value.split()).casefold()
    if len(value) > MAX_NAME:
        raise InvalidArgument(f"skill is longer than {MAX_NAME} characters", field="skill")
    if any(ord(ch) < 32 for ch in value):
        raise InvalidArgument("skill contains control characters", field="skill")
    return value


@dataclass(frozen=True)
class SkillRecord:
    id: int
    agent_id: str
    name: str
    level: int
    uses: int
    score: float  # decayed uses now
    called_for: int  # the level the decayed uses call for
    first_used_at: datetime
    last_used_at: datetime
    level_changed_at: datetime | None
    pending_item_id: int | None = None

    @property
    def level_name(self) -> str:
        return LEVELS[self.level]

    def to_dict(self) -> dict[str, Any]:
        return {
            "skill": self.name,
            "level": self.level,
            "level_name": self.level_name,
            "uses": self.uses,
            "score": round(self.score, 4),
            "called_for": self.called_for,
            "first_used_at": iso(self.first_used_at),
            "last_used_at": iso(self.last_used_at),
            "level_changed_at": iso(self.level_changed_at),
            "pending_review_item_id": self.pending_item_id,
        }


def _pending(agent_id: str) -> dict[str, int]:
    rows = ReviewItem.objects.filter(agent_id=agent_id, kind="skill", status=ReviewItem.PENDING).values_list(
        "id", "payload"
    )
    return {str((payload or {}).get("skill")): item_id for item_id, payload in rows}


def _record(row: Skill, at: datetime, pending: dict[str, int]) -> SkillRecord:
    score = decayed_score(row.score, row.last_used_at, at)
    return SkillRecord(
        id=row.id,
        agent_id=row.agent_id,
        name=row.name,
        level=row.level,
        uses=row.uses,
        score=score,
        called_for=level_for(score),
        first_used_at=row.first_used_at,
        last_used_at=row.last_used_at,
        level_changed_at=row.level_changed_at,
        pending_item_id=pending.get(row.name),
    )


def _propose(
    row: Skill, t: datetime, actor: str, pending: dict[str, int], *, run_id: int | None = None
) -> int | None:
    """A review item for the level the decayed uses call for, unless it is the level held or one is pending."""
    score = decayed_score(row.score, row.last_used_at, t)
    to_level = level_for(score)
    if to_level == row.level or row.name in pending:
        return None
    key = f"skill\x1f{row.agent_id}\x1f{row.name}\x1f{row.level}\x1f{to_level}\x1f{row.level_changes}"
    direction = "up" if to_level > row.level else "down"
    proposal = Proposal(
        kind="skill",
        fingerprint=hashlib.sha256(key.encode()).hexdigest()[:40],
        title=f"{row.name}: L{row.level} {LEVELS[row.level]} → L{to_level} {LEVELS[to_level]}",
        payload={
            "skill": row.name,
            "from_level": row.level,
            "to_level": to_level,
            "uses": row.uses,
            "score": round(score, 4),
            "old": {"level": row.level, "level_name": LEVELS[row.level]},
            "new": {"level": to_level, "level_name": LEVELS[to_level]},
            "direction": direction,
        },
        memory_ids=[],
        confidence=0.9,
        reason=f"{row.uses} uses, {score:.1f} after decay (half-life {HALF_LIFE_DAYS:g} days)",
        judge="skills",
    )
    result = review_propose(agent_id=row.agent_id, proposal=proposal, run_id=run_id, actor=actor)
    if result.item is None:
        return None
    pending[row.name] = result.item.id
    return result.item.id


@dataclass(frozen=True)
class SkillUse:
    skill: SkillRecord
    proposed_item_id: int | None  # the level change this use proposed, if any

    def to_dict(self) -> dict[str, Any]:
        return {**self.skill.to_dict(), "proposed_review_item_id": self.proposed_item_id}


@c.write_transaction
def skill_use(
    *, agent_id: str, skill: str, actor: str = "system", at: datetime | str | None = None
) -> SkillUse:
    """Count one use of ``skill``; a level change it calls for goes to review."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    name = check_skill(skill)
    t = check_at(at)
    c.lock_key(agent_id, "skill", name)
    qs = Skill.objects.filter(agent_id=agent_id, name=name)
    if connection.vendor == "postgresql":
        qs = qs.select_for_update()
    row = qs.first()
    if row is None:
        row = Skill.objects.create(
            agent_id=agent_id, name=name, level=1, score=1.0, uses=1, first_used_at=t, last_used_at=t
        )
    else:
        row.score = decayed_score(row.score, row.last_used_at, t) + 1.0
        row.uses += 1
        row.last_used_at = max(row.last_used_at, t)
        Skill.objects.filter(id=row.id).update(score=row.score, uses=row.uses, last_used_at=row.last_used_at)
    pending = _pending(agent_id)
    item_id = _propose(row, t, actor, pending)
    return SkillUse(_record(row, t, pending), item_id)


def skills(*, agent_id: str, at: datetime | None = None) -> list[SkillRecord]:
    """The agent's skills, highest level first, then most used."""
    agent_id = c.check_agent_id(agent_id)
    t = at or c.now()
    pending = _pending(agent_id)
    records = [_record(r, t, pending) for r in Skill.objects.filter(agent_id=agent_id)]
    records.sort(key=lambda r: (-r.level, -r.score, r.name))
    return records


def skills_check(*, agent_id: str, actor: str = "system:insights", run_id: int | None = None) -> list[int]:
    """Propose the level changes decay calls for (the daily job); returns the new review items' ids."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    return _check(agent_id, actor, run_id)


@c.write_transaction
def _check(agent_id: str, actor: str, run_id: int | None) -> list[int]:
    t = c.now()
    pending = _pending(agent_id)
    out = []
    for row in Skill.objects.filter(agent_id=agent_id).order_by("name"):
        item_id = _propose(row, t, actor, pending, run_id=run_id)
        if item_id is not None:
            out.append(item_id)
    return out


# --- the review queue's appliers ----------------------------------------------------------------------------


def _row_of(item: ReviewItem) -> Skill:
    row = Skill.objects.filter(agent_id=item.agent_id, name=item.payload.get("skill")).first()
    if row is None:
        raise NotFound("no such skill", field="item_id")
    return row


def _approve(item: ReviewItem, edited: dict[str, Any] | None, actor: str, t: datetime) -> dict[str, Any]:
    row = _row_of(item)
    if row.level != item.payload.get("from_level"):
        raise Stale("the skill's level changed since this was proposed; it is marked stale", field="item_id")
    to_level = int(item.payload["to_level"])
    Skill.objects.filter(id=row.id).update(
        level=to_level, level_changed_at=t, level_changes=row.level_changes + 1
    )
    return {
        "hooks": [
            {
                "skill": row.id,
                "level": row.level,
                "to_level": to_level,
                "level_changed_at": iso(row.level_changed_at),
                "level_changes": row.level_changes,
            }
        ]
    }


def _nothing(item: ReviewItem, edited: dict[str, Any] | None, actor: str, t: datetime) -> dict[str, Any]:
    return {}


def _undo(item: ReviewItem, hook: dict[str, Any], actor: str) -> None:
    row = Skill.objects.filter(id=int(hook.get("skill") or 0), agent_id=item.agent_id).first()
    if row is None:
        return
    if row.level != hook.get("to_level"):
        raise UndoConflict("the skill's level changed again since; revert that change first", field="item_id")
    changed = hook.get("level_changed_at")
    Skill.objects.filter(id=row.id).update(
        level=int(hook["level"]),
        level_changed_at=c.parse_time(changed, field="level_changed_at") if changed else None,
        level_changes=int(hook.get("level_changes", 0)),
    )


review_apply.register("skill", approve=_approve, reject=_nothing, undo=_undo)
