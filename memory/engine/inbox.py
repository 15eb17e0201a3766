"""The discovery inbox (SPEC B4, B5, D4): what a discovery run stores, and what people do with its items.

``discovery_record`` stores one run in one transaction: the run and its report, the entity edges it kept
(replacing the agent's previous ones; the strongest ``MAX_STORED_EDGES``), its communities under their stable
numbers (previous ones that matched nothing are retired), and its findings as inbox items (``inbox_store``): a
pair of entities enters an agent's inbox once, whatever became of it (open, pinned, snoozed or dismissed), so a
run never proposes a duplicate. Nothing here touches a memory row.

People act on items with ``inbox_act``: ``pin``, ``dismiss``, ``snooze`` until a later time, and back
(``unpin``, ``reopen``). A snoozed item whose time has come reads as open again. Another agent's item is
``not_found``, exactly like a missing one. ``discover`` is the job's entry point; the computation lives in
``memory.dream.discovery`` (imported when called: the background track builds on the engine, not the reverse).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Case, Count, IntegerField, Q, Value, When

from memory.models import Community, DiscoveryItem, DiscoveryRun, EntityEdge

from . import common as c
from .types import EngineError, InvalidArgument, NotFound, iso

KINDS = DiscoveryItem.KINDS
STATUSES = ("open", "pinned", "snoozed", "dismissed")
ACTIONS = ("pin", "unpin", "dismiss", "snooze", "reopen")
MAX_STORED_EDGES = 100_000
MAX_EVIDENCE_BYTES = 32 * 1024
MAX_FINDINGS = 100
# action -> (statuses it applies to, status after)
TRANSITIONS = {
    "pin": (("open", "snoozed"), "pinned"),
    "unpin": (("pinned",), "open"),
    "dismiss": (("open", "pinned", "snoozed"), "dismissed"),
    "snooze": (("open", "pinned", "snoozed"), "snoozed"),
    "reopen": (("dismissed", "snoozed"), "open"),
}


class SnoozeInPast(EngineError):
    code = "snooze_in_past"


class InvalidTransition(EngineError):
    code = "invalid_transition"


# --- records ------------------------------------------------------------------------------------------------


def pair_fingerprint(entity_a: str, entity_b: str) -> str:
    """What makes two findings the same: the pair of entity names, in either order."""
    lo, hi = sorted((entity_a, entity_b))
    return hashlib.sha256(f"pair\x1f{lo}\x1f{hi}".encode()).hexdigest()[:40]


def open_q(now: datetime) -> Q:
    """Items that are open now: open ones, and snoozed ones whose time has come."""
    return Q(status="open") | Q(status="snoozed", snoozed_until__lte=now)


def status_q(status: str, now: datetime) -> Q:
    """Items whose status, as read at ``now``, is ``status``."""
    if status == "open":
        return open_q(now)
    if status == "snoozed":
        return Q(status="snoozed", snoozed_until__gt=now)
    return Q(status=status)


@dataclass(frozen=True)
class InboxRecord:
    id: int
    agent_id: str
    kind: str
    entity_a: str
    entity_b: str
    score: float
    explanation: str
    evidence: dict[str, Any]
    status: str  # as read now: a snoozed item whose time has come is "open"
    snoozed_until: datetime | None = None
    created_at: datetime | None = None
    decided_by: str = ""
    decided_at: datetime | None = None
    run_id: int | None = None

    @classmethod
    def of(cls, item: DiscoveryItem, now: datetime | None = None) -> InboxRecord:
        now = now or c.now()
        status = item.status
        if status == "snoozed" and item.snoozed_until is not None and item.snoozed_until <= now:
            status = "open"
        return cls(
            id=item.id,
            agent_id=item.agent_id,
            kind=item.kind,
            entity_a=item.entity_a,
            entity_b=item.entity_b,
            score=item.score,
            explanation=item.explanation,
            evidence=item.evidence or {},
            status=status,
            snoozed_until=item.snoozed_until,
            created_at=item.created_at,
            decided_by=item.decided_by,
            decided_at=item.decided_at,
            run_id=item.run_id,
        )

    def to_dict(self) -> dict[str, Any]:
        """The reply shape of ``memory_discoveries``: the evidence by ids (memory ids, sessions, names)."""
        ev = self.evidence
        return {
            "id": self.id,
            "kind": self.kind,
            "entities": [self.entity_a, self.entity_b],
            "score": round(self.score, 4),
            "status": self.status,
            "explanation": self.explanation,
            "evidence": {
                "memory_ids": [f["id"] for f in ev.get("facts", [])],
                "sessions": list(ev.get("sessions", [])),
                "shared_neighbours": list(ev.get("neighbours", [])),
                "signals": dict(ev.get("signals", {})),
            },
            "created_at": iso(self.created_at) if self.created_at else None,
        }


@dataclass(frozen=True)
class Finding:
    """What discovery proposes for the inbox."""

    kind: str
    entity_a: str
    entity_b: str
    score: float
    explanation: str
    evidence: dict[str, Any]

    @property
    def fingerprint(self) -> str:
        return pair_fingerprint(self.entity_a, self.entity_b)


@dataclass(frozen=True)
class CommunityRecord:
    number: int
    name: str
    size: int
    members: tuple[str, ...]


@dataclass
class EdgeBatch:
    """A run's kept edges as columns (``entity_a`` < ``entity_b``); ``embedding`` None when that signal was
    missing."""

    entity_a: list[str]
    entity_b: list[str]
    composite: list[float]
    cooccurrence: list[int]
    cooccurrence_scaled: list[float]
    session_jaccard: list[float]
    adamic_adar: list[float]
    type_affinity: list[float]
    embedding: list[float] | None = None

    def __len__(self) -> int:
        return len(self.entity_a)


@dataclass(frozen=True)
class DiscoveryOutcome:
    """A stored run: its id and report, and the inbox items it added (``items``)."""

    run_id: int
    status: str
    report: dict[str, Any]
    items: list[InboxRecord] = field(default_factory=list)

    def __iter__(self) -> Any:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


# --- storing a run --------------------------------------------------------------------------------------------


def _check_finding(f: Finding) -> None:
    if f.kind not in KINDS:
        raise InvalidArgument(f"kind must be one of {', '.join(KINDS)}", field="kind")
    for side in (f.entity_a, f.entity_b):
        c.check_text(side, field="entity", required=True, limit=c.MAX_TRIPLE_PART * 18)
    if f.entity_a == f.entity_b:
        raise InvalidArgument("a finding links two different entities", field="entity")
    if not 0.0 <= float(f.score) <= 1.0 + 1e-9:
        raise InvalidArgument("score must be between 0 and 1", field="score")
    if len(json.dumps(f.evidence, default=str)) > MAX_EVIDENCE_BYTES:
        raise InvalidArgument(f"evidence is larger than {MAX_EVIDENCE_BYTES} bytes", field="evidence")


def _store_findings(
    agent_id: str, findings: list[Finding], *, run: DiscoveryRun | None, at: datetime
) -> list[DiscoveryItem]:
    if len(findings) > MAX_FINDINGS:
        raise InvalidArgument(f"at most {MAX_FINDINGS} findings at once", field="findings")
    for f in findings:
        _check_finding(f)
    wanted: dict[str, Finding] = {}
    for f in findings:
        wanted.setdefault(f.fingerprint, f)
    seen = set(
        DiscoveryItem.objects.filter(agent_id=agent_id, fingerprint__in=list(wanted)).values_list(
            "fingerprint", flat=True
        )
    )
    fresh = [
        DiscoveryItem(
            agent_id=agent_id,
            kind=f.kind,
            fingerprint=fp,
            entity_a=min(f.entity_a, f.entity_b),
            entity_b=max(f.entity_a, f.entity_b),
            score=min(1.0, float(f.score)),
            explanation=f.explanation[:2000],
            evidence=f.evidence,
            status=DiscoveryItem.OPEN,
            run=run,
            created_at=at,
        )
        for fp, f in wanted.items()
        if fp not in seen
    ]
    if fresh:
        DiscoveryItem.objects.bulk_create(fresh)
    return list(
        DiscoveryItem.objects.filter(
            agent_id=agent_id, fingerprint__in=[i.fingerprint for i in fresh]
        ).order_by("id")
    )


@c.write_transaction
def inbox_store(
    *, agent_id: str, findings: list[Finding], actor: str = "system", run_id: int | None = None
) -> list[InboxRecord]:
    """Store ``findings`` as open inbox items, leaving out any pair the agent's inbox already holds (in any
    status); returns the items added. Audited."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    run = DiscoveryRun.objects.filter(agent_id=agent_id, id=run_id).first() if run_id is not None else None
    if run_id is not None and run is None:
        raise NotFound("no such discovery run", field="run_id")
    c._advisory_lock(f"discovery\x1f{agent_id}")
    t = c.now()
    items = _store_findings(agent_id, list(findings), run=run, at=t)
    if items:
        c.audit(agent_id=agent_id, actor=actor, action="discovery_store", at=t, added=[i.id for i in items])
    return [InboxRecord.of(i, t) for i in items]


