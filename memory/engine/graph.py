"""Graph retrieval (SPEC G1–G8): entity aliases, the entity–memory graph, Personalized PageRank, its cache,
exports and the curator's graph reads and retract.

The graph (G1) has one node per entity (a subject or object, normalised and alias-resolved) and one per
memory id; each current, believed fact adds the undirected edges subject–memory and memory–object, weighted by
its ``origin_trust``. It is kept as a row-normalised scipy CSR matrix per agent; queries never touch networkx.
PPR (G3) is ``p ← (1−d)·s + d·Aᵀp`` with d = 0.5. ``ppr_exact`` is that power iteration (≤ 20 iterations, stop
at an L1 change < 1e-6); ``ppr_push`` is a local forward push over the same matrix, compiled with numba
(``push_kernel``), that only touches the seeds' neighbourhood (tests pin its top-10 to the exact one). The
graph is read by one aggregated scan and built column-wise (``scan_facts``, ``build_columns``). The cache (G5) is keyed on the agent's graph
generation row (T9), so a write by any process is seen by the next query, and on the next moment a fact
starts or stops being current (world time moves on without a write).
"""

from __future__ import annotations

import contextlib
import gc
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
from django.db import connection
from django.db.models import Q
from django.utils.dateparse import parse_datetime
from scipy import sparse

from memory.models import EntityAlias, FactWrite, Memory

from . import common as c
from .belief import NOT_RETRACTED, believed_sql, current_q, is_retracted, not_retracted_sql
from .types import EngineError, InvalidArgument, MemoryRecord, NotFound, iso

GRAPH_CACHE_MIN_TRIPLES = 500
DAMPING = 0.5
MAX_ITERATIONS = 20
TOLERANCE = 1e-6
PPR_TOP = 5  # graph-only hits come from the PPR top 5 (G4) ...
MAX_GRAPH_ONLY = 3  # ... at most 3 of them
CACHE_AGENTS = 16  # graphs kept in one process (least recently used dropped first)
PUSH_EPSILON = 2e-6  # forward push: a node pushes while its residual > ε·degree
MAX_SEED_QUERY_CHARS = 4000
MAX_EXPORT_LIMIT = 10_000
MAX_VIEW_LIMIT = 5_000

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_CHAR = re.compile(f"[{_CJK}]")


# --- results ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AliasResult:
    canonical: str
    alias: str
    created: bool
    flattened: int  # aliases that pointed at ``alias`` and now point at ``canonical``

    def to_dict(self) -> dict[str, Any]:
        return {
            "canonical": self.canonical,
            "alias": self.alias,
            "created": self.created,
            "flattened": self.flattened,
        }


@dataclass(frozen=True)
class AliasRecord:
    canonical: str
    alias: str
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {"canonical": self.canonical, "alias": self.alias, "created_at": iso(self.created_at)}


@dataclass(frozen=True)
class AliasPreview:
    canonical: str  # where the alias would point after flattening
    alias: str
    facts_moving: list[MemoryRecord]
    facts_canonical: list[MemoryRecord]
    conflicts: list[str]


@dataclass(frozen=True)
class GraphView:
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    predicates: list[str]
    total_edges: int
    shown_edges: int
    truncated: bool
    entity: str | None = None


# --- names and aliases (G6) -------------------------------------------------------------------------------


def normalize_entity(text: str) -> str:
    """Trim, NFKC, lower-case and fold whitespace runs to one space."""
    if not isinstance(text, str):
        return ""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


# NFKC can lengthen a name: one character becomes up to 18 (U+FDFA; a test pins the bound). A stored subject or
# object has at most MAX_TRIPLE_PART characters, so its entity name has at most MAX_ENTITY_CHARS: lookups accept
# that many (a node of the graph is always addressable); an alias is stored in a MAX_TRIPLE_PART column.
NFKC_MAX_EXPANSION = 18
MAX_ENTITY_CHARS = c.MAX_TRIPLE_PART * NFKC_MAX_EXPANSION
MAX_ALIASES = 5_000  # per agent


def _check_name(value: Any, *, field: str, limit: int = MAX_ENTITY_CHARS) -> str:
    """``value`` normalised. Its length is checked before normalising (bounded work; NFKC can lengthen it)."""
    if not isinstance(value, str):
        raise InvalidArgument(f"{field} must be a string", field=field)
    if "\x00" in value or len(value.strip()) > limit:
        raise InvalidArgument(f"{field} must be at most {limit} characters", field=field)
    name = normalize_entity(value)
    if not name:
        raise InvalidArgument(f"{field} must not be empty", field=field)
    return name


def _check_alias_name(value: Any, *, field: str) -> str:
    name = _check_name(value, field=field, limit=c.MAX_TRIPLE_PART)
    if len(name) > c.MAX_TRIPLE_PART:
        raise InvalidArgument(
            f"{field} is {len(name)} characters once normalised; an alias side can have at most "
            f"{c.MAX_TRIPLE_PART}",
            field=field,
        )
    return name


def _alias_map(agent_id: str) -> dict[str, str]:
    return dict(EntityAlias.objects.filter(agent_id=agent_id).values_list("alias", "canonical"))


def _lock_aliases(agent_id: str) -> None:
    c._advisory_lock(f"alias\x1f{agent_id}")


@c.write_transaction
def alias_add(*, agent_id: str, canonical: str, alias: str, actor: str = "system") -> AliasResult:
    """Make ``alias`` another name of ``canonical`` (SPEC G6).

    Both sides are normalised; an empty side or a self-alias is rejected. Chains are flattened when stored:
    if ``canonical`` is itself an alias of ``c`` the row stored is ``alias → c``, and aliases that pointed at
    ``alias`` are re-pointed at the new canonical. Upsert on (agent, alias). Audited; bumps the generation.
    """
    agent_id = c.check_agent_id(agent_id)
    requested = _check_alias_name(canonical, field="canonical")
    name = _check_alias_name(alias, field="alias")
    actor = c.check_actor(actor)
    if requested == name:
        raise InvalidArgument("an entity cannot be an alias of itself", field="alias")
    _lock_aliases(agent_id)
    aliases = _alias_map(agent_id)
    target = aliases.get(requested, requested)
    if target == name:
        raise InvalidArgument(
            f"{requested!r} is already an alias of {name!r}; that would make {name!r} an alias of itself",
            field="alias",
        )
    t = c.now()
    previous = aliases.get(name)
    if previous == target:
        return AliasResult(canonical=target, alias=name, created=False, flattened=0)
    if previous is None and len(aliases) >= MAX_ALIASES:
        raise EngineError(
            f"this agent already has {len(aliases)} aliases, the most allowed is {MAX_ALIASES}",
            code="too_many_aliases",
            field="alias",
            limit=MAX_ALIASES,
        )
    flattened = EntityAlias.objects.filter(agent_id=agent_id, canonical=name).update(
        canonical=target, updated_at=t
    )
    if previous is None:
        EntityAlias.objects.create(
            agent_id=agent_id, canonical=target, alias=name, created_at=t, updated_at=t, actor=actor
        )
    else:
        EntityAlias.objects.filter(agent_id=agent_id, alias=name).update(
            canonical=target, updated_at=t, actor=actor
        )
    c.bump_generation(agent_id)
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="alias_add",
        subject=target,
        reason=f"alias {name} -> {target}",
        at=t,
        canonical=target,
        alias=name,
        requested_canonical=requested,
        previous_canonical=previous,
        flattened=flattened,
    )
    return AliasResult(canonical=target, alias=name, created=previous is None, flattened=flattened)


