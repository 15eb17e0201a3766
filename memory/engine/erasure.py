"""Erasure and reassignment (SPEC M5): the only hard deletes of memory rows, both for admins.

``erase`` removes everything an agent holds about one subject (exact) and/or from one origin (exact): the rows,
their continuation rows and the rows derived from them (``derived_from``, transitively), their write-log
entries, full-text entries, tiers and archives, feedback, entity aliases/embeddings/edges/communities of the
subject, guard counters, quarantine batches, review and discovery items, outbound events, journal entries,
knowledge gaps and interest snapshots that quote it, and (through hooks other apps register, e.g. the wiki)
the pages that quote it and their pointer rows. Audit events that quoted it are redacted in place (who did what,
when, stays; the text goes). One ``erase`` audit event remains with the counts and keyed hashes of the subject
and origin, never the text. On SQLite the deletes run with ``secure_delete`` (freed pages are zeroed) and the
full-text index is merged (``optimize``), so the text is gone from the database file, not only from queries.

An origin erasure keeps what another origin also said: a row the erased origin wrote and another origin
reaffirmed is kept with the reaffirming write's own text and provenance (the earliest such write becomes the
row's primary write), and the key's timeline is re-derived from the remaining writes.

``reassign`` moves rows (all of an agent's, or one subject's) with their write log, tiers and feedback weights
to another agent and re-derives both agents' keys. Both bump the graph generation.

``erase_preview`` / ``purge_preview`` run the real change inside a transaction that is rolled back, so what
they report is exactly what the change would do now.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q

from memory.models import (
    Agent,
    ApprovalRequest,
    Attitude,
    AuditEvent,
    Community,
    DiscoveryItem,
    EntityAlias,
    EntityEdge,
    EntityEmbedding,
    FactWrite,
    Feedback,
    FeedbackWeight,
    GuardCounter,
    InterestSnapshot,
    KnowledgeGap,
    Memory,
    MemoryTier,
    OutboundEvent,
    QueryJournal,
    ReviewItem,
)
from memory.models.memories import RETRACT_EVENTS

from . import common as c
from . import rawsql, vectors
from .graph.links import erase_links, reassign_links
from .graph.names import normalize_entity
from .provenance import check_origin, origin_class
from .temporal import CONTINUATION_KEY, rederive_key
from .types import EngineError, InvalidArgument, NotFound

ERASE_ACTION = "erase"
REASSIGN_ACTION = "reassign"
MAX_ERASE_ROWS = 100_000  # bounded work per call: a larger erasure is refused (erase by subject in parts)
MAX_NEEDLES = 2_000  # texts an artefact is checked against (the subject, row ids, content openings)
SNIPPET_CHARS = 40  # an artefact quoting a row's content is found by the content's opening
REDACTED = "[erased]"
CHUNK = 500


class NothingToErase(EngineError):
    code = "nothing_matched"


class TooMuchToErase(EngineError):
    code = "too_many_rows"


# --- hooks: other apps' tables (the wiki's pages) ----------------------------------------------------------


@dataclass(frozen=True)
class ErasureScope:
    """What an erasure removes, as a hook sees it: the rows' ids and the texts that must not survive."""

    agent_id: str
    subject: str | None
    origin: str | None
    memory_ids: frozenset[str]
    needles: tuple[str, ...]

    def quotes(self, *texts: Any) -> bool:
        return _quotes(_matcher(self.needles), texts)


@dataclass(frozen=True)
class ErasurePart:
    """A hook's answer: how many of its records it deleted, and the pointer subjects (memory keys) that went
    with them, which the engine erases too."""

    deleted: int
    pointer_subjects: tuple[str, ...] = ()


_hooks: dict[str, Callable[[ErasureScope], ErasurePart]] = {}


def register_erasure_hook(name: str, hook: Callable[[ErasureScope], ErasurePart]) -> None:
    """An app that keeps text derived from memory (the wiki) registers how to erase it (``AppConfig.ready``).
    The hook runs inside the erasure's transaction; ``name`` keys its count in the result."""
    _hooks[name] = hook


