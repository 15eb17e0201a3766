"""Conflict candidates for one agent (SPEC B2 (a)-(d)): pairs of memories the judge should look at.

Read-only over the ORM, and never the whole graph pairwise: facts are blocked by entity and predicate, plain
memories by their rarest tokens (prefix filtering), so the work grows with the number of rows, not its square.

* (a) the same key (subject alias-resolved, predicate normalised) with objects equal after normalisation or
  near-equal: two current rows under spellings of one key, or a current row and the row it superseded when
  the value did not really change ("Cloudflare Workers" -> "cloudflare workers (CF)");
* (b) the same subject and object under predicates the registry declares synonyms, or near-identical
  predicate names (``deploy_target`` / ``deploy_targets``);
* (c) a single-valued predicate with two current values under subjects that are one entity (aliases, or
  spellings that normalise alike) or under synonym predicates;
* (d) plain memories (no triple) with near-duplicate content (and the same numbers), or a high token overlap
  (tokens common in this agent's memories weighted down) plus a negation or change cue on one side only.

Each candidate carries its rule, the older row (``old``, learned first), the newer (``new``) and the ``context``
to hand to ``judge``. Nothing here applies a verdict.
"""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db.models import Q
from django.utils import timezone

from memory.engine import InvalidArgument, check_agent_id, normalize_entity, parse_time
from memory.engine.belief import BELIEVED, current_q
from memory.models import EntityAlias, Memory, MemoryTier

from .judge import HIGH_OVERLAP
from .registry import Registry, get_registry
from .text import (
    NEAR_TEXT,
    cues,
    digits,
    near_equal,
    near_predicate,
    normalize_predicate,
    normalize_text,
    similarity,
    tokens,
    value_key,
)

__all__ = ["DEFAULT_LIMIT", "RULES", "Candidate", "CandidateScan", "Row", "find_candidates"]