def alias_list(*, agent_id: str) -> list[AliasRecord]:
    agent_id = c.check_agent_id(agent_id)
    rows = EntityAlias.objects.filter(agent_id=agent_id).order_by("canonical", "alias")
    return [AliasRecord(r.canonical, r.alias, r.created_at) for r in rows]


def resolve_entity(*, agent_id: str, name: str) -> str:
    """The canonical form of ``name``: normalised, then alias-resolved (chains are flat, one lookup)."""
    agent_id = c.check_agent_id(agent_id)
    norm = normalize_entity(name)
    if not norm:
        return norm
    row = EntityAlias.objects.filter(agent_id=agent_id, alias=norm).values_list("canonical", flat=True)
    return row.first() or norm


class _Resolver:
    """Raw subject/object text → canonical entity, memoised (many facts share names)."""

    def __init__(self, aliases: dict[str, str]):
        self.aliases = aliases
        self.memo: dict[str, str] = {}

    def __call__(self, raw: str | None) -> str | None:
        if raw is None:
            return None
        hit = self.memo.get(raw)
        if hit is None:
            norm = normalize_entity(raw)
            hit = self.aliases.get(norm, norm)
            self.memo[raw] = hit
        return hit or None


def _fact_rows(agent_id: str, at: datetime, *, include_quarantined: bool) -> Any:
    qs = Memory.objects.filter(agent_id=agent_id, subject__isnull=False, predicate__isnull=False)
    if include_quarantined:
        qs = qs.filter(NOT_RETRACTED).filter(
            (Q(valid_from__isnull=True) | Q(valid_from__lte=at))
            & (Q(valid_until__isnull=True) | Q(valid_until__gt=at))
        )
    else:
        qs = qs.filter(current_q(at))
    return qs


def _facts_touching(
    agent_id: str, names: set[str], aliases: dict[str, str], *, include_quarantined: bool, limit: int
) -> list[MemoryRecord]:
    """Current facts whose subject or object resolves (normalised, then through ``aliases``) to one of
    ``names``, newest first. Row by row, so that it stops at ``limit``: a busy entity is answered from the
    newest rows (the columns of ``_edge_columns`` would read every row every time)."""
    at = c.now()
    resolve = _Resolver(aliases)
    ids: list[str] = []
    rows = (
        _fact_rows(agent_id, at, include_quarantined=include_quarantined)
        .order_by("-timestamp", "-id")
        .values_list("id", "subject", "object")
    )
    for mid, subject, obj in rows.iterator(chunk_size=2000):
        if resolve(subject) in names or (obj is not None and resolve(obj) in names):
            ids.append(mid)
            if len(ids) >= limit:
                break
    found = {m.id: m for m in Memory.objects.filter(id__in=ids)}
    return [MemoryRecord.from_model(found[i]) for i in ids if i in found]


def alias_preview(*, agent_id: str, canonical: str, alias: str, limit: int = 200) -> AliasPreview:
    """What ``alias_add(canonical, alias)`` would change, without changing anything."""
    agent_id = c.check_agent_id(agent_id)
    requested = _check_alias_name(canonical, field="canonical")
    name = _check_alias_name(alias, field="alias")
    aliases = _alias_map(agent_id)
    target = aliases.get(requested, requested)
    conflicts: list[str] = []
    if requested == name or target == name:
        conflicts.append(f"self-alias: {name!r} cannot be an alias of itself")
    if target != requested:
        conflicts.append(f"{requested!r} is an alias of {target!r}: {name!r} will point to {target!r}")
    previous = aliases.get(name)
    if previous is not None and previous != target:
        conflicts.append(f"{name!r} is already an alias of {previous!r}: it will point to {target!r} instead")
    followers = sorted(a for a, canon in aliases.items() if canon == name)
    if followers:
        conflicts.append(
            f"{len(followers)} alias(es) of {name!r} will point to {target!r}: " + ", ".join(followers[:10])
        )
    alias_side = {name, *followers}
    canon_side = {target, *(a for a, canon in aliases.items() if canon == target)} - alias_side
    # raw names, not resolved ({} as the aliases): which surface forms sit on which side
    return AliasPreview(
        canonical=target,
        alias=name,
        facts_moving=_facts_touching(agent_id, alias_side, {}, include_quarantined=False, limit=limit),
        facts_canonical=_facts_touching(agent_id, canon_side, {}, include_quarantined=False, limit=limit),
        conflicts=conflicts,
    )


# --- exports and curator reads (G7, D6) --------------------------------------------------------------------


