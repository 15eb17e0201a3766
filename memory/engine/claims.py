"""The queue machinery every human decision shares (the quarantine desk, the review queue): claims that
expire by themselves, exactly-one-wins decisions, the decider's undo window, and their stable errors.

A *claim* holds an item for one reviewer until a time; it is never swept, only compared with the clock. A
decision is one conditional UPDATE on the pending row, so of two racing decisions exactly one wins. A person's
decision can be undone by its decider for a short window; after that, a revert is a new decision.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Q

from .types import EngineError, InvalidArgument

SYSTEM_ACTORS = ("system",)  # actors "system" and "system:…" decide by rule: their decisions have no undo
MAX_REASON = 2000


class AlreadyDecided(EngineError):
    code = "already_decided"


class ClaimedByOther(EngineError):
    """Another reviewer holds a live claim on the batch."""

    code = "claimed_by_other"


class NotDecided(EngineError):
    code = "not_decided"


class UndoExpired(EngineError):
    """The undo window has passed: a later revert is a new decision by other means."""

    code = "undo_expired"


class UndoNotYours(EngineError):
    """Only the reviewer who decided may undo the decision."""

    code = "undo_not_yours"


class UndoConflict(EngineError):
    """Undoing would clash with something newer: a pending batch from the same origin about the same subject
    (decide that one first), or an origin purge that covered the batch's writes after the decision (the
    decision stands, so purged facts stay purged)."""

    code = "undo_conflict"


def is_system(actor: str) -> bool:
    return actor in SYSTEM_ACTORS or actor.startswith("system:")


def claim_free_q(actor: str, t: datetime) -> Q:
    """No live claim by anyone but ``actor`` (claims expire by comparing times: no job releases them)."""
    return Q(claimed_by="") | Q(claimed_by=actor) | Q(claimed_until__isnull=True) | Q(claimed_until__lte=t)


def live_claim(claimed_by: str, claimed_until: datetime | None, t: datetime) -> bool:
    return bool(claimed_by) and claimed_until is not None and claimed_until > t


def check_reason(reason: Any) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidArgument("a reason is required", field="reason")
    if len(reason) > MAX_REASON:
        raise InvalidArgument(f"the reason is longer than {MAX_REASON} characters", field="reason")
    return reason.strip()
