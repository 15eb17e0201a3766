"""The curator's graph reads (SPEC G7, D6): the export, the page's view, a node's facts, a merge preview."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.db.models import Q

from memory.models import Memory

from .. import common as c
from ..belief import NOT_RETRACTED, current_q
from ..types import InvalidArgument, MemoryRecord
from .aliases import _alias_map
from .build import _arrow_indices
from .names import _check_alias_name, _check_name, _Resolver, normalize_entity
from .view_cache import view_columns

MAX_EXPORT_LIMIT = 10_000


MAX_VIEW_LIMIT = 5_000


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
    entities: int = 0  # distinct entities the filters keep (before any neighbourhood)
    auto_focus: bool = False  # no entity was asked for and the graph was large: ``entity`` is its hub
    labels: dict[str, str] = field(default_factory=dict)  # entity -> its stored surface form (for display)


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
    focus_over: int | None = None,
) -> GraphView:
    """The entity graph a curator looks at: edges subject–object labelled by predicate (facts without an
    object have no edge here; ``entity_facts`` lists them), filters, an optional neighbourhood (depth 1–2)
    of one alias-resolved entity, and a cap with the totals to say "showing N of M". Filters and the
    neighbourhood work on the columns of the agent's current facts (``_edge_columns``); only the edges shown
    become Python objects. ``focus_over``: with no entity asked for, a graph of more entities than this starts
    from the neighbourhood of its hub (the highest PageRank over the filtered edges; ``auto_focus``)."""
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
    edges = view_columns(agent_id, c.now(), aliases=aliases)
    s, o = edges.subjects, edges.objects
    keep = (s >= 0) & (o >= 0) & (edges.trusts >= trust)
    if predicate:
        keep &= edges.predicate_is(predicate)
    rows = np.flatnonzero(keep)
    kept_nodes = np.unique(np.concatenate([s[rows], o[rows]])) if rows.size else np.empty(0, dtype=np.int64)
    auto_focus = False
    if focus is None and focus_over is not None and kept_nodes.size > focus_over:
        focus, auto_focus = edges.name(hub(s[rows], o[rows], len(edges.names))), True
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
    nodes = view_nodes(out, focus)
    labels = surface_forms(edges, {n["id"] for n in nodes})
    for n in nodes:
        n["label"] = labels.get(n["id"], n["id"])
    return GraphView(
        nodes=nodes,
        edges=out,
        predicates=edges.predicate_names(),
        total_edges=int(rows.size),
        shown_edges=len(out),
        truncated=rows.size > len(out),
        entity=focus,
        entities=int(kept_nodes.size),
        auto_focus=auto_focus,
        labels=labels,
    )


PAGERANK_DAMPING = 0.85
PAGERANK_ITERATIONS = 40
PAGERANK_TOLERANCE = 1e-6  # L1 change per iteration: the order of the top entity has long settled


def hub(subjects: np.ndarray, objects: np.ndarray, n: int) -> int:
    """The entity of highest PageRank over the edges (undirected; ties: the lower code), in NumPy."""
    src = np.concatenate([subjects, objects]).astype(np.int64)
    dst = np.concatenate([objects, subjects]).astype(np.int64)
    degree = np.bincount(src, minlength=n).astype(np.float64)
    present = degree > 0
    m = int(present.sum())
    rank = np.where(present, 1.0 / m, 0.0)
    safe = np.where(present, degree, 1.0)
    for _ in range(PAGERANK_ITERATIONS):
        spread = np.bincount(dst, weights=(rank / safe)[src], minlength=n)
        new = np.where(present, (1.0 - PAGERANK_DAMPING) / m + PAGERANK_DAMPING * spread, 0.0)
        done = float(np.abs(new - rank).sum()) < PAGERANK_TOLERANCE
        rank = new
        if done:
            break
    return int(np.argmax(rank))


def surface_forms(edges: Any, wanted: set[str]) -> dict[str, str]:
    """Each wanted entity's label: the surface form its facts spell it with most often (``Ada Lovelace`` for the
    key ``ada lovelace``), preferring its own spellings to an alias's (a merged name shows the kept one)."""
    if not wanted or edges.raw_names is None or edges.raw_codes is None or edges.raw_nodes is None:
        return {}
    codes = edges.raw_codes[edges.raw_codes >= 0]
    counts = np.bincount(codes, minlength=len(edges.raw_names)) if codes.size else np.zeros(0, np.int64)
    import pyarrow as pa
    import pyarrow.compute as pc

    asked = pa.array(sorted(wanted), pa.large_string())
    found = pc.index_in(asked, value_set=edges.names.cast(pa.large_string())).fill_null(-1)
    wanted_codes = found.to_numpy(zero_copy_only=False).astype(np.int64)
    nodes = edges.raw_nodes[: len(edges.raw_names)]
    idx = np.flatnonzero(np.isin(nodes, wanted_codes[wanted_codes >= 0]))
    best: dict[str, tuple[bool, int, str]] = {}
    for i, raw in zip(idx.tolist(), edges.raw_names.take(_arrow_indices(idx)).to_pylist(), strict=True):
        name = edges.name(int(nodes[i]))
        key = (normalize_entity(raw) == name, int(counts[i]) if i < counts.size else 0, raw.strip())
        if (
            name not in best
            or key[:2] > best[name][:2]
            or (key[:2] == best[name][:2] and key[2] < best[name][2])
        ):
            best[name] = key
    return {name: key[2] for name, key in best.items() if key[2]}


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