# --- results ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EraseResult:
    agent_id: str
    subject_hash: str | None
    origin_hash: str | None
    counts: dict[str, int]
    kept: int = 0  # rows the erased origin wrote that another origin also said (kept with that text)
    audit_id: int | None = None
    dry_run: bool = False

    @property
    def rows(self) -> int:
        return self.counts.get("memories", 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            "subject_hash": self.subject_hash,
            "origin_hash": self.origin_hash,
            "counts": dict(self.counts),
            "kept": self.kept,
            "dry_run": self.dry_run,
        }


@dataclass(frozen=True)
class ReassignResult:
    from_agent: str
    to_agent: str
    rows: int
    writes: int
    keys: int
    dry_run: bool = False


@dataclass(frozen=True)
class PurgePreview:
    """What ``invalidate_by_origin`` would do now: the rows it would retract and restore, and whose trust it
    would crush (ids, in order), with the rows themselves for display (at most ``limit`` of each)."""

    origin: str
    since: datetime | None
    retracted: list[str]
    restored: list[str]
    trust_crushed: list[str]
    rows: dict[str, Memory] = field(default_factory=dict)


class _Rollback(Exception):
    def __init__(self, value: Any) -> None:
        super().__init__("preview")
        self.value = value


def keyed_hash(text: str | None) -> str | None:
    """HMAC-SHA256 of the text under the site's secret: proves "this subject was erased" to someone who knows
    the subject and the server, and reveals nothing to anyone else."""
    if text is None:
        return None
    key = str(getattr(settings, "SECRET_KEY", "")).encode()
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


# --- matching ------------------------------------------------------------------------------------------------


def _matcher(needles: Iterable[str]) -> re.Pattern[str] | None:
    parts = sorted({n.lower() for n in needles if n}, key=len, reverse=True)
    if not parts:
        return None
    return re.compile("|".join(re.escape(p) for p in parts))


