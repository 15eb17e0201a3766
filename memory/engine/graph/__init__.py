"""Graph retrieval (SPEC G1–G8): entity aliases, the entity–memory graph, Personalized PageRank, its cache,
exports and the curator's graph reads.

The graph (G1) has one node per entity (a subject or object, normalised and alias-resolved) and one per
memory id; each current, believed fact adds the undirected edges subject–memory and memory–object, weighted by
its ``origin_trust``. It is kept as a row-normalised scipy CSR matrix per agent; queries never touch networkx.
PPR (G3) is ``p ← (1−d)·s + d·Aᵀp`` with d = 0.5. ``ppr_exact`` is that power iteration (≤ 20 iterations, stop
at an L1 change < 1e-6); ``ppr_push`` is a local forward push over the same matrix, compiled with numba
(``push_kernel``), that only touches the seeds' neighbourhood (tests pin its top-10 to the exact one). The
graph is read by one aggregated scan and built column-wise (``scan_facts``, ``build_columns``). The cache
(G5) is keyed on the agent's graph generation row (T9), so a write by any process is seen by the next query, and on the next moment a fact
starts or stops being current (world time moves on without a write).

The package has a module per seam: ``names`` (normalisation), ``aliases`` (G6), ``scan`` (the database read),
``build`` (the CSR graph), ``ppr`` (G3), ``cache`` (G5 and the query entry point), ``curation`` (G7 and the
curator's reads), ``embed_seed`` (G8), ``links`` (entity links of plain memories and search's turn → entity →
turn walk, issue 17). This module re-exports their public names.
"""

from .aliases import (
    MAX_ALIASES,
    AliasRecord,
    AliasResult,
    AlreadyUndone,
    MergeChanged,
    MergeUndoResult,
    alias_add,
    alias_list,
    alias_undo,
    resolve_entity,
    undone_merges,
)
from .build import Graph, build_columns, build_graph, load_graph
from .cache import GRAPH_CACHE_MIN_TRIPLES, agent_graph, clear_cache, graph_scores, stats
from .curation import (
    MAX_EXPORT_LIMIT,
    MAX_VIEW_LIMIT,
    AliasPreview,
    GraphView,
    alias_preview,
    entity_facts,
    export_graph,
    graph_view,
    view_nodes,
)
from .links import extract, link_backfill, link_memory, link_scores, memory_links, relink_since
from .names import MAX_ENTITY_CHARS, NFKC_MAX_EXPANSION, normalize_entity, normalize_names
from .ppr import (
    DAMPING,
    MAX_GRAPH_ONLY,
    PPR_TOP,
    PUSH_EPSILON,
    GraphScores,
    memory_scores,
    ppr_exact,
    ppr_push,
    rank,
)
from .scan import GRAPH_SCAN_INDEX, EdgeColumns, FactColumns, scan_facts
from .view_cache import generation_memo

__all__ = [
    "DAMPING",
    "GRAPH_CACHE_MIN_TRIPLES",
    "GRAPH_SCAN_INDEX",
    "MAX_ALIASES",
    "MAX_ENTITY_CHARS",
    "MAX_EXPORT_LIMIT",
    "MAX_GRAPH_ONLY",
    "MAX_VIEW_LIMIT",
    "NFKC_MAX_EXPANSION",
    "PPR_TOP",
    "PUSH_EPSILON",
    "AliasPreview",
    "AliasRecord",
    "AliasResult",
    "AlreadyUndone",
    "MergeChanged",
    "MergeUndoResult",
    "EdgeColumns",
    "FactColumns",
    "Graph",
    "GraphScores",
    "GraphView",
    "agent_graph",
    "alias_add",
    "alias_list",
    "alias_preview",
    "alias_undo",
    "build_columns",
    "build_graph",
    "clear_cache",
    "entity_facts",
    "export_graph",
    "extract",
    "link_backfill",
    "link_memory",
    "link_scores",
    "memory_links",
    "relink_since",
    "graph_scores",
    "graph_view",
    "generation_memo",
    "load_graph",
    "memory_scores",
    "normalize_entity",
    "normalize_names",
    "ppr_exact",
    "ppr_push",
    "rank",
    "resolve_entity",
    "scan_facts",
    "stats",
    "undone_merges",
    "view_nodes",
]
