"""Read-only queries the dashboard pages need, with their joins and aggregates baked in.

Nothing here writes. Memory rows are written by ``memory.engine`` only; reads that the engine's public API
does not offer (lists over every row, including history) live here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from memory import engine
from memory.engine import CLASS_ALIASES, origin_class
from memory.models import (
    CATEGORIES,
    Agent,
    AuditEvent,
    Memory,
    Mistake,
)

CONTINUATION_KEY = "continuation_of"


# --- home -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentCounts:
    current: int = 0
    facts: int = 0
    quarantined: int = 0
    retracted: int = 0
    total: int = 0


@dataclass(frozen=True)
class AgentSummary:
    agent: Agent
    counts: AgentCounts


def agents_with_counts(agents: QuerySet[Agent], *, at: datetime | None = None) -> list[AgentSummary]:
    """The given agents with their memory counts: two queries whatever the number of agents. Every column the
    counts read is in the (agent, layer, quarantined, invalidated_by_event, valid_from, valid_until, subject)
    index, and ``agent_id`` (never null) is what is counted, so the rows themselves are never read (as in
    ``engine.summarize``: ``Count("id")`` made SQLite visit every row, ≈ 110 ms at 100k memories). Kept per agent while its state
    stamp and world time allow (``engine.state_memo_many``): one query for the stamps then."""
    at = at or timezone.now()
    agent_list = list(agents)
    if not agent_list:
        return []
    by_agent = engine.state_memo_many(
        [a.agent_id for a in agent_list], "agent_counts", at, lambda ids: _agent_counts(ids, at)
    )
    return [AgentSummary(a, by_agent[a.agent_id]) for a in agent_list]


def _agent_counts(agent_ids: list[str], at: datetime) -> dict[str, AgentCounts]:
    cur = engine.current_q(at)
    rows = (
        Memory.objects.filter(agent_id__in=agent_ids)
        .order_by()
        .values("agent_id")
        .annotate(
            current=Count("agent_id", filter=cur),
            facts=Count("subject", filter=cur),
            quarantined=Count("agent_id", filter=Q(quarantined=True) & engine.NOT_RETRACTED),
            retracted=Count("agent_id", filter=engine.RETRACTED),
            total=Count("agent_id"),
        )
    )
    found = {r.pop("agent_id"): AgentCounts(**r) for r in rows}
    return {aid: found.get(aid, AgentCounts()) for aid in agent_ids}


def recent_fact_keys(agent_id: str, *, limit: int) -> list[FactKey]:
    """``fact_keys(agent_id, limit=limit)`` (most recently written first) without grouping every row: the
    newest rows are walked on the (agent, ingested_at) index until ``limit`` keys (and any tied with the last)
    are seen, then only those keys' rows are counted. Falls back to ``fact_keys`` if rows without an ingestion
    time could matter."""
    rows = (
        Memory.objects.filter(
            agent_id=agent_id, subject__isnull=False, predicate__isnull=False, ingested_at__isnull=False
        )
        .order_by("-ingested_at")
        .values_list("subject", "predicate", "ingested_at")
    )
    last: dict[tuple[str, str], datetime] = {}
    cut: datetime | None = None
    for subject, predicate, when in rows.iterator(chunk_size=max(50, limit * 4)):
        if cut is not None and when < cut:
            break
        last.setdefault((subject, predicate), when)
        if cut is None and len(last) >= limit:
            cut = when  # keep reading rows tied with the last key's time: ties are ordered by row count
    if cut is None:  # fewer keys with an ingestion time than asked for: the plain grouping is exact
        return fact_keys(agent_id, limit=limit)
    counts = {  # index seeks on (agent, subject, predicate); pairs crossing two keys are dropped below
        (r["subject"], r["predicate"]): r["rows"]
        for r in Memory.objects.filter(
            agent_id=agent_id,
            subject__in={s for s, _ in last},
            predicate__in={p for _, p in last},
        )
        .order_by()
        .values("subject", "predicate")
        .annotate(rows=Count("id"))
    }
    keys = [FactKey(s, p, counts.get((s, p), 0), when) for (s, p), when in last.items()]
    keys.sort(
        key=lambda k: (
            -k.last_ingested.timestamp() if k.last_ingested else 0,
            -k.rows,
            k.subject,
            k.predicate,
        )
    )
    return keys[:limit]


# --- memory lists -----------------------------------------------------------------------------------------


def origin_class_q(cls: str) -> Q:
    """Rows whose origin belongs to class ``cls`` (``channel`` matches ``channel`` and ``channel:…``)."""
    cls = origin_class(cls)
    names = {cls} | {alias for alias, target in CLASS_ALIASES.items() if target == cls}
    q = Q()
    for name in sorted(names):
        q |= Q(origin__iexact=name) | Q(origin__istartswith=f"{name}:")
    return q


def agent_origins(agent_id: str) -> list[str]:
    """Every distinct origin string of the agent's rows, sorted (one query on the (agent, origin) index)."""
    return list(
        Memory.objects.filter(agent_id=agent_id)
        .order_by("origin")
        .values_list("origin", flat=True)
        .distinct()
    )


