"""The dream loop (SPEC B1): one pass over one agent's memory in five isolated phases.

* orient: what changed since the last run (rows, facts, retractions, sessions) and when that was;
* signal: knowledge lint (``lint.py``, cheapest checks first), the contradiction scan (``find_candidates``: up to
  ``Limits.signal_pairs`` candidate pairs, pairs already judged and unchanged left out) and, from
  ``Limits.graph_min_triples`` triples on, the graph's hubs (PageRank over the entity graph) and orphans (entities
  with a single fact);
* reflect: a statistics snapshot and the insights read from it; knowledge gaps come from finders registered with
  ``register_gap_finder`` (the query journal's issue registers one; until then the report says none is);
* consolidate: up to ``Limits.merges`` duplicates (heuristic MERGE) and up to ``Limits.conflicts`` conflicts
  (judged by the LLM when ``[llm]`` is configured, on this run's budget; else by the heuristic), each proposed
  through ``review_propose`` and routed by ``review_policy.route`` (applied at once, or queued; UNSURE and LLM
  failures always queue); lint findings become review items (retractions only on a person's approval);
* prune: orphans (rows derived only from retracted or missing memories) and stale low-value rows (old, unread,
  unimportant episodic notes) are ended with reason ``dream_prune`` (``engine.prune_end``), never deleted.

Each phase runs in its own ``try``: one that fails leaves its error in the report and the next still runs. Each
item is proposed or applied in its own transaction, so a worker killed mid-run leaves nothing half-applied (its
run is later marked abandoned by ``dream_start``). In a dry run (the default mode of a new agent) nothing is
written but the run's report and its proposals, stored as ``dry`` review items. Everything the loop writes goes
through engine functions as ``system:dream``; applied changes carry ``source_event = "dream:<run_id>:<item>"``.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Avg, Count, Q

from memory import engine
from memory.engine.belief import RETRACTED, current_q
from memory.engine.review_policy import ImpactIndex, impact, impact_index, route
from memory.models import DreamRun, Memory, ReviewItem

from .conflicts import MAX_LIMIT as MAX_SCAN
from .conflicts import RULES, Candidate, find_candidates
from .judge import Verdict, judge
from .lint import Finding, lint
from .registry import Registry, active_registry

__all__ = [
    "DREAM_ACTOR",
    "PHASES",
    "PHASE_FUNCS",
    "Limits",
    "PhaseReport",
    "execute",
    "register_gap_finder",
]

log = logging.getLogger("memdesk.dream")

PHASES = engine.DREAM_PHASES
DREAM_ACTOR = "system:dream"
MAX_REPORT_ITEMS = 40
MAX_ERRORS = 20
LLM_STOPPERS = ("timeout", "connection", "budget_exhausted", "not_configured")
LOW_VALUE_IMPORTANCE = 2.0
STALE_DAYS = 180
CHUNK = 500
SCAN_FACTOR = 20  # the scan looks at this many times the candidates it keeps, to sample all rules


@dataclass(frozen=True)
class Limits:
    """How much one run does at most."""

    signal_pairs: int = 300
    conflicts: int = 30
    merges: int = 50
    lint_items: int = 50
    prune: int = 100
    graph_min_triples: int = 50
    hubs: int = 10


@dataclass
class PhaseReport:
    counts: dict[str, Any] = field(default_factory=dict)
    items: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    duration_ms: float = 0.0
    llm_calls: int = 0
    llm_tokens: int = 0

    def item(self, entry: dict[str, Any]) -> None:
        if len(self.items) < MAX_REPORT_ITEMS:
            self.items.append(entry)

    def error(self, message: str) -> None:
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(message[:500])

    def as_dict(self) -> dict[str, Any]:
        return {
            "counts": self.counts,
            "items": self.items,
            "duration_ms": self.duration_ms,
            "errors": self.errors,
            "llm_calls": self.llm_calls,
            "llm_tokens": self.llm_tokens,
        }


@dataclass
class _Run:
    run: engine.DreamRunRecord
    at: datetime
    limits: Limits
    registry: Registry
    registry_error: str
    llm: Any
    budget: Any
    candidates: list[Candidate] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    applied: int = 0
    index: ImpactIndex | None = None
    llm_down: str = ""  # the failure that made this run stop asking the LLM
    entities: int | None = None
    done: int = 0
    total: int = 0

    @property
    def agent_id(self) -> str:
        return self.run.agent_id

    @property
    def dry(self) -> bool:
        return self.run.dry_run

    @property
    def tokens(self) -> int:
        return int(self.budget.prompt_tokens + self.budget.completion_tokens)

    def impact_index(self) -> ImpactIndex:
        if self.index is None:
            self.index = impact_index(self.agent_id)
        return self.index

    def tick(self, *, total: int | None = None) -> None:
        """Progress (and the heartbeat): one more item done, or a new total for the phase."""
        if total is not None:
            self.done, self.total = 0, total
        else:
            self.done += 1
        engine.dream_progress(run_id=self.run.id, done=self.done, total=self.total)


# --- running a pass --------------------------------------------------------------------------------------


def execute(*, run_id: int, limits: Limits | None = None) -> engine.DreamRunRecord:
    """Execute a started (queued) run to the end and return it finished. A run that is not queued any more
    (taken by another worker, finished, abandoned) is returned as it is: safe to call twice."""
    claimed = engine.dream_claim(run_id=run_id, first_phase=PHASES[0])
    if claimed is None:
        return engine.DreamRunRecord.of(DreamRun.objects.get(id=run_id))
    load = active_registry()
    from memory.llm import Budget, client_from_config

    llm = client_from_config()
    ctx = _Run(
        run=claimed,
        at=claimed.started_at,
        limits=limits or Limits(),
        registry=load.registry,
        registry_error=load.error,
        llm=llm,
        budget=llm.budget if llm is not None else Budget(max_calls=0),
    )
    error = ""
    try:
        for name in PHASES:
            if not _phase(ctx, name):
                break  # the run was abandoned meanwhile: stop writing
    except Exception as exc:  # the loop's own bookkeeping failed (phases never get here)
        log.exception("dream run %s failed", run_id)
        error = f"{type(exc).__name__}: {exc}"
    return engine.dream_finish(run_id=run_id, error=error)


@contextmanager
def _isolated() -> Iterator[None]:
    """Inside a caller's transaction (tests, a command's atomic block) a phase gets a savepoint, so a phase that
    fails leaves that transaction usable; outside one (a worker) each item commits on its own."""
    with transaction.atomic() if connection.in_atomic_block else nullcontext():
        yield


def _phase(ctx: _Run, name: str) -> bool:
    report = PhaseReport()
    if not engine.dream_progress(run_id=ctx.run.id, phase=name, done=0, total=0):
        return False
    ctx.done = ctx.total = 0
    calls, tokens = ctx.budget.calls, ctx.tokens
    started = time.perf_counter()
    try:
        with _isolated():
            PHASE_FUNCS[name](ctx, report)
    except Exception as exc:
        log.exception("dream run %s: phase %s failed", ctx.run.id, name)
        report.error(f"{name} failed: {type(exc).__name__}: {exc}")
    report.duration_ms = round((time.perf_counter() - started) * 1000, 1)
    report.llm_calls = ctx.budget.calls - calls
    report.llm_tokens = ctx.tokens - tokens
    return engine.dream_phase_report(
        run_id=ctx.run.id,
        phase=name,
        report=report.as_dict(),
        llm_calls=ctx.budget.calls,
        llm_tokens=ctx.tokens,
    )


def _step(report: PhaseReport, what: str, fn: Callable[[], None]) -> None:
    """One part of a phase; its failure is reported and the rest of the phase goes on."""
    try:
        with _isolated():
            fn()
    except Exception as exc:
        log.exception("dream: %s failed", what)
        report.error(f"{what} failed: {type(exc).__name__}: {exc}")


# --- orient ----------------------------------------------------------------------------------------------


def orient(ctx: _Run, report: PhaseReport) -> None:
    gate = engine.dream_gate(agent_id=ctx.agent_id, at=ctx.at)
    since = gate.last_dream_at
    rows = Memory.objects.filter(agent_id=ctx.agent_id)
    new = rows.filter(ingested_at__gt=since) if since else rows
    changed = new.aggregate(
        rows=Count("id"),
        facts=Count("id", filter=Q(subject__isnull=False, predicate__isnull=False)),
    )
    retracted = rows.filter(RETRACTED)
    if since:
        retracted = retracted.filter(invalidated_at__gt=since)
    report.counts = {
        "last_dream_at": since.isoformat() if since else None,
        "hours_since": gate.hours_since,
        "sessions_since": gate.sessions_since,
        "new_rows": changed["rows"],
        "new_facts": changed["facts"],
        "retracted_since": retracted.count(),
        "current": rows.filter(current_q(ctx.at)).count(),
        "mode": "dry_run" if ctx.dry else "apply",
        "forced": ctx.run.force,
        "llm": "configured" if ctx.llm is not None else "off",
    }


# --- signal ----------------------------------------------------------------------------------------------


def signal(ctx: _Run, report: PhaseReport) -> None:
    if ctx.registry_error:
        report.error(f"registry: {ctx.registry_error} (the shipped registry is used)")
    _step(report, "lint", lambda: _lint(ctx, report))
    _step(report, "contradiction scan", lambda: _scan(ctx, report))
    _step(report, "graph", lambda: _graph(ctx, report))


def _lint(ctx: _Run, report: PhaseReport) -> None:
    result = lint(agent_id=ctx.agent_id, registry=ctx.registry, llm=ctx.llm, at=ctx.at)
    ctx.findings = result.findings
    for message in result.errors:
        report.error(message)
    report.counts["lint_findings"] = sum(result.counts.values())
    report.counts["lint"] = result.counts
    for f in result.findings[:10]:
        report.item({"type": "lint", **f.as_dict()})


def _judged_pairs(ctx: _Run) -> list[tuple[str, str]]:
    """Pairs with a conflict item whose rows are unchanged since (a changed pair may be judged again). Dry items
    count in a dry run only (an apply run turns them into real items)."""
    items = ReviewItem.objects.filter(agent_id=ctx.agent_id, kind="conflict")
    if not ctx.dry:
        items = items.exclude(status=ReviewItem.DRY)
    pairs = [
        (ids, state)
        for ids, state in items.values_list("memory_ids", "state")
        if isinstance(ids, list) and len(ids) == 2
    ]
    wanted = sorted({i for ids, _ in pairs for i in ids if isinstance(i, str)})
    rows: dict[str, Memory] = {}
    for lo in range(0, len(wanted), CHUNK):
        for m in Memory.objects.filter(agent_id=ctx.agent_id, id__in=wanted[lo : lo + CHUNK]):
            rows[m.id] = m
    out = []
    for ids, state in pairs:
        found = [rows[i] for i in ids if i in rows]
        if len(found) == 2 and (not state or engine.state_fingerprint(found) == state):
            out.append((ids[0], ids[1]))
    return out


def _scan(ctx: _Run, report: PhaseReport) -> None:
    """Candidates of every rule, then a sample of ``signal_pairs`` taken in turn from each rule, so a backlog of
    one rule (hundreds of respelt values) never hides the conflicts of the others."""
    skip = _judged_pairs(ctx)
    limit = min(MAX_SCAN, ctx.limits.signal_pairs * SCAN_FACTOR)
    # facts (rules a-c) and plain memories (rule d) are scanned apart: each reads only its own rows, and a
    # full fact scan cannot crowd out the plain memories
    facts, plain = (
        find_candidates(
            agent_id=ctx.agent_id, limit=limit, rules=rules, registry=ctx.registry, at=ctx.at, skip_pairs=skip
        )
        for rules in (("a", "b", "c"), ("d",))
    )
    found = facts.candidates + plain.candidates
    ctx.candidates = _sample(found, ctx.limits.signal_pairs)
    report.counts.update(
        candidates=len(ctx.candidates),
        candidates_by_rule={rule: sum(1 for c in ctx.candidates if c.rule == rule) for rule in RULES},
        candidates_found=len(found),
        more_candidates=facts.truncated or plain.truncated or len(found) > len(ctx.candidates),
        already_judged=len(skip),
        facts_scanned=facts.facts_scanned,
        plain_scanned=plain.plain_scanned,
        scan_ms=round(facts.duration_ms + plain.duration_ms, 1),
    )
    for c in ctx.candidates[:10]:
        report.item({"type": "candidate", "rule": c.rule, "ids": [c.old.id, c.new.id], "reason": c.reason})


def _sample(candidates: list[Candidate], n: int) -> list[Candidate]:
    """Up to ``n`` candidates, one of each rule in turn (each rule's own order kept)."""
    queues = {rule: [c for c in candidates if c.rule == rule] for rule in RULES}
    out: list[Candidate] = []
    depth = 0
    while len(out) < n and any(len(q) > depth for q in queues.values()):
        for rule in RULES:
            if depth < len(queues[rule]) and len(out) < n:
                out.append(queues[rule][depth])
        depth += 1
    return out


def _graph(ctx: _Run, report: PhaseReport) -> None:
    import numpy as np

    from memory.engine.graph import agent_graph, ppr_exact

    graph = agent_graph(agent_id=ctx.agent_id, at=ctx.at)
    report.counts["triples"] = graph.triples
    ctx.entities = graph.n_entities
    if graph.triples < ctx.limits.graph_min_triples or graph.n_entities == 0:
        report.counts["graph"] = f"skipped: fewer than {ctx.limits.graph_min_triples} triples"
        return
    n = graph.n_entities
    scores = ppr_exact(graph, list(range(n)))[:n]
    degree = np.diff(graph.rows.indptr)[:n]
    top = np.argsort(-scores, kind="stable")[: ctx.limits.hubs]
    hubs = [
        {
            "type": "hub",
            "entity": graph.entities[i],
            "score": round(float(scores[i]), 6),
            "facts": int(degree[i]),
        }
        for i in top
    ]
    single = np.flatnonzero(degree == 1)
    report.counts.update(entities=n, hubs=len(hubs), orphans=int(single.size))
    for hub in hubs:
        report.item(hub)
    lowest: list[int] = single[np.argsort(scores[single], kind="stable")[:5]].tolist() if single.size else []
    for i in lowest:
        report.item({"type": "orphan", "entity": graph.entities[int(i)], "facts": 1})


# --- reflect ---------------------------------------------------------------------------------------------

GapFinder = Callable[[str], list[dict[str, Any]]]
_GAP_FINDERS: list[GapFinder] = []


def _discover(ctx: _Run, report: PhaseReport) -> None:
    """Connections nobody wrote down (SPEC B4, B5): entity edges, communities and new discovery inbox items. A
    dry run leaves the inbox and the edges as they are."""
    if ctx.dry:
        report.counts["discovery"] = "skipped: dry run"
        return
    from .discovery import discover

    outcome = discover(ctx.agent_id, actor=DREAM_ACTOR, dream_run_id=ctx.run.id)
    report.counts["discovery"] = {"new_items": len(outcome.items), **_brief(outcome.report)}
    for item in outcome.items[:10]:
        report.item({"type": "discovery", "kind": item.kind, "id": item.id, "text": item.explanation})


def _attitudes(ctx: _Run, report: PhaseReport) -> None:
    """SPEC B6: consolidated mistake rules proposed as attitudes (every change waits for review)."""
    from .attitudes import reflect_attitudes

    done = reflect_attitudes(agent_id=ctx.agent_id, run_id=ctx.run.id, dry=ctx.dry, actor=DREAM_ACTOR)
    report.counts["attitudes"] = dict(Counter(p.outcome for p in done))
    for proposal in done:
        if proposal.outcome in ("proposed", "dry"):
            report.item({"type": "attitude", "outcome": proposal.outcome, "category": proposal.category})


def _brief(report: dict[str, Any]) -> dict[str, Any]:
    """The discovery run's counts, without its long lists (the inbox holds the items)."""
    return {
        k: v for k, v in report.items() if isinstance(v, int | float | str) or k in ("missing", "weights")
    }


def register_gap_finder(finder: GapFinder) -> None:
    """Knowledge gaps (SPEC B1 reflect, B8) are read from the query journal, which another module owns: it
    registers its finder here (``finder(agent_id) -> [{"signature", "failures", ...}]``) and reflect reports what
    it returns."""
    if finder not in _GAP_FINDERS:
        _GAP_FINDERS.append(finder)


def reflect(ctx: _Run, report: PhaseReport) -> None:
    current = Memory.objects.filter(current_q(ctx.at), agent_id=ctx.agent_id)
    is_fact = Q(subject__isnull=False, predicate__isnull=False)
    totals = current.aggregate(
        rows=Count("id"), facts=Count("id", filter=is_fact), confidence=Avg("confidence")
    )
    layers = dict(current.values_list("layer").annotate(n=Count("id")).order_by())
    predicates = list(
        current.filter(is_fact)
        .values_list("predicate")
        .annotate(n=Count("id"))
        .order_by("-n", "predicate")[:10]
    )
    origins = list(current.values_list("origin").annotate(n=Count("id")).order_by("-n", "origin")[:10])
    pending = ReviewItem.objects.filter(agent_id=ctx.agent_id, status=ReviewItem.PENDING).count()
    rows = totals["rows"] or 0
    report.counts = {
        "current": rows,
        "facts": totals["facts"] or 0,
        "plain": rows - (totals["facts"] or 0),
        "by_layer": layers,
        "average_confidence": round(float(totals["confidence"] or 0), 3),
        "entities": ctx.entities,
        "pending_review": pending,
        "lint_findings": len(ctx.findings),
        "knowledge_gaps": None,
    }
    for text in _insights(rows, totals["facts"] or 0, predicates, origins, pending, ctx):
        report.item({"type": "insight", "text": text})
    report.counts["top_predicates"] = dict(predicates)
    report.counts["top_origins"] = dict(origins)
    _step(report, "discovery", lambda: _discover(ctx, report))
    _step(report, "attitudes", lambda: _attitudes(ctx, report))
    if not _GAP_FINDERS:
        report.counts["knowledge_gaps"] = "no gap finder registered"
        return
    gaps: list[dict[str, Any]] = []
    for finder in _GAP_FINDERS:
        gaps.extend(finder(ctx.agent_id))
    report.counts["knowledge_gaps"] = len(gaps)
    for gap in gaps[:10]:
        report.item({"type": "gap", **gap})


def _insights(
    rows: int,
    facts: int,
    predicates: list[tuple[str, int]],
    origins: list[tuple[str, int]],
    pending: int,
    ctx: _Run,
) -> list[str]:
    if not rows:
        return ["no current memories: nothing to reflect on"]
    out = [f"{rows} current memories, {facts} of them facts ({100 * facts // rows}%)"]
    if predicates:
        name, n = predicates[0]
        out.append(f"the most used predicate is {name} ({n} current facts)")
    if origins:
        name, n = origins[0]
        out.append(f"{100 * n // rows}% of current memories come from {name}")
    volatile = sum(1 for f in ctx.findings if f.rule == "volatile_key")
    if volatile:
        out.append(f"{volatile} key(s) changed value more than 5 times in 30 days")
    if pending:
        out.append(f"{pending} review item(s) wait for a person")
    return out


# --- consolidate -----------------------------------------------------------------------------------------


def consolidate(ctx: _Run, report: PhaseReport) -> None:
    plan = _plan(ctx, report)
    lint_items = [f for f in ctx.findings if f.severity != "info"][: ctx.limits.lint_items]
    ctx.tick(total=len(plan) + len(lint_items))
    outcomes: Counter[str] = Counter()
    for candidate, verdict, heuristic in plan:
        outcomes[_attempt(report, _conflict, ctx, candidate, verdict, heuristic, report)] += 1
        ctx.tick()
    for finding in lint_items:
        outcomes[_attempt(report, _lint_item, ctx, finding, report)] += 1
        ctx.tick()
    report.counts.update(
        judged=len(plan),
        merges=sum(1 for _, v, _ in plan if v.verdict == "MERGE"),
        conflicts=sum(1 for _, v, _ in plan if v.verdict != "MERGE"),
        lint_items=len(lint_items),
        outcomes=dict(outcomes),
        applied=outcomes["applied"],
        queued=outcomes["queued"],
        dry=outcomes["dry"],
    )


def _attempt(report: PhaseReport, fn: Callable[..., str], *args: Any) -> str:
    """One item: its outcome, or ``"error"`` with the engine's refusal in the report (the next item goes on)."""
    try:
        return fn(*args)
    except engine.EngineError as exc:
        report.error(f"{exc.code}: {exc.message}")
        return "error"


def _plan(ctx: _Run, report: PhaseReport) -> list[tuple[Candidate, Verdict, Verdict]]:
    """Judge candidates in order until the merge and conflict budgets are spent; one change per row per run."""
    plan: list[tuple[Candidate, Verdict, Verdict]] = []
    merges = conflicts = deferred = 0
    failures: Counter[str] = Counter()
    limits = ctx.limits
    for candidate in ctx.candidates:
        if merges >= limits.merges and conflicts >= limits.conflicts:
            break
        ids = {candidate.old.id, candidate.new.id}
        if ids & ctx.used:
            deferred += 1
            continue
        heuristic = judge(candidate.old, candidate.new, candidate.context, registry=ctx.registry)
        if heuristic.verdict == "MERGE":
            if merges >= limits.merges:
                continue
            merges += 1
            verdict = heuristic
        else:
            if conflicts >= limits.conflicts:
                continue
            conflicts += 1
            verdict = heuristic
            if ctx.llm is not None:
                verdict = judge(
                    candidate.old, candidate.new, candidate.context, llm=ctx.llm, registry=ctx.registry
                )
                if verdict.fallback and verdict.error in LLM_STOPPERS:
                    report.error(f"LLM {verdict.error}: the LLM is not asked again in this run")
                    ctx.llm, ctx.llm_down = None, verdict.error
            elif ctx.llm_down:  # configured but given up on in this run: as if it had failed again
                verdict = replace(
                    heuristic,
                    reason=f"LLM unavailable ({ctx.llm_down}); heuristic: {heuristic.reason}",
                    needs_review=True,
                    fallback=True,
                    error=ctx.llm_down,
                )
            if verdict.fallback:
                failures[verdict.error] += 1
        ctx.used |= ids
        plan.append((candidate, verdict, heuristic))
    for code, n in sorted(failures.items()):
        report.error(f"LLM {code} on {n} pair(s): the heuristic verdict waits for review")
    report.counts["deferred"] = deferred
    return plan


def _short(text: str, n: int = 80) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _fingerprint(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]


def _conflict(
    ctx: _Run, candidate: Candidate, verdict: Verdict, heuristic: Verdict, report: PhaseReport
) -> str:
    rows = {
        m.id: m
        for m in Memory.objects.filter(agent_id=ctx.agent_id, id__in=[candidate.old.id, candidate.new.id])
    }
    if len(rows) != 2:
        return "gone"
    old, new = rows[candidate.old.id], rows[candidate.new.id]
    state = engine.state_fingerprint([old, new])
    ended = {"MERGE": [new], "SUPERSEDE": [old]}.get(verdict.verdict, [])
    size = impact(ctx.impact_index(), ended)
    disputed = verdict.judge != "heuristic" and heuristic.verdict not in (verdict.verdict, "UNSURE")
    verdict_type = f"conflict:{verdict.verdict}"
    if verdict.needs_review:
        why = (
            "UNSURE: a person decides" if verdict.verdict == "UNSURE" else "the LLM failed: a person decides"
        )
        auto, reason = False, why
    else:
        routing = route(
            kind="conflict",
            verdict_type=verdict_type,
            confidence=verdict.confidence,
            impact=size,
            applied_in_run=ctx.applied,
            disputed=disputed,
        )
        auto, reason = routing.auto_apply, routing.why
    proposal = engine.Proposal(
        kind="conflict",
        fingerprint=_fingerprint("conflict", candidate.rule, old.id, new.id, state),
        title=f"{verdict.verdict}: {_short(old.content, 60)} / {_short(new.content, 60)}",
        payload={
            "action": {"verdict": verdict.verdict, "old_id": old.id, "new_id": new.id},
            "old": engine.side_of(old),
            "new": engine.side_of(new),
            "rule": candidate.rule,
            "judge_reason": verdict.reason,
            "candidate_reason": candidate.reason,
            "judge_rule": verdict.rule,
            "heuristic": {"verdict": heuristic.verdict, "confidence": heuristic.confidence},
            "escalated": verdict.escalated,
            "fallback": verdict.fallback,
            "llm_error": verdict.error,
            "routing": reason,
        },
        memory_ids=[old.id, new.id],
        confidence=verdict.confidence,
        impact=size,
        reason=verdict.reason,
        judge=verdict.judge,
        state=state,
        verdict_type=verdict_type,
    )
    outcome = _propose(ctx, proposal, auto)
    report.item(
        {
            "type": "conflict",
            "verdict": verdict.verdict,
            "confidence": verdict.confidence,
            "ids": [old.id, new.id],
            "outcome": outcome,
            "routing": reason,
            "title": proposal.title,
        }
    )
    return outcome


def _lint_item(ctx: _Run, finding: Finding, report: PhaseReport) -> str:
    rows = list(Memory.objects.filter(agent_id=ctx.agent_id, id__in=list(finding.ids)))
    state = engine.state_fingerprint(rows) if rows else ""
    retract = finding.fix.get("action") == "retract"
    why = (
        "a retraction is high-impact: flag, review, commit on approval"
        if retract
        else "no automatic fix: a person decides"
    )
    proposal = engine.Proposal(
        kind="lint",
        fingerprint=_fingerprint("lint", finding.key, state),
        title=f"{finding.rule}: {_short(finding.message, 200)}",
        payload={
            "fix": dict(finding.fix),
            "finding": finding.message,
            "rule": finding.rule,
            "facts": [engine.side_of(m) for m in rows[:5]],
            "detail": finding.as_dict(),
            "routing": why,
        },
        memory_ids=[m.id for m in rows],
        confidence=finding.confidence,
        impact=impact(ctx.impact_index(), rows if retract else []),
        reason=finding.message,
        judge="lint",
        state=state,
        verdict_type=f"lint:{finding.fix.get('action', 'none')}",
    )
    outcome = _propose(ctx, proposal, False)
    report.item({"type": "lint", "rule": finding.rule, "ids": list(finding.ids), "outcome": outcome})
    return outcome


def _propose(ctx: _Run, proposal: engine.Proposal, auto_apply: bool) -> str:
    result = engine.review_propose(
        agent_id=ctx.agent_id,
        proposal=proposal,
        run_id=ctx.run.id,
        dry=ctx.dry,
        auto_apply=auto_apply and not ctx.dry,
        actor=DREAM_ACTOR,
    )
    if result.item is None:
        return "already_proposed"
    if result.applied:
        ctx.applied += 1
        return "applied"
    return {"stale": "stale", "dry": "dry"}.get(result.item.status, "queued")


# --- prune -----------------------------------------------------------------------------------------------


def prune(ctx: _Run, report: PhaseReport) -> None:
    orphans = _orphans(ctx)
    stale = _stale(ctx, exclude=set(orphans))
    cited = ctx.impact_index().cited
    chosen = [(i, "orphan") for i in orphans] + [(i, "stale") for i in stale]
    chosen = [(i, why) for i, why in chosen if i not in ctx.used and not cited.get(i)][: ctx.limits.prune]
    report.counts.update(orphans=len(orphans), stale=len(stale), chosen=len(chosen))
    if ctx.dry:
        report.counts["ended"] = 0
        for memory_id, why in chosen:
            report.item({"type": "prune", "id": memory_id, "why": why, "outcome": "dry"})
        return
    ctx.tick(total=len(chosen))
    ended = 0
    for memory_id, why in chosen:
        reason = (
            "derived only from retracted or missing memories"
            if why == "orphan"
            else f"unread episodic note of importance <= {LOW_VALUE_IMPORTANCE:g}, older than {STALE_DAYS} days"
        )
        try:
            done = engine.prune_end(
                agent_id=ctx.agent_id,
                memory_id=memory_id,
                why=f"dream_prune: {reason}",
                source_event=f"dream:{ctx.run.id}:{memory_id}",
                actor=DREAM_ACTOR,
            )
        except engine.EngineError as exc:
            report.error(f"{memory_id}: {exc.code}: {exc.message}")
            done = False
        ended += int(done)
        ctx.used.add(memory_id)
        report.item({"type": "prune", "id": memory_id, "why": why, "outcome": "ended" if done else "skipped"})
        ctx.tick()
    report.counts["ended"] = ended


def _not_recently_read(t: datetime) -> Q:
    """Rows prune may end: not read back lately (SPEC B9; the rule is the engine's ``prune_protected_q``)."""
    return ~engine.prune_protected_q(t)


def _orphans(ctx: _Run) -> list[str]:
    """Current rows whose every ``derived_from`` source is retracted or missing."""
    derived = (
        Memory.objects.filter(current_q(ctx.at), _not_recently_read(ctx.at), agent_id=ctx.agent_id)
        .exclude(derived_from=[])
        .values_list("id", "derived_from")
    )
    sources: dict[str, list[str]] = {}
    for row_id, named in derived.iterator(chunk_size=5_000):
        if isinstance(named, list):
            ids = [s for s in named if isinstance(s, str) and s]
            if ids:
                sources[row_id] = ids
    wanted = sorted({s for ids in sources.values() for s in ids})
    alive: set[str] = set()
    for lo in range(0, len(wanted), CHUNK):
        alive |= set(
            Memory.objects.filter(agent_id=ctx.agent_id, id__in=wanted[lo : lo + CHUNK])
            .exclude(RETRACTED)
            .values_list("id", flat=True)
        )
    return sorted(row_id for row_id, ids in sources.items() if not any(s in alive for s in ids))


def _stale(ctx: _Run, *, exclude: set[str]) -> list[str]:
    rows = (
        Memory.objects.filter(current_q(ctx.at), _not_recently_read(ctx.at), agent_id=ctx.agent_id)
        .filter(Q(subject__isnull=True) | Q(subject=""), layer="episodic", access_count=0)
        .filter(importance__lte=LOW_VALUE_IMPORTANCE, timestamp__lt=ctx.at - timedelta(days=STALE_DAYS))
        .order_by("timestamp", "id")
        .values_list("id", flat=True)[: ctx.limits.prune + len(exclude)]
    )
    return [i for i in rows if i not in exclude]


PHASE_FUNCS: dict[str, Callable[[_Run, PhaseReport], None]] = {
    "orient": orient,
    "signal": signal,
    "reflect": reflect,
    "consolidate": consolidate,
    "prune": prune,
}