def _check_limit(limit: Any, high: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= high:
        raise InvalidArgument(f"limit must be an integer from 1 to {high}", field="limit")
    return limit


def _edge_rows(agent_id: str, at: datetime) -> Any:
    """Current facts including quarantined ones, newest first (G7)."""
    return (
        _fact_rows(agent_id, at, include_quarantined=True)
        .order_by("-timestamp", "-id")
        .values_list("id", "subject", "predicate", "object", "origin_trust", "quarantined")
    )


def export_graph(*, agent_id: str, limit: int = 500) -> dict[str, Any]:
    """``{nodes:[{entity, degree}], edges:[{subject, predicate, object, memory_id, origin_trust,
    quarantined}], truncated}`` (SPEC G7): current facts, quarantined ones included and flagged, newest first;
    nodes by degree (in the exported edges), then name. Names are normalised and alias-resolved."""
    agent_id = c.check_agent_id(agent_id)
    limit = _check_limit(limit, MAX_EXPORT_LIMIT)
    resolve = _Resolver(_alias_map(agent_id))
    rows = list(_edge_rows(agent_id, c.now())[: limit + 1])
    truncated = len(rows) > limit
    edges: list[dict[str, Any]] = []
    degree: dict[str, int] = {}
    for mid, subject, predicate, obj, trust, quarantined in rows[:limit]:
        s, o = resolve(subject), resolve(obj)
        edges.append(
            {
                "subject": s,
                "predicate": predicate,
                "object": o,
                "memory_id": mid,
                "origin_trust": trust,
                "quarantined": bool(quarantined),
            }
        )
        for name in (s, o):
            if name:
                degree[name] = degree.get(name, 0) + 1
    nodes = [{"entity": n, "degree": d} for n, d in sorted(degree.items(), key=lambda kv: (-kv[1], kv[0]))]
    return {"nodes": nodes, "edges": edges, "truncated": truncated}


def graph_view(
    *,
    agent_id: str,
    entity: str | None = None,
    depth: int = 1,
    predicate: str | None = None,
    min_trust: float = 0.0,
    limit: int = 300,
) -> GraphView:
    """The entity graph a curator looks at: edges subject–object labelled by predicate (facts without an
    object have no edge here; ``entity_facts`` lists them), filters, an optional neighbourhood (depth 1–2)
    of one alias-resolved entity, and a cap with the totals to say "showing N of M". Filters and the
    neighbourhood work on the columns of the agent's current facts (``_edge_columns``); only the edges shown
    become Python objects."""
    agent_id = c.check_agent_id(agent_id)
    limit = _check_limit(limit, MAX_VIEW_LIMIT)
    if isinstance(depth, bool) or depth not in (1, 2):
        raise InvalidArgument("depth must be 1 or 2", field="depth")
    trust = c.check_number(min_trust, field="min_trust", low=0.0, high=1.0)
    if predicate is not None and not isinstance(predicate, str):
        raise InvalidArgument("predicate must be a string", field="predicate")
    predicate = predicate.strip() if predicate else None
    aliases = _alias_map(agent_id)
    focus = None
    if entity is not None and normalize_entity(entity):
        norm = normalize_entity(entity)
        focus = aliases.get(norm, norm)
    edges = _edge_columns(agent_id, c.now(), aliases=aliases)
    s, o = edges.subjects, edges.objects
    keep = (s >= 0) & (o >= 0) & (edges.trusts >= trust)
    if predicate:
        keep &= edges.predicate_is(predicate)
    rows = np.flatnonzero(keep)
    if focus is not None:
        f = edges.code(focus)
        reach = np.asarray([f], dtype=np.int64)
        for _ in range(depth - 1):
            rs, ro = s[rows], o[rows]
            reach = np.union1d(reach, np.concatenate([ro[np.isin(rs, reach)], rs[np.isin(ro, reach)]]))
        rows = rows[np.isin(s[rows], reach) | np.isin(o[rows], reach)]
        # the focus's own edges first, so a cap never hides them
        rows = rows[np.argsort(~((s[rows] == f) | (o[rows] == f)), kind="stable")]
    shown = rows[:limit]
    shown_ids = edges.ids.take(_arrow_indices(shown)).to_pylist()
    shown_predicates = edges.predicates.take(_arrow_indices(shown)).to_pylist()
    out = [
        {
            "subject": edges.name(int(s[i])),
            "predicate": pred,
            "object": edges.name(int(o[i])),
            "memory_id": mid,
            "origin_trust": float(edges.trusts[i]),
            "quarantined": bool(edges.quarantined[i]),
        }
        for i, mid, pred in zip(shown.tolist(), shown_ids, shown_predicates, strict=True)
    ]
    return GraphView(
        nodes=view_nodes(out, focus),
        edges=out,
        predicates=edges.predicate_names(),
        total_edges=int(rows.size),
        shown_edges=len(out),
        truncated=rows.size > len(out),
        entity=focus,
    )


def view_nodes(edges: list[dict[str, Any]], focus: str | None) -> list[dict[str, Any]]:
    """The nodes of the edges shown, by degree among them, then name; the focus entity even without edges."""
    degree: dict[str, int] = {}
    for e in edges:
        for n in (e["subject"], e["object"]):
            degree[n] = degree.get(n, 0) + 1
    if focus and focus not in degree:
        degree[focus] = 0
    return [
        {"id": n, "label": n, "kind": "entity", "degree": d}
        for n, d in sorted(degree.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def entity_facts(
    *, agent_id: str, entity: str, limit: int = 50, include_quarantined: bool = False
) -> list[MemoryRecord]:
    """Current facts whose subject or object resolves to ``entity`` (alias-resolved), newest first."""
    agent_id = c.check_agent_id(agent_id)
    limit = _check_limit(limit, 1000)
    name = _check_name(entity, field="entity")
    aliases = _alias_map(agent_id)
    return _facts_touching(
        agent_id,
        {aliases.get(name, name)},
        aliases,
        include_quarantined=bool(include_quarantined),
        limit=limit,
    )


@c.write_transaction
def retract_fact(*, agent_id: str, memory_id: str, reason: str, actor: str) -> MemoryRecord:
    """A curator's retract of one fact: every write supporting the row is retracted and the key's timeline
    re-derived (a value it had superseded comes back), like a purge of that single fact. Audited; bumps the
    generation. Another agent's id and an unknown id give the same ``not_found``."""
    from .temporal import CONTINUATION_KEY, rederive_key

    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidArgument("a reason is required", field="reason")
    if len(reason) > 2000:
        raise InvalidArgument("the reason is longer than 2000 characters", field="reason")
    if not isinstance(memory_id, str) or not memory_id or len(memory_id) > 64:
        raise NotFound("no fact with that id", field="memory_id")
    row = Memory.objects.filter(id=memory_id).first()
    if row is None or row.agent_id != agent_id or not row.subject or not row.predicate:
        raise NotFound("no fact with that id", field="memory_id")
    # lock the key first, then re-read: a concurrent retract that committed meanwhile is seen here
    c.lock_key(agent_id, row.subject, row.predicate)
    row.refresh_from_db()  # memory rows are never deleted
    if is_retracted(row.invalidated_by_event):
        raise EngineError("this fact is already retracted", code="already_retracted", field="memory_id")
    t = c.now()
    primary = (row.metadata or {}).get(CONTINUATION_KEY) or row.id
    before = set(
        Memory.objects.filter(agent_id=agent_id, subject=row.subject, predicate=row.predicate)
        .filter(current_q(t))
        .values_list("id", flat=True)
    )
    writes = FactWrite.objects.filter(
        agent_id=agent_id, subject=row.subject, predicate=row.predicate, memory_id=primary
    ).exclude(state=FactWrite.STATE_RETRACTED)
    n_writes = writes.update(state=FactWrite.STATE_RETRACTED, believed_until=t)
    if n_writes:
        rederive_key(agent_id, row.subject, row.predicate, at=t, retract_event="curator_retract")
    else:  # a row no write speaks for (imported without history): retract the row itself
        Memory.objects.filter(id=row.id).update(invalidated_by_event="curator_retract", invalidated_at=t)
    after = set(
        Memory.objects.filter(agent_id=agent_id, subject=row.subject, predicate=row.predicate)
        .filter(current_q(t))
        .values_list("id", flat=True)
    )
    c.bump_generation(agent_id)
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="curator_retract",
        memory_id=row.id,
        subject=row.subject,
        reason=reason.strip(),
        at=t,
        predicate=row.predicate,
        writes=n_writes,
        restored=sorted(after - before),
    )
    return MemoryRecord.from_model(Memory.objects.get(id=row.id))


# --- the graph (G1) ---------------------------------------------------------------------------------------


def _is_word(ch: str) -> bool:
    return (ch.isalnum() or ch == "_") and not _CJK_CHAR.match(ch)


@dataclass
class Graph:
    """One agent's entity–memory graph. ``walk`` is Aᵀ (A = row-normalised weights) as CSR for the power
    iteration; ``rows`` is A itself (CSR) for the forward push; ``degree`` the weighted degree. Entity nodes
    come first (``entities``), then one node per memory (``memory_ids``, an Arrow string array: a million ids
    stay one buffer, not a million Python strings; ``memory_id`` and ``memory_node`` read it)."""

    generation: Any  # the generation key it was built at
    expires: datetime | None  # next moment a fact starts or stops being current
    entities: list[str]
    memory_ids: Any  # pyarrow LargeStringArray, node n_entities + i is memory_ids[i]
    walk: sparse.csr_matrix
    rows: sparse.csr_matrix
    degree: np.ndarray
    word_names: dict[str, int]
    cjk_names: dict[str, int]
    word_max: int
    cjk_max: int
    triples: int
    # idle work arrays of the push (push_kernel.Scratch), one per query that ran at once
    _scratch: list[Any] = field(default_factory=list, repr=False)
    _scratch_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    embeddings: dict[str, np.ndarray] = field(default_factory=dict)  # entity vectors by model (G8)

    @contextlib.contextmanager
    def scratch(self) -> Iterator[Any]:
        """Work arrays for one push, reused: taken from the idle ones (one per query running at once)."""
        from .push_kernel import Scratch

        with self._scratch_lock:
            work = self._scratch.pop() if self._scratch else None
        if work is None:
            work = Scratch(self.size)
        yield work  # not put back if the push raised: its arrays may not be clean
        with self._scratch_lock:
            self._scratch.append(work)

    @property
    def n_entities(self) -> int:
        return len(self.entities)

    @property
    def size(self) -> int:
        return len(self.entities) + len(self.memory_ids)

    def memory_id(self, i: int) -> str:
        """The id of memory ``i`` (node ``n_entities + i``)."""
        return str(self.memory_ids[i].as_py())

    def memory_node(self, memory_id: str) -> int | None:
        """Memory number of ``memory_id`` (its node is ``n_entities`` + it), or None. A linear search: for
        curators and tests; the query path looks memories up among the nodes a query reached (GraphScores)."""
        import pyarrow.compute as pc

        i = pc.index(self.memory_ids, memory_id).as_py()
        return None if i < 0 else int(i)

    def seeds(self, query: str) -> list[int]:
        """Entity nodes named in ``query`` (G2): whole words, case-insensitive; names with CJK characters as
        substrings; an alias seeds its canonical entity."""
        q = normalize_entity(query)[:MAX_SEED_QUERY_CHARS]
        found: set[int] = set()
        n = len(q)
        if self.word_names and n:
            word = [_is_word(ch) for ch in q]
            starts = [i for i in range(n) if q[i] != " " and (i == 0 or not (word[i - 1] and word[i]))]
            ends = [
                j for j in range(1, n + 1) if q[j - 1] != " " and (j == n or not (word[j - 1] and word[j]))
            ]
            e0 = 0
            for i in starts:
                while e0 < len(ends) and ends[e0] <= i:
                    e0 += 1
                for k in range(e0, len(ends)):
                    j = ends[k]
                    if j - i > self.word_max:
                        break
                    node = self.word_names.get(q[i:j])
                    if node is not None:
                        found.add(node)
        if self.cjk_names and _CJK_CHAR.search(q):
            for i in range(n):
                for j in range(i + 1, min(n, i + self.cjk_max) + 1):
                    node = self.cjk_names.get(q[i:j])
                    if node is not None:
                        found.add(node)
        return sorted(found)


@dataclass(frozen=True)
class FactColumns:
    """The agent's current, believed facts as columns, and when that set next changes with time alone."""

    ids: Sequence[str] | Any  # a sequence, or an Arrow string array (the aggregated scan)
    subjects: Sequence[str] | Any
    objects: Sequence[str | None] | Any
    trusts: Sequence[float] | np.ndarray
    expires: datetime | None


def build_graph(
    rows: Sequence[Sequence[Any]],
    aliases: dict[str, str],
    *,
    generation: Any = None,
    expires: datetime | None = None,
) -> Graph:
    """Build the graph from ``(memory_id, subject, object, origin_trust)`` rows of current, believed facts."""
    ids, subjects, objects, trusts = zip(*rows, strict=True) if rows else ((), (), (), ())
    return build_columns(FactColumns(ids, subjects, objects, trusts, expires), aliases, generation=generation)


def build_columns(facts: FactColumns, aliases: dict[str, str], *, generation: Any = None) -> Graph:
    """The graph from fact columns (``scan_facts``), column-wise: Arrow dictionary-encodes the name columns and
    normalises and alias-resolves each distinct name (in C for ASCII names, in Python for the others); NumPy
    maps the codes to nodes and lays out the CSR rows directly (each memory row holds at most two entities;
    the entity rows are a counting sort of the same pairs). W is symmetric, so Aᵀ = W·D⁻¹ needs no transpose
    (A and Aᵀ are W with rows or columns scaled)."""

    ids = _strings(facts.ids)
    n_m = len(ids)
    codes, distinct = _encode_names(facts.subjects, facts.objects)
    node_of_raw, names = _entity_nodes(distinct, aliases)
    entities = names.to_pylist()
    word_names, cjk_names = _seed_names(names, entities, aliases)
    nodes = node_of_raw[codes]  # code -1 (no name) reads the last slot, -1
    trusts = facts.trusts
    w = (
        np.asarray(trusts, dtype=np.float64)
        if isinstance(trusts, np.ndarray)
        else np.fromiter(trusts, dtype=np.float64, count=n_m)
    )
    weights, degree = _weights(nodes[:n_m], nodes[n_m:], w, len(entities))
    inv = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
    a = weights.copy()
    a.data *= np.repeat(inv, np.diff(a.indptr))  # A = D⁻¹W: rows sum to 1
    walk = weights
    walk.data *= inv[walk.indices]  # Aᵀ = W·D⁻¹ (W symmetric)
    return Graph(
        generation=generation,
        expires=facts.expires,
        entities=entities,
        memory_ids=ids,
        walk=walk,
        rows=a,
        degree=degree,
        word_names=word_names,
        cjk_names=cjk_names,
        word_max=max(map(len, word_names), default=0),
        cjk_max=min(32, max(map(len, cjk_names), default=0)),
        triples=n_m,
    )


def _strings(values: Any) -> Any:
    """A column of names or ids as an Arrow large_string array (as it is when the scan already made one)."""
    import pyarrow as pa

    if isinstance(values, pa.Array):
        return values if values.type == pa.large_string() else values.cast(pa.large_string())
    return pa.array(list(values), type=pa.large_string())


def _encode_names(subjects: Any, objects: Any) -> tuple[np.ndarray, Any]:
    """Both name columns dictionary-encoded by Arrow (in C, no Python object per value): each value's code
    into the distinct raw names (-1 for no name), and those names (an Arrow array)."""
    import pyarrow as pa

    names = pa.concat_arrays([_strings(subjects), _strings(objects)])
    encoded = names.dictionary_encode()
    codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, encoded.dictionary


# Python's str.split() separators among ASCII characters (normalize_entity folds their runs to one space)
_ASCII_SPACE_RUN = r"[\t\n\x0b\x0c\r\x1c-\x1f ]+"


def normalize_names(raw: Any) -> Any:
    """``normalize_entity`` of every value of an Arrow string array: in C for ASCII values (NFKC leaves ASCII
    as it is; lower-case, whitespace runs to one space, trimmed), in Python for the others."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out = pc.ascii_lower(raw)
    out = pc.utf8_trim(pc.replace_substring_regex(out, pattern=_ASCII_SPACE_RUN, replacement=" "), " ")
    ascii_mask = pc.string_is_ascii(raw)
    if len(raw) and not pc.all(ascii_mask).as_py():
        others = pc.invert(ascii_mask)
        fixed = [normalize_entity(x) for x in raw.filter(others).to_pylist()]
        out = pc.replace_with_mask(out, others, pa.array(fixed, type=out.type))
    return out


def _entity_nodes(distinct: Any, aliases: dict[str, str]) -> tuple[np.ndarray, Any]:
    """Each distinct raw name's entity node (normalised, alias-resolved; -1 for a name that normalises to
    nothing), with one more slot, -1, for "no name"; and the entities' names (Arrow), in node order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = normalize_names(distinct)
    if aliases:
        keys = pa.array(list(aliases), type=pa.large_string())
        canonical = pa.array(list(aliases.values()), type=pa.large_string())
        names = pc.coalesce(canonical.take(pc.index_in(names, value_set=keys)), names)
    names = pc.if_else(pc.equal(names, ""), pa.scalar(None, pa.large_string()), names)
    encoded = names.dictionary_encode()
    nodes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    return np.append(nodes, -1), encoded.dictionary


def _seed_names(
    names: Any, entities: list[str], aliases: dict[str, str]
) -> tuple[dict[str, int], dict[str, int]]:
    """The surface forms seeding matches (G2): whole-word names and names with CJK characters (substrings),
    each to its entity node; an alias names its canonical entity's node."""
    import pyarrow.compute as pc

    ascii_mask = pc.string_is_ascii(names).to_numpy(zero_copy_only=False)
    ascii_nodes = np.flatnonzero(ascii_mask)
    word_names = dict(zip(names.filter(ascii_mask).to_pylist(), ascii_nodes.tolist(), strict=True))
    cjk_names: dict[str, int] = {}
    cjk = _CJK_CHAR.search
    for node in np.flatnonzero(~ascii_mask).tolist():
        name = entities[node]
        (cjk_names if cjk(name) else word_names)[name] = node
    for alias, canon in aliases.items():
        target = word_names.get(canon, cjk_names.get(canon))
        if target is not None:
            (word_names if alias.isascii() or not cjk(alias) else cjk_names)[alias] = target
    return word_names, cjk_names


def _weights(
    subj: np.ndarray, obj: np.ndarray, trust: np.ndarray, n_e: int
) -> tuple[sparse.csr_matrix, np.ndarray]:
    """W, the symmetric weight matrix (entities first, then memories), as CSR with sorted rows, and its row
    sums. Fact i adds subject–memory and memory–object edges of weight trust_i; a fact whose subject and
    object are one entity adds one edge of twice the weight; an edge of weight 0 is left out. Memory rows are
    laid out directly (at most two entities each, in node order); entity rows are the same pairs counting-
    sorted by entity (scipy's COO→CSR is linear and stable, so each row stays in memory order)."""
    n_m = subj.size
    n = n_e + n_m
    same = (subj == obj) & (subj >= 0)
    obj = np.where(same, -1, obj)
    w_s = np.where(same, 2.0 * trust, trust)
    s_ok = (subj >= 0) & (w_s > 0)
    o_ok = (obj >= 0) & (trust > 0)
    both = s_ok & o_ok
    s_first = ~o_ok | (both & (subj < obj))  # the subject's edge comes first in the memory's row
    pair = np.stack([np.where(s_first, subj, obj), np.where(s_first, obj, subj)], axis=1).ravel()
    pair_w = np.stack([np.where(s_first, w_s, trust), np.where(s_first, trust, w_s)], axis=1).ravel()
    keep = np.stack([s_ok | o_ok, both], axis=1).ravel()
    m_indices = pair[keep]
    m_data = pair_w[keep]
    m_count = s_ok.astype(np.int64) + o_ok
    m_indptr = np.zeros(n_m + 1, dtype=np.int64)
    np.cumsum(m_count, out=m_indptr[1:])
    members = np.repeat(np.arange(n_m, dtype=np.int64), m_count)  # memory of each pair, ascending
    ent = sparse.csr_matrix((m_data, (m_indices, members)), shape=(n_e, n_m))
    index_type = np.int32 if max(n, 2 * m_data.size) < 2**31 else np.int64
    indptr = np.concatenate([ent.indptr, ent.indptr[-1] + m_indptr[1:]]).astype(index_type)
    indices = np.concatenate([ent.indices.astype(np.int64) + n_e, m_indices]).astype(index_type)
    weights = sparse.csr_matrix((np.concatenate([ent.data, m_data]), indices, indptr), shape=(n, n))
    weights.has_sorted_indices = True
    degree = np.concatenate(
        [
            np.bincount(m_indices, weights=m_data, minlength=n_e),
            np.where(s_ok, w_s, 0.0) + np.where(o_ok, trust, 0.0),
        ]
    )
    return weights, degree


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """Building allocates millions of small objects that all survive: the cyclic collector would walk them
    again and again (seconds at 1M triples) and find nothing to free."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# between the values of one aggregated column; a value holding it makes scan_facts read row by row
_SEP = "\x1f"
# SQLite: migration 0010. Not forced with INDEXED BY (a statement naming a missing index fails, and a later
# migration that rebuilds the table would recreate only the indexes Django knows); a test pins the plan to it.
GRAPH_SCAN_INDEX = "idx_mem_graph_scan"


def _fact_scan_sql(select: str) -> str:
    """The agent's believed fact rows that are current at ``at`` or start later (parameters: agent, at).
    On SQLite they are read from the covering partial index of migration 0010 alone (its WHERE is repeated
    here as literals, so that SQLite can prove it applies)."""
    return (
        f"SELECT {select} FROM memories m WHERE m.agent_id = %s AND m.subject IS NOT NULL"
        f" AND m.predicate IS NOT NULL AND {believed_sql('m')} AND (m.valid_until IS NULL OR m.valid_until > %s)"
    )


def load_graph(*, agent_id: str, at: datetime, generation: Any = None) -> Graph:
    """Read the agent's current, believed facts and build its graph (one scan of the agent's fact rows)."""
    with _no_gc():
        facts = scan_facts(agent_id=agent_id, at=at)
        return build_columns(facts, _alias_map(agent_id) if len(facts.ids) else {}, generation=generation)


def _aggregate_sql() -> tuple[str, str, str]:
    """This database's string aggregate, the separator ``_SEP`` as SQL, and the trust column as text."""
    if connection.vendor == "postgresql":
        return "string_agg", "chr(31)", "m.origin_trust::text"
    return "group_concat", "char(31)", "m.origin_trust"


