"""Attitudes (SPEC B6): what the agent has come to hold about how to work, one current version per category.

Ten categories (``ATTITUDE_CATEGORIES``); anything else is refused (``unknown_category``), never mapped. Agents
(``memory_attitude_propose``) and the dream loop's reflect phase propose; every change is a review item of kind
``attitude`` (the policy always queues them) and only an approval writes: a new version, the previous one kept
with ``superseded_at`` (history is never erased). Undo and revert delete the version the approval wrote and
make the previous one current again, exactly as before. Proposing what the current version already says is a
reaffirmation: no review, only the decay clock restarts.

Confidence decays ``c·exp(−λΔt)`` with λ = ln 2 / ``attitude_half_life_days`` (``[insights]``, default 90) and Δt
the days since the version was written or last reaffirmed; reads show the decayed value beside the stored one.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Max

from memory.config import insights_settings
from memory.models import ATTITUDE_CATEGORIES, Attitude, ReviewItem

from . import common as c
from . import review_apply
from .claims import UndoConflict
from .journal import check_at
from .reflexion import escape
from .review import Proposal, Proposed, review_propose
from .types import InvalidArgument, RateLimited, iso
from .verdicts import Stale

MAX_STATEMENT = 500
MAX_EVIDENCE = 10
MAX_EVIDENCE_CHARS = 300
MAX_PENDING = 20  # open attitude proposals per agent
BLOCK_HEADER = "## Standing Attitudes"


class UnknownCategory(InvalidArgument):
    code = "unknown_category"


@dataclass(frozen=True)
class AttitudeRecord:
    id: int
    agent_id: str
    category: str
    version: int
    statement: str
    confidence: float
    decayed_confidence: float
    evidence: list[str]
    proposed_by: str
    approved_by: str
    created_at: datetime
    affirmed_at: datetime
    superseded_at: datetime | None
    review_item_id: int | None = None

    @property
    def current(self) -> bool:
        return self.superseded_at is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "version": self.version,
            "statement": self.statement,
            "confidence": round(self.confidence, 6),
            "decayed_confidence": round(self.decayed_confidence, 6),
            "evidence": list(self.evidence),
            "proposed_by": self.proposed_by,
            "approved_by": self.approved_by,
            "created_at": iso(self.created_at),
            "affirmed_at": iso(self.affirmed_at),
            "superseded_at": iso(self.superseded_at),
            "current": self.current,
        }


@dataclass(frozen=True)
class AttitudeProposal:
    outcome: str  # proposed | already_proposed | reaffirmed | dry
    category: str
    item_id: int | None = None
    current: AttitudeRecord | None = None
    proposed: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "category": self.category,
            "review_item_id": self.item_id,
            "current": self.current.to_dict() if self.current else None,
        }


def decayed(confidence: float, affirmed_at: datetime, at: datetime) -> float:
    """``c·exp(−λΔt)``, λ = ln 2 / half-life, Δt in days since the last affirmation."""
    days = max(0.0, (at - affirmed_at).total_seconds() / 86400.0)
    return confidence * math.exp(-math.log(2) * days / insights_settings().attitude_half_life_days)


def _record(row: Attitude, at: datetime) -> AttitudeRecord:
    return AttitudeRecord(
        id=row.id,
        agent_id=row.agent_id,
        category=row.category,
        version=row.version,
        statement=row.statement,
        confidence=row.confidence,
        decayed_confidence=decayed(row.confidence, row.affirmed_at, at),
        evidence=list(row.evidence or []),
        proposed_by=row.proposed_by,
        approved_by=row.approved_by,
        created_at=row.created_at,
        affirmed_at=row.affirmed_at,
        superseded_at=row.superseded_at,
        review_item_id=row.review_item_id,
    )


def check_category(category: Any) -> str:
    if isinstance(category, str) and category.strip() in ATTITUDE_CATEGORIES:
        return category.strip()
    raise UnknownCategory(
        f"category must be one of {', '.join(ATTITUDE_CATEGORIES)}",
        field="category",
        allowed=list(ATTITUDE_CATEGORIES),
    )


def check_statement(statement: Any) -> str:
    value = c.check_text(statement, field="statement", required=True, limit=MAX_STATEMENT)
    assert value is not None
    return " ".join(value.split())


def check_evidence(evidence: Any) -> list[str]:
    if evidence is None:
        return []
    if isinstance(evidence, str) or not isinstance(evidence, list | tuple):
        raise InvalidArgument("evidence must be a list of strings", field="evidence")
    if len(evidence) > MAX_EVIDENCE:
        raise InvalidArgument(f"at most {MAX_EVIDENCE} pieces of evidence", field="evidence")
    out = []
    for item in evidence:
        text = c.check_text(item, field="evidence", required=True, limit=MAX_EVIDENCE_CHARS)
        assert text is not None
        out.append(text)
    return out


def _current(agent_id: str, category: str, *, lock: bool = False) -> Attitude | None:
    qs = Attitude.objects.filter(agent_id=agent_id, category=category, superseded_at__isnull=True)
    if lock and connection.vendor == "postgresql":
        qs = qs.select_for_update()
    return qs.first()


@c.write_transaction
def attitude_propose(
    *,
    agent_id: str,
    category: str,
    statement: str,
    confidence: float,
    evidence: Any = (),
    actor: str = "system",
    run_id: int | None = None,
    dry: bool = False,
    at: datetime | str | None = None,
) -> AttitudeProposal:
    """Propose an attitude. A new statement becomes a pending ``attitude`` review item (the same proposal is
    made once); the current statement again is a reaffirmation (its decay restarts, nothing to review).
    ``dry`` (a dry dream run) stores the item as dry and reaffirms nothing."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    category = check_category(category)
    statement = check_statement(statement)
    confidence = c.check_number(confidence, field="confidence", low=0.0, high=1.0)
    proofs = check_evidence(evidence)
    t = check_at(at)
    c.lock_key(agent_id, "attitude", category)
    row = _current(agent_id, category, lock=True)
    current = _record(row, t) if row else None
    new = {"statement": statement, "confidence": confidence, "evidence": proofs}
    if row is not None and row.statement.casefold() == statement.casefold():
        if dry:
            return AttitudeProposal("dry", category, None, current, new)
        Attitude.objects.filter(id=row.id).update(affirmed_at=t)
        row.affirmed_at = t
        c.audit(
            agent_id=agent_id,
            actor=actor,
            action="attitude_reaffirmed",
            reason=f"{category}: {statement[:200]}",
            at=t,
            attitude_id=row.id,
            version=row.version,
        )
        return AttitudeProposal("reaffirmed", category, None, _record(row, t), new)
    pending = ReviewItem.objects.filter(agent_id=agent_id, kind="attitude", status=ReviewItem.PENDING)
    if not dry and pending.count() >= MAX_PENDING:
        raise RateLimited(
            f"{MAX_PENDING} attitude proposals already wait for review; wait for a decision",
            limit=MAX_PENDING,
        )
    key = f"attitude\x1f{agent_id}\x1f{category}\x1f{statement.casefold()}\x1f{row.id if row else 0}"
    proposal = Proposal(
        kind="attitude",
        fingerprint=hashlib.sha256(key.encode()).hexdigest()[:40],
        title=f"{category}: {statement[:200]}",
        payload={
            "category": category,
            "old": {"statement": row.statement, "confidence": row.confidence, "version": row.version}
            if row
            else None,
            "old_id": row.id if row else None,
            "new": new,
            "proposed_by": actor,
        },
        memory_ids=[],
        confidence=confidence,
        reason=f"proposed by {actor}",
        judge=actor[:128],
    )
    result: Proposed = review_propose(
        agent_id=agent_id, proposal=proposal, run_id=run_id, dry=dry, actor=actor
    )
    if result.item is None:
        return AttitudeProposal("already_proposed", category, None, current, new)
    return AttitudeProposal("dry" if dry else "proposed", category, result.item.id, current, new)


