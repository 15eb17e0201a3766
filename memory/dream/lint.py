"""Knowledge lint (SPEC B3): what is malformed, implausible or unstable in one agent's current memory.

Checks run cheapest first, over the agent's current rows read once (a handful of bulk queries, no query per
row, so the work at 100k facts is a few passes in memory):

* structure: aliases that name an entity no current fact mentions (``orphan_entity``); loops in predicates the
  registry declares acyclic, such as a ``reports_to`` cycle (``cycle``); malformed triples: an empty object on a
  single-valued predicate the registry knows (``empty_object``), subject == object (``self_loop``); a
  ``derived_from`` naming a memory this agent does not have (``dangling_derived_from``);
* grounding: the registry's value domains (``value_domain``: a birthday in the future, a malformed email, an
  integer out of range, ...);
* volatile keys: more than ``VOLATILE_CHANGES`` value changes of one key in ``VOLATILE_DAYS`` days (reported);
* semantic: with an LLM client, a few subjects' facts are sent as data and the reply names contradictions or
  implausible facts (its ids are checked against the ids sent).

Each finding carries the fix it proposes: ``{"action": "retract", "memory_id": ...}`` for a fact whose value is
wrong, ``{"action": "none"}`` where a person has to decide. Retractions are high-impact: they go flag -> review
item -> commit on approval (``review_apply`` retracts), never applied by the loop alone. Nothing here writes.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count
from django.utils import timezone

from memory.engine import InvalidArgument, normalize_entity, parse_time
from memory.engine.belief import RETRACTED, current_q
from memory.models import EntityAlias, Memory

from .registry import Registry, active_registry

__all__ = [
    "KINDS",
    "RULES",
    "SEMANTIC_SCHEMA",
    "VOLATILE_CHANGES",
    "VOLATILE_DAYS",
    "Finding",
    "LintReport",
    "lint",
]

KINDS = ("structure", "grounding", "volatile", "semantic")
RULES = (
    "orphan_entity",
    "cycle",
    "empty_object",
    "self_loop",
    "dangling_derived_from",
    "value_domain",
    "volatile_key",
    "semantic",
)
SEVERITIES = ("error", "warning", "info")
VOLATILE_CHANGES = 5
VOLATILE_DAYS = 30
DEFAULT_LIMIT = 1000
MAX_LIMIT = 100_000
CHUNK = 500
CYCLE_IDS = 20  # facts named by one cycle finding
SEMANTIC_SUBJECTS = 5  # subjects sent to the LLM per lint pass
SEMANTIC_FACTS = 20  # facts of one subject sent
DOMAIN_TYPES = frozenset({"date", "integer", "enum", "url", "email"})

SEMANTIC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["findings"],
    "properties": {
        "findings": {
            "type": "array",
            "maxItems": 10,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["ids", "severity", "message"],
                "properties": {
                    "ids": {"type": "array", "minItems": 1, "maxItems": 5, "items": {"type": "string"}},
                    "severity": {"enum": ["warning", "info"]},
                    "message": {"type": "string", "maxLength": 300},
                },
            },
        }
    },
}
SEMANTIC_INSTRUCTIONS = """You check the knowledge of a long-term memory store. You get the current facts about \
one subject, each with an id, a predicate, an object and its text. Report facts that contradict each other or are \
implausible (impossible dates, values of the wrong kind). Report nothing when the facts are consistent. Each \
finding names the ids of the facts involved (only ids from the data), a severity (warning or info) and a short \
message."""


@dataclass(frozen=True)
class Finding:
    """One lint finding. ``fix`` is the proposed fix; ``high_impact`` fixes need a person (flag -> review ->
    commit); ``key`` identifies the finding across runs (with the rows' state it makes the review fingerprint)."""

    kind: str
    rule: str
    severity: str
    ids: tuple[str, ...]
    message: str
    fix: dict[str, Any] = field(default_factory=lambda: {"action": "none"})
    confidence: float = 0.5
    high_impact: bool = False
    key: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "rule": self.rule,
            "severity": self.severity,
            "ids": list(self.ids),
            "message": self.message,
            "fix": dict(self.fix),
        }