def _text_of(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _quotes(pattern: re.Pattern[str] | None, texts: Iterable[Any]) -> bool:
    if pattern is None:
        return False
    return any(pattern.search(_text_of(t).lower()) for t in texts)


def _chunks(items: Iterable[Any]) -> Iterable[list[Any]]:
    ordered = sorted(items)
    for k in range(0, len(ordered), CHUNK):
        yield ordered[k : k + CHUNK]


def _check_scope(agent_id: Any, subject: Any, origin: Any) -> tuple[str, str | None, str | None]:
    agent_id = c.check_agent_id(agent_id)
    subj = c.check_text(subject, field="subject", required=False) if subject not in (None, "") else None
    orig = check_origin(origin) if origin not in (None, "") else None
    if subj is None and orig is None:
        raise InvalidArgument("give a subject, an origin or both", field="subject")
    return agent_id, subj, orig


def _check_reason(reason: Any) -> str:
    if not isinstance(reason, str) or not reason.strip() or len(reason) > 256:
        raise InvalidArgument("reason must be a non-empty string of at most 256 characters", field="reason")
    return reason.strip()


def _scrub(text: str, words: Iterable[str | None]) -> str:
    for w in words:
        if w:
            text = re.sub(re.escape(w), REDACTED, text, flags=re.IGNORECASE)
    return text


# --- erase ---------------------------------------------------------------------------------------------------


def erase(
    *,
    agent_id: str,
    subject: str | None = None,
    origin: str | None = None,
    reason: str,
    actor: str = "system",
) -> EraseResult:
    """Hard-delete what ``agent_id`` holds about ``subject`` and/or from ``origin`` (exact match) and every
    artefact that quotes it; leave one ``erase`` audit event with counts and keyed hashes (SPEC M5)."""
    agent_id, subj, orig = _check_scope(agent_id, subject, origin)
    reason = _check_reason(reason)
    actor = c.check_actor(actor)
    return _erase_tx(agent_id, subj, orig, reason, actor, dry=False)


def erase_preview(*, agent_id: str, subject: str | None = None, origin: str | None = None) -> EraseResult:
    """What ``erase`` would delete now (the same code, rolled back): counts only, nothing changes."""
    agent_id, subj, orig = _check_scope(agent_id, subject, origin)
    try:
        with transaction.atomic():
            raise _Rollback(_erase_tx(agent_id, subj, orig, "preview", "system:preview", dry=True))
    except _Rollback as done:
        result: EraseResult = done.value
        return result


@c.write_transaction
def _erase_tx(
    agent_id: str, subj: str | None, orig: str | None, reason: str, actor: str, *, dry: bool
) -> EraseResult:
    if orig is not None:
        c.lock_origin(agent_id, orig)
    t = c.now()
    sqlite = connection.vendor == "sqlite"
    if sqlite and not dry:
        rawsql.run("PRAGMA secure_delete = ON", [])
    try:
        return _erase(agent_id, subj, orig, reason, actor, t, dry=dry)
    finally:
        if sqlite and not dry:
            rawsql.run("PRAGMA secure_delete = OFF", [])


def _matched_rows(agent_id: str, subj: str | None, orig: str | None) -> set[str]:
    q = Memory.objects.filter(agent_id=agent_id)
    if subj is not None:
        q = q.filter(subject=subj)
    if orig is not None:
        q = q.filter(origin=orig)
    return set(q.values_list("id", flat=True)[: MAX_ERASE_ROWS + 1])


def _with_dependants(agent_id: str, ids: set[str]) -> set[str]:
    """``ids`` with their continuation rows and the rows derived from them, transitively."""
    out = set(ids)
    derived = list(
        Memory.objects.filter(agent_id=agent_id).exclude(derived_from=[]).values_list("id", "derived_from")
    )
    conts = [
        (mid, (meta or {}).get(CONTINUATION_KEY))
        for mid, meta in Memory.objects.filter(
            agent_id=agent_id, metadata__has_key=CONTINUATION_KEY
        ).values_list("id", "metadata")
    ]
    grew = True
    while grew and len(out) <= MAX_ERASE_ROWS:
        grew = False
        for mid, parent in conts:
            if parent in out and mid not in out:
                out.add(mid)
                grew = True
        for mid, cited in derived:
            if mid not in out and isinstance(cited, list) and out.intersection(cited):
                out.add(mid)
                grew = True
    return out


def _keep_reaffirmed(agent_id: str, orig: str, ids: set[str], t: datetime) -> set[str]:
    """Origin erasure: rows in ``ids`` that another origin's writes also support are kept, rewritten from the
    earliest such write (its text, origin, trust, event, session, ingestion time). Returns the kept ids."""
    others: dict[str, FactWrite] = {}
    for w in (
        FactWrite.objects.filter(agent_id=agent_id, memory_id__in=ids).exclude(origin=orig).order_by("id")
    ):
        others.setdefault(w.memory_id, w)
    for mid, w in others.items():
        FactWrite.objects.filter(id=w.id).update(is_reaffirm=False)
        row = Memory.objects.filter(id=mid).values_list("reaffirmed_by", flat=True).first() or []
        kept = [e for e in row if isinstance(e, dict) and e.get("origin") != orig]
        kept = [
            e for e in kept if not (e.get("source_event") == w.source_event and e.get("origin") == w.origin)
        ]
        Memory.objects.filter(id=mid).update(
            content=w.content,
            object=w.object,
            origin=w.origin,
            origin_trust=w.origin_trust,
            ingested_at=w.ingested_at,
            timestamp=w.ingested_at,
            source_event=w.source_event,
            session_id=w.session_id,
            reaffirmed_by=kept,
            derived_from=[],
        )
    return set(others)


def _strip_reaffirmations(agent_id: str, orig: str, keys: set[tuple[str, str]]) -> None:
    """The erased origin's entries leave the ``reaffirmed_by`` lists of the rows of ``keys``."""
    for s, p in sorted(keys):
        for mid, entries in (
            Memory.objects.filter(agent_id=agent_id, subject=s, predicate=p)
            .exclude(reaffirmed_by=[])
            .values_list("id", "reaffirmed_by")
        ):
            if isinstance(entries, list) and any(
                isinstance(e, dict) and e.get("origin") == orig for e in entries
            ):
                kept = [e for e in entries if not (isinstance(e, dict) and e.get("origin") == orig)]
                Memory.objects.filter(id=mid).update(reaffirmed_by=kept)


def _erase(
    agent_id: str, subj: str | None, orig: str | None, reason: str, actor: str, t: datetime, *, dry: bool
) -> EraseResult:
    counts: dict[str, int] = {}
    ids = _matched_rows(agent_id, subj, orig)
    if len(ids) > MAX_ERASE_ROWS:
        raise TooMuchToErase(f"more than {MAX_ERASE_ROWS} rows match: erase in parts", field="subject")
    kept: set[str] = set()
    if orig is not None:
        kept = _keep_reaffirmed(agent_id, orig, ids, t)
        ids -= kept
    ids = _with_dependants(agent_id, ids)
    norm = normalize_entity(subj) if subj else ""

    # what must not survive: the subject, the rows' ids, the openings of their texts
    texts = list(Memory.objects.filter(id__in=ids).values_list("content", "object")[:MAX_NEEDLES])
    needles: list[str] = [x for x in (subj, norm) if x]
    needles += sorted(ids)[:MAX_NEEDLES]
    needles += [content[:SNIPPET_CHARS] for content, _ in texts if content and len(content) >= 12]
    needles = needles[: MAX_NEEDLES * 2]

    # other apps' records (wiki pages) and the pointer rows that went with them
    scope = ErasureScope(agent_id, subj, orig, frozenset(ids), tuple(needles))
    pointer_subjects: set[str] = set()
    for name, hook in sorted(_hooks.items()):
        part = hook(scope)
        counts[name] = part.deleted
        pointer_subjects.update(part.pointer_subjects)
    if pointer_subjects:
        ids |= set(
            Memory.objects.filter(agent_id=agent_id, subject__in=sorted(pointer_subjects)).values_list(
                "id", flat=True
            )
        )
        ids = _with_dependants(agent_id, ids)
    pattern = _matcher(needles)

    # the keys touched (locked, and re-derived after when rows of them remain)
    keys: set[tuple[str, str]] = set()
    for chunk in _chunks(ids):
        keys |= {
            (s, p)
            for s, p in Memory.objects.filter(id__in=chunk, subject__isnull=False).values_list(
                "subject", "predicate"
            )
            if s and p
        }
    c.lock_keys(agent_id, keys)

    writes = FactWrite.objects.filter(agent_id=agent_id)
    write_q = Q(memory_id__in=[])
    if subj is not None and orig is None:
        write_q |= Q(subject=subj)
    if orig is not None:
        write_q |= Q(origin=orig) if subj is None else Q(origin=orig, subject=subj)
    if pointer_subjects:
        write_q |= Q(subject__in=sorted(pointer_subjects))
    keys |= set(writes.filter(write_q).values_list("subject", "predicate").distinct())
    c.lock_keys(agent_id, keys)
    if orig is not None:
        _strip_reaffirmations(agent_id, orig, keys)
    n = writes.filter(write_q).delete()[0]
    for chunk in _chunks(ids):
        n += FactWrite.objects.filter(agent_id=agent_id, memory_id__in=chunk).delete()[0]
    counts["fact_writes"] = n

    n = 0
    for chunk in _chunks(ids):
        n += Memory.objects.filter(agent_id=agent_id, id__in=chunk).delete()[0]
        MemoryTier.objects.filter(memory_id__in=chunk).delete()
        FeedbackWeight.objects.filter(memory_id__in=chunk).delete()
        Feedback.objects.filter(agent_id=agent_id, memory_id__in=chunk).delete()
        vectors.delete_for(chunk)
    counts["memories"] = n
    counts["memory_entities"] = erase_links(agent_id=agent_id, memory_ids=ids, name=norm or None)

    # rows of the touched keys that remain (an origin erasure) follow their remaining writes
    changed: set[str] = set()
    for s, p in sorted(keys):
        changed |= rederive_key(agent_id, s, p, at=t)

    counts.update(_erase_companions(agent_id, subj, norm, orig, ids, pattern))
    if connection.vendor == "sqlite" and not dry and counts["memories"]:
        rawsql.run("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')", [])
    c.bump_generation(agent_id, None)
    event_id = None
    if not dry:
        event = c.audit(
            agent_id=agent_id,
            actor=actor,
            action=ERASE_ACTION,
            reason=_scrub(reason, [subj, norm, orig]),
            at=t,
            subject_hash=keyed_hash(subj),
            origin_hash=keyed_hash(orig),
            origin_class=origin_class(orig) if orig else None,
            counts=counts,
            kept=len(kept),
        )
        event_id = event.id
    return EraseResult(agent_id, keyed_hash(subj), keyed_hash(orig), counts, len(kept), event_id, dry)


def _erase_companions(
    agent_id: str,
    subj: str | None,
    norm: str,
    orig: str | None,
    ids: set[str],
    pattern: re.Pattern[str] | None,
) -> dict[str, int]:
    counts: dict[str, int] = {}

    def quoting(rows: Iterable[tuple[Any, ...]]) -> list[Any]:
        return [r[0] for r in rows if _quotes(pattern, r[1:])]

    # quarantine batches and their events
    approvals = ApprovalRequest.objects.filter(agent_id=agent_id)
    drop = quoting(approvals.values_list("id", "subject", "payload", "undo_state"))
    if orig is not None:
        by_origin = approvals.filter(origin=orig)
        if subj is not None:
            by_origin = by_origin.filter(subject=subj)
        drop += list(by_origin.values_list("id", flat=True))
    counts["approvals"] = ApprovalRequest.objects.filter(id__in=set(drop)).delete()[0]
    counts["outbound_events"] = OutboundEvent.objects.filter(
        id__in=quoting(OutboundEvent.objects.filter(agent_id=agent_id).values_list("id", "payload"))
    ).delete()[0]
    guard = GuardCounter.objects.filter(agent_id=agent_id)
    guard_q = Q(pk__in=[])
    if subj is not None:
        guard_q |= Q(subject__in={subj, norm}) if orig is None else Q(subject__in={subj, norm}, origin=orig)
    elif orig is not None:
        guard_q |= Q(origin=orig)
    counts["guard_counters"] = guard.filter(guard_q).delete()[0]

    # the background track's items and the entity tables of the subject
    review = ReviewItem.objects.filter(agent_id=agent_id).values_list(
        "id", "memory_ids", "title", "payload", "edited", "undo_state", "reason"
    )
    counts["review_items"] = ReviewItem.objects.filter(id__in=quoting(review)).delete()[0]
    found = DiscoveryItem.objects.filter(agent_id=agent_id).values_list(
        "id", "entity_a", "entity_b", "explanation", "evidence"
    )
    counts["discovery_items"] = DiscoveryItem.objects.filter(id__in=quoting(found)).delete()[0]
    if norm:
        counts["entity_edges"] = (
            EntityEdge.objects.filter(agent_id=agent_id)
            .filter(Q(entity_a=norm) | Q(entity_b=norm))
            .delete()[0]
        )
        communities = Community.objects.filter(agent_id=agent_id).values_list("id", "name", "members")
        counts["communities"] = Community.objects.filter(id__in=quoting(communities)).delete()[0]
        counts["entity_aliases"] = (
            EntityAlias.objects.filter(agent_id=agent_id)
            .filter(Q(canonical=norm) | Q(alias=norm))
            .delete()[0]
        )
        counts["entity_embeddings"] = EntityEmbedding.objects.filter(agent_id=agent_id, entity=norm).delete()[
            0
        ]

    # what the agent asked and was told about it
    journal = QueryJournal.objects.filter(agent_id=agent_id).values_list("id", "query", "result_ids")
    counts["query_journal"] = QueryJournal.objects.filter(id__in=quoting(journal)).delete()[0]
    gaps = KnowledgeGap.objects.filter(agent_id=agent_id).values_list("id", "query")
    counts["knowledge_gaps"] = KnowledgeGap.objects.filter(id__in=quoting(gaps)).delete()[0]
    snaps = InterestSnapshot.objects.filter(agent_id=agent_id).values_list("id", "profile", "delta")
    counts["interest_snapshots"] = InterestSnapshot.objects.filter(id__in=quoting(snaps)).delete()[0]
    n = 0
    for aid, evidence in (
        Attitude.objects.filter(agent_id=agent_id).exclude(evidence=[]).values_list("id", "evidence")
    ):
        if isinstance(evidence, list) and ids.intersection(map(str, evidence)):
            Attitude.objects.filter(id=aid).update(evidence=[e for e in evidence if str(e) not in ids])
            n += 1
    counts["attitude_evidence"] = n

    # the audit log keeps who did what and when; the text it quoted goes
    n = 0
    events = AuditEvent.objects.filter(agent_id=agent_id).values_list(
        "id", "memory_id", "subject", "reason", "details"
    )
    hits = []
    for eid, mid, esubj, ereason, details in events.iterator(chunk_size=2000):
        if (
            (mid and mid in ids)
            or (subj and esubj in (subj, norm))
            or _quotes(pattern, (esubj, ereason, details))
        ):
            hits.append(eid)
    for part in _chunks(hits):
        n += AuditEvent.objects.filter(id__in=part).update(
            subject=None, reason=REDACTED, details={"redacted": ERASE_ACTION}
        )
    counts["audit_redacted"] = n
    return {k: v for k, v in counts.items()}


# --- purge preview ---------------------------------------------------------------------------------------------


def purge_preview(*, agent_id: str, origin: str, since: Any = None, limit: int = 50) -> PurgePreview:
    """What ``invalidate_by_origin`` would retract, restore and crush now (the purge itself, rolled back)."""
    from .purge import invalidate_by_origin

    agent_id = c.check_agent_id(agent_id)
    if not isinstance(origin, str) or not origin.strip():
        raise InvalidArgument("origin must be a non-empty string", field="origin")
    try:
        with transaction.atomic():
            result = invalidate_by_origin(
                agent_id=agent_id, origin=origin, since=since, actor="system:preview"
            )
            event = (
                AuditEvent.objects.filter(agent_id=agent_id, action="origin_purge", actor="system:preview")
                .order_by("-id")
                .first()
            )
            details = event.details if event is not None else {}
            raise _Rollback((result, details))
    except _Rollback as done:
        result, details = done.value
    retracted = list(details.get("retracted") or [])
    restored = list(details.get("restored") or [])
    crushed = list(details.get("trust_crushed") or [])
    shown = retracted[:limit] + restored[:limit] + crushed[:limit]
    rows = {m.id: m for m in Memory.objects.filter(agent_id=agent_id, id__in=shown)}
    return PurgePreview(result.origin, result.since, retracted, restored, crushed, rows)


# --- reassign --------------------------------------------------------------------------------------------------


@c.write_transaction
def reassign(
    *, from_agent: str, to_agent: str, subject: str | None = None, actor: str = "system"
) -> ReassignResult:
    """Move ``from_agent``'s rows (all, or one subject's) with their write log, tiers and feedback weights to
    ``to_agent``; re-derive both agents' keys; bump both generations; audit on both (SPEC M5)."""
    src = c.check_agent_id(from_agent)
    dst = c.check_agent_id(to_agent)
    if src == dst:
        raise InvalidArgument("from_agent and to_agent are the same agent", field="to_agent")
    subj = c.check_text(subject, field="subject", required=False) if subject not in (None, "") else None
    actor = c.check_actor(actor)
    if not Agent.objects.filter(agent_id=dst).exists():
        raise NotFound("no such agent", field="to_agent")
    t = c.now()
    rows = Memory.objects.filter(agent_id=src)
    if subj is not None:
        rows = rows.filter(subject=subj)
    ids = set(rows.values_list("id", flat=True)[: MAX_ERASE_ROWS + 1])
    if len(ids) > MAX_ERASE_ROWS:
        raise TooMuchToErase(f"more than {MAX_ERASE_ROWS} rows match: reassign by subject", field="subject")
    keys: set[tuple[str, str]] = set()
    for chunk in _chunks(ids):
        keys |= {
            (s, p)
            for s, p in Memory.objects.filter(id__in=chunk, subject__isnull=False).values_list(
                "subject", "predicate"
            )
            if s and p
        }
    c.lock_keys(src, keys)
    c.lock_keys(dst, keys)
    c.ensure_agent(dst, bump_generation=False)
    write_q = Q(agent_id=src) if subj is None else Q(agent_id=src, subject=subj)
    written = set(FactWrite.objects.filter(write_q).values_list("memory_id", flat=True))
    n_writes = FactWrite.objects.filter(write_q).update(agent_id=dst)
    # rows with writes arrive held (exempt from the one-open-row constraint) and re-derivation places them
    # among the target's own rows; rows no write speaks for move as they are
    n_rows = 0
    for chunk in _chunks(ids):
        metas = dict(Memory.objects.filter(id__in=chunk).values_list("id", "metadata"))
        with_writes = [
            mid for mid in chunk if mid in written or (metas.get(mid) or {}).get(CONTINUATION_KEY) in written
        ]
        plain = [mid for mid in chunk if mid not in set(with_writes)]
        open_believed = Memory.objects.filter(
            id__in=with_writes, valid_until__isnull=True, quarantined=False
        ).filter(Q(invalidated_by_event__isnull=True) | ~Q(invalidated_by_event__in=RETRACT_EVENTS))
        held = set(open_believed.values_list("id", flat=True))
        Memory.objects.filter(id__in=held).update(quarantined=True)
        n_rows += Memory.objects.filter(id__in=with_writes).update(agent_id=dst)
        try:
            with transaction.atomic():
                n_rows += Memory.objects.filter(id__in=plain).update(agent_id=dst)
        except IntegrityError:
            raise InvalidArgument(
                "the target agent already has a current value for a key whose value here has no history",
                code="conflict",
                field="to_agent",
            ) from None
        MemoryTier.objects.filter(memory_id__in=chunk).update(agent_id=dst)
        reassign_links(memory_ids=chunk, to_agent=dst)
        FeedbackWeight.objects.filter(memory_id__in=chunk).update(agent_id=dst)
    changed: set[str] = set()
    for s, p in sorted(keys):
        changed |= rederive_key(dst, s, p, at=t)
        rederive_key(src, s, p, at=t)
    c.bump_generation(src, None)
    c.bump_generation(dst, None)
    for agent, other, direction in ((src, dst, "to"), (dst, src, "from")):
        c.audit(
            agent_id=agent,
            actor=actor,
            action=REASSIGN_ACTION,
            subject=subj,
            reason=f"reassigned {direction} {other}",
            at=t,
            from_agent=src,
            to_agent=dst,
            rows=n_rows,
            writes=n_writes,
            keys=len(keys),
        )
    return ReassignResult(src, dst, n_rows, n_writes, len(keys))
