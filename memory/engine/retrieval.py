"""Reads (SPEC R1–R5): full-text search with the R2 score, batch fetch, recent lists and summaries."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeGuard

from django.db import connection
from django.db.models import Count, F, Q

from memory.models import LAYERS, Memory

from . import common as c
from . import graph, text, timeparse, vectors
from .belief import NOT_RETRACTED, RETRACTED, current_q, current_sql
from .reinforce import feedback_weights, reinforcement
from .state_stamp import fts_ranked, state_memo
from .types import InvalidArgument, MemoryRecord, NotFound, RetrievalWeights, SearchHit

MAX_LIMIT = 100
# PostgreSQL: the stored document (migration 0012), so no query recomputes it. Rows are read by naming the
# model's columns: ``m.*`` would also carry the document to the client.
PG_DOC_SQL = "m.fts_doc"
ROW_SQL = ", ".join(f"m.{f.column}" for f in Memory._meta.concrete_fields)


def _check_limit(limit: Any) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be an integer from 1 to {MAX_LIMIT}", field="limit")
    return limit


def _fts_candidates(
    agent_id: str, query: str, n: int, at: datetime, layer: str | None, tags: list[str]
) -> list[Memory]:
    """Current rows of the agent matching ``query``, best full-text rank first (SQLite FTS5 or PG GIN)."""
    extra = ""
    params: list[Any] = []
    if layer:
        extra += " AND m.layer = %s"
        params.append(layer)
    if connection.vendor == "postgresql":
        tsq = text.pg_tsquery(query)
        if tsq is None:
            return []
        for tag in tags:
            extra += " AND m.tags @> %s::jsonb"
            params.append(f'["{_json_str(tag)}"]')
        sql = (
            f"SELECT {ROW_SQL} FROM memories m, to_tsquery('simple', %s) q WHERE m.agent_id = %s AND {PG_DOC_SQL} @@ q"
            f" AND {current_sql()}{extra} ORDER BY ts_rank({PG_DOC_SQL}, q) DESC, m.id LIMIT %s"
        )
        return list(Memory.objects.raw(sql, [tsq, agent_id, at, at, *params, n]))
    match = text.sqlite_match(query)
    if match is None:
        return []
    for tag in tags:
        extra += " AND EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = %s)"
        params.append(tag)
    # Tag filters are selective (most ranked hits would fail them): go straight to the join then.
    ranked = None if tags else _sqlite_ranked_prefix(match, n, agent_id, at, extra, params)
    if ranked is not None:
        return ranked
    sql = (
        f"SELECT {ROW_SQL} FROM memories_fts f JOIN memories m ON m.id = f.memory_id"
        f" WHERE memories_fts MATCH %s AND m.agent_id = %s AND {current_sql()}{extra}"
        " ORDER BY bm25(memories_fts), m.id LIMIT %s"
    )
    return list(Memory.objects.raw(sql, [match, agent_id, at, at, *params, n]))


# How many FTS hits the two-step SQLite path ranks (per candidate wanted, and at least).
PREFIX_PER_CANDIDATE = 16
PREFIX_MIN = 512


def _sqlite_ranked_prefix(
    match: str, n: int, agent_id: str, at: datetime, extra: str, params: list[Any]
) -> list[Memory] | None:
    """The join's answer (``ORDER BY bm25, m.id LIMIT n`` over the agent's current rows), computed in steps:
    rank the FTS hits alone and keep the best ``k``, walk them in rank order through the primary key in small
    batches (ids only) until ``n`` pass the filters, then load those ``n`` rows. The one-statement join reads
    and filters a ``memories`` row for every hit before sorting, which dominates for frequent words (~60k
    hits at 100k rows).

    The ranked hits are kept while no row's indexed text changed (``state_stamp.fts_ranked``, migration 0024):
    bm25 over every match of a common word is most of the search's SQL.

    Exactness: ordering by bm25 alone is cheapest, so only hits strictly better than the (k+1)-th form a
    complete prefix in ``(bm25, id)`` order (a tie group straddling the cut is dropped; templated fact texts
    tie a lot). If ``n`` rows of that prefix pass the filters they are the join's first ``n``. If not (ties,
    other agents' rows, history or quarantine crowd the prefix) return None: the caller runs the join.
    """
    k = max(PREFIX_PER_CANDIDATE * n, PREFIX_MIN)

    def ranked() -> list[Any]:
        with connection.cursor() as cur:
            cur.execute(
                "SELECT memory_id, bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH %s"
                " ORDER BY bm25(memories_fts) LIMIT %s",
                [match, k + 1],
            )
            return list(cur.fetchall())

    hits = fts_ranked(match, k + 1, ranked)
    with connection.cursor() as cur:
        exhaustive = len(hits) <= k
        if not exhaustive:
            cut = hits[k][1]
            hits = [h for h in hits[:k] if h[1] < cut]
        hits.sort(key=lambda h: (h[1], h[0]))
        ids = [h[0] for h in hits]
        passing: list[str] = []
        pos, batch = 0, max(2 * n, 32)
        while pos < len(ids) and len(passing) < n:
            chunk = ids[pos : pos + batch]
            pos += len(chunk)
            marks = ", ".join(["%s"] * len(chunk))
            # ``+m.agent_id`` keeps SQLite on the primary key (without ANALYZE statistics it would otherwise
            # walk the agent's whole (agent_id, ...) index).
            cur.execute(
                f"SELECT m.id FROM memories m WHERE m.id IN ({marks}) AND +m.agent_id = %s"
                f" AND {current_sql()}{extra}",
                [*chunk, agent_id, at, at, *params],
            )
            ok = {row[0] for row in cur.fetchall()}
            passing += [i for i in chunk if i in ok]
            batch *= 2
    if len(passing) < n and not exhaustive:
        return None
    passing = passing[:n]
    if not passing:
        return []
    marks = ", ".join(["%s"] * len(passing))
    rows = {
        m.id: m
        for m in Memory.objects.raw(f"SELECT {ROW_SQL} FROM memories m WHERE m.id IN ({marks})", passing)
    }
    return [rows[i] for i in passing if i in rows]


def _json_str(value: str) -> str:
    return json.dumps(value)[1:-1]


@dataclass(slots=True)
class ScoreRow:
    """The columns of a memory row that ``score`` and the layer filter read: a dense hit before ``_fuse`` knows
    whether it can reach the results (``_settle``). Built from a plain cursor (``_score_rows``): reading
    two dozen rows through the ORM cost four times the statement itself."""

    id: str
    layer: str
    importance: float
    origin_trust: float
    access_count: int
    last_accessed: datetime | None
    timestamp: datetime | None


def recency(m: Memory | ScoreRow, at: datetime) -> float:
    """R = exp(−days/S), S grows with access and importance (SPEC R2) and is stretched by access
    reinforcement (SPEC B9, ``reinforce.reinforcement``: up to 10×, fading after 30 days unused)."""
    last = m.last_accessed or m.timestamp
    days = max(0.0, (at - last).total_seconds() / 86400.0) if last else 0.0
    return math.exp(
        -days / (strength(m.access_count, m.importance) * reinforcement(m.access_count, m.last_accessed, at))
    )


def strength(access_count: int, importance: float) -> float:
    """S of R2 in days: ``min(365, 14·(1+0.6·ln(1+access_count))·clamp(importance/5, 0.2, 2))``."""
    return min(
        365.0, 14.0 * (1 + 0.6 * math.log1p(max(0, access_count))) * min(2.0, max(0.2, importance / 5.0))
    )


def score(
    m: Memory | ScoreRow,
    pos: int | None,
    at: datetime,
    w: RetrievalWeights,
    ppr: float = 0.0,
    cosine: float = 0.0,
    feedback: float = 0.0,
    session: float = 0.0,
    dense_pos: int | None = None,
) -> float:
    """R2. ``pos`` is the FTS position; None for a graph-only hit (G4), which gets no full-text term.
    ``feedback`` is the memory's feedback weight (SPEC B9), added as ``w_feedback · feedback``; ``session`` the
    share of a neighbouring hit's full-text term (already weighted by ``w_session``, see ``_session_expand``).
    ``cosine`` is the dense similarity to the query and ``dense_pos`` the row's position in the dense ranking
    (None: not in the dense top), the vector side's rank term ``w_vec_rank/(1+dense_pos)`` mirroring the
    full-text one (see ``memory.engine.vectors``)."""
    fts = 0.0 if pos is None else w.w_fts / (1 + pos)
    base = w.w_recency * recency(m, at) + w.w_importance * (m.importance / 10.0) + fts
    base += w.w_graph * ppr + w.w_vec * cosine + w.w_feedback * feedback + session
    if dense_pos is not None:
        base += w.w_vec_rank / (1 + dense_pos)
    return base * ((1 - w.w_trust) + w.w_trust * m.origin_trust)


# An entry of the ranking: (score, order for ties, FTS position or None, row, graph score, feedback weight).
Entry = tuple[float, int, int | None, Memory, float, float]


def search(
    *,
    agent_id: str,
    query: str,
    limit: int = 10,
    layer: str | None = None,
    tags: Any = None,
    weights: RetrievalWeights | None = None,
    touch: bool = True,
) -> list[SearchHit]:
    """Current memories matching ``query``, ranked by the R2 score. Never raises on query text (SPEC R3)."""
    agent_id = c.check_agent_id(agent_id)
    limit = _check_limit(limit)
    if layer is not None:
        c.check_layer(layer)
    tag_list = c.check_tags(tags)
    if not isinstance(query, str):
        raise InvalidArgument("query must be a string", field="query")
    w = weights or RetrievalWeights()
    at = c.now()
    intervals = timeparse.parse(query, at) if w.w_time > 0 else []
    # a query naming a time reads a deeper full-text pool, so the turns of that time can rise into the top
    n = max(limit * 3, 30) if not intervals else max(limit * 10, TIME_POOL)
    candidates = _fts_candidates(agent_id, query, n, at, layer, tag_list)
    ppr = graph.graph_scores(agent_id=agent_id, query=query, at=at) if w.w_graph > 0 else None
    dense = _dense(agent_id, query, w, max(limit * 3, 30))
    if (
        ppr is None and dense is None
    ):  # no triples/seeds/w_graph, no vectors: FTS-only, as before the graph (G2)
        fb = feedback_weights([m.id for m in candidates]) if w.w_feedback else {}
        entries: list[Entry] = [
            (score(m, pos, at, w, feedback=fb.get(m.id, 0.0)), pos, pos, m, 0.0, fb.get(m.id, 0.0))
            for pos, m in enumerate(candidates)
        ]
        entries.sort(key=lambda t: (-t[0], t[1]))
    else:
        # only the top ``limit`` leave the search unless a later stage may lift any entry (session, links)
        top = limit if w.w_session <= 0 and w.w_link <= 0 and w.w_time >= 0 else None
        slack = w.w_time if intervals else 0.0
        entries = _fuse(agent_id, candidates, ppr, at, w, layer, tag_list, dense, top=top, time_slack=slack)
    if w.w_session > 0 and entries:
        entries = _session_expand(agent_id, entries, at, w, limit, layer, tag_list)
    if w.w_link > 0 and entries:
        entries = _link_expand(agent_id, query, entries, at, w, layer, tag_list)
    if intervals and entries:
        entries = _time_rank(entries, intervals, w)
    hits = [
        SearchHit.from_model(m, score=s, fts_position=pos, feedback=fb_m)
        for s, _, pos, m, _, fb_m in entries[:limit]
    ]
    if touch and hits:
        _touch(agent_id, [h.id for h in hits], at)
    return hits


def _dense(agent_id: str, query: str, w: RetrievalWeights, k: int) -> vectors.DenseScores | None:
    """The dense side of a query (None: vectors off, no embedder, no vectors yet, or it failed)."""
    if w.w_vec <= 0 and w.w_vec_rank <= 0:
        return None
    return vectors.dense_hits(agent_id=agent_id, query=query, k=k)


def _fuse(
    agent_id: str,
    candidates: list[Memory],
    ppr: graph.GraphScores | None,
    at: datetime,
    w: RetrievalWeights,
    layer: str | None,
    tags: list[str],
    dense: vectors.DenseScores | None = None,
    *,
    top: int | None = None,
    time_slack: float = 0.0,
) -> list[Entry]:
    """G4: candidates get ``+ w_graph·ppr``; up to 3 memories of the PPR top 5 that FTS missed join them.
    Vectors (R2): every candidate gets ``w_vec·cosine``, the dense top ``w_vec_rank/(1+dense position)``, and
    the dense top's rows that FTS missed join the candidates (all of them read through the current filter).

    With ``top`` (the caller keeps only the best ``top`` entries, and no later stage adds more than
    ``time_slack`` × the trust factor to an entry's score), the dense rows are scored from the few columns the
    score reads and read whole only when they can still reach the top ``top`` (``_settle``); the others are left
    out. The first ``top`` entries are exactly the ones scoring every dense row whole gives."""
    seen = {m.id for m in candidates}
    missed = [mid for mid in ppr.top if mid not in seen] if ppr is not None else []
    dense_missed = [mid for mid, _ in dense.top if mid not in seen] if dense is not None else []
    extra: list[Memory] = []
    if missed:
        # one raw statement by primary key (``+m.agent_id``: see _sqlite_ranked_prefix); the ORM's query
        # building cost as much as the read itself
        marks = ", ".join(["%s"] * len(missed))
        sql = f"SELECT {ROW_SQL} FROM memories m WHERE m.id IN ({marks}) AND +m.agent_id = %s AND {current_sql()}"
        if connection.vendor == "postgresql":
            sql = sql.replace("+m.agent_id", "m.agent_id")
        rows = {m.id: m for m in Memory.objects.raw(sql, [*missed, agent_id, at, at])}
        for mid in missed:
            m = rows.get(mid)
            if m is None or (layer and m.layer != layer):
                continue
            if tags and not set(tags) <= set(m.tags or []):
                continue
            extra.append(m)
            if len(extra) >= graph.MAX_GRAPH_ONLY:
                break
    more: list[Memory | ScoreRow] = list(extra)
    if dense_missed:
        graph_extra = {m.id for m in extra}
        wanted = [i for i in dense_missed if i not in graph_extra]
        # a tag filter reads the tags: those rows are read whole at once
        more += (
            _score_rows(wanted, agent_id, at, layer)
            if top is not None and not tags
            else _dense_rows(wanted, agent_id, at, layer, tags)
        )
    ids = [m.id for m in (*candidates, *more)]
    graph_score = (
        dict(zip(ids, ppr.get_many(ids), strict=True)) if ppr is not None else dict.fromkeys(ids, 0.0)
    )
    cos, dpos = vectors.dense_terms(dense, ids, cosines=w.w_vec != 0)
    fb = feedback_weights(ids) if w.w_feedback else {}

    def entry(m: Memory | ScoreRow, pos: int | None, order: int) -> Draft:
        s = score(
            m,
            pos,
            at,
            w,
            ppr=graph_score[m.id],
            feedback=fb.get(m.id, 0.0),
            cosine=cos.get(m.id, 0.0),
            dense_pos=dpos.get(m.id),
        )
        return (s, order, pos, m, graph_score[m.id], fb.get(m.id, 0.0))

    entries = [entry(m, pos, pos) for pos, m in enumerate(candidates)]
    entries += [entry(m, None, len(candidates) + k) for k, m in enumerate(more)]
    entries.sort(key=lambda t: (-t[0], t[1]))
    return _settle(entries, top, time_slack, w)


# An entry whose row may still be a ``ScoreRow`` (``_fuse`` before ``_settle``).
Draft = tuple[float, int, int | None, Memory | ScoreRow, float, float]
SCORE_COLUMNS = ("id", "layer", "importance", "origin_trust", "access_count", "last_accessed", "timestamp")


def _score_rows(ids: list[str], agent_id: str, at: datetime, layer: str | None) -> list[Memory | ScoreRow]:
    """``_dense_rows`` with the score's columns only (``ScoreRow``), converted as the ORM converts them."""
    if not ids:
        return []
    marks = ", ".join(["%s"] * len(ids))
    cols = ", ".join(f"m.{name}" for name in SCORE_COLUMNS)
    sql = f"SELECT {cols} FROM memories m WHERE m.id IN ({marks}) AND +m.agent_id = %s AND {current_sql()}"
    if connection.vendor == "postgresql":
        sql = sql.replace("+m.agent_id", "m.agent_id")
    with connection.cursor() as cur:
        cur.execute(sql, [*ids, agent_id, at, at])
        raw = cur.fetchall()
    convert = _converters()
    rows: dict[str, ScoreRow] = {}
    for values in raw:
        out = list(values)
        for k, (fns, col) in convert:
            for fn in fns:
                out[k] = fn(out[k], col, connection)
        rows[out[0]] = ScoreRow(*out)
    return [m for m in (rows.get(i) for i in ids) if m is not None and not (layer and m.layer != layer)]


_converter_cache: dict[str, list[tuple[int, tuple[list[Any], Any]]]] = {}


def _converters() -> list[tuple[int, tuple[list[Any], Any]]]:
    """The ORM's converters of ``SCORE_COLUMNS`` on this database (those that have any), by column index."""
    key = connection.vendor
    if key not in _converter_cache:
        found = []
        for k, name in enumerate(SCORE_COLUMNS):
            field: Any = Memory._meta.get_field(name)  # a concrete column (the stubs type every kind)
            col = field.get_col(Memory._meta.db_table)
            fns = connection.ops.get_db_converters(col) + field.get_db_converters(connection)
            if fns:
                found.append((k, (fns, col)))
        _converter_cache[key] = found
    return _converter_cache[key]


def _settle(entries: list[Draft], top: int | None, slack: float, w: RetrievalWeights) -> list[Entry]:
    """Entries sorted best first, some of whose rows are ``ScoreRow``s: drop those that cannot reach the first
    ``top`` (None: all can) even if a later stage adds ``slack`` × their trust factor (at least ``top`` entries
    already score more, and later stages add nothing negative to any entry), and read the rest whole (one
    statement by primary key). The first ``top`` entries and their order do not change."""
    floor = -math.inf
    if top is not None and len(entries) > top and any(isinstance(e[3], ScoreRow) for e in entries):
        floor = entries[top - 1][0]
        if slack > 0 and min(_trust_factor(e[3], w) for e in entries) < 0:
            floor = -math.inf  # a later stage could lower another entry: keep every row
    wanted = [
        e[3].id
        for e in entries
        if isinstance(e[3], ScoreRow) and e[0] + max(0.0, slack * _trust_factor(e[3], w)) >= floor
    ]
    rows = _rows_by_id(wanted) if wanted else {}
    out: list[Entry] = []
    for s, order, pos, m, ppr, fb in entries:
        if isinstance(m, Memory):
            out.append((s, order, pos, m, ppr, fb))
        elif m.id in rows:
            out.append((s, order, pos, rows[m.id], ppr, fb))
    return out


def _dense_rows(
    ids: list[str], agent_id: str, at: datetime, layer: str | None, tags: list[str]
) -> list[Memory]:
    """The dense hits FTS missed that are current, not quarantined, of this agent and pass the filters, in
    the dense order (one statement by primary key)."""
    if not ids:
        return []
    marks = ", ".join(["%s"] * len(ids))
    sql = f"SELECT {ROW_SQL} FROM memories m WHERE m.id IN ({marks}) AND +m.agent_id = %s AND {current_sql()}"
    if connection.vendor == "postgresql":
        sql = sql.replace("+m.agent_id", "m.agent_id")
    rows = {m.id: m for m in Memory.objects.raw(sql, [*ids, agent_id, at, at])}
    return [
        m
        for m in (rows.get(i) for i in ids)
        if m is not None
        and not (layer and m.layer != layer)
        and not (tags and not set(tags) <= set(m.tags or []))
    ]


def _passes(row: Memory | None, layer: str | None, tags: list[str]) -> TypeGuard[Memory]:
    """Whether a row found beside the full-text candidates (a session neighbour, a linked turn) exists and
    passes the search's layer and tag filters."""
    return (
        row is not None
        and (not layer or row.layer == layer)
        and (not tags or set(tags) <= set(row.tags or []))
    )


def _session_expand(
    agent_id: str,
    entries: list[Entry],
    at: datetime,
    w: RetrievalWeights,
    limit: int,
    layer: str | None,
    tags: list[str],
) -> list[Entry]:
    """Session neighbourhood (issue 17): the current rows written just before and just after each of the top
    ``limit`` hits in the same session (a conversation's surrounding turns, where the answer to a question often
    sits next to the turn that matched its words) get ``w_session`` × that hit's full-text term, the best one
    if several hits border them. Rows already ranked gain it on top of their score; the others join the ranking
    with their R2 priors plus it (no full-text term of their own). Two index seeks per hit, in one statement."""
    top = [e for e in entries[:limit] if e[3].session_id and e[2] is not None]
    if not top:
        return entries
    parts: list[str] = []
    params: list[Any] = []
    cur_sql = current_sql()
    for e in top:
        m = e[3]
        for op, order in (("<", "DESC"), (">", "ASC")):
            parts.append(
                f"SELECT * FROM (SELECT m.id, CAST(%s AS TEXT) AS hit FROM memories m WHERE m.agent_id = %s AND m.session_id = %s"
                f" AND m.id {op} %s AND {cur_sql} ORDER BY m.id {order} LIMIT 1) AS n{len(parts)}"
            )
            params += [m.id, agent_id, m.session_id, m.id, at, at]
    with connection.cursor() as cur:
        cur.execute(" UNION ALL ".join(parts), params)
        pairs = cur.fetchall()
    fts_of = {e[3].id: w.w_fts / (1 + e[2]) for e in top if e[2] is not None}
    bonus: dict[str, float] = {}
    for nid, hit in pairs:
        bonus[nid] = max(bonus.get(nid, 0.0), w.w_session * fts_of[hit])
    ranked = {e[3].id for e in entries}
    new_ids = [i for i in bonus if i not in ranked]
    out = [
        (score(m, pos, at, w, ppr=ppr, feedback=fb, session=bonus[m.id]), order, pos, m, ppr, fb)
        if m.id in bonus
        else (s, order, pos, m, ppr, fb)
        for s, order, pos, m, ppr, fb in entries
    ]
    if new_ids:
        marks = ", ".join(["%s"] * len(new_ids))
        rows = {
            m.id: m
            for m in Memory.objects.raw(f"SELECT {ROW_SQL} FROM memories m WHERE m.id IN ({marks})", new_ids)
        }
        fbs = feedback_weights(new_ids) if w.w_feedback else {}
        base = len(entries)
        for k, nid in enumerate(new_ids):
            row = rows.get(nid)
            if not _passes(row, layer, tags):
                continue
            fb = fbs.get(nid, 0.0)
            out.append(
                (score(row, None, at, w, feedback=fb, session=bonus[nid]), base + k, None, row, 0.0, fb)
            )
    out.sort(key=lambda t: (-t[0], t[1]))
    return out


TIME_POOL = 100  # full-text candidates of a query that names a time


def _time_rank(entries: list[Entry], intervals: list[timeparse.Interval], w: RetrievalWeights) -> list[Entry]:
    """Time named by the query (issue 17, ``timeparse``): every ranked memory gains ``w_time`` × how close its
    time (``timeparse.memory_time``: the session date its writer gave, a fact's valid-from, else when it was
    written) is to the named intervals (times the trust factor, as every R2 term)."""
    out = []
    for e in entries:
        m = e[3]
        near = timeparse.closeness(
            timeparse.memory_time(m.metadata, m.valid_from, m.subject, m.timestamp), intervals
        )
        out.append((e[0] + w.w_time * near * _trust_factor(m, w), *e[1:]) if near else e)
    out.sort(key=lambda t: (-t[0], t[1]))
    return out


# Memories the link walk adds to the ranking (the best by walk score), beyond the ones already ranked.
MAX_LINK_ONLY = 10


def _trust_factor(m: Memory | ScoreRow, w: RetrievalWeights) -> float:
    return (1 - w.w_trust) + w.w_trust * m.origin_trust


def _link_expand(
    agent_id: str,
    query: str,
    entries: list[Entry],
    at: datetime,
    w: RetrievalWeights,
    layer: str | None,
    tags: list[str],
) -> list[Entry]:
    """Entity links (issue 17, ``graph.links``): every memory the turn → entity → turn walk from the query's
    names and the full-text hits reaches gains ``w_link`` × its walk score (times the trust factor, as every R2
    term); up to ``MAX_LINK_ONLY`` memories the ranking did not hold join it with their R2 priors plus that."""
    hits = [e[3].id for e in entries if e[2] is not None]
    known = graph.links.known_entities(agent_id, at)
    walk = graph.link_scores(agent_id=agent_id, query=query, hits=hits, at=at, known=known)
    if not walk:
        return entries
    out = [
        (s + w.w_link * walk[m.id] * _trust_factor(m, w), order, pos, m, ppr, fb) if m.id in walk else e
        for e in entries
        for s, order, pos, m, ppr, fb in (e,)
    ]
    ranked = {e[3].id for e in entries}
    new_ids = sorted((i for i in walk if i not in ranked), key=lambda i: (-walk[i], i))[:MAX_LINK_ONLY]
    if new_ids:
        rows = _rows_by_id(new_ids)
        fbs = feedback_weights(new_ids) if w.w_feedback else {}
        for k, nid in enumerate(new_ids):
            row = rows.get(nid)
            if not _passes(row, layer, tags):
                continue
            fb = fbs.get(nid, 0.0)
            s = score(row, None, at, w, feedback=fb) + w.w_link * walk[nid] * _trust_factor(row, w)
            out.append((s, len(entries) + k, None, row, 0.0, fb))
    out.sort(key=lambda t: (-t[0], t[1]))
    return out


def _rows_by_id(ids: list[str]) -> dict[str, Memory]:
    marks = ", ".join(["%s"] * len(ids))
    return {
        m.id: m for m in Memory.objects.raw(f"SELECT {ROW_SQL} FROM memories m WHERE m.id IN ({marks})", ids)
    }


@c.write_transaction
def _touch(agent_id: str, ids: list[str], at: datetime) -> None:
    touch_rows(ids, at)


def touch_rows(ids: list[str], at: datetime) -> None:
    """Count a read of these rows (inside the caller's transaction)."""
    # By primary key only: the ids come from this agent's candidate query. Adding ``agent_id`` to the WHERE
    # clause made SQLite (no ANALYZE statistics) walk the agent's whole (agent_id, timestamp) index instead of
    # the primary key: 3 ms at 10k rows, ~30 ms at 100k, on every search.
    Memory.objects.filter(id__in=ids).update(access_count=F("access_count") + 1, last_accessed=at)


def get_by_ids(*, agent_id: str, ids: Any, include_quarantined: bool = False) -> dict[str, Any]:
    """Batch fetch in request order, in one query (SPEC R4). Other agents' ids are simply missing."""
    agent_id = c.check_agent_id(agent_id)
    wanted = c.check_ids(ids)
    # Look up by primary key and check the agent here: with ``agent_id`` in the WHERE clause SQLite (no
    # ANALYZE statistics) walks the agent's whole (agent_id, timestamp) index instead (O(agent's rows)).
    qs = Memory.objects.filter(id__in=wanted).filter(NOT_RETRACTED)
    if not include_quarantined:
        qs = qs.filter(quarantined=False)
    found = {m.id: m for m in qs if m.agent_id == agent_id} if wanted else {}
    memories = [MemoryRecord.from_model(found[i]) for i in wanted if i in found]
    missing = [i for i in wanted if i not in found]
    return {
        "memories": memories,
        "missing_ids": missing,
        "total_found": len(memories),
        "total_missing": len(missing),
    }


def get_memory(*, agent_id: str, memory_id: Any, include_quarantined: bool = False) -> MemoryRecord:
    """One memory by id; another agent's id and an unknown id raise the same ``not_found``."""
    result = get_by_ids(agent_id=agent_id, ids=[memory_id], include_quarantined=include_quarantined)
    if not result["memories"]:
        raise NotFound("no memory with that id", field="id")
    record: MemoryRecord = result["memories"][0]
    return record


def search_layer(*, agent_id: str, query: str, layer: str, limit: int = 10) -> list[SearchHit]:
    return search(agent_id=agent_id, query=query, layer=c.check_layer(layer), limit=limit)


def list_recent(*, agent_id: str, n: int = 20) -> list[MemoryRecord]:
    agent_id = c.check_agent_id(agent_id)
    n = _check_limit(n)
    rows = (
        Memory.objects.filter(agent_id=agent_id).filter(current_q(c.now())).order_by("-timestamp", "-id")[:n]
    )
    return [MemoryRecord.from_model(m) for m in rows]


def summarize(*, agent_id: str) -> dict[str, Any]:
    """Counts of current memories by layer, current facts, and rows kept only in history: two aggregate queries
    that the (agent, layer, quarantined, invalidated_by_event, valid_from, valid_until, subject) index covers
    (the agent home at 100k memories reads no table row). Counting ``agent_id`` (never null) keeps each count
    inside that index; ``Count("subject")`` counts the current facts. Kept while the agent's state stamp and
    world time allow (``state_memo``): one query for the stamp then."""
    agent_id = c.check_agent_id(agent_id)
    at = c.now()
    kept = state_memo(agent_id, "summarize", at, lambda: _summarize(agent_id, at))
    return {**kept, "by_layer": dict(kept["by_layer"])}


def _summarize(agent_id: str, at: datetime) -> dict[str, Any]:
    rows = Memory.objects.filter(agent_id=agent_id).order_by()
    current = {
        r["layer"]: r
        for r in rows.filter(current_q(at))
        .values("layer")
        .annotate(n=Count("agent_id"), facts=Count("subject"))
    }
    totals = rows.aggregate(
        quarantined=Count("agent_id", filter=Q(quarantined=True) & NOT_RETRACTED),
        retracted=Count("agent_id", filter=RETRACTED),
        total=Count("agent_id"),
    )
    return {
        "agent_id": agent_id,
        "current": sum(r["n"] for r in current.values()),
        "by_layer": {layer: current[layer]["n"] if layer in current else 0 for layer in LAYERS},
        "current_facts": sum(r["facts"] for r in current.values()),
        **totals,
    }