def _split_joined(joined: Sequence[str], separators: Sequence[str], count: int) -> list[Any] | None:
    """Aggregated columns split into Arrow arrays (in C), or None when one does not split into ``count``
    values (a value held its separator: the caller reads the rows instead)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = [
        pc.split_pattern(pa.array([value], pa.large_string()), separator).flatten()
        for value, separator in zip(joined, separators, strict=True)
    ]
    return columns if all(len(col) == count for col in columns) else None


def scan_facts(*, agent_id: str, at: datetime) -> FactColumns:
    """The graph's input in one statement: the agent's believed rows not ended at ``at`` as one row of
    aggregated columns (the database joins a million values into one string faster than the driver hands
    over a million rows), which Arrow splits in C. The graph expires at the first moment a fact starts or
    stops being current (world time moves without a write): the statement also returns the earliest end and
    the latest start. Only when some row starts later than ``at`` (a future-dated fact, rare) does a second,
    narrow read find those rows, which are then left out, and the earliest of their starts. When a value
    holds the separator (the pieces would not line up), the current rows are read one by one instead."""
    now = connection.ops.adapt_datetimefield_value(at)
    agg, sep, trust = _aggregate_sql()
    select = (
        f"COUNT(*), MIN(m.valid_until), MAX(m.valid_from), {agg}(m.id, {sep}), {agg}(m.subject, {sep}),"
        f" {agg}(COALESCE(m.object, ''), {sep}), {agg}({trust}, ',')"
    )
    with connection.cursor() as cur:
        cur.execute(_fact_scan_sql(select), [agent_id, now])
        count, ends, last_start, ids, subjects, objects, trusts = cur.fetchone()
        expires = _as_datetime(ends)
        later: list[str] = []
        if last_start is not None and _as_datetime(last_start) > at:  # type: ignore[operator]
            cur.execute(_fact_scan_sql("m.id, m.valid_from") + " AND m.valid_from > %s", [agent_id, now, now])
            rows = cur.fetchall()
            later = [mid for mid, _ in rows]
            starts = min((d for _, start in rows if (d := _as_datetime(start))), default=None)
            expires = min(expires, starts) if expires and starts else expires or starts
        if not count:
            return FactColumns((), (), (), (), expires)
        import pyarrow as pa
        import pyarrow.compute as pc

        columns = _split_joined([ids, subjects, objects, trusts], [_SEP, _SEP, _SEP, ","], count)
        del ids, subjects, objects, trusts
        if columns is not None:
            if later:
                keep = pc.invert(pc.is_in(columns[0], value_set=pa.array(later, pa.large_string())))
                columns = [col.filter(keep) for col in columns]
            mids, subs, objs, weights = (
                columns  # (a later row written after the first read is not among them)
            )
            if not len(mids):
                return FactColumns((), (), (), (), expires)
            return FactColumns(mids, subs, objs, weights.cast(pa.float64()).to_numpy(), expires)
        cur.execute(
            _fact_scan_sql("m.id, m.subject, m.object, m.origin_trust")
            + " AND (m.valid_from IS NULL OR m.valid_from <= %s)",
            [agent_id, now, now],
        )
        rows = cur.fetchall()
    if not rows:
        return FactColumns((), (), (), (), expires)
    mids, subs, objs, weights = zip(*rows, strict=True)
    return FactColumns(mids, subs, objs, weights, expires)


@dataclass(frozen=True)
class EdgeColumns:
    """The agent's current fact rows (for the curator's reads) as columns, newest first (timestamp, then id,
    descending): ids and predicates as Arrow arrays; subject and object as codes into ``names`` (normalised and
    alias-resolved entity names; -1 for none); trust and the quarantine flag as NumPy arrays."""

    ids: Any
    predicates: Any
    subjects: np.ndarray
    objects: np.ndarray
    trusts: np.ndarray
    quarantined: np.ndarray
    names: Any

    def code(self, name: str) -> int:
        """The code of entity ``name``, or -2 (which no row has) if no row names it."""
        import pyarrow.compute as pc

        i = pc.index(self.names, name).as_py() if len(self.names) else -1
        return -2 if i < 0 else int(i)

    def name(self, code: int) -> str:
        return str(self.names[code].as_py())

    def predicate_is(self, predicate: str) -> np.ndarray:
        import pyarrow.compute as pc

        return np.asarray(pc.equal(self.predicates, predicate).to_numpy(zero_copy_only=False), dtype=bool)

    def predicate_names(self) -> list[str]:
        import pyarrow.compute as pc

        return sorted(pc.unique(self.predicates).to_pylist())


def _edge_columns(agent_id: str, at: datetime, *, aliases: dict[str, str]) -> EdgeColumns:
    """Every current fact row of the agent, quarantined ones included, read as one row of aggregated columns
    like ``scan_facts`` (row by row if a value holds the separator), sorted and name-resolved in Arrow."""
    import pyarrow as pa
    import pyarrow.compute as pc

    now = connection.ops.adapt_datetimefield_value(at)
    agg, sep, trust = _aggregate_sql()
    if connection.vendor == "postgresql":
        subject, flag = "m.subject", "m.quarantined::int::text"
        stamp = "to_char(m.timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')"  # sorts as text
    else:  # SQLite stores str(datetime), which sorts as text. ``+m.subject`` keeps the planner off the key
        # index (agent, subject, ...), whose order sends every row lookup to a random page; the (agent,
        # timestamp) index visits the rows about in the order they were written
        subject, flag, stamp = "+m.subject", "m.quarantined", "m.timestamp"
    where = (
        f" FROM memories m WHERE m.agent_id = %s AND {subject} IS NOT NULL AND m.predicate IS NOT NULL"
        f" AND {not_retracted_sql('m')}"
        " AND (m.valid_from IS NULL OR m.valid_from <= %s) AND (m.valid_until IS NULL OR m.valid_until > %s)"
    )
    texts = ["m.id", "m.subject", "COALESCE(m.object, '')", "m.predicate", stamp]
    select = ", ".join([*(f"{agg}({t}, {sep})" for t in texts), f"{agg}({trust}, ','), {agg}({flag}, ',')"])
    params = [agent_id, now, now]
    with connection.cursor() as cur:
        cur.execute(f"SELECT COUNT(*), {select}{where}", params)
        count, *joined = cur.fetchone()
        columns = _split_joined(joined, [_SEP] * len(texts) + [",", ","], count) if count else []
        del joined
        if columns is None:  # a value holds the separator: read the rows
            cur.execute(f"SELECT {', '.join(texts)}, m.origin_trust, m.quarantined{where}", params)
            rows = list(zip(*cur.fetchall(), strict=True))
            if rows:  # the driver's own types: a float for the trust, a bool for the flag
                *text, weight, flag_values = rows
                columns = [pa.array([str(v) for v in col], pa.large_string()) for col in text]
                columns += [
                    pa.array(weight, pa.float64()),
                    pa.array([int(v) for v in flag_values], pa.int8()),
                ]
            else:
                columns = []
    if not columns:
        columns = [pa.array([], pa.large_string())] * 7
    ids, subjects, objects, predicates, stamps, trusts, flags = columns
    order = pc.sort_indices(
        pa.table({"t": stamps, "i": ids}), sort_keys=[("t", "descending"), ("i", "descending")]
    )
    ids, subjects, objects, predicates, trusts, flags = (
        col.take(order) for col in (ids, subjects, objects, predicates, trusts, flags)
    )
    codes, distinct = _encode_names(subjects, objects)
    node_of_raw, names = _entity_nodes(distinct, aliases)
    nodes = node_of_raw[codes]
    n = len(ids)
    return EdgeColumns(
        ids=ids,
        predicates=predicates,
        subjects=nodes[:n],
        objects=nodes[n:],
        trusts=trusts.cast(pa.float64()).to_numpy(zero_copy_only=False),
        quarantined=flags.cast(pa.int8()).to_numpy(zero_copy_only=False).astype(bool),
        names=names,
    )


def _as_datetime(value: Any) -> datetime | None:
    """A datetime column read by a raw cursor: aware on PostgreSQL, naive-UTC text on SQLite."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        value = parse_datetime(str(value))
        if value is None:
            return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


