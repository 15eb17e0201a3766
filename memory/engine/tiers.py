"""Memory tiers (SPEC B9): hot / warm / cold / frozen by age, access and composite score, without losing text.

``retier`` classifies every believed row of an agent (quarantined and retracted rows are left alone):

* **hot**: read back (or written) in the last ``WARM_IDLE_DAYS`` (14) days;
* **frozen**: at least ``FROZEN_AGE_DAYS`` (365) old, unused for ``FROZEN_IDLE_DAYS`` (180) and a composite
  score below ``FROZEN_SCORE``; **cold**: at least 90 days old, unused for 60 and a score below ``COLD_SCORE``;
* **warm**: the rest.

The composite score is the query-free part of the R2 score: ``(w_recency·R + w_importance·importance/10 +
w_feedback·feedback) × trust factor`` with R's half-life stretched by access reinforcement, so memories that were
useful, important or confirmed by feedback stay warm.

Moving down to cold makes the row's content a digest of at most 400 characters; to frozen, a headline of at most
80 (extractive by default: the sentences that carry the fact's subject or object, then the sentences with the
highest-weight terms; with an LLM client, its digest when it is valid, short enough and passes the injection
scan). Agents read the row, so they read the digest, in search (its full-text entry follows the content: a cold
row is found by its digest and its triple), fetches and history alike. The exact original text is kept in the
row's archive (``memory_tiers.original``) for curators and export (``memory_archive``, ``export_memories``).
Moving up changes the tier only: text never comes back to agents. A tier row's absence means hot.

The job works in chunks of ``CHUNK`` rows, each in its own transaction, and writes a row's text only if it is
still what was read (a concurrent run or writer wins): killed midway, the next run resumes cleanly.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Q

from memory.models import TIERS, Memory, MemoryTier

from . import common as c
from . import rawsql, text
from .belief import believed_sql
from .injection import scan_injection
from .reinforce import multiplier
from .retrieval import strength
from .types import MemoryRecord, RetrievalWeights, iso

DIGEST_CHARS = 400
HEADLINE_CHARS = 80
WARM_IDLE_DAYS = 14.0
COLD_AGE_DAYS, COLD_IDLE_DAYS, COLD_SCORE = 90.0, 60.0, 0.28
FROZEN_AGE_DAYS, FROZEN_IDLE_DAYS, FROZEN_SCORE = 365.0, 180.0, 0.20
PRUNE_PROTECT_DAYS = 30  # prune never ends a row read back in the last 30 days
CHUNK = 10_000
SHRINK_BATCH = 5000  # rows shortened per transaction
RANK = {tier: k for k, tier in enumerate(TIERS)}  # hot 0, warm 1, cold 2, frozen 3
LIMIT = {"cold": DIGEST_CHARS, "frozen": HEADLINE_CHARS}
ELLIPSIS = "…"
_SENTENCE = re.compile(r"[^.!?;。！？；\n]+[.!?;。！？；]*")
_ASCII_WORD = re.compile(r"[a-z0-9]{2,}")
_WORD = re.compile(f"{text.CJK_RUN.pattern}|[^\\W_]+")
_STOP = frozenset(
    "a an and are as at be by for from has have in is it of on or that the this to was were with".split()
)
DIGEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"digest": {"type": "string", "minLength": 1}},
    "required": ["digest"],
    "additionalProperties": False,
}
DIGEST_INSTRUCTIONS = (
    "You shorten a memory of an AI agent. Write a faithful digest of the text in the data block, in the text's "
    "own language, keeping the fact's subject, predicate and object when one is given and the most important "
    "details. Never add anything the text does not say. The digest must be at most `max_characters` characters."
)


# --- digests ----------------------------------------------------------------------------------------------


def _cut(value: str, limit: int) -> str:
    value = value.strip()
    return value if len(value) <= limit else value[: limit - 1].rstrip() + ELLIPSIS


def _terms(value: str) -> set[str]:
    """The distinct words of a text (lower case) and the bigrams of its CJK runs, without filler words."""
    lowered = value.lower()
    if lowered.isascii():
        return set(_ASCII_WORD.findall(lowered)) - _STOP
    out: set[str] = set()
    for match in _WORD.finditer(lowered):
        tok = match.group(0)
        if text.CJK_RUN.match(tok):
            out.update(tok[i : i + 2] for i in range(len(tok) - 1))
            if len(tok) == 1:
                out.add(tok)
        elif len(tok) > 1 and tok not in _STOP:
            out.add(tok)
    return out


def _join(parts: list[str]) -> str:
    """Sentences joined by a space, except between CJK ones (which need none)."""
    out = ""
    for part in parts:
        cjk_end = out[-1:] in "。！？；" or bool(text.CJK_RUN.match(out[-1:]))
        if out and not (cjk_end and text.CJK_RUN.match(part[:1])):
            out += " "
        out += part
    return out


def digest(
    content: str, *, limit: int = DIGEST_CHARS, subject: str | None = None, obj: str | None = None
) -> str:
    """An extractive digest of at most ``limit`` characters (characters, not bytes): the text itself when it
    fits; else its sentences that name the fact's subject or object first, then those whose terms weigh most
    (a term weighs as many as the sentences that use it), kept in their original order; a sentence cut with
    "…" if none fits."""
    if len(content) <= limit:
        return content
    sentences = [m.group(0).strip() for m in _SENTENCE.finditer(content) if m.group(0).strip()]
    if len(sentences) < 2:
        return _cut(content, limit)
    terms = [_terms(sentence) for sentence in sentences]
    weight: Counter[str] = Counter()
    for found in terms:
        weight.update(found)
    triple = [text.normalise(t).strip() for t in (subject, obj) if t and t.strip()]
    scored = []
    for k, sentence in enumerate(sentences):
        carries = bool(triple) and any(t in text.normalise(sentence) for t in triple)
        value = sum(weight[t] for t in terms[k]) / (1.0 + math.log1p(len(terms[k])))
        scored.append((0 if carries else 1, -value, k))
    scored.sort()
    chosen: list[int] = []
    for _, _, k in scored:
        trial = _join([sentences[i] for i in sorted([*chosen, k])])
        if len(trial) <= limit:
            chosen.append(k)
    if not chosen:
        return _cut(sentences[scored[0][2]], limit)
    return _join([sentences[i] for i in sorted(chosen)])


def headline(
    content: str, *, subject: str | None = None, predicate: str | None = None, obj: str | None = None
) -> str:
    """A headline of at most 80 characters: the fact's triple, or the text's best sentence."""
    if len(content) <= HEADLINE_CHARS:
        return content
    if subject and predicate:
        return _cut(" ".join(p for p in (subject, predicate, obj) if p), HEADLINE_CHARS)
    return digest(content, limit=HEADLINE_CHARS)


def _llm_digest(llm: Any, original: str, row: dict[str, Any], limit: int) -> tuple[str, str] | None:
    """The LLM's digest and ``llm:<model>``, or None (no client, spent budget, any failure, too long, or a
    digest the injection scan would not let through)."""
    if llm is None or llm.budget.exhausted:
        return None
    from memory.llm import LLMFailure

    data = {
        "text": original,
        "subject": row["subject"],
        "predicate": row["predicate"],
        "object": row["object"],
        "max_characters": limit,
    }
    try:
        reply = llm.complete_json(instructions=DIGEST_INSTRUCTIONS, data=data, schema=DIGEST_SCHEMA)
    except LLMFailure:
        return None
    value = str(reply.data.get("digest", "")).strip()
    if not value or len(value) > limit:
        return None
    scan = scan_injection(value)
    if scan.blocked or scan.rules:  # any rule hit: the extractive digest is safer
        return None
    return value, f"llm:{reply.model}"


# --- classification ---------------------------------------------------------------------------------------


def composite(
    *, importance: float, access_count: int, idle_days: float, accessed: bool, trust: float, feedback: float
) -> float:
    """The query-free part of the R2 score (recency with access reinforcement, importance, feedback, trust)."""
    w = RetrievalWeights()
    s = strength(access_count, importance) * (
        multiplier(access_count, idle_days) if accessed and access_count > 0 else 1.0
    )
    base = (
        w.w_recency * math.exp(-idle_days / s) + w.w_importance * importance / 10.0 + w.w_feedback * feedback
    )
    return base * ((1 - w.w_trust) + w.w_trust * trust)


def classify(*, age_days: float, idle_days: float, score: float | Callable[[], float]) -> str:
    """The tier of a row; ``score`` may be a function, called only for rows old and idle enough to need it."""
    if idle_days < WARM_IDLE_DAYS:
        return "hot"
    if age_days < COLD_AGE_DAYS or idle_days < COLD_IDLE_DAYS:
        return "warm"
    value = score() if callable(score) else score
    if age_days >= FROZEN_AGE_DAYS and idle_days >= FROZEN_IDLE_DAYS and value < FROZEN_SCORE:
        return "frozen"
    if value < COLD_SCORE:
        return "cold"
    return "warm"


@dataclass
class RetierResult:
    agent_id: str
    rows: int = 0
    moved: dict[str, int] = field(default_factory=dict)  # "hot->warm": n
    counts: dict[str, int] = field(default_factory=dict)  # the rows per tier after the run
    digested: int = 0  # rows whose content became a digest or a headline
    llm: int = 0  # of which the LLM wrote
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            "rows": self.rows,
            "moved": dict(self.moved),
            "counts": dict(self.counts),
            "digested": self.digested,
            "llm": self.llm,
            "seconds": round(self.seconds, 3),
        }


def _days(expr: str) -> str:
    if connection.vendor == "postgresql":
        return f"EXTRACT(EPOCH FROM (%s - {expr})) / 86400.0"
    return f"julianday(%s) - julianday({expr})"


def _scan_sql() -> str:
    """One chunk of the agent's believed rows with what classification needs, after a position: SQLite walks
    the table in rowid order (its pages in sequence; ``+m.agent_id`` keeps it off the agent index),
    PostgreSQL the primary key. The first column is the position."""
    if connection.vendor == "postgresql":
        position, agent = "m.id", "m.agent_id"
    else:
        position, agent = "m.rowid", "+m.agent_id"
    return (
        f"SELECT {position}, m.id, {_days('m.timestamp')}, {_days('COALESCE(m.last_accessed, m.timestamp)')},"
        " m.access_count, m.importance, m.origin_trust, LENGTH(m.content), fw.weight, t.tier, t.depth,"
        " m.last_accessed IS NOT NULL"
        " FROM memories m LEFT JOIN memory_feedback_weights fw ON fw.memory_id = m.id"
        " LEFT JOIN memory_tiers t ON t.memory_id = m.id"
        f" WHERE {agent} = %s AND {position} > %s AND {believed_sql('m')} ORDER BY {position} LIMIT %s"
    )


def retier(
    *, agent_id: str, llm: Any = None, actor: str = "system:tiers", at: datetime | None = None
) -> RetierResult:
    """Move the agent's believed rows between tiers (see the module docstring). ``llm`` is a
    ``memory.llm.LLMClient`` (the job passes ``client_from_config()``) or None for extractive digests. An agent
    with no rows gets empty counts."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    started = time.perf_counter()
    t = at or c.now()
    result = RetierResult(agent_id, counts=dict.fromkeys(TIERS, 0))
    now_param = rawsql.convert(Memory, "timestamp", t)
    after: Any = "" if connection.vendor == "postgresql" else 0
    sql = _scan_sql()
    shrink: list[tuple[str, str, int]] = []
    while True:
        rows = rawsql.run(sql, [now_param, now_param, agent_id, after, CHUNK]).fetchall()
        if not rows:
            break
        after = rows[-1][0]
        result.rows += len(rows)
        shrink += _apply_chunk(agent_id, rows, t, result)
        if len(rows) < CHUNK:
            break
    if shrink:
        _shrink(shrink, t, llm, result)
    result.seconds = time.perf_counter() - started
    _audit_run(agent_id, actor, t, result)
    return result


