"""Bringing a cached graph forward by the writes' delta (SPEC G5) instead of a full rebuild.

Every bump of the graph generation puts a line on the change log kept in the agent's ``graph_generation`` row
(``changes``, written by the bump's own UPDATE): the memory rows it changed. A cached graph at generation G
reaches G' when the log still holds the lines G..G' (G's token the one the graph was built at, none of unknown
content): only the changed memory rows are read, and the graph is patched: the changed memories leave it, those
current now come back (at the end), entities no fact names any more go and new ones are added. The CSR layout
is patched with one copy of each array and local work (no sort, no name normalisation, no database scan) and
the weights renormalised where degrees changed, so the result is the graph a fresh build would make, up to
the order of its nodes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.db import connection
from scipy import sparse

from ..belief import believed_sql
from .build import Graph, add_alias_names, seed_table
from .names import normalize_entity
from .scan import _as_datetime

READ_CHUNK = 500  # ids per statement when reading the changed rows


def parse_changes(text: str | None) -> dict[int, tuple[int, list[str] | None]]:
    """The change log: generation -> (token, changed memory ids or None when not known). A last line cut by the
    log's length bound is left out."""
    out: dict[int, tuple[int, list[str] | None]] = {}
    for line in (text or "").split("\n")[:-1]:
        gen, token, ids = line.split(" ", 2)
        out[int(gen)] = (int(token), None if ids == "*" else json.loads(ids))
    return out


def head_token(generation: int, head: str | None) -> int | None:
    """The token of the current generation, from the start of the change log (None if it is not there)."""
    parts = (head or "").split(" ", 2)
    if len(parts) < 3 or parts[0] != str(generation):
        return None
    return int(parts[1])


def changed_ids(agent_id: str, base: Any, target: Any) -> list[str] | None:
    """The memory rows changed between generation keys ``base`` and ``target`` (``(generation, updated_at,
    token)``), or None when the log cannot tell: a line is missing (the log holds the last bumps only, or the
    bump is older than the log), a token differs (a rolled-back or restored history), or a bump did not say what
    it changed."""
    gen, _, token = base
    new_gen, _, new_token = target
    if token is None or new_token is None or new_gen <= gen:
        return None
    with connection.cursor() as cur:
        cur.execute("SELECT changes FROM graph_generation WHERE agent_id = %s", [agent_id])
        row = cur.fetchone()
    if row is None:
        return None
    log = parse_changes(row[0])  # it may hold newer lines too: bumps committed since the key was read
    if log.get(gen, (None,))[0] != token or log.get(new_gen, (None,))[0] != new_token:
        return None
    ids: set[str] = set()
    for g in range(gen + 1, new_gen + 1):
        found = log.get(g, (None, None))[1]
        if found is None:
            return None
        ids.update(found)
    return sorted(ids)


@dataclass(frozen=True)
class ChangedRows:
    """The changed memories that are current facts now, and the next moment one of them starts or stops being
    current."""

    ids: list[str]
    subjects: list[str]
    objects: list[str | None]
    trusts: list[float]
    expires: datetime | None


def read_rows(agent_id: str, ids: Sequence[str], at: datetime) -> ChangedRows:
    """Of ``ids``, the rows the graph scan would take now (``scan_facts``: believed facts not ended at ``at``,
    started by then), and when one of them next starts or ends."""
    now = connection.ops.adapt_datetimefield_value(at)
    out = ChangedRows([], [], [], [], None)
    expires: list[datetime] = []
    with connection.cursor() as cur:
        for i in range(0, len(ids), READ_CHUNK):
            part = list(ids[i : i + READ_CHUNK])
            cur.execute(
                "SELECT m.id, m.subject, m.object, m.origin_trust, m.valid_until,"
                " (m.valid_from IS NULL OR m.valid_from <= %s), m.valid_from FROM memories m"
                f" WHERE m.id IN ({', '.join(['%s'] * len(part))}) AND m.agent_id = %s"
                f" AND m.subject IS NOT NULL AND m.predicate IS NOT NULL AND {believed_sql('m')}"
                " AND (m.valid_until IS NULL OR m.valid_until > %s)",
                [now, *part, agent_id, now],
            )
            for mid, subject, obj, trust, until, started, start in cur.fetchall():
                if not started:
                    expires.append(_as_datetime(start))  # type: ignore[arg-type]
                    continue
                out.ids.append(mid)
                out.subjects.append(subject)
                out.objects.append(obj)
                out.trusts.append(float(trust))
                if until is not None:
                    expires.append(_as_datetime(until))  # type: ignore[arg-type]
    return ChangedRows(out.ids, out.subjects, out.objects, out.trusts, min(expires, default=None))