# --- PPR (G3) ---------------------------------------------------------------------------------------------


def _seed_vector(n: int, seeds: Sequence[int]) -> np.ndarray:
    s = np.zeros(n, dtype=np.float64)
    if seeds:
        s[np.asarray(seeds, dtype=np.int64)] = 1.0 / len(seeds)
    return s


def ppr_exact(graph: Graph, seeds: Sequence[int]) -> np.ndarray:
    """The reference: ``p ← (1−d)·s + d·Aᵀp`` from p = s, at most 20 iterations, until the L1 change < 1e-6."""
    s = _seed_vector(graph.size, seeds)
    p = s.copy()
    base = (1.0 - DAMPING) * s
    for _ in range(MAX_ITERATIONS):
        nxt = base + DAMPING * (graph.walk @ p)
        delta = float(np.abs(nxt - p).sum())
        p = nxt
        if delta < TOLERANCE:
            break
    return p


def ppr_push(graph: Graph, seeds: Sequence[int], *, epsilon: float = PUSH_EPSILON) -> np.ndarray:
    """Local forward push (Andersen–Chung–Lang) of the same PPR, as a dense vector (see ``_push``)."""
    p = np.zeros(graph.size, dtype=np.float64)
    nodes, values = _push(graph, seeds, epsilon)
    p[nodes] = values
    return p