@c.write_transaction
def _audit_run(agent_id: str, actor: str, t: datetime, result: RetierResult) -> None:
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="retier",
        reason=", ".join(f"{k} {v}" for k, v in sorted(result.moved.items())) or "no change",
        at=t,
        moved=result.moved,
        counts=result.counts,
        digested=result.digested,
        llm=result.llm,
    )


@c.write_transaction
def _apply_chunk(
    agent_id: str, rows: list[tuple[Any, ...]], t: datetime, result: RetierResult
) -> list[tuple[str, str, int]]:
    """Classify one chunk and write its tier changes; returns the rows to shorten (id, depth, length)."""
    inserts: list[tuple[str, str]] = []
    updates: list[tuple[str, str]] = []
    shrink: list[tuple[str, str, int]] = []
    for _, mid, age, idle, access_count, importance, trust, length, fb, tier, depth, accessed in rows:
        age, idle = max(0.0, float(age or 0.0)), max(0.0, float(idle or 0.0))

        def score(
            idle: float = idle, row: tuple[Any, ...] = (access_count, importance, trust, fb, accessed)
        ) -> float:
            count, imp, tr, weight, read = row
            return composite(
                importance=float(imp),
                access_count=int(count or 0),
                idle_days=idle,
                accessed=bool(read),
                trust=float(tr),
                feedback=float(weight or 0.0),
            )

        new = classify(age_days=age, idle_days=idle, score=score)
        result.counts[new] += 1
        old = tier or "hot"
        if new != old:
            key = f"{old}->{new}"
            result.moved[key] = result.moved.get(key, 0) + 1
            (updates if tier else inserts).append((mid, new))
        if RANK[new] >= RANK["cold"] and RANK[new] > RANK.get(depth or "hot", 0):
            shrink.append((mid, new, int(length or 0)))
    stamp = rawsql.convert(MemoryTier, "changed_at", t)
    with connection.cursor() as cur:
        if inserts:
            cur.executemany(
                "INSERT INTO memory_tiers (memory_id, agent_id, tier, changed_at, depth, original, method)"
                " VALUES (%s, %s, %s, %s, '', NULL, '')",
                [(mid, agent_id, new, stamp) for mid, new in inserts],
            )
        if updates:
            cur.executemany(
                "UPDATE memory_tiers SET tier = %s, changed_at = %s WHERE memory_id = %s",
                [(new, stamp, mid) for mid, new in updates],
            )
    return shrink