def origin_classes(origins: Iterable[str]) -> list[str]:
    return sorted({origin_class(o) for o in origins})


def memory_rows(
    agent_id: str,
    *,
    status: str = "current",
    query: str = "",
    layer: str = "",
    origin: str = "",
    origin_cls: str = "",
    at: datetime | None = None,
) -> QuerySet[Memory]:
    """Memory rows of one agent, newest first. ``status="all"`` keeps superseded/retracted/quarantined rows.

    ``query`` is a case-insensitive substring of the content, subject or object (the engine's ranked search
    only covers current rows).
    """
    qs = Memory.objects.filter(agent_id=agent_id)
    if status == "tainted":
        qs = qs.filter(engine.TAINTED)
    elif status != "all":
        qs = qs.filter(engine.current_q(at or timezone.now()))
    if query:
        qs = qs.filter(Q(content__icontains=query) | Q(subject__icontains=query) | Q(object__icontains=query))
    if layer:
        qs = qs.filter(layer=layer)
    if origin:
        qs = qs.filter(origin=origin)
    if origin_cls:
        qs = qs.filter(origin_class_q(origin_cls))
    return qs.order_by("-timestamp", "-id")


def filter_hits_by_origin(hits: Sequence[Any], *, origin: str = "", origin_cls: str = "") -> list[Any]:
    """The engine's search has no origin filter; apply it to its hits."""
    out = list(hits)
    if origin:
        out = [h for h in out if h.origin == origin]
    if origin_cls:
        wanted = origin_class(origin_cls)
        out = [h for h in out if origin_class(h.origin) == wanted]
    return out


def records(rows: Iterable[Memory]) -> list[engine.MemoryRecord]:
    return [engine.MemoryRecord.from_model(m) for m in rows]


# --- one memory -------------------------------------------------------------------------------------------


def memory_record(agent_id: str, memory_id: str) -> engine.MemoryRecord | None:
    """Any row of the agent (history included: retracted and quarantined rows too), or None."""
    row = Memory.objects.filter(agent_id=agent_id, id=memory_id).first()
    return engine.MemoryRecord.from_model(row) if row is not None else None


@dataclass(frozen=True)
class RelatedRows:
    """Rows a memory points at, or that point at it, by id. Ids unknown to this agent are simply absent."""

    by_id: dict[str, engine.MemoryRecord] = field(default_factory=dict)
    continued_by: list[engine.MemoryRecord] = field(default_factory=list)

    def get(self, memory_id: str | None) -> engine.MemoryRecord | None:
        return self.by_id.get(memory_id) if memory_id else None


