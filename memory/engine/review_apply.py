"""What deciding a review item does, per kind (SPEC B2, B3, B6, B7). Every applier writes through the engine's
write path and returns an undo snapshot (``snapshots.key_snapshot`` plus the writes it created), so a decision
can be undone or reverted exactly.

* ``conflict``: approve applies the judge's verdict (``verdicts.verdict_apply``), or the reviewer's edited
  verdict, and, when the reviewer edited the value, writes the corrected fact on the kept row's key (origin
  ``operator:review``). Reject changes nothing: the pair was judged and is never proposed again.
* ``lint``: approve commits the proposed fix (``retract``: the finding's fact is retracted, like a curator's
  retract; ``none``: acknowledged). Reject dismisses the finding.
* ``low_confidence``: approve confirms the fact (a reaffirming write by ``operator:review``, T5; a tainted fact,
  issue 19 item 9, also gets its trust back); reject retracts it.
* ``attitude`` / ``skill``: appliers registered by the modules that own them (``register``).

Before anything is applied the rows the item is about must still be as they were when it was proposed; else
``stale``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.models import FactWrite, Memory, ReviewItem

from . import common as c
from .belief import TAINT_TRUST
from .provenance import ceiling
from .snapshots import key_snapshot, keys_of
from .taint import RULE as TAINT_RULE
from .temporal import retract_fact
from .types import InvalidArgument
from .verdicts import VERDICTS, Stale, state_fingerprint, verdict_apply
from .writes import store_temporal

REVIEW_ORIGIN = "operator:review"
DREAM_ORIGIN = "operator:dream"
Applier = Callable[[ReviewItem, dict[str, Any] | None, str, datetime], dict[str, Any]]


@dataclass(frozen=True)
class _Kind:
    approve: Applier
    reject: Applier
    undo: Callable[[ReviewItem, dict[str, Any], str], None] | None = None


_KINDS: dict[str, _Kind] = {}


def register(
    kind: str,
    *,
    approve: Applier,
    reject: Applier,
    undo: Callable[[ReviewItem, dict[str, Any], str], None] | None = None,
) -> None:
    """Let the module that owns a kind (attitudes, skills) say what deciding its items does. Its undo
    snapshot may carry ``{"hooks": [...]}``: each hook is given back to its ``undo`` on an undo or revert."""
    _KINDS[kind] = _Kind(approve, reject, undo)


def source_event(item: ReviewItem) -> str:
    return f"dream:{item.run_id or 0}:{item.id}"


def _rows(item: ReviewItem) -> list[Memory]:
    ids = [i for i in item.memory_ids or [] if isinstance(i, str)]
    return list(Memory.objects.filter(agent_id=item.agent_id, id__in=ids))


def _check_fresh(item: ReviewItem) -> list[Memory]:
    rows = _rows(item)
    if item.state and (len(rows) != len(item.memory_ids or []) or state_fingerprint(rows) != item.state):
        raise Stale("this item's memories changed since it was proposed; it is marked stale", field="item_id")
    return rows


def approve(item: ReviewItem, *, edited: dict[str, Any] | None, actor: str, t: datetime) -> dict[str, Any]:
    _check_fresh(item)
    return _kind(item).approve(item, edited, actor, t)


def reject(item: ReviewItem, *, edited: dict[str, Any] | None, actor: str, t: datetime) -> dict[str, Any]:
    _check_fresh(item)
    return _kind(item).reject(item, edited, actor, t)


def undo_hook(item: ReviewItem, hook: dict[str, Any], actor: str) -> None:
    kind = _kind(item)
    if kind.undo is not None:
        kind.undo(item, hook, actor)


def _kind(item: ReviewItem) -> _Kind:
    kind = _KINDS.get(item.kind)
    if kind is None:
        raise InvalidArgument(f"no applier for review items of kind {item.kind!r}", field="kind")
    return kind


def _nothing(item: ReviewItem, edited: dict[str, Any] | None, actor: str, t: datetime) -> dict[str, Any]:
    return {}


# --- conflict --------------------------------------------------------------------------------------------


def check_edit(edited: dict[str, Any] | None) -> dict[str, Any]:
    """A reviewer's edit, validated before anything is stored (an invalid one: ``invalid_edit``)."""
    if not edited:
        return {}
    out: dict[str, Any] = {}
    verdict = edited.get("verdict")
    if verdict not in (None, ""):
        if verdict not in VERDICTS or verdict == "UNSURE":
            raise InvalidArgument(
                "the edited verdict must be MERGE, SUPERSEDE or COEXIST", code="invalid_edit"
            )
        out["verdict"] = verdict
    if "content" in edited or "object" in edited:
        content = edited.get("content")
        obj = edited.get("object")
        try:
            out["content"] = c.check_content(content)
            out["object"] = c.check_text(obj, field="object", required=False, limit=4096)
        except InvalidArgument as exc:
            raise InvalidArgument(
                f"the edited fact is not valid: {exc.message}", code="invalid_edit", field=exc.field
            ) from None
    return out