def _shrink(shrink: list[tuple[str, str, int]], t: datetime, llm: Any, result: RetierResult) -> None:
    """Cut the content of rows going deeper than they have been: a digest (cold) or a headline (frozen); the
    exact text the row had first goes to its archive. Rows already short enough only record their depth. Works
    in batches of ``SHRINK_BATCH`` rows, one transaction each."""
    short = [(depth, mid) for mid, depth, length in shrink if length <= LIMIT[depth]]
    for k in range(0, len(short), SHRINK_BATCH):
        _set_depths(short[k : k + SHRINK_BATCH])
    long = {mid: depth for mid, depth, length in shrink if length > LIMIT[depth]}
    ids = list(long)
    entries = _fts_entries(set(ids))
    for k in range(0, len(ids), SHRINK_BATCH):
        cuts: list[_Cut] = []
        for mid, content, subject, predicate, obj, original in _contents(ids[k : k + SHRINK_BATCH]):
            cut = _cut_row(mid, long[mid], content, subject, predicate, obj, original, llm)
            if cut.method.startswith("llm:"):
                result.llm += 1
            cuts.append(cut)
        result.digested += _write_cuts(cuts, t, entries)


@c.write_transaction
def _set_depths(short: list[tuple[str, str]]) -> None:
    with connection.cursor() as cur:
        cur.executemany("UPDATE memory_tiers SET depth = %s WHERE memory_id = %s", short)