def memories_by_id(agent_id: str, ids: Iterable[str], *, fields: Sequence[str] = ()) -> dict[str, Memory]:
    """This agent's memory rows among ``ids``, by id, in one query; ids of another agent are simply absent.
    ``fields``: load only these (and ``id``, ``agent_id``), for a caller that reads nothing else.

    Looked up by primary key alone and checked for the agent here: with ``agent_id = ? AND id IN (...)``
    SQLite walks the agent's whole ``(agent_id, timestamp)`` index instead (≈ 100 ms at 100k rows against
    ≈ 1 ms by key; benchmarks/bench_desk_page.py)."""
    wanted = sorted({i for i in ids if isinstance(i, str)})
    if not wanted:
        return {}
    qs = Memory.objects.filter(id__in=wanted)
    if fields:
        qs = qs.only("id", "agent_id", *fields)
    return {m.id: m for m in qs if m.agent_id == agent_id}


def related_rows(record: engine.MemoryRecord) -> RelatedRows:
    """supersedes, superseded_by, derived_from, continuation_of and continuations: one query."""
    ids = {record.supersedes, record.superseded_by, (record.metadata or {}).get(CONTINUATION_KEY)}
    ids |= {i for i in (record.derived_from or []) if isinstance(i, str)}
    ids = {i for i in ids if isinstance(i, str) and i}
    # the agent is repeated inside each branch: SQLite then answers each from its own index (the primary key;
    # the (agent, subject, predicate, ...) key index) instead of walking every row of the agent (≈ 50 ms at
    # 100k memories with one ``agent_id = ?`` outside the OR)
    q = Q(agent_id=record.agent_id, id__in=sorted(ids))
    if record.subject and record.predicate:
        q |= Q(
            agent_id=record.agent_id,
            subject=record.subject,
            predicate=record.predicate,
            **{f"metadata__{CONTINUATION_KEY}": record.id},
        )
    if not ids and not (record.subject and record.predicate):
        return RelatedRows()
    rows = records(Memory.objects.filter(q).order_by("valid_from", "id"))
    by_id = {r.id: r for r in rows if r.id in ids}
    continued = [r for r in rows if (r.metadata or {}).get(CONTINUATION_KEY) == record.id]
    return RelatedRows(by_id, continued)


# --- timelines --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FactKey:
    subject: str
    predicate: str
    rows: int
    last_ingested: datetime | None


KEY_QUERY_WORDS = 8  # words of a key search; more are ignored (bounded work for any input)


def key_filter(query: str) -> Q:
    """Every word of ``query`` in the subject or the predicate, case-insensitively (the key picker's search)."""
    q = Q()
    for word in query.split()[:KEY_QUERY_WORDS]:
        q &= Q(subject__icontains=word) | Q(predicate__icontains=word)
    return q


def fact_keys(
    agent_id: str, *, limit: int = 200, query: str = "", most_changed: bool = False
) -> list[FactKey]:
    """The agent's keys (subject, predicate) with their row counts, most recently written first, or the keys
    with the most rows first (``most_changed``: the key picker); ``query`` keeps the keys matching every word."""
    qs = Memory.objects.filter(agent_id=agent_id, subject__isnull=False, predicate__isnull=False)
    if query:
        qs = qs.filter(key_filter(query))
    order = ("-rows", "-last") if most_changed else ("-last", "-rows")
    rows = (
        qs.order_by()
        .values("subject", "predicate")
        .annotate(rows=Count("id"), last=Max("ingested_at"))
        .order_by(*order, "subject", "predicate")[:limit]
    )
    return [FactKey(r["subject"], r["predicate"], r["rows"], r["last"]) for r in rows]


def fact_key_count(agent_id: str, *, query: str = "") -> int:
    """How many keys ``fact_keys`` would list without a limit."""
    qs = Memory.objects.filter(agent_id=agent_id, subject__isnull=False, predicate__isnull=False)
    if query:
        qs = qs.filter(key_filter(query))
    return qs.order_by().values("subject", "predicate").distinct().count()


def key_picker_keys(agent_id: str, *, query: str, limit: int) -> dict[str, Any]:
    """The key picker's ``keys`` (most changed first) and their ``total``: grouping every fact row of the agent
    (≈ 50 ms at 100k memories), so the answer is kept while the agent's graph generation stands (every fact
    row written, held, decided, rekeyed or erased moves it; ``engine.generation_memo``): one query then."""

    def read() -> dict[str, Any]:
        return {
            "keys": fact_keys(agent_id, query=query, limit=limit, most_changed=True),
            "total": fact_key_count(agent_id, query=query),
        }

    return dict(engine.generation_memo(agent_id, ("key_picker", query, limit), read))