@dataclass(frozen=True)
class LintReport:
    """The findings (iterating the report yields them, as SPEC 11's ``engine.lint`` promises), every finding
    counted by rule, what was checked, and the checks that could not run (``errors``)."""

    findings: list[Finding]
    counts: dict[str, int]
    checked: dict[str, int]
    errors: list[str]
    truncated: bool
    duration_ms: float

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def __len__(self) -> int:
        return len(self.findings)


@dataclass
class _Fact:
    id: str
    subject: str
    predicate: str
    object: str | None
    entity: str
    target: str
    pred: str


class _Collector:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.findings: list[Finding] = []
        self.counts: dict[str, int] = defaultdict(int)

    def add(self, finding: Finding) -> None:
        self.counts[finding.rule] += 1
        if len(self.findings) < self.limit:
            self.findings.append(finding)

    @property
    def truncated(self) -> bool:
        return sum(self.counts.values()) > len(self.findings)


def lint(
    *,
    agent_id: str,
    registry: Registry | None = None,
    llm: Any = None,
    at: datetime | None = None,
    limit: int = DEFAULT_LIMIT,
) -> LintReport:
    """Lint the agent's current memory (see the module docstring); at most ``limit`` findings are returned, all
    are counted. ``llm`` is a ``memory.llm.LLMClient`` for the semantic check, or None."""
    started = time.perf_counter()
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be an integer from 1 to {MAX_LIMIT}", field="limit")
    at = parse_time(at, field="at") or timezone.now()
    errors: list[str] = []
    if registry is None:
        load = active_registry()
        registry = load.registry
        if load.error:
            errors.append(f"registry: {load.error} (using the shipped registry)")
    aliases = dict(EntityAlias.objects.filter(agent_id=agent_id).values_list("alias", "canonical"))
    facts = _load_facts(agent_id, at, aliases, registry)
    out = _Collector(limit)
    _orphan_entities(facts, aliases, out)
    _cycles(facts, registry, out)
    _malformed(facts, registry, out)
    _dangling(agent_id, at, out)
    _grounding(facts, registry, at, out)
    _volatile(agent_id, at, out)
    if llm is not None:
        _semantic(facts, llm, out, errors)
    return LintReport(
        findings=out.findings,
        counts={rule: out.counts[rule] for rule in RULES if out.counts[rule]},
        checked={"facts": len(facts), "aliases": len(aliases)},
        errors=errors,
        truncated=out.truncated,
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )


def _load_facts(agent_id: str, at: datetime, aliases: dict[str, str], registry: Registry) -> list[_Fact]:
    names: dict[str, str] = {}
    preds: dict[str, str] = {}

    def entity(raw: str | None) -> str:
        if not raw:
            return ""
        hit = names.get(raw)
        if hit is None:
            norm = normalize_entity(raw)
            hit = names[raw] = aliases.get(norm, norm)
        return hit

    rows = (
        Memory.objects.filter(
            current_q(at), agent_id=agent_id, subject__isnull=False, predicate__isnull=False
        )
        .exclude(subject="")
        .exclude(predicate="")
        .values_list("id", "subject", "predicate", "object")
        .order_by("id")
        .iterator(chunk_size=5_000)
    )
    out = []
    for row_id, raw_subject, raw_predicate, obj in rows:
        subject, predicate = raw_subject or "", raw_predicate or ""
        pred = preds.get(predicate)
        if pred is None:
            pred = preds[predicate] = registry.canonical(predicate)
        out.append(_Fact(row_id, subject, predicate, obj, entity(subject), entity(obj), pred))
    return out


# --- structure -------------------------------------------------------------------------------------------


def _orphan_entities(facts: list[_Fact], aliases: dict[str, str], out: _Collector) -> None:
    """An alias whose entity no current fact names (as subject or object, under any of its names)."""
    mentioned = {f.entity for f in facts} | {f.target for f in facts if f.target}
    for alias, canonical in sorted(aliases.items()):
        if canonical not in mentioned:
            out.add(
                Finding(
                    kind="structure",
                    rule="orphan_entity",
                    severity="info",
                    ids=(),
                    message=f"the alias {alias!r} -> {canonical!r} names an entity no current fact mentions",
                    key=f"orphan_entity|{alias}|{canonical}",
                )
            )