def _contents(ids: list[str]) -> Iterator[tuple[Any, ...]]:
    for k in range(0, len(ids), 500):
        part = ids[k : k + 500]
        marks = ", ".join(["%s"] * len(part))
        yield from rawsql.run(
            "SELECT m.id, m.content, m.subject, m.predicate, m.object, t.original FROM memories m"
            f" JOIN memory_tiers t ON t.memory_id = m.id WHERE m.id IN ({marks})",
            part,
        ).fetchall()


def _fts_entries(ids: set[str]) -> dict[str, int]:
    """SQLite: the full-text entry (rowid) of each of these rows, read in one pass over the index; the index
    has no lookup by memory id, so each row's own delete would be a pass of its own. Empty elsewhere."""
    if connection.vendor != "sqlite" or not ids:
        return {}
    out: dict[str, int] = {}
    cur = rawsql.run("SELECT rowid, memory_id FROM memories_fts", [])
    while batch := cur.fetchmany(20_000):
        for rowid, mid in batch:
            if mid in ids:
                out[mid] = int(rowid)
    return out


@dataclass(frozen=True)
class _Cut:
    memory_id: str
    depth: str
    content: str  # what the row holds now
    new: str  # what it will hold
    original: str  # the exact text it was written with
    method: str


def _cut_row(
    mid: str,
    depth: str,
    content: str,
    subject: str | None,
    predicate: str | None,
    obj: str | None,
    original: str | None,
    llm: Any,
) -> _Cut:
    source = original if original is not None else content
    made = _llm_digest(llm, source, {"subject": subject, "predicate": predicate, "object": obj}, LIMIT[depth])
    if made is None:
        short_text = (
            digest(source, subject=subject, obj=obj)
            if depth == "cold"
            else headline(source, subject=subject, predicate=predicate, obj=obj)
        )
        made = (short_text, "extractive")
    return _Cut(mid, depth, content, made[0], source, made[1])