def _insert_edges(agent_id: str, run_id: int, batch: EdgeBatch) -> None:
    """The run's edges in one pass on the driver's cursor: executemany on SQLite, COPY on PostgreSQL."""
    cols = (
        "agent_id",
        "run_id",
        "entity_a",
        "entity_b",
        "composite",
        "cooccurrence",
        "cooccurrence_scaled",
        "session_jaccard",
        "adamic_adar",
        "type_affinity",
        "embedding",
    )
    emb = batch.embedding if batch.embedding is not None else [None] * len(batch)
    rows = zip(
        [agent_id] * len(batch),
        [run_id] * len(batch),
        batch.entity_a,
        batch.entity_b,
        batch.composite,
        batch.cooccurrence,
        batch.cooccurrence_scaled,
        batch.session_jaccard,
        batch.adamic_adar,
        batch.type_affinity,
        emb,
        strict=True,
    )
    table = EntityEdge._meta.db_table
    connection.ensure_connection()
    raw = connection.connection
    if connection.vendor == "postgresql":
        with raw.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        return
    marks = ", ".join("?" * len(cols))
    raw.executemany(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})", rows)


@c.write_transaction
def discovery_record(
    *,
    agent_id: str,
    started_at: datetime,
    report: dict[str, Any],
    edges: EdgeBatch,
    communities: list[tuple[int, str, list[str]]],
    findings: list[Finding],
    actor: str = "system",
    dream_run_id: int | None = None,
) -> DiscoveryOutcome:
    """Store one discovery run whole (see the module's docstring): ``communities`` are (stable number, name,
    members). Returns the run and the items it added."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    if len(edges) > MAX_STORED_EDGES:
        raise InvalidArgument(f"at most {MAX_STORED_EDGES} edges per run", field="edges")
    numbers = [n for n, _, _ in communities]
    if len(set(numbers)) != len(numbers):
        raise InvalidArgument("community numbers must be distinct", field="communities")
    c._advisory_lock(f"discovery\x1f{agent_id}")
    c.ensure_agent(agent_id, bump_generation=False)
    t = c.now()
    status = DiscoveryRun.DONE if report.get("facts") else DiscoveryRun.EMPTY
    run = DiscoveryRun.objects.create(
        agent_id=agent_id,
        status=status,
        actor=actor,
        started_at=started_at,
        finished_at=t,
        dream_run_id=dream_run_id,
        report=report,
    )
    EntityEdge.objects.filter(agent_id=agent_id).exclude(run=run).delete()
    if len(edges):
        _insert_edges(agent_id, run.id, edges)
    live = {cm.number: cm for cm in Community.objects.filter(agent_id=agent_id)}
    kept = set()
    for number, name, members in communities:
        kept.add(number)
        members = sorted(set(members))
        row = live.get(number)
        if row is None:
            Community.objects.create(
                agent_id=agent_id,
                number=number,
                name=name[:512],
                size=len(members),
                members=members,
                run=run,
                created_at=t,
                updated_at=t,
            )
        else:
            row.name, row.size, row.members, row.run, row.updated_at, row.retired_at = (
                name[:512],
                len(members),
                members,
                run,
                t,
                None,
            )
            row.save(update_fields=["name", "size", "members", "run", "updated_at", "retired_at"])
    Community.objects.filter(agent_id=agent_id, retired_at__isnull=True).exclude(number__in=kept).update(
        retired_at=t, size=0
    )
    items = _store_findings(agent_id, findings, run=run, at=t)
    counts = _counts(items)
    report = {**report, "added": counts}
    run.report = report
    run.save(update_fields=["report"])
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="discovery_run",
        at=t,
        run_id=run.id,
        dream_run_id=run.dream_run_id,
        edges=len(edges),
        communities=len(communities),
        added=counts,
    )
    return DiscoveryOutcome(run.id, status, report, [InboxRecord.of(i, t) for i in items])


def _counts(items: list[DiscoveryItem]) -> dict[str, int]:
    out = {k: 0 for k in KINDS}
    for i in items:
        out[i.kind] = out.get(i.kind, 0) + 1
    return out


# --- reading --------------------------------------------------------------------------------------------------


def _check_status(status: Any, *, allow_all: bool = True) -> str | None:
    if status is None:
        return None
    choices = (*STATUSES, "all") if allow_all else STATUSES
    if status not in choices:
        raise InvalidArgument(f"status must be one of {', '.join(choices)}", field="status")
    return str(status)


def inbox_list(
    *, agent_id: str, status: str | None = None, kind: str | None = None, limit: int | None = None
) -> list[InboxRecord]:
    """The agent's inbox items: ``status`` open | pinned | snoozed | dismissed | all, or None for every item
    not dismissed; ``kind`` one of the three kinds. Pinned first, then by kind (cross_community,
    indirect_strong, knowledge_gap: scores of different kinds do not compare), then highest score."""
    agent_id = c.check_agent_id(agent_id)
    status = _check_status(status)
    if kind is not None and kind not in KINDS:
        raise InvalidArgument(f"kind must be one of {', '.join(KINDS)}", field="kind")
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000
    ):
        raise InvalidArgument("limit must be an integer from 1 to 1000", field="limit")
    now = c.now()
    qs = inbox_query(agent_id=agent_id, status=status, kind=kind, now=now)
    if limit is not None:
        qs = qs[:limit]
    return [InboxRecord.of(i, now) for i in qs]


def inbox_query(*, agent_id: str, status: str | None, kind: str | None, now: datetime) -> Any:
    """The items of ``inbox_list`` as a QuerySet of ``DiscoveryItem`` (a page pages it; ``InboxRecord.of``
    reads each as of ``now``). Arguments are not validated: callers pass checked values."""
    qs = DiscoveryItem.objects.filter(agent_id=agent_id)
    if status is None:
        qs = qs.exclude(status="dismissed")
    elif status != "all":
        qs = qs.filter(status_q(status, now))
    if kind:
        qs = qs.filter(kind=kind)
    rank = Case(When(status="pinned", then=Value(0)), default=Value(1), output_field=IntegerField())
    kinds = Case(*(When(kind=k, then=Value(n)) for n, k in enumerate(KINDS)), output_field=IntegerField())
    return qs.annotate(pinned_first=rank, kind_rank=kinds).order_by(
        "pinned_first", "kind_rank", "-score", "id"
    )


def inbox_get(*, agent_id: str, item_id: int) -> InboxRecord:
    """One item of this agent; any other id is ``not_found``."""
    agent_id = c.check_agent_id(agent_id)
    item = _item(agent_id, item_id)
    return InboxRecord.of(item)


def _item(agent_id: str | None, item_id: Any) -> DiscoveryItem:
    if isinstance(item_id, bool) or not isinstance(item_id, int):
        raise NotFound("no such discovery item", field="item_id")
    qs = DiscoveryItem.objects.filter(id=item_id)
    if agent_id is not None:
        qs = qs.filter(agent_id=agent_id)
    item = qs.first()
    if item is None:
        raise NotFound("no such discovery item", field="item_id")
    return item


def inbox_counts(*, agent_id: str) -> dict[str, int]:
    """How many items of each status (as read now) the agent has."""
    agent_id = c.check_agent_id(agent_id)
    now = c.now()
    row = DiscoveryItem.objects.filter(agent_id=agent_id).aggregate(
        **{s: Count("id", filter=status_q(s, now)) for s in STATUSES}
    )
    return {s: int(row[s] or 0) for s in STATUSES}


def communities(*, agent_id: str) -> list[CommunityRecord]:
    """The agent's live communities (from its latest discovery run), largest first."""
    agent_id = c.check_agent_id(agent_id)
    rows = Community.objects.filter(agent_id=agent_id, retired_at__isnull=True).order_by("-size", "number")
    return [CommunityRecord(r.number, r.name, r.size, tuple(r.members)) for r in rows]