def advance(graph: Graph, changed: Sequence[str], rows: ChangedRows, *, generation: Any) -> Graph:
    """A new graph: ``graph`` without the memories ``changed``, plus ``rows`` (the changed ones current now),
    the others kept in their order; ``graph`` itself is not modified (queries may be reading it)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    assert graph.fact_subjects is not None and graph.fact_objects is not None
    assert graph.fact_trusts is not None and graph.entity_facts is not None
    n_e, n_m = graph.n_entities, graph.triples
    gone = np.zeros(0, dtype=np.int64)
    if n_m and changed:
        found = pc.is_in(graph.memory_ids, value_set=pa.array(list(changed), pa.large_string()))
        gone = np.flatnonzero(found.to_numpy(zero_copy_only=False)).astype(np.int64)
    # the new facts' entities: existing nodes, or new ones numbered after the old entities
    names = _Names(graph)
    subj_new = np.asarray([names.node(raw) for raw in rows.subjects], dtype=np.int64)
    obj_new = np.asarray([names.node(raw) for raw in rows.objects], dtype=np.int64)
    trust_new = np.asarray(rows.trusts, dtype=np.float64)
    n_all = n_e + len(names.added)
    # how many facts name each entity; entities no fact names any more leave the graph
    subj_old, obj_old = graph.fact_subjects, graph.fact_objects
    counts = np.zeros(n_all, dtype=np.int64)
    counts[:n_e] = graph.entity_facts
    counts -= _fact_counts(subj_old[gone].astype(np.int64), obj_old[gone].astype(np.int64), n_all)
    counts += _fact_counts(subj_new, obj_new, n_all)
    dead = np.flatnonzero(counts == 0)
    keep_e = counts > 0
    n_e2 = n_all - dead.size

    def entity_node(nodes: np.ndarray) -> np.ndarray:  # old (or new-entity) number -> new number; -1 stays
        if not dead.size:
            return nodes
        return np.where(nodes >= 0, nodes - np.searchsorted(dead, nodes), -1)

    subjects = np.concatenate(
        [entity_node(np.delete(subj_old, gone).astype(np.int64)), entity_node(subj_new)]
    )
    objects = np.concatenate([entity_node(np.delete(obj_old, gone).astype(np.int64)), entity_node(obj_new)])
    trusts = np.concatenate([np.delete(graph.fact_trusts, gone), trust_new])
    patch = _Patch(graph, gone, dead, n_e2, subjects, objects, trusts)
    memory_ids = graph.memory_ids
    if gone.size:
        keep_m = np.ones(n_m, dtype=bool)
        keep_m[gone] = False
        memory_ids = memory_ids.filter(pa.array(keep_m))
    memory_ids = pa.concat_arrays([memory_ids, pa.array(rows.ids, type=pa.large_string())])
    entities = names.entities(keep_e)
    ent_map = np.full(n_all + 1, -1, dtype=np.int64)  # for the seed tables: old node -> new node
    ent_map[:n_all][keep_e] = np.arange(n_e2)
    word_names, cjk_names = names.seed_tables(keep_e, ent_map, entities)
    same_entities = n_e2 == n_e and not names.added
    expires = [e for e in (graph.expires, rows.expires) if e is not None]
    n_m2 = trusts.size
    index_type = np.int32 if max(n_e2 + n_m2, patch.indices.size) < 2**31 else np.int64
    return Graph(
        generation=generation,
        expires=min(expires, default=None),
        entities=entities,
        memory_ids=memory_ids,
        walk=patch.matrix(patch.walk_data),
        rows=patch.matrix(patch.rows_data),
        degree=patch.degree,
        word_names=word_names,
        cjk_names=cjk_names,
        word_max=max(map(len, word_names), default=0)
        if dead.size
        else max(graph.word_max, max((len(k) for k in names.word_keys), default=0)),
        cjk_max=min(32, max(map(len, cjk_names), default=0)),
        triples=n_m2,
        embeddings=dict(graph.embeddings) if same_entities else {},
        fact_subjects=subjects.astype(index_type),
        fact_objects=objects.astype(index_type),
        fact_trusts=trusts,
        entity_facts=counts[keep_e],
        aliases=graph.aliases,
    )


def _fact_counts(subjects: np.ndarray, objects: np.ndarray, n: int) -> np.ndarray:
    other = objects[(objects >= 0) & (objects != subjects)]
    return np.bincount(subjects[subjects >= 0], minlength=n) + np.bincount(other, minlength=n)


class _Names:
    """Raw subject/object text of the new facts to entity nodes: an entity the graph has, else a new one."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.added: list[str] = []
        self.new_nodes: dict[str, int] = {}
        self.memo: dict[str | None, int] = {}
        self.word_keys: list[str] = []

    def node(self, raw: str | None) -> int:
        hit = self.memo.get(raw)
        if hit is not None:
            return hit
        g = self.graph
        name = normalize_entity(raw) if raw is not None else ""
        name = g.aliases.get(name, name)
        if not name:
            node = -1
        else:
            found = g.word_names.get(name)
            if found is None:
                found = g.cjk_names.get(name)
            # a seed table also holds aliases; a resolved name is never an alias, so a hit is the entity itself
            node = found if found is not None else self.new_nodes.get(name, -2)
            if node == -2:
                node = g.n_entities + len(self.added)
                self.new_nodes[name] = node
                self.added.append(name)
        self.memo[raw] = node
        return node

    def dropped(self, keep: np.ndarray) -> bool:
        return not bool(keep[: self.graph.n_entities].all())

    def entities(self, keep: np.ndarray) -> list[str]:
        old = self.graph.entities
        if not self.dropped(keep):
            return [*old, *(n for n, k in zip(self.added, keep[len(old) :].tolist(), strict=True) if k)]
        every = [*old, *self.added]
        return [every[i] for i in np.flatnonzero(keep).tolist()]

    def seed_tables(
        self, keep: np.ndarray, ent_map: np.ndarray, entities: list[str]
    ) -> tuple[dict[str, int], dict[str, int]]:
        """The seed tables (name or alias -> entity node) of the new graph: the old ones, renumbered when
        entities left, plus the new entities and their aliases."""
        g = self.graph
        if self.dropped(keep):
            remap = ent_map.tolist()
            word = {k: remap[v] for k, v in g.word_names.items() if remap[v] >= 0}
            cjk = {k: remap[v] for k, v in g.cjk_names.items() if remap[v] >= 0}
        else:
            word, cjk = dict(g.word_names), dict(g.cjk_names)
        fresh = {name for name, node in self.new_nodes.items() if keep[node]}
        for name in fresh:
            table = seed_table(word, cjk, name)
            table[name] = int(ent_map[self.new_nodes[name]])
            if table is word:
                self.word_keys.append(name)
        if fresh and g.aliases:
            before = set(word)
            add_alias_names(word, cjk, g.aliases, only=fresh)
            self.word_keys.extend(set(word) - before)
        return word, cjk


