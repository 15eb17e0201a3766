"""Poisoning defence (SPEC P4–P9): injection scan on protected writes, the burst guard, quarantine, approvals.

A *burst* is ``max_per_subject`` or more writes from one origin about one subject inside ``window_secs``
(``memdesk.toml`` ``[knowledge_guard]``). The write that trips the guard, every earlier write of the window and
every later one until the window drains are quarantined together: their rows become inert, the timelines they
had changed are re-derived (so reads return what they returned before the burst), and one approval request per
(agent, origin, subject) waits for a reviewer. Approve applies the writes as if written then; reject (or the TTL
running out) retracts them and crushes their trust.

Reviewers work the desk as a queue. A *claim* (``quarantine_claim``) holds a batch for one reviewer for a while;
a person's decision on a batch someone else holds is refused (``claimed_by_other``) until the claim is
released, decided or past its time (claims are compared with the clock, never swept). Every decision is one
conditional UPDATE on the pending row, so exactly one of two racing claims/decisions wins. A person's decision
keeps a snapshot of what it changed and can be undone by its decider for ``UNDO_SECS`` (``quarantine_undo``):
the writes go back to quarantine as they were, their keys are re-derived, and the batch is pending again with
the TTL it had left (so the sweep cannot expire it because of the time it spent decided). The undo is a new
audit decision. ``quarantine_bulk`` decides many batches, each in its own transaction and audit entry.

A module per seam: ``scan`` (the injection scan of a protected write), ``burst`` (the counter), ``protected``
(guarded writes and the distill path), ``approvals`` (requests, decisions, claims), ``undo`` (undo and bulk),
``sweep`` (TTL and reminders), ``outbox`` (events leave through a table; the job layer delivers them).
"""

from __future__ import annotations

from ..claims import (
    AlreadyDecided,
    ClaimedByOther,
    NotDecided,
    UndoConflict,
    UndoExpired,
    UndoNotYours,
)
from .approvals import (
    APPROVAL_TTL_SECS,
    CLAIM_SECS,
    REJECT_REASONS,
    UNDO_SECS,
    approval_preview,
    quarantine_approve,
    quarantine_claim,
    quarantine_expire,
    quarantine_reject,
    quarantine_release,
)
from .burst import check_burst
from .outbox import emit, outbox_attempted
from .protected import guarded_plain, guarded_write, store_facts_protected
from .revert import quarantine_revert
from .scan import ScanVerdict, record_drop, scan_write
from .sweep import sweep
from .undo import MAX_BULK, BulkOutcome, quarantine_bulk, quarantine_undo

__all__ = [
    "APPROVAL_TTL_SECS",
    "CLAIM_SECS",
    "MAX_BULK",
    "REJECT_REASONS",
    "UNDO_SECS",
    "AlreadyDecided",
    "BulkOutcome",
    "ClaimedByOther",
    "NotDecided",
    "UndoConflict",
    "UndoExpired",
    "UndoNotYours",
    "approval_preview",
    "check_burst",
    "emit",
    "outbox_attempted",
    "guarded_write",
    "quarantine_approve",
    "quarantine_bulk",
    "quarantine_claim",
    "quarantine_expire",
    "quarantine_reject",
    "quarantine_release",
    "quarantine_revert",
    "quarantine_undo",
    "ScanVerdict",
    "guarded_plain",
    "record_drop",
    "scan_write",
    "store_facts_protected",
    "sweep",
]