def last_discovery_run(*, agent_id: str) -> DiscoveryRun | None:
    agent_id = c.check_agent_id(agent_id)
    return DiscoveryRun.objects.filter(agent_id=agent_id).order_by("-started_at", "-id").first()


# --- acting -----------------------------------------------------------------------------------------------------


@c.write_transaction
def inbox_act(
    *,
    item_id: int,
    action: str,
    actor: str = "system",
    until: datetime | str | None = None,
    agent_id: str | None = None,
) -> InboxRecord:
    """Pin, unpin, dismiss, snooze (``until`` a later time) or reopen one item; audited. With ``agent_id``,
    another agent's item is ``not_found`` like a missing one. Acting again to the state an item is already in
    changes nothing; an action that does not apply to its state is ``invalid_transition``."""
    actor = c.check_actor(actor)
    if agent_id is not None:
        agent_id = c.check_agent_id(agent_id)
    if action not in ACTIONS:
        raise InvalidArgument(f"action must be one of {', '.join(ACTIONS)}", field="action")
    t = c.now()
    when = c.parse_time(until, field="until")
    if action == "snooze":
        if when is None:
            raise InvalidArgument("snooze needs a time to snooze until", field="until")
        if when <= t:
            raise SnoozeInPast("snooze until a time in the future", field="until")
    elif when is not None:
        raise InvalidArgument("only snooze takes a time", field="until")
    item = _item(agent_id, item_id)
    item = DiscoveryItem.objects.select_for_update().get(id=item.id)
    current = InboxRecord.of(item, t).status
    sources, target = TRANSITIONS[action]
    if current == target and action != "snooze":
        return InboxRecord.of(item, t)
    if current not in sources:
        raise InvalidTransition(f"cannot {action} an item that is {current}", field="action")
    before = item.status
    item.status = target
    item.snoozed_until = when if target == "snoozed" else None
    item.decided_by, item.decided_at = actor, t
    item.save(update_fields=["status", "snoozed_until", "decided_by", "decided_at"])
    c.audit(
        agent_id=item.agent_id,
        actor=actor,
        action=f"discovery_{action}",
        at=t,
        item_id=item.id,
        kind=item.kind,
        pair=[item.entity_a, item.entity_b],
        before=before,
        after=target,
        until=iso(when) if when else None,
    )
    return InboxRecord.of(item, t)


def discover(*, agent_id: str, actor: str = "system", dream_run_id: int | None = None) -> DiscoveryOutcome:
    """SPEC B5: compute the agent's entity edges, communities and discoveries now and store them
    (``memory.dream.discovery.discover``); returns the run with the inbox items it added."""
    from memory.dream.discovery import discover as run

    return run(agent_id, actor=actor, dream_run_id=dream_run_id)