def _push(graph: Graph, seeds: Sequence[int], epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """The push (``push_kernel``) from the exact iteration's seed vector: the nodes it reached and their
    estimates. Every residual left is ≤ ε·degree: on an undirected graph the error at a node v is at most
    ε·deg(v); tests pin the top 10 to ``ppr_exact``."""
    if not seeds:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    from . import push_kernel  # numba: imported (and its compiled code loaded) on first use

    distinct = np.unique(np.asarray(seeds, dtype=np.int64))
    rows = graph.rows
    with graph.scratch() as scratch:
        return push_kernel.push(
            rows.indptr, rows.indices, rows.data, graph.degree, distinct, 1.0 / len(seeds), epsilon, DAMPING,
            scratch,
        )  # fmt: skip  # 1/len(seeds) each, as _seed_vector


@dataclass(frozen=True)
class GraphScores:
    """Memory scores of one query, normalised so the top memory is 1.0 (G3), kept sparse: the memory nodes
    PPR reached and their mass (a query reads a few dozen candidates, not every memory). Scores are rounded
    to 12 places so that symmetric memories tie exactly, and ties rank by id."""

    graph: Graph
    nodes: np.ndarray  # memory nodes with mass, numbered in graph.memory_ids order
    values: np.ndarray  # their PPR mass
    peak: float
    top: list[str]  # the PPR top (PPR_TOP by default), ties by id
    seeds: list[str]

    def get(self, memory_id: str) -> float:
        return self.get_many([memory_id])[0]

    def get_many(self, memory_ids: Sequence[str]) -> list[float]:
        """The scores of ``memory_ids`` (0.0 for a memory the query did not reach or the graph lacks). The
        reached nodes' ids are matched against the few wanted ones (a hash of the wanted ids, in C): the cost
        follows what the query touched, with no id index of the whole graph to build or keep."""
        import pyarrow as pa
        import pyarrow.compute as pc

        wanted = list(dict.fromkeys(memory_ids))
        if not wanted:
            return []
        reached = self.graph.memory_ids.take(_arrow_indices(self.nodes))
        where = pc.index_in(reached, value_set=pa.array(wanted, type=pa.large_string()))
        where = where.fill_null(-1).to_numpy(zero_copy_only=False)
        hits = np.flatnonzero(where >= 0)
        found = {
            wanted[k]: round(v / self.peak, 12)
            for k, v in zip(where[hits].tolist(), self.values[hits].tolist(), strict=True)
        }
        return [found.get(m, 0.0) for m in memory_ids]

    @property
    def scores(self) -> dict[str, float]:
        """Every memory with a nonzero score (tests and exports; the query path uses ``get_many``)."""
        ids = self.graph.memory_ids.take(_arrow_indices(self.nodes)).to_pylist()
        return {mid: round(v / self.peak, 12) for mid, v in zip(ids, self.values.tolist(), strict=True)}


def _arrow_indices(nodes: np.ndarray) -> Any:
    import pyarrow as pa

    return pa.array(nodes, type=pa.int64())


def memory_scores(
    graph: Graph, p: np.ndarray, *, seeds: Sequence[int], top: int = PPR_TOP
) -> GraphScores | None:
    """The memory part of a dense PPR vector ``p`` as scores and its top."""
    mem = p[graph.n_entities :]
    nz = np.flatnonzero(mem > 0)
    return _memory_scores(graph, nz, mem[nz], seeds=seeds, top=top)


def _memory_scores(
    graph: Graph, nodes: np.ndarray, values: np.ndarray, *, seeds: Sequence[int], top: int
) -> GraphScores | None:
    """Scores from memory ``nodes`` (numbered from 0, any order) with positive ``values``."""
    if nodes.size == 0:
        return None
    peak = float(values.max())
    k = min(top, values.size)
    kth = float(np.partition(values, values.size - k)[values.size - k])
    kth_rounded = round(kth / peak, 12)
    pool = np.flatnonzero(values >= kth * (1 - 1e-9))
    pool_ids = graph.memory_ids.take(_arrow_indices(nodes[pool])).to_pylist()
    ranked = sorted(
        (-score, mid)
        for j, mid in zip(pool.tolist(), pool_ids, strict=True)
        if (score := round(float(values[j]) / peak, 12)) >= kth_rounded
    )[:top]
    return GraphScores(
        graph=graph,
        nodes=nodes,
        values=values,
        peak=peak,
        top=[mid for _, mid in ranked],
        seeds=[graph.entities[i] for i in seeds],
    )


# --- cache (G5) -------------------------------------------------------------------------------------------

_cache: OrderedDict[str, Graph] = OrderedDict()
_cache_lock = threading.Lock()
stats = {"builds": 0, "hits": 0}


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


def _generation_key(agent_id: str) -> Any:
    """The generation row (T9) as the cache key: its counter and when it last moved (a restored or rolled-back
    database can repeat a counter value, not both)."""
    with connection.cursor() as cur:  # one plain statement on every search (the ORM query costs more)
        cur.execute("SELECT generation, updated_at FROM graph_generation WHERE agent_id = %s", [agent_id])
        row = cur.fetchone()
    return (int(row[0]), row[1]) if row else (0, None)


def agent_graph(*, agent_id: str, at: datetime | None = None) -> Graph:
    """The agent's graph: the cached one while its generation (read from the database) and world time still
    match, else a fresh build (kept only above ``GRAPH_CACHE_MIN_TRIPLES`` current triples)."""
    at = at or c.now()
    generation = _generation_key(agent_id)
    with _cache_lock:
        cached = _cache.get(agent_id)
        if (
            cached is not None
            and cached.generation == generation
            and (cached.expires is None or at < cached.expires)
        ):
            _cache.move_to_end(agent_id)
            stats["hits"] += 1
            return cached
    if generation[0] == 0:  # no triple (and no alias) was ever written for this agent: nothing to read
        return build_graph([], {}, generation=generation)
    graph = load_graph(agent_id=agent_id, at=at, generation=generation)
    with _cache_lock:
        stats["builds"] += 1
        if graph.triples > GRAPH_CACHE_MIN_TRIPLES:
            _cache[agent_id] = graph
            _cache.move_to_end(agent_id)
            while len(_cache) > CACHE_AGENTS:
                _cache.popitem(last=False)
        else:
            _cache.pop(agent_id, None)
    return graph


def graph_scores(
    *, agent_id: str, query: str, at: datetime | None = None, method: str = "push"
) -> GraphScores | None:
    """PPR memory scores for ``query``, or None when the agent has no triples or the query names no entity
    (then search is FTS-only, unchanged)."""
    agent_id = c.check_agent_id(agent_id)
    if not isinstance(query, str):
        raise InvalidArgument("query must be a string", field="query")
    graph = agent_graph(agent_id=agent_id, at=at)
    if graph.triples == 0:
        return None
    seeds = graph.seeds(query)
    from .embeddings import embed_seeds

    seeds = embed_seeds(agent_id=agent_id, graph=graph, query=query, seeds=seeds)
    if not seeds:
        return None
    return rank(graph, seeds, method=method)


def rank(
    graph: Graph, seeds: Sequence[int], *, method: str = "push", top: int = PPR_TOP
) -> GraphScores | None:
    """PPR from ``seeds`` and the memory scores: the forward push (the query path) or the exact iteration."""
    if method == "exact":
        return memory_scores(graph, ppr_exact(graph, seeds), seeds=seeds, top=top)
    nodes, values = _push(graph, seeds, PUSH_EPSILON)
    memory = nodes >= graph.n_entities
    values = values[memory]
    positive = values > 0
    return _memory_scores(
        graph, nodes[memory][positive] - graph.n_entities, values[positive], seeds=seeds, top=top
    )