def attitudes(
    *, agent_id: str, history: bool = False, floor: float = 0.0, at: datetime | None = None
) -> list[AttitudeRecord]:
    """Current attitudes (``history``: every version), by category then newest version first. ``floor`` keeps
    only those whose decayed confidence is at least that."""
    agent_id = c.check_agent_id(agent_id)
    floor = c.check_number(floor, field="floor", low=0.0, high=1.0)
    t = at or c.now()
    qs = Attitude.objects.filter(agent_id=agent_id)
    if not history:
        qs = qs.filter(superseded_at__isnull=True)
    order = {cat: k for k, cat in enumerate(ATTITUDE_CATEGORIES)}
    records = [_record(r, t) for r in qs]
    records.sort(key=lambda r: (order.get(r.category, 99), -r.version))
    return [r for r in records if r.decayed_confidence >= floor]


def render_attitudes(records: list[AttitudeRecord]) -> str:
    """The prompt block of current attitudes (empty when there are none); stored text is escaped."""
    if not records:
        return ""
    lines = [BLOCK_HEADER]
    for r in records:
        lines.append(f"- [{r.category}] {escape(r.statement)} (confidence {r.decayed_confidence:.2f})")
    return "\n".join(lines) + "\n"


# --- the review queue's appliers ----------------------------------------------------------------------------


def _approve(item: ReviewItem, edited: dict[str, Any] | None, actor: str, t: datetime) -> dict[str, Any]:
    payload = item.payload
    category = check_category(payload.get("category"))
    new = payload.get("new") or {}
    statement = check_statement((edited or {}).get("content") or new.get("statement"))
    c.lock_key(item.agent_id, "attitude", category)
    row = _current(item.agent_id, category, lock=True)
    if (row.id if row else None) != payload.get("old_id"):
        raise Stale("the attitude changed since this was proposed; it is marked stale", field="item_id")
    if row is not None:
        Attitude.objects.filter(id=row.id).update(superseded_at=t)
    top = Attitude.objects.filter(agent_id=item.agent_id, category=category).aggregate(v=Max("version"))["v"]
    created = Attitude.objects.create(
        agent_id=item.agent_id,
        category=category,
        version=(top or 0) + 1,
        statement=statement,
        confidence=float(new.get("confidence", item.confidence)),
        evidence=list(new.get("evidence") or []),
        proposed_by=str(payload.get("proposed_by") or "")[:256],
        approved_by=actor,
        review_item_id=item.id,
        created_at=t,
        affirmed_at=t,
    )
    return {"hooks": [{"attitude": created.id, "previous": row.id if row else None}]}


def _nothing(item: ReviewItem, edited: dict[str, Any] | None, actor: str, t: datetime) -> dict[str, Any]:
    return {}


def _undo(item: ReviewItem, hook: dict[str, Any], actor: str) -> None:
    """Take an approved version back: it goes, and the version it superseded is current again."""
    created = Attitude.objects.filter(id=int(hook.get("attitude") or 0), agent_id=item.agent_id).first()
    if created is None:
        return
    if created.superseded_at is not None:
        raise UndoConflict(
            "a newer version of this attitude was approved since; revert that one first", field="item_id"
        )
    created.delete()
    if hook.get("previous"):
        Attitude.objects.filter(id=hook["previous"], agent_id=item.agent_id).update(superseded_at=None)


review_apply.register("attitude", approve=_approve, reject=_nothing, undo=_undo)