# The full-text document of a row, as the SQLite triggers of migration 0018 index it (a test pins the two equal).
FTS_DOC_SQL = "memdesk_fts_doc(m.content, m.subject, m.predicate, m.object)"
FTS_UPDATE_TRIGGER = "memories_fts_au"


@c.write_transaction
def _write_cuts(cuts: list[_Cut], t: datetime, entries: dict[str, int]) -> int:
    """One transaction: the new contents (only where the row still holds what was read: a concurrent writer
    wins, the next run looks again), their full-text entries, and the archive. Returns the rows shortened."""
    keep = [(x.depth, x.memory_id) for x in cuts if len(x.new) > len(x.content) or x.new == x.content]
    kept = {mid for _, mid in keep}
    todo = [x for x in cuts if x.memory_id not in kept]  # never give text back, never a no-op write
    if keep:
        _set_depths(keep)
    done = _replace_contents(todo, entries) if todo else set()
    stamp = rawsql.convert(MemoryTier, "changed_at", t)
    with connection.cursor() as cur:
        cur.executemany(
            "UPDATE memory_tiers SET depth = %s, method = %s, original = COALESCE(original, %s), changed_at = %s"
            " WHERE memory_id = %s",
            [(x.depth, x.method, x.original, stamp, x.memory_id) for x in todo if x.memory_id in done],
        )
    return len(done)


def _replace_contents(cuts: list[_Cut], entries: dict[str, int]) -> set[str]:
    """Set the rows' content (compare-and-set); returns the ids that changed. On SQLite the full-text update
    trigger finds a row's entry by a pass over the whole index, so inside this transaction it is set aside and
    the entries are replaced here: removed by rowid (``entries``; one not where it was read, a pass) and written
    again with the trigger's document. Elsewhere the trigger or index does it."""
    trigger = None
    if connection.vendor == "sqlite":
        row = rawsql.run(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = %s", [FTS_UPDATE_TRIGGER]
        ).fetchone()
        trigger = row[0] if row else None
    if trigger:
        rawsql.run(f"DROP TRIGGER {FTS_UPDATE_TRIGGER}", [])
    done = set()
    for x in cuts:
        if rawsql.execute(
            "UPDATE memories SET content = %s WHERE id = %s AND content = %s", [x.new, x.memory_id, x.content]
        ):
            done.add(x.memory_id)
    if trigger:
        for mid in done:
            rowid = entries.get(mid)
            gone = rowid is not None and rawsql.execute(
                "DELETE FROM memories_fts WHERE rowid = %s AND memory_id = %s", [rowid, mid]
            )
            if not gone:
                rawsql.execute("DELETE FROM memories_fts WHERE memory_id = %s", [mid])
        ordered = sorted(done)
        for k in range(0, len(ordered), 500):
            part = ordered[k : k + 500]
            marks = ", ".join(["%s"] * len(part))
            rawsql.run(
                f"INSERT INTO memories_fts (doc, memory_id) SELECT {FTS_DOC_SQL}, m.id FROM memories m"
                f" WHERE m.id IN ({marks})",
                part,
            )
        rawsql.run(trigger, [])
    return done