@dataclass(frozen=True)
class PurgeNote:
    """An origin purge that touched a row (from the audit log)."""

    at: datetime
    actor: str
    origin: str


@dataclass
class TimelineRow:
    record: engine.MemoryRecord
    status: str
    superseded_by: engine.MemoryRecord | None = None
    supersedes: engine.MemoryRecord | None = None
    continuation_of: engine.MemoryRecord | None = None
    retracted_by: PurgeNote | None = None
    restored_by: list[PurgeNote] = field(default_factory=list)

    @property
    def closed_by_event(self) -> str | None:
        """The event that ended this row's belief when it is not a retraction (a superseding write)."""
        event = self.record.invalidated_by_event
        return event if event and not self.record.retracted else None


def purge_notes(
    agent_id: str, ids: set[str], since: datetime | None
) -> tuple[dict[str, PurgeNote], dict[str, list[PurgeNote]]]:
    """Which origin purge retracted or restored each of ``ids`` (one query on the audit log)."""
    if not ids:
        return {}, {}
    events = AuditEvent.objects.filter(agent_id=agent_id, action="origin_purge")
    if since is not None:
        events = events.filter(created_at__gte=since)
    retracted: dict[str, PurgeNote] = {}
    restored: dict[str, list[PurgeNote]] = {}
    for ev in events.order_by("created_at", "id").only("created_at", "actor", "details"):
        details = ev.details if isinstance(ev.details, dict) else {}
        note = PurgeNote(ev.created_at, ev.actor, str(details.get("origin", "")))
        for mid in details.get("retracted") or ():
            if mid in ids:
                retracted.setdefault(mid, note)
        for mid in details.get("restored") or ():
            if mid in ids:
                restored.setdefault(mid, []).append(note)
    return retracted, restored


def timeline(agent_id: str, subject: str, predicate: str, *, at: datetime | None = None) -> list[TimelineRow]:
    """``engine.get_history`` (oldest world time first) with each row's fate resolved: two queries."""
    at = at or timezone.now()
    history = engine.get_history(agent_id=agent_id, subject=subject, predicate=predicate)
    by_id = {r.id: r for r in history}
    ingested = [r.ingested_at for r in history if r.ingested_at is not None]
    retracted, restored = purge_notes(agent_id, set(by_id), min(ingested) if ingested else None)
    out = []
    for r in history:
        parent = (r.metadata or {}).get(CONTINUATION_KEY)
        out.append(
            TimelineRow(
                record=r,
                status=r.status_at(at),
                superseded_by=by_id.get(r.superseded_by) if r.superseded_by else None,
                supersedes=by_id.get(r.supersedes) if r.supersedes else None,
                continuation_of=by_id.get(parent) if isinstance(parent, str) else None,
                retracted_by=retracted.get(r.id) if r.retracted else None,
                restored_by=restored.get(r.id, []),
            )
        )
    return out


# --- mistake notebook -------------------------------------------------------------------------------------

RULE_SUBJECT_PREFIX = "category:"
RULE_PREDICATE = "requires_care"


def mistake_rows(agent_id: str, *, category: str = "", resolved: str = "all") -> QuerySet[Mistake]:
    """The agent's mistakes, newest first; ``resolved`` is ``open``, ``resolved`` or ``all``."""
    qs = Mistake.objects.filter(agent_id=agent_id)
    if category:
        qs = qs.filter(category=category)
    if resolved == "open":
        qs = qs.filter(resolved=False)
    elif resolved == "resolved":
        qs = qs.filter(resolved=True)
    return qs.order_by("-timestamp", "-id")