class _Patch:
    """The CSR arrays of A and Aᵀ (one structure) and the degrees after a delta, made from the old ones by one
    copy of each array and local work: the removed memories' edges are cut out, the nodes renumbered (removed
    memories and entities that left close up, new entities come after the old ones, new memories at the end),
    the new memories' edges appended to their entities' rows (rows stay sorted), and the weights renormalised
    only where a degree changed: the rows of the entities that gained or lost edges (A), and their entries in
    the memory rows (Aᵀ). Edge weights and degrees are those ``build._weights`` gives."""

    def __init__(
        self,
        graph: Graph,
        gone: np.ndarray,
        dead: np.ndarray,
        n_e2: int,
        subjects: np.ndarray,
        objects: np.ndarray,
        trusts: np.ndarray,
    ):
        n_e, n_m = graph.n_entities, graph.triples
        ptr, idx = graph.rows.indptr, graph.rows.indices
        n_m2 = trusts.size
        n_new = n_m2 - (n_m - gone.size)
        self.n = n_e2 + n_m2
        self.w_mem = trusts * np.where((subjects == objects) & (subjects >= 0), 2.0, 1.0)
        dead_old = dead[dead < n_e]
        n_e_kept = n_e - dead_old.size
        # 1. the removed memories' rows and their entries in entity rows (positions in the old arrays)
        g_nodes = n_e + gone
        g_len = ptr[g_nodes + 1] - ptr[g_nodes]
        mem_pos = _ranges(ptr[g_nodes].astype(np.int64), g_len.astype(np.int64))
        cut_ents = idx[mem_pos].astype(np.int64)
        cut_mems = np.repeat(g_nodes, g_len)
        ent_pos = np.fromiter(
            (
                ptr[e] + np.searchsorted(idx[ptr[e] : ptr[e + 1]], m)
                for e, m in zip(cut_ents.tolist(), cut_mems.tolist(), strict=True)
            ),
            dtype=np.int64,
            count=cut_ents.size,
        )
        cut = np.sort(np.concatenate([mem_pos, ent_pos]))
        count = np.diff(ptr).astype(np.int64)
        count[g_nodes] = 0
        np.subtract.at(count, cut_ents, 1)
        assert not count[dead_old].any(), "an entity left the graph with edges"
        # 2. the new memories' edges (new numbering): where they go in the old entity rows, the new rows
        new_s, new_o, new_t = subjects[n_m2 - n_new :], objects[n_m2 - n_new :], trusts[n_m2 - n_new :]
        same = (new_s == new_o) & (new_s >= 0)
        w_s = np.where(same, 2.0 * new_t, new_t)
        s_ok = (new_s >= 0) & (w_s > 0)
        o_ok = (new_o >= 0) & (new_t > 0) & ~same
        new_nodes = np.arange(self.n - n_new, self.n)
        add_e = np.concatenate([new_s[s_ok], new_o[o_ok]])
        add_m = np.concatenate([new_nodes[s_ok], new_nodes[o_ok]])
        order = np.lexsort((add_m, add_e))
        add_e, add_m = add_e[order], add_m[order]
        old_row = _old_entity(add_e, dead_old, n_e_kept, n_e)  # -1: a new entity (its row is new)
        end_of = ptr[np.where(old_row >= 0, old_row + 1, n_e)].astype(
            np.int64
        )  # new rows: after the old ones
        both = s_ok & o_ok
        first = np.where(both, np.minimum(new_s, new_o), np.where(s_ok, new_s, new_o))
        pairs = np.stack([first, np.where(both, np.maximum(new_s, new_o), -1)], axis=1).ravel()
        tail = pairs[np.stack([s_ok | o_ok, both], axis=1).ravel()]
        # 3. one copy of each array: cut, insert, append the new memory rows
        layout = _Splice(cut, end_of, idx.size)
        # appended entity-row entries hold their memory as the old numbering would (past the old memories), so
        # one renumbering below maps old and new entries alike
        index_type = np.int32 if max(n_e + n_m + n_new, self.n, idx.size + tail.size) < 2**31 else np.int64
        indices = layout(idx.astype(index_type, copy=False), add_m - (self.n - n_new) + n_e + n_m, tail)
        rows_data = layout(graph.rows.data, np.zeros(add_m.size), np.zeros(tail.size))
        walk_data = layout(graph.walk.data, np.zeros(add_m.size), np.zeros(tail.size))
        # 4. renumber: the removed rows (now empty) go, new entity rows come after the old entities
        count = np.delete(count, np.concatenate([dead_old, g_nodes]))
        count = np.concatenate(
            [count[:n_e_kept], np.zeros(n_e2 - n_e_kept, dtype=np.int64), count[n_e_kept:]]
        )
        count[:n_e2] += np.bincount(add_e, minlength=n_e2)
        self.indptr = np.concatenate([[0], np.cumsum(np.concatenate([count, s_ok.astype(np.int64) + o_ok]))])
        e_end = int(self.indptr[n_e2])
        old_mem = indices[:e_end] - n_e
        indices[:e_end] = n_e2 + old_mem - (np.searchsorted(gone, old_mem) if gone.size else 0)
        if dead_old.size:
            body = indices[e_end : self.indptr[self.n - n_new]]
            indices[e_end : self.indptr[self.n - n_new]] = body - np.searchsorted(dead_old, body)
        self.indices = indices
        # 5. degrees: the old ones renumbered; the new memories'; the touched entities' from their rows
        degree = np.delete(graph.degree, np.concatenate([dead_old, g_nodes]))
        new_deg = np.where(s_ok, w_s, 0.0) + np.where(o_ok, new_t, 0.0)
        degree = np.concatenate([degree[:n_e_kept], np.zeros(n_e2 - n_e_kept), degree[n_e_kept:], new_deg])
        moved = _new_entity(cut_ents, dead_old)
        touched = np.unique(np.concatenate([moved[moved >= 0], add_e]))
        lengths = self.indptr[touched + 1] - self.indptr[touched]
        pos = _ranges(self.indptr[touched], lengths)
        row = np.repeat(touched, lengths)
        mem = indices[pos] - n_e2
        w = self.w_mem[mem]
        degree[touched] = np.bincount(
            np.repeat(np.arange(touched.size), lengths), weights=w, minlength=touched.size
        )
        inv = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
        rows_data[pos] = w * inv[row]  # A = D⁻¹W: the touched entities' rows
        walk_data[pos] = w * inv[n_e2 + mem]  # Aᵀ = WD⁻¹: their entries' columns are memories
        start = self.indptr[n_e2 + mem]  # their entries in the memory rows (the column is the entity)
        walk_data[np.where(indices[start] == row, start, start + 1)] = w * inv[row]
        new_pos = np.arange(self.indptr[self.n - n_new], indices.size)
        new_row = np.repeat(new_nodes, s_ok.astype(np.int64) + o_ok)
        new_w = self.w_mem[new_row - n_e2]
        rows_data[new_pos] = new_w * inv[new_row]
        walk_data[new_pos] = new_w * inv[indices[new_pos]]
        self.rows_data, self.walk_data, self.degree = rows_data, walk_data, degree
        self._indices, self._indptr = indices, self.indptr.astype(index_type)

    def matrix(self, data: np.ndarray) -> sparse.csr_matrix:
        m = sparse.csr_matrix((data, self._indices, self._indptr), shape=(self.n, self.n), copy=False)
        m.has_sorted_indices = True
        return m


