"""Discovery (SPEC B5): connections between entities that nobody wrote down, put in the inbox with their
evidence. ``discover(agent_id)`` is the job: it reads the agent's facts, computes the entity edges
(``edges``) and their Leiden communities (``communities``), picks the findings and stores the run through the
engine (``engine.discovery_record``, one transaction). It reads memory and never changes a memory row.

The three kinds, each among the run's kept edges that no fact links (percentiles over all kept edges):

* ``cross_community``: the two ends are in different communities and the composite is at or above its 50th
  percentile (a strong bridge between groups);
* ``indirect_strong``: Adamic-Adar at or above its 75th percentile while the pair co-occurs at most once (close
  two hops apart, never together);
* ``knowledge_gap``: type affinity at least 0.7 while the composite is at or below its 25th percentile (the
  kind of pair that is usually linked, with almost nothing between them). The percentile is taken over the
  kept edges whose two ends are typed, when there are any: an untyped pair's type term is a stand-in
  (``UNTYPED_AFFINITY``), so its composite does not compare.

Each kind picks its best ``PER_KIND`` pairs per run (best score first; a pair an earlier kind of the same run
picked is passed over); the picks already in the inbox, in any status, are not added again. So a second run
over unchanged memory adds nothing, and a dismissed pair never comes back. Every item carries its evidence: the signals,
the shared neighbours, the shared sessions, the facts (memory ids with their triples) and the path to draw.

The dream loop runs it as a phase: ``discover(agent_id, actor="system:dream", dream_run_id=run.id)``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
from django.utils import timezone

from memory import engine
from memory.models import Community, DiscoveryItem

from .communities import groups_of, leiden, match_numbers
from .edges import DEFAULT_FLOOR, Edges, Facts, compute_edges, load_facts, type_label

log = logging.getLogger("memdesk.discovery")

PER_KIND = 10
# Leiden runs on at most this many edges, the strongest: a million facts keep millions of weak edges (type
# affinity alone lifts most two-hop pairs over the floor), and they add time, not structure.
LEIDEN_MAX_EDGES = 500_000
GAP_AFFINITY = 0.7
SHOW_NEIGHBOURS = 8
SHOW_SESSIONS = 8
SHOW_FACTS = 12
ACTOR = "system:discover"
RULES = {
    "cross_community": "different communities, composite ≥ its 50th percentile, no fact links them",
    "indirect_strong": "Adamic-Adar ≥ its 75th percentile, co-occurrence ≤ 1, no fact links them",
    "knowledge_gap": "type affinity ≥ 0.7, composite ≤ its 25th percentile, no fact links them",
}


def discover(
    agent_id: str, *, actor: str = ACTOR, dream_run_id: int | None = None, floor: float = DEFAULT_FLOOR
) -> engine.DiscoveryOutcome:
    """Compute and store one discovery run for ``agent_id``; returns it with the inbox items it added."""
    agent_id = engine.check_agent_id(agent_id)
    actor = engine.check_actor(actor)
    started = timezone.now()
    timings: dict[str, float] = {}
    t = time.perf_counter()
    facts = load_facts(agent_id=agent_id, at=started)
    timings["load"] = time.perf_counter() - t
    t = time.perf_counter()
    embedder, embedder_error = _embedder()
    edges = compute_edges(facts, floor=floor, embedder=embedder, agent_id=agent_id)
    if embedder_error:
        edges.missing["embedding"] = edges.report["missing"]["embedding"] = embedder_error
    timings["edges"] = time.perf_counter() - t

    t = time.perf_counter()
    kept = edges.kept
    previous = {
        number: (name, members)
        for number, name, members in Community.objects.filter(
            agent_id=agent_id, retired_at__isnull=True
        ).values_list("number", "name", "members")
    }
    index = {name: i for i, name in enumerate(facts.entities)}
    initial = np.full(facts.n_entities, -1, dtype=np.int64)
    for number, (_, members) in previous.items():
        for m in members:
            if m in index:
                initial[index[m]] = number
    strong = strongest(kept, edges.composite, LEIDEN_MAX_EDGES)
    membership = leiden(
        facts.n_entities, edges.a[strong], edges.b[strong], edges.composite[strong], initial=initial
    )
    found = groups_of(membership, facts.entities, edges.a[strong], edges.b[strong], edges.composite[strong])
    last = Community.objects.filter(agent_id=agent_id).order_by("-number").values_list("number", flat=True)
    groups = match_numbers(found, previous, next_number=(last.first() or 0) + 1)
    community_of = np.full(facts.n_entities, -1, dtype=np.int64)
    for g in groups:
        community_of[[index[m] for m in g.members]] = g.number
    names = {g.number: g.name for g in groups}
    timings["communities"] = time.perf_counter() - t

    t = time.perf_counter()
    existing = set(DiscoveryItem.objects.filter(agent_id=agent_id).values_list("fingerprint", flat=True))
    findings, rules = select(edges, community_of, names, existing)
    timings["select"] = time.perf_counter() - t

    batch = edge_batch(edges)
    report = {
        **edges.report,
        "communities": len(groups),
        "new_communities": sum(1 for g in groups if g.new),
        "stored_edges": len(batch),
        "community_edges": int(strong.size),
        "rules": rules,
        "seconds": {**edges.report["seconds"], **{k: round(v, 3) for k, v in timings.items()}},
        "note": _note(facts, edges, groups),
    }
    t = time.perf_counter()
    outcome = engine.discovery_record(
        agent_id=agent_id,
        started_at=started,
        report=report,
        edges=batch,
        communities=[(g.number, g.name, list(g.members)) for g in groups],
        findings=findings,
        actor=actor,
        dream_run_id=dream_run_id,
    )
    log.info(
        "discovery for %s: %s (store %.2fs)", agent_id, outcome.report.get("added"), time.perf_counter() - t
    )
    return outcome


def strongest(kept: np.ndarray, composite: np.ndarray, limit: int) -> np.ndarray:
    """The ``limit`` kept edges of highest composite (all of them when there are fewer), in index order."""
    if kept.size <= limit:
        return kept
    top = kept[np.argpartition(-composite[kept], limit - 1)[:limit]]
    top.sort()
    return top


def _embedder() -> tuple[Any, str]:
    """The configured embedder, or None; a configured one that cannot load is reported, never raised."""
    from memory.engine.embeddings import active_embedder

    try:
        embedder, _ = active_embedder()
    except Exception as exc:  # noqa: BLE001 - optional: the run goes on without the signal
        log.warning("discovery: the embedder could not load", exc_info=True)
        return None, f"the embedder could not load ({type(exc).__name__}): left out"
    return embedder, ""


def _note(facts: Facts, edges: Edges, groups: list[Any]) -> str:
    """A sentence for people about a run that found little, or ""."""
    if len(facts) == 0:
        return "No current facts: nothing to connect."
    if facts.n_entities < 2:
        return "Only one entity: there is no pair to connect."
    if not edges.keep.any():
        return "No pair of entities reaches the floor: no edges, no communities."
    if len(groups) < 2:
        return "One community: no bridge between communities to find."
    return ""


# --- the rules --------------------------------------------------------------------------------------------


def select(
    edges: Edges, community_of: np.ndarray, community_names: dict[int, str], existing: set[str]
) -> tuple[list[engine.Finding], dict[str, Any]]:
    """The findings of each kind (see the module's docstring) and, per kind, the rule, its threshold and
    counts for the report."""
    kept = edges.kept
    rules: dict[str, Any] = {k: {"rule": RULES[k], "eligible": 0, "threshold": None} for k in RULES}
    if kept.size == 0:
        return [], rules
    unlinked = kept[edges.linked[kept] == 0]
    comp = edges.composite
    p50 = float(np.percentile(comp[kept], 50))
    p25 = float(np.percentile(comp[kept], 25))
    a, b = edges.a[unlinked], edges.b[unlinked]
    candidates: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    ca, cb = community_of[a], community_of[b]
    cross = unlinked[(ca >= 0) & (cb >= 0) & (ca != cb) & (comp[unlinked] >= p50)]
    candidates["cross_community"] = (cross, comp[cross])
    rules["cross_community"]["threshold"] = round(p50, 6)
    if "adamic_adar" in edges.signals:
        aa = edges.signals["adamic_adar"]
        p75 = float(np.percentile(aa[kept], 75))
        ok = (
            (aa[unlinked] >= p75)
            & (edges.adamic_adar_raw[unlinked] > 0)
            & (edges.cooccurrence[unlinked] <= 1)
        )
        indirect = unlinked[ok]
        candidates["indirect_strong"] = (indirect, aa[indirect])
        rules["indirect_strong"]["threshold"] = round(p75, 6)
    else:
        rules["indirect_strong"]["skipped"] = "Adamic-Adar is missing"
    if "type_affinity" in edges.signals:
        ta = edges.signals["type_affinity"]
        typed = edges.types.sum(axis=1) > 0
        among = kept[typed[edges.a[kept]] & typed[edges.b[kept]]]
        # the weakest quarter of the pairs whose kinds are known (an untyped pair's type term is a stand-in,
        # so its composite does not compare); all kept edges when no pair has both ends typed
        p25_typed = float(np.percentile(comp[among], 25)) if among.size else p25
        gap = unlinked[(ta[unlinked] >= GAP_AFFINITY) & (comp[unlinked] <= p25_typed)]
        # best first: highest affinity, then the weakest evidence
        candidates["knowledge_gap"] = (gap, ta[gap] - 1e-6 * comp[gap])
        rules["knowledge_gap"]["threshold"] = round(p25_typed, 6)
        rules["knowledge_gap"]["among"] = "edges with both ends typed" if among.size else "all edges"
    else:
        rules["knowledge_gap"]["skipped"] = "type affinity is missing"
    facts = edges.facts
    taken: set[str] = set()
    out: list[engine.Finding] = []
    for kind in RULES:
        pairs, scores = candidates.get(kind, (np.zeros(0, np.int64), np.zeros(0)))
        rules[kind]["eligible"] = int(pairs.size)
        order = np.lexsort((edges.b[pairs], edges.a[pairs], -scores))
        added = 0
        for k in order.tolist():
            if added >= PER_KIND:
                break
            p = int(pairs[k])
            name_a, name_b = facts.entities[edges.a[p]], facts.entities[edges.b[p]]
            fp = engine.pair_fingerprint(name_a, name_b)
            if fp in taken:
                continue
            taken.add(fp)
            added += 1
            if fp in existing:
                continue
            evidence = build_evidence(edges, p, kind, community_of, community_names)
            score = float(edges.composite[p] if kind == "cross_community" else scores[k])
            out.append(
                engine.Finding(
                    kind=kind,
                    entity_a=name_a,
                    entity_b=name_b,
                    score=max(0.0, min(1.0, score)),
                    explanation=explain(kind, evidence),
                    evidence=evidence,
                )
            )
    return out, rules


# --- evidence -----------------------------------------------------------------------------------------------


def _row(m: Any, i: int) -> np.ndarray:
    return m.indices[m.indptr[i] : m.indptr[i + 1]]


def _fact(facts: Facts, f: int) -> dict[str, Any]:
    o = int(facts.objects[f])
    return {
        "id": str(facts.ids[f].as_py()),
        "subject": facts.label(int(facts.subjects[f])),
        "predicate": str(facts.predicates[f].as_py()),
        "object": facts.label(o) if o >= 0 else None,
        "s": facts.entities[int(facts.subjects[f])],
        "o": facts.entities[o] if o >= 0 else None,
    }


def _facts_between(facts: Facts, x: int, ys: np.ndarray, limit: int) -> list[int]:
    """Facts linking entity ``x`` with one of ``ys`` (one per neighbour, in ``ys`` order)."""
    s, o = facts.subjects, facts.objects
    hits = np.flatnonzero(((s == x) & np.isin(o, ys)) | ((o == x) & np.isin(s, ys)))
    other = np.where(s[hits] == x, o[hits], s[hits])
    out = []
    for y in ys.tolist():
        match = hits[other == y]
        if match.size:
            out.append(int(match[0]))
        if len(out) >= limit:
            break
    return out


def _facts_of(facts: Facts, x: int, limit: int, sessions: np.ndarray | None = None) -> list[int]:
    mask = (facts.subjects == x) | (facts.objects == x)
    if sessions is not None:
        mask &= np.isin(facts.sessions, sessions)
    return np.flatnonzero(mask)[:limit].tolist()


def build_evidence(
    edges: Edges, p: int, kind: str, community_of: np.ndarray, community_names: dict[int, str]
) -> dict[str, Any]:
    """What an item shows: the signals, the shared neighbours and sessions, the facts and the path."""
    facts = edges.facts
    a, b = int(edges.a[p]), int(edges.b[p])
    adj = edges.adjacency
    degree = np.diff(adj.indptr)
    shared = np.intersect1d(_row(adj, a), _row(adj, b))
    shared = shared[np.lexsort((shared, degree[shared]))]  # the most telling (fewest neighbours) first
    sessions = np.intersect1d(_row(edges.incidence, a), _row(edges.incidence, b))
    shown = shared[:SHOW_NEIGHBOURS]
    fact_ids: list[int] = []
    if shown.size:
        half = SHOW_FACTS // 2
        fact_ids = _facts_between(facts, a, shown, half) + _facts_between(facts, b, shown, half)
    elif sessions.size:
        fact_ids = _facts_of(facts, a, 3, sessions) + _facts_of(facts, b, 3, sessions)
    if not fact_ids or kind == "knowledge_gap":
        extra = [f for f in _facts_of(facts, a, 2) + _facts_of(facts, b, 2) if f not in fact_ids]
        fact_ids += extra
    fact_rows = [_fact(facts, f) for f in dict.fromkeys(fact_ids)][:SHOW_FACTS]
    signals = {name: round(float(values[p]), 4) for name, values in edges.signals.items()}
    signals.update(
        composite=round(float(edges.composite[p]), 4),
        cooccurrence_count=int(edges.cooccurrence[p]),
        shared_sessions=int(edges.shared_sessions[p]),
        adamic_adar_raw=round(float(edges.adamic_adar_raw[p]), 4),
    )
    ca, cb = int(community_of[a]), int(community_of[b])
    pair = [facts.entities[a], facts.entities[b]]
    nodes = {pair[0]: {"id": pair[0], "label": facts.label(a), "role": "pair"}}
    nodes[pair[1]] = {"id": pair[1], "label": facts.label(b), "role": "pair"}
    path_edges = []
    for f in fact_rows:
        for key, label in (("s", "subject"), ("o", "object")):
            name = f[key]
            if name is not None and name not in nodes:
                nodes[name] = {"id": name, "label": f[label], "role": "neighbour"}
        if f["o"] is not None:
            path_edges.append({"from": f["s"], "to": f["o"], "label": f["predicate"], "id": f["id"]})
    return {
        "pair": pair,
        "labels": [facts.label(a), facts.label(b)],
        "types": [type_label(edges.types[a]), type_label(edges.types[b])],
        "signals": signals,
        "weights": {k: round(v, 4) for k, v in edges.weights.items()},
        "missing": sorted(edges.missing),
        "neighbours": [facts.entities[z] for z in shown.tolist()],
        "neighbour_labels": [facts.label(z) for z in shown.tolist()],
        "neighbours_total": int(shared.size),
        "sessions": [facts.session_names[s] for s in sessions[:SHOW_SESSIONS].tolist()],
        "sessions_total": int(sessions.size),
        "facts": [{k: v for k, v in f.items() if k not in ("s", "o")} for f in fact_rows],
        "communities": [
            {"number": ca, "name": community_names.get(ca, "")} if ca >= 0 else None,
            {"number": cb, "name": community_names.get(cb, "")} if cb >= 0 else None,
        ],
        "path": {"nodes": list(nodes.values()), "edges": path_edges},
    }


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def explain(kind: str, ev: dict[str, Any]) -> str:
    """The item as one readable sentence."""
    a, b = ev["labels"]
    nb, ns = ev["neighbours_total"], ev["sessions_total"]
    shared = f"share {_count(nb, 'neighbour')}" if nb else "share no neighbour"
    together = f" and appear together in {_count(ns, 'session')}" if ns else ""
    if kind == "cross_community":
        ca, cb = ev["communities"]
        return (
            f"{a} and {b} {shared}{together}, but no fact links them; they sit in different communities "
            f"(around {ca['name']} and around {cb['name']})."
        )
    if kind == "indirect_strong":
        names = ", ".join(ev["neighbour_labels"][:3])
        via = f" through {names}" if names else ""
        return (
            f"{a} and {b} are two hops apart{via} ({shared}, Adamic-Adar in the top quarter), yet they "
            f"appear together at most once and no fact links them."
        )
    ta, tb = ev["types"]
    affinity = ev["signals"].get("type_affinity", 0.0)
    return (
        f"{a} ({ta}) and {b} ({tb}) are the kind of pair that is usually linked (affinity {affinity:.1f}), "
        f"but the evidence between them is among the weakest quarter: they {shared}{together}, and no fact "
        "links them."
    )


# --- the stored edges -------------------------------------------------------------------------------------------


def edge_batch(edges: Edges, limit: int | None = None) -> engine.EdgeBatch:
    """The kept edges to store: the strongest ``MAX_STORED_EDGES`` by composite (all of them, usually)."""
    limit = limit or engine.MAX_STORED_EDGES
    kept = edges.kept
    if kept.size > limit:
        kept = kept[np.argpartition(-edges.composite[kept], limit - 1)[:limit]]
        kept.sort()
    names = edges.facts.entities

    def col(name: str) -> list[float]:
        values = edges.signals.get(name)
        return [0.0] * kept.size if values is None else np.round(values[kept], 6).tolist()

    return engine.EdgeBatch(
        entity_a=[names[i] for i in edges.a[kept].tolist()],
        entity_b=[names[i] for i in edges.b[kept].tolist()],
        composite=np.round(edges.composite[kept], 6).tolist(),
        cooccurrence=edges.cooccurrence[kept].tolist(),
        cooccurrence_scaled=col("cooccurrence"),
        session_jaccard=col("session_jaccard"),
        adamic_adar=col("adamic_adar"),
        type_affinity=col("type_affinity"),
        embedding=col("embedding") if "embedding" in edges.signals else None,
    )