def tier_counts(*, agent_id: str) -> dict[str, int]:
    """Believed rows of the agent per tier (rows without a tier row are hot). Hot is what the other tiers leave
    of all believed rows: those are counted from the (agent, layer, quarantined, invalidated_by_event, ...) index
    alone, and only the rows with a tier row are joined (the join of every row to its tier row was ≈ 130 ms at
    100k memories; benchmarks/bench_pages.py)."""
    agent_id = c.check_agent_id(agent_id)
    rows = rawsql.run(
        f"SELECT '', COUNT(m.agent_id) FROM memories m WHERE m.agent_id = %s AND {believed_sql('m')}"
        " UNION ALL SELECT t.tier, COUNT(*) FROM memory_tiers t JOIN memories m ON m.id = t.memory_id"
        f" WHERE t.agent_id = %s AND m.agent_id = %s AND t.tier <> 'hot' AND {believed_sql('m')}"
        " GROUP BY t.tier",
        [agent_id, agent_id, agent_id],
    ).fetchall()
    found = {str(tier): int(n) for tier, n in rows if tier}
    believed = sum(int(n) for tier, n in rows if not tier)
    found["hot"] = believed - sum(found.values())
    return {tier: found.get(tier, 0) for tier in TIERS}


# --- the archive, for curators and export -------------------------------------------------------------------


@dataclass(frozen=True)
class ArchiveRecord:
    memory_id: str
    tier: str
    depth: str
    original: str | None  # the exact text before the row became a digest; None when it never changed
    method: str
    changed_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "tier": self.tier,
            "depth": self.depth or None,
            "original_content": self.original,
            "digest_method": self.method or None,
            "tier_changed_at": iso(self.changed_at),
        }


def memory_archive(*, agent_id: str, memory_ids: list[str]) -> dict[str, ArchiveRecord]:
    """Tier and archived original of these rows of the agent (rows never tiered are absent: hot, unchanged).
    For people (curators) and export only: agents are never given the archive."""
    agent_id = c.check_agent_id(agent_id)
    ids = [i for i in memory_ids if isinstance(i, str)]
    out: dict[str, ArchiveRecord] = {}
    for k in range(0, len(ids), 500):
        for r in MemoryTier.objects.filter(agent_id=agent_id, memory_id__in=ids[k : k + 500]):
            out[r.memory_id] = ArchiveRecord(r.memory_id, r.tier, r.depth, r.original, r.method, r.changed_at)
    return out


def export_memories(*, agent_id: str, batch: int = 2000) -> Iterator[dict[str, Any]]:
    """Every row of the agent (history, quarantined and retracted rows included) as a dict: the record, its
    tier and, when tiering shortened it, ``original_content``, the exact archived text. Streams in batches."""
    agent_id = c.check_agent_id(agent_id)
    after = ""
    while True:
        rows = list(Memory.objects.filter(agent_id=agent_id, id__gt=after).order_by("id")[:batch])
        if not rows:
            return
        archive = {r.memory_id: r for r in MemoryTier.objects.filter(memory_id__in=[m.id for m in rows])}
        for m in rows:
            out = MemoryRecord.from_model(m).to_dict()
            tier = archive.get(m.id)
            out["tier"] = tier.tier if tier else "hot"
            out["original_content"] = tier.original if tier else None
            yield out
        after = rows[-1].id


def prune_protected_q(at: datetime | None = None) -> Q:
    """Rows the dream loop's prune phase must never end: read back in the last ``PRUNE_PROTECT_DAYS`` days."""
    return Q(last_accessed__gte=(at or c.now()) - timedelta(days=PRUNE_PROTECT_DAYS))