def _conflict_approve(
    item: ReviewItem, edited: dict[str, Any] | None, actor: str, t: datetime
) -> dict[str, Any]:
    edit = check_edit(edited)
    action = item.payload.get("action") or {}
    verdict = edit.get("verdict") or action.get("verdict")
    if verdict == "UNSURE" or verdict not in VERDICTS:
        raise InvalidArgument(
            "the judge was unsure: approve with an edited verdict (MERGE, SUPERSEDE or COEXIST)",
            code="invalid_edit",
        )
    applied = verdict_apply(
        agent_id=item.agent_id,
        verdict=verdict,
        old_id=action.get("old_id"),
        new_id=action.get("new_id"),
        source_event=source_event(item),
        actor=actor,
        expected=item.state or None,
    )
    undo = dict(applied.undo)
    if "content" in edit:
        kept_id = applied.kept or action.get("new_id")
        kept = Memory.objects.filter(agent_id=item.agent_id, id=kept_id).first()
        if kept is None or not kept.subject or not kept.predicate:
            raise InvalidArgument("only a fact's value can be edited", code="invalid_edit")
        if not undo:
            undo = key_snapshot(item.agent_id, keys_of([kept]), [])
        result = store_temporal(
            agent_id=item.agent_id,
            content=edit["content"],
            subject=kept.subject,
            predicate=kept.predicate,
            object=edit.get("object"),
            origin=REVIEW_ORIGIN,
            source_event=source_event(item),
            actor=actor,
        )
        if result.write_id is not None:
            undo["new"] = [*undo.get("new", []), int(result.write_id)]
    return undo


# --- lint ------------------------------------------------------------------------------------------------


def _lint_approve(item: ReviewItem, edited: dict[str, Any] | None, actor: str, t: datetime) -> dict[str, Any]:
    fix = item.payload.get("fix") or {}
    if fix.get("action") != "retract":
        return {}
    return _retract(item, str(fix.get("memory_id", "")), actor, f"lint: {item.title}")


def _retract(item: ReviewItem, memory_id: str, actor: str, reason: str) -> dict[str, Any]:
    row = Memory.objects.filter(agent_id=item.agent_id, id=memory_id).first()
    if row is None:
        raise Stale("the memory this item is about is gone", field="item_id")
    undo = key_snapshot(item.agent_id, keys_of([row]), [])
    retract_fact(agent_id=item.agent_id, memory_id=memory_id, reason=reason, actor=actor)
    return undo


# --- low confidence --------------------------------------------------------------------------------------


def _low_approve(item: ReviewItem, edited: dict[str, Any] | None, actor: str, t: datetime) -> dict[str, Any]:
    rows = [m for m in _rows(item) if m.subject and m.predicate]
    if not rows:
        return {}
    row = rows[0]
    assert row.subject is not None and row.predicate is not None
    undo = key_snapshot(item.agent_id, keys_of([row]), [])
    result = store_temporal(
        agent_id=item.agent_id,
        content=row.content,
        subject=row.subject,
        predicate=row.predicate,
        object=row.object,
        valid_from=row.valid_from,
        origin=REVIEW_ORIGIN,
        source_event=source_event(item),
        actor=actor,
    )
    if result.write_id is not None:
        undo["new"] = [int(result.write_id)]
    if item.payload.get("rule") == TAINT_RULE:
        _lift_taint(row, item.payload.get("trust_before"))
    return undo


def _lift_taint(row: Memory, before: Any) -> None:
    """A person confirmed a fact derived from a purged source (issue 19 item 9): it gets back the trust it had
    before the purge (at least above the taint line, within its origin's ceiling), so it reads tainted no more.
    The undo snapshot holds the crushed trust, so an undo or revert crushes it again."""
    trust = float(before) if isinstance(before, int | float) and not isinstance(before, bool) else 0.0
    trust = min(ceiling(row.origin or ""), max(trust, TAINT_TRUST + 0.05))
    Memory.objects.filter(id=row.id).update(origin_trust=trust)
    FactWrite.objects.filter(agent_id=row.agent_id, memory_id=row.id, origin_trust__lte=TAINT_TRUST).update(
        origin_trust=trust
    )
    c.bump_generation(row.agent_id, {row.id})  # trust weighs graph edges: cached graph views rebuild


def _low_reject(item: ReviewItem, edited: dict[str, Any] | None, actor: str, t: datetime) -> dict[str, Any]:
    rows = [m for m in _rows(item) if m.subject and m.predicate]
    if not rows:
        return {}
    return _retract(item, rows[0].id, actor, f"review: {item.title}")


register("conflict", approve=_conflict_approve, reject=_nothing)
register("lint", approve=_lint_approve, reject=_nothing)
register("low_confidence", approve=_low_approve, reject=_low_reject)