def _old_entity(nodes: np.ndarray, dead_old: np.ndarray, n_e_kept: int, n_e: int) -> np.ndarray:
    """New entity numbers back to the old rows (-1 for entities new in this delta)."""
    if not dead_old.size:
        return np.where(nodes < n_e, nodes, -1)
    if n_e_kept <= 0:  # every old entity died: all of these are new (and ``kept`` is empty)
        return np.full(nodes.shape, -1, dtype=np.int64)
    kept = np.delete(np.arange(n_e), dead_old)
    return np.where(nodes < n_e_kept, kept[np.minimum(nodes, n_e_kept - 1)], -1)


def _new_entity(nodes: np.ndarray, dead_old: np.ndarray) -> np.ndarray:
    """Old entity numbers in the new numbering (-1 for those that left)."""
    if not dead_old.size:
        return nodes
    return np.where(np.isin(nodes, dead_old), -1, nodes - np.searchsorted(dead_old, nodes))


class _Splice:
    """Builds a new array from an old one in one copy: elements at ``cut`` dropped, values inserted before
    old positions ``at`` (sorted; several at one position keep their order), a tail appended."""

    def __init__(self, cut: np.ndarray, at: np.ndarray, size: int):
        self.cut, self.at, self.size = cut.tolist(), at.tolist(), size

    def __call__(self, old: np.ndarray, inserted: np.ndarray, tail: np.ndarray) -> np.ndarray:
        pieces = []
        prev = 0
        i = j = 0
        cut, at = self.cut, self.at
        while i < len(cut) or j < len(at):
            if j < len(at) and (i == len(cut) or at[j] <= cut[i]):
                k = j
                while k < len(at) and at[k] == at[j]:
                    k += 1
                pieces.append(old[prev : at[j]])
                pieces.append(inserted[j:k])
                prev = at[j]
                j = k
            else:
                pieces.append(old[prev : cut[i]])
                prev = cut[i] + 1
                i += 1
        pieces.append(old[prev:])
        pieces.append(tail)
        return np.concatenate(pieces, dtype=old.dtype, casting="unsafe")


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions ``starts[i] .. starts[i] + lengths[i] - 1`` of every range, in order."""
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + np.arange(total) - offsets