def _cycles(facts: list[_Fact], registry: Registry, out: _Collector) -> None:
    """Strongly connected components (more than one entity) of each acyclic predicate's graph."""
    by_pred: dict[str, list[_Fact]] = defaultdict(list)
    for f in facts:
        if f.target and f.entity != f.target and registry.is_acyclic(f.pred):
            by_pred[f.pred].append(f)
    for pred in sorted(by_pred):
        edges: dict[str, set[str]] = defaultdict(set)
        for f in by_pred[pred]:
            edges[f.entity].add(f.target)
        for component in _strong_components(edges):
            members = set(component)
            ids = sorted(f.id for f in by_pred[pred] if f.entity in members and f.target in members)
            chain = " -> ".join(sorted(members)[:8])
            out.add(
                Finding(
                    kind="structure",
                    rule="cycle",
                    severity="error",
                    ids=tuple(ids[:CYCLE_IDS]),
                    message=f"{pred} must not loop, but {len(members)} entities form a cycle ({chain}); "
                    "one of these facts is wrong",
                    confidence=0.6,
                    key=f"cycle|{pred}|{'|'.join(ids[:CYCLE_IDS])}",
                )
            )


def _strong_components(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm without recursion; components of more than one node, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work: list[tuple[str, Iterable[str]]] = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _retract(f: _Fact) -> dict[str, Any]:
    return {"action": "retract", "memory_id": f.id}


def _malformed(facts: list[_Fact], registry: Registry, out: _Collector) -> None:
    for f in facts:
        spec = registry.spec(f.pred)
        if not (f.object or "").strip():
            if spec is not None and spec.cardinality == "single":
                out.add(
                    Finding(
                        kind="structure",
                        rule="empty_object",
                        severity="warning",
                        ids=(f.id,),
                        message=f"{f.subject} {f.predicate} has no value, but {f.pred} is single-valued",
                        fix=_retract(f),
                        confidence=0.7,
                        high_impact=True,
                        key=f"empty_object|{f.id}",
                    )
                )
            continue
        if f.entity and f.entity == f.target:
            out.add(
                Finding(
                    kind="structure",
                    rule="self_loop",
                    severity="error" if registry.is_acyclic(f.pred) else "warning",
                    ids=(f.id,),
                    message=f"{f.subject} {f.predicate} {f.object}: the subject is its own object",
                    fix=_retract(f),
                    confidence=0.75,
                    high_impact=True,
                    key=f"self_loop|{f.id}",
                )
            )


def _dangling(agent_id: str, at: datetime, out: _Collector) -> None:
    """``derived_from`` ids of current rows that name no memory of this agent."""
    derived = (
        Memory.objects.filter(current_q(at), agent_id=agent_id)
        .exclude(derived_from=[])
        .values_list("id", "derived_from")
        .iterator(chunk_size=5_000)
    )
    cites: dict[str, list[str]] = {}
    for row_id, sources in derived:
        if isinstance(sources, list):
            named = [s for s in sources if isinstance(s, str) and s]
            if named:
                cites[row_id] = named
    wanted = sorted({s for named in cites.values() for s in named})
    known: set[str] = set()
    for lo in range(0, len(wanted), CHUNK):
        chunk = wanted[lo : lo + CHUNK]
        known |= set(Memory.objects.filter(agent_id=agent_id, id__in=chunk).values_list("id", flat=True))
    for row_id in sorted(cites):
        missing = [s for s in cites[row_id] if s not in known]
        if missing:
            out.add(
                Finding(
                    kind="structure",
                    rule="dangling_derived_from",
                    severity="warning",
                    ids=(row_id,),
                    message=f"derived from {len(missing)} memor{'y' if len(missing) == 1 else 'ies'} this agent "
                    f"does not have ({', '.join(missing[:3])})",
                    key=f"dangling|{row_id}|{'|'.join(missing[:10])}",
                )
            )


# --- grounding -------------------------------------------------------------------------------------------


def _grounding(facts: list[_Fact], registry: Registry, at: datetime, out: _Collector) -> None:
    today = at.date()
    checked: dict[str, bool] = {}
    for f in facts:
        if not (f.object or "").strip():
            continue
        domain = checked.get(f.pred)
        if domain is None:
            spec = registry.spec(f.pred)
            domain = checked[f.pred] = spec is not None and (spec.type in DOMAIN_TYPES or bool(spec.pattern))
        if not domain:
            continue
        verdict = registry.check_value(f.pred, f.object, today=today)
        if not verdict.ok:
            out.add(
                Finding(
                    kind="grounding",
                    rule="value_domain",
                    severity="warning",
                    ids=(f.id,),
                    message=f"{f.subject} {f.predicate}: {verdict.message}",
                    fix=_retract(f),
                    confidence=0.85,
                    high_impact=True,
                    key=f"value_domain|{f.id}",
                )
            )


# --- volatile keys ---------------------------------------------------------------------------------------


def _volatile(agent_id: str, at: datetime, out: _Collector) -> None:
    """Keys with more than VOLATILE_CHANGES new values learned in the last VOLATILE_DAYS days (one aggregate)."""
    since = at - timedelta(days=VOLATILE_DAYS)
    rows = (
        Memory.objects.filter(agent_id=agent_id, subject__isnull=False, predicate__isnull=False)
        .filter(ingested_at__gte=since, ingested_at__lte=at)
        .exclude(RETRACTED)
        .values("subject", "predicate", "value_key")  # per key: each value of a multi-valued predicate alone
        .annotate(n=Count("id"), latest=Count("object", distinct=True))
        .filter(n__gt=VOLATILE_CHANGES)
        .order_by("-n", "subject", "predicate", "value_key")
    )
    for row in rows:
        value = f" ({row['value_key']})" if row["value_key"] else ""
        out.add(
            Finding(
                kind="volatile",
                rule="volatile_key",
                severity="info",
                ids=(),
                message=f"{row['subject']} {row['predicate']}{value} changed value {row['n']} times in the last "
                f"{VOLATILE_DAYS} days ({row['latest']} distinct values)",
                key=f"volatile|{row['subject']}|{row['predicate']}"
                + (f"|{row['value_key']}" if value else ""),
            )
        )


# --- semantic (LLM) --------------------------------------------------------------------------------------


def _semantic(facts: list[_Fact], llm: Any, out: _Collector, errors: list[str]) -> None:
    from memory.llm import LLMFailure

    by_subject: dict[str, list[_Fact]] = defaultdict(list)
    for f in facts:
        by_subject[f.entity].append(f)
    busiest = sorted(by_subject, key=lambda e: (-len(by_subject[e]), e))[:SEMANTIC_SUBJECTS]
    for subject in busiest:
        group = sorted(by_subject[subject], key=lambda f: f.id)[:SEMANTIC_FACTS]
        if len(group) < 2:
            continue
        data = {
            "subject": subject,
            "facts": [
                {"id": f.id, "predicate": f.predicate, "object": f.object, "subject": f.subject}
                for f in group
            ],
        }
        try:
            reply = llm.complete_json(instructions=SEMANTIC_INSTRUCTIONS, data=data, schema=SEMANTIC_SCHEMA)
        except LLMFailure as exc:
            errors.append(f"semantic lint: LLM {exc.code} ({exc}); the semantic check stopped")
            return
        sent = {f.id for f in group}
        for item in reply.data["findings"]:
            ids = tuple(sorted({i for i in item["ids"] if i in sent}))
            if not ids:
                continue
            out.add(
                Finding(
                    kind="semantic",
                    rule="semantic",
                    severity=item["severity"],
                    ids=ids,
                    message=" ".join(str(item["message"]).split())[:300],
                    key=f"semantic|{'|'.join(ids)}",
                )
            )