RULES = ("a", "b", "c", "d")
DEFAULT_LIMIT = 200
MAX_LIMIT = 50_000
NEAR_BUCKET = 40  # distinct values in a bucket compared pairwise; larger buckets are blocked by first word
MAX_POSTING = 100  # a token shared by more plain memories than this makes no pairs (it is a stop word here)
TOKEN_CHARS = 2_000  # characters of a plain memory read for its tokens
CHUNK = 500
_FIELDS = (
    "id",
    "content",
    "subject",
    "predicate",
    "object",
    "valid_from",
    "valid_until",
    "origin",
    "origin_trust",
    "ingested_at",
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Row:
    """The fields the judge reads, and ``ingested_at`` (which side is older)."""

    id: str
    content: str
    subject: str | None
    predicate: str | None
    object: str | None
    valid_from: datetime | None
    valid_until: datetime | None
    origin: str | None
    origin_trust: float | None
    ingested_at: datetime | None


@dataclass(frozen=True)
class Candidate:
    rule: str
    old: Row
    new: Row
    reason: str
    context: dict[str, Any] = field(default_factory=dict)

    @property
    def pair(self) -> frozenset[str]:
        return frozenset((self.old.id, self.new.id))


@dataclass(frozen=True)
class CandidateScan:
    candidates: list[Candidate]
    truncated: bool
    facts_scanned: int
    plain_scanned: int
    duration_ms: float
    counts: dict[str, int]


@dataclass
class _Fact:
    id: str
    subject: str
    predicate: str
    object: str | None
    supersedes: str | None
    order: tuple[datetime, str]
    entity: str = ""
    pred_norm: str = ""
    pred: str = ""
    value: str = ""
    vtype: str = "text"


@dataclass(frozen=True)
class _Pair:
    rule: str
    old: str
    new: str
    reason: str
    same_subject: bool = True


def _order(ingested_at: datetime | None, row_id: str) -> tuple[datetime, str]:
    return (ingested_at or _EPOCH, row_id)


class _Names:
    """Entity names alias-resolved, predicate names normalised and canonical, value keys: memoised."""

    def __init__(self, aliases: dict[str, str], registry: Registry) -> None:
        self.aliases = aliases
        self.registry = registry
        self._entity: dict[str, str] = {}
        self._pred: dict[str, tuple[str, str, str]] = {}
        self._value: dict[tuple[str, str], str] = {}

    def entity(self, raw: str | None) -> str:
        if raw is None:
            return ""
        hit = self._entity.get(raw)
        if hit is None:
            norm = normalize_entity(raw)
            hit = self._entity[raw] = self.aliases.get(norm, norm)
        return hit

    def predicate(self, raw: str) -> tuple[str, str, str]:
        """(normalised name, canonical name, value type)."""
        hit = self._pred.get(raw)
        if hit is None:
            norm = normalize_predicate(raw)
            canonical = self.registry.canonical(norm)
            hit = self._pred[raw] = (norm, canonical, self.registry.value_type(canonical))
        return hit

    def value(self, raw: str | None, vtype: str) -> str:
        if not raw:
            return ""
        key = (raw, vtype)
        hit = self._value.get(key)
        if hit is None:
            hit = self._value[key] = value_key(self.entity(raw), vtype)
        return hit


def find_candidates(
    *,
    agent_id: str,
    limit: int = DEFAULT_LIMIT,
    rules: Iterable[str] = RULES,
    registry: Registry | None = None,
    at: datetime | None = None,
    skip_pairs: Iterable[Iterable[str]] = (),
) -> CandidateScan:
    """Up to ``limit`` candidate pairs for ``agent_id`` by the given ``rules``, rule (a) first, newest first
    within a rule. ``skip_pairs`` (pairs of ids already judged) are never proposed again."""
    started = time.perf_counter()
    agent_id = check_agent_id(agent_id)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be an integer from 1 to {MAX_LIMIT}", field="limit")
    wanted = set(rules)
    if not wanted or not wanted <= set(RULES):
        raise InvalidArgument(f"rules must be among {', '.join(RULES)}", field="rules")
    at = parse_time(at, field="at") or timezone.now()
    registry = registry or get_registry()
    aliases = dict(EntityAlias.objects.filter(agent_id=agent_id).values_list("alias", "canonical"))
    names = _Names(aliases, registry)
    skip = {frozenset(p) for p in skip_pairs}
    pairs: dict[str, list[_Pair]] = {rule: [] for rule in RULES}
    orders: dict[str, tuple[datetime, str]] = {}
    facts: list[_Fact] = []
    if wanted & {"a", "b", "c"}:
        facts = _load_facts(agent_id, at, names)
        orders.update((f.id, f.order) for f in facts)
        for pair in _fact_pairs(facts, names, wanted):
            pairs[pair.rule].append(pair)
        if "a" in wanted:
            pairs["a"].extend(_predecessor_pairs(agent_id, facts, names, orders))
    plain_count = 0
    if "d" in wanted:
        plain = _load_plain(agent_id, at)
        plain_count = len(plain)
        orders.update((row_id, order) for row_id, _, order in plain)
        pairs["d"].extend(_plain_pairs(plain))
    chosen: list[_Pair] = []
    seen: set[frozenset[str]] = set(skip)
    truncated = False
    for rule in RULES:
        for pair in sorted(pairs[rule], key=lambda p: (orders[p.new], orders[p.old]), reverse=True):
            key = frozenset((pair.old, pair.new))
            if key in seen:
                continue
            if len(chosen) >= limit:
                truncated = True
                break
            seen.add(key)
            chosen.append(pair)
    rows = _hydrate(agent_id, {i for p in chosen for i in (p.old, p.new)})
    candidates = [_candidate(p, rows, names) for p in chosen if p.old in rows and p.new in rows]
    counts = {rule: sum(1 for c in candidates if c.rule == rule) for rule in RULES}
    return CandidateScan(
        candidates=candidates,
        truncated=truncated,
        facts_scanned=len(facts),
        plain_scanned=plain_count,
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
        counts=counts,
    )


# --- loading ---------------------------------------------------------------------------------------------------


def _has_triple() -> Q:
    return Q(subject__isnull=False, predicate__isnull=False) & ~Q(subject="") & ~Q(predicate="")


def _load_facts(agent_id: str, at: datetime, names: _Names) -> list[_Fact]:
    rows = (
        Memory.objects.filter(current_q(at), _has_triple(), agent_id=agent_id)
        .values_list("id", "subject", "predicate", "object", "supersedes", "ingested_at")
        .iterator(chunk_size=5_000)
    )
    out = []
    for row_id, subject, predicate, obj, supersedes, ingested_at in rows:
        fact = _Fact(row_id, subject or "", predicate or "", obj, supersedes, _order(ingested_at, row_id))
        fact.entity = names.entity(fact.subject)
        fact.pred_norm, fact.pred, fact.vtype = names.predicate(fact.predicate)
        fact.value = names.value(obj, fact.vtype)
        out.append(fact)
    return out


def _load_plain(agent_id: str, at: datetime) -> list[tuple[str, str, tuple[datetime, str]]]:
    """Current plain memories, not those whose content is now a digest or headline of their text (SPEC B9):
    two digests can look alike where the texts differ, so they are never judged."""
    shortened = MemoryTier.objects.filter(agent_id=agent_id).exclude(depth="").values("memory_id")
    rows = (
        Memory.objects.filter(current_q(at), agent_id=agent_id)
        .exclude(_has_triple())
        .exclude(id__in=shortened)
        .values_list("id", "content", "ingested_at")
        .iterator(chunk_size=5_000)
    )
    return [
        (row_id, content[:TOKEN_CHARS], _order(ingested_at, row_id)) for row_id, content, ingested_at in rows
    ]


def _hydrate(agent_id: str, ids: set[str]) -> dict[str, Row]:
    out: dict[str, Row] = {}
    ordered = sorted(ids)
    for lo in range(0, len(ordered), CHUNK):
        chunk = ordered[lo : lo + CHUNK]
        for values in Memory.objects.filter(agent_id=agent_id, id__in=chunk).values_list(*_FIELDS):
            out[values[0]] = Row(*values)
    return out


def _candidate(pair: _Pair, rows: dict[str, Row], names: _Names) -> Candidate:
    old, new = rows[pair.old], rows[pair.new]
    context: dict[str, Any] = {"rule": pair.rule}
    if old.subject and new.subject and pair.rule != "d":
        context["same_subject"] = pair.same_subject
        resolved = {}
        for raw in (old.subject, new.subject, old.object, new.object):
            norm = normalize_text(raw)
            if norm and names.aliases.get(norm):
                resolved[norm] = names.aliases[norm]
        if resolved:
            context["aliases"] = resolved
    return Candidate(pair.rule, old, new, pair.reason, context)


# --- facts: rules (a), (b), (c) ----------------------------------------------------------------------------


def _ordered(a: _Fact, b: _Fact) -> tuple[_Fact, _Fact]:
    return (a, b) if a.order <= b.order else (b, a)


def _same_rule(a: _Fact, b: _Fact) -> str:
    return "a" if a.pred_norm == b.pred_norm else "b"


def _fact_pairs(facts: list[_Fact], names: _Names, wanted: set[str]) -> Iterator[_Pair]:
    by_key: dict[tuple[str, str], list[_Fact]] = defaultdict(list)
    for fact in facts:
        by_key[(fact.entity, fact.pred)].append(fact)
    for (_, predicate), bucket in by_key.items():
        if len(bucket) > 1:
            yield from _key_bucket(bucket, names.registry.cardinality(predicate), wanted)
    if "b" in wanted:
        yield from _near_predicate_pairs(facts)


def _key_bucket(bucket: list[_Fact], cardinality: str, wanted: set[str]) -> Iterator[_Pair]:
    """One entity and canonical predicate: equal or near-equal values (a/b), different values (c)."""
    groups: dict[str, list[_Fact]] = defaultdict(list)
    for fact in bucket:
        groups[fact.value].append(fact)
    for members in groups.values():
        members.sort(key=lambda f: f.order)
    parent: dict[str, str] = {value: value for value in groups}  # near-equal values share one root

    def root(value: str) -> str:
        while parent[value] != value:
            parent[value] = parent[parent[value]]
            value = parent[value]
        return value

    def emit(a: _Fact, b: _Fact, why: str) -> _Pair | None:
        old, new = _ordered(a, b)
        rule = _same_rule(old, new)
        return _Pair(rule, old.id, new.id, why) if rule in wanted else None

    for value, members in groups.items():
        first = members[0]
        for other in members[1:]:
            pair = emit(first, other, f"equal values {value!r} under one key")
            if pair:
                yield pair
    values = [v for v in groups if v]
    for va, vb in _value_pairs(values):
        vtype = groups[va][0].vtype
        same, how = near_equal(va, vb, vtype)
        if same:
            parent[root(vb)] = root(va)
            pair = emit(groups[va][0], groups[vb][0], f"near-equal values {va!r} / {vb!r} ({how})")
            if pair:
                yield pair
    if cardinality != "single" or "c" not in wanted:
        return
    newest = max(bucket, key=lambda f: f.order)
    for value, members in groups.items():
        if root(value) == root(newest.value):
            continue
        latest = members[-1]
        old, new = _ordered(latest, newest)
        yield _Pair(
            "c",
            old.id,
            new.id,
            f"two current values of single-valued {newest.pred}: {value!r} / {newest.value!r}",
        )


def _value_pairs(values: list[str]) -> Iterator[tuple[str, str]]:
    """Pairs of distinct values worth a near-equality check: all of them in a small bucket, else those that
    share a first word."""
    if len(values) <= NEAR_BUCKET:
        for i, va in enumerate(values):
            for vb in values[i + 1 :]:
                yield va, vb
        return
    blocks: dict[str, list[str]] = defaultdict(list)
    for value in values:
        blocks[value.split(" ", 1)[0]].append(value)
    for block in blocks.values():
        for i, va in enumerate(block[:NEAR_BUCKET]):
            for vb in block[i + 1 : NEAR_BUCKET]:
                yield va, vb


def _near_predicate_pairs(facts: list[_Fact]) -> Iterator[_Pair]:
    """Rule (b) for names the registry does not relate: one subject and value under near-identical predicates."""
    by_value: dict[tuple[str, str], dict[str, _Fact]] = defaultdict(dict)
    for fact in facts:
        if fact.value:
            slot = by_value[(fact.entity, fact.value)]
            if fact.pred not in slot or fact.order < slot[fact.pred].order:
                slot[fact.pred] = fact
    for slot in by_value.values():
        if len(slot) < 2:
            continue
        preds = sorted(slot)[:NEAR_BUCKET]
        for i, pa in enumerate(preds):
            for pb in preds[i + 1 :]:
                if near_predicate(pa, pb):
                    old, new = _ordered(slot[pa], slot[pb])
                    yield _Pair("b", old.id, new.id, f"near-identical predicates {pa} / {pb}, same value")


def _predecessor_pairs(
    agent_id: str, facts: list[_Fact], names: _Names, orders: dict[str, tuple[datetime, str]]
) -> Iterator[_Pair]:
    """Rule (a) along a key's history: a current row whose predecessor held the same value, respelt."""
    current = {f.supersedes: f for f in facts if f.supersedes}
    ids = sorted(current)
    for lo in range(0, len(ids), CHUNK):
        previous = Memory.objects.filter(
            BELIEVED, agent_id=agent_id, id__in=ids[lo : lo + CHUNK]
        ).values_list("id", "object", "ingested_at")
        for prev_id, obj, ingested_at in previous:
            fact = current[prev_id]
            same, how = near_equal(names.value(obj, fact.vtype), fact.value, fact.vtype)
            if same:
                orders[prev_id] = _order(ingested_at, prev_id)
                yield _Pair("a", prev_id, fact.id, f"superseded by the same value respelt ({how})")


# --- plain memories: rule (d) ----------------------------------------------------------------------------


class _Plain:
    """The plain memories of one scan: normalised texts, token sets, document frequencies, cues (memoised)."""

    def __init__(self, plain: list[tuple[str, str, tuple[datetime, str]]]) -> None:
        self.plain = plain
        self.texts = [normalize_text(content).rstrip(" .!。！") for _, content, _ in plain]
        self.toks: list[set[str]] = [set() for _ in plain]
        self.df: dict[str, int] = defaultdict(int)
        self._cues: dict[int, frozenset[str]] = {}

    def weight(self, token: str) -> float:
        """1 for a token in at most max(5, N / 200) of the N memories; less, in proportion, for a commoner one."""
        common = max(5.0, len(self.plain) / 200)
        return min(1.0, common / max(1, self.df[token]))

    def weighted_overlap(self, i: int, j: int) -> float:
        """Overlap coefficient with common tokens weighted down: shared boilerplate ("团队", "做发布") counts
        little, shared names fully."""
        a, b = self.toks[i], self.toks[j]
        shared = sum(self.weight(t) for t in a & b)
        return shared / min(sum(self.weight(t) for t in a), sum(self.weight(t) for t in b))

    def cues(self, i: int) -> frozenset[str]:
        if i not in self._cues:
            self._cues[i] = cues(self.texts[i])
        return self._cues[i]

    def pair(self, i: int, j: int, why: str) -> _Pair:
        a, b = self.plain[i], self.plain[j]
        old, new = (a, b) if a[2] <= b[2] else (b, a)
        return _Pair("d", old[0], new[0], why, same_subject=False)

    def check(self, i: int, j: int) -> _Pair | None:
        """Memories sharing at least HIGH_OVERLAP of the shorter one's tokens: a negation or change cue on one
        side only and the same overlap with common tokens weighted down, or else a near-duplicate text with the
        same numbers ("ticket 12" and "ticket 13" are no duplicates)."""
        a, b = self.toks[i], self.toks[j]
        if len(a & b) < HIGH_OVERLAP * min(len(a), len(b)):
            return None
        flipped = self.cues(i) ^ self.cues(j)
        if flipped:
            weighted = self.weighted_overlap(i, j)
            if weighted < HIGH_OVERLAP:
                return None
            return self.pair(i, j, f"overlap {weighted:.2f} and a change cue ({', '.join(sorted(flipped))})")
        sim = similarity(self.texts[i], self.texts[j])
        if sim >= NEAR_TEXT and digits(self.texts[i]) == digits(self.texts[j]):
            return self.pair(i, j, f"near-duplicate text ({sim:.2f})")
        return None


def _plain_pairs(plain: list[tuple[str, str, tuple[datetime, str]]]) -> Iterator[_Pair]:
    """Exact duplicates by normalised text, then pairs sharing at least HIGH_OVERLAP of the smaller memory's
    tokens, found by prefix filtering: with tokens in a global rarest-first order, a memory x that shares
    ``need = ceil(t * |x|)`` tokens with a larger y shares at least ``need - (|x| - L)`` of its first L tokens
    with it. Each memory counts, over the postings of its first ``L = |x| - need + 2`` tokens, how many each
    other memory holds, and only those reaching the bound are checked. Postings longer than MAX_POSTING are
    skipped (stop words here)."""
    index = _Plain(plain)
    exact: dict[str, int] = {}
    for i, text in enumerate(index.texts):
        first = exact.setdefault(text, i)
        if first != i:
            yield index.pair(first, i, "the same text after normalisation")
    live = [i for i, text in enumerate(index.texts) if exact[text] == i]
    postings: dict[str, list[int]] = defaultdict(list)
    for i in live:
        index.toks[i] = tokens(index.texts[i])
        for t in index.toks[i]:
            index.df[t] += 1
            postings[t].append(i)
    df = index.df
    for i in live:
        size = len(index.toks[i])
        if not size:
            continue
        need = math.ceil(HIGH_OVERLAP * size)
        length = min(size, size - need + 2)
        required = max(1, need - (size - length))
        counts: Counter[int] = Counter()
        for t in sorted(index.toks[i], key=lambda t: (df[t], t))[:length]:
            members = postings[t]
            if len(members) <= MAX_POSTING:
                counts.update(members)
        for j, shared in counts.items():
            if shared < required or j == i:
                continue
            other = len(index.toks[j])
            if other < size or (other == size and j < i):  # each pair once, from its smaller side
                continue
            pair = index.check(i, j)
            if pair is not None:
                yield pair