@dataclass(frozen=True)
class MistakeCounts:
    open: int = 0
    resolved: int = 0
    by_category: dict[str, tuple[int, int]] = field(default_factory=dict)  # category → (open, total)

    @property
    def total(self) -> int:
        return self.open + self.resolved

    @property
    def categories(self) -> list[tuple[str, int, int]]:
        """(category, open, total) for every category, in priority order."""
        return [(c, *self.by_category.get(c, (0, 0))) for c in CATEGORIES]


def mistake_counts(agent_id: str) -> MistakeCounts:
    """Open and resolved mistakes, overall and per category: one query."""
    rows = (
        Mistake.objects.filter(agent_id=agent_id)
        .order_by()
        .values("category")
        .annotate(open=Count("id", filter=Q(resolved=False)), total=Count("id"))
    )
    by_category = {r["category"]: (r["open"], r["total"]) for r in rows}
    n_open = sum(o for o, _ in by_category.values())
    n_total = sum(t for _, t in by_category.values())
    return MistakeCounts(open=n_open, resolved=n_total - n_open, by_category=by_category)


def rule_memories(agent_id: str, *, at: datetime | None = None) -> list[engine.MemoryRecord]:
    """The agent's current rules consolidated from mistakes (SPEC X3), by category: one query."""
    rows = Memory.objects.filter(
        agent_id=agent_id, subject__startswith=RULE_SUBJECT_PREFIX, predicate=RULE_PREDICATE
    ).filter(engine.current_q(at or timezone.now()))
    return records(rows.order_by("subject", "-valid_from"))


# --- audit log --------------------------------------------------------------------------------------------

QUARANTINE_ACTIONS = (
    "knowledge_quarantined",
    "quarantine_approved",
    "quarantine_denied",
    "quarantine_expired",
    "quarantine_undo",
    "quarantine_claimed",
    "quarantine_released",
)


def audit_events(
    agent_id: str,
    *,
    action: str = "",
    actor: str = "",
    since: date | None = None,
    until: date | None = None,
    q: str = "",
    batch: int | None = None,
) -> QuerySet[AuditEvent]:
    """The agent's audit events, newest first. ``until`` is inclusive (the whole day, UTC); ``q`` is a
    case-insensitive substring of the subject or the reason; ``batch`` an approval request id."""
    qs = AuditEvent.objects.filter(agent_id=agent_id)
    if action:
        qs = qs.filter(action=action)
    if actor:
        qs = qs.filter(actor__icontains=actor)
    if since is not None:
        qs = qs.filter(created_at__gte=datetime.combine(since, time.min, tzinfo=UTC))
    if until is not None:
        qs = qs.filter(created_at__lt=datetime.combine(until + timedelta(days=1), time.min, tzinfo=UTC))
    if q:
        qs = qs.filter(Q(subject__icontains=q) | Q(reason__icontains=q))
    if batch is not None:
        qs = qs.filter(action__in=QUARANTINE_ACTIONS, details__request_id=batch)
    return qs.order_by("-created_at", "-id")


def audit_actions(agent_id: str) -> list[str]:
    """The actions this agent's log holds (filter options), one query."""
    return list(
        AuditEvent.objects.filter(agent_id=agent_id)
        .order_by("action")
        .values_list("action", flat=True)
        .distinct()
    )


# --- graph page (SPEC D6) ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GraphCommunity:
    """A community of the agent's entities, as its latest discovery run left it (SPEC B4: Leiden on the
    multi-signal edges, with a stable number and name): ``key`` (the filter's value) is the number."""

    number: int
    name: str
    members: frozenset[str]

    @property
    def key(self) -> str:
        return str(self.number)

    @property
    def size(self) -> int:
        return len(self.members)


def graph_communities(agent_id: str, nodes: Iterable[str] = ()) -> list[GraphCommunity]:
    """The agent's live communities, largest first; with ``nodes``, only those with a member among them
    (the drawn graph). One query."""
    wanted = set(nodes)
    out = []
    for c in engine.communities(agent_id=agent_id):
        members = frozenset(c.members)
        if wanted and not (members & wanted):
            continue
        out.append(GraphCommunity(number=c.number, name=c.name, members=members))
    return out
