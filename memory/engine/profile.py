"""The interest profile (SPEC B8): what an agent asked about and used, over 7, 30 or 90 days, and its daily
snapshot with the delta against the day before.

A profile reads the query journal of the window (the newest ``MAX_ROWS`` searches):

* **intents**: query signatures grouped into clusters (a signature joins the first, larger cluster whose
  representative shares at least half its words, Jaccard ≥ 0.5), largest first, each labelled by the latest
  query of its representative signature;
* **entities**: the agent's graph entities by Personalized-PageRank centrality, seeded by the entities the
  window's queries name (weighted by how often they were asked; with no entity named, uniform over all
  entities), the top one scoring 1.0;
* **memories**: the memories the window's searches returned most often.

Snapshots (``interest_snapshots``, one per agent and UTC day) are written by the daily job and kept apart from
pruning: the journal sweep never touches them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import numpy as np

from memory.models import InterestSnapshot, Memory, QueryJournal

from . import common as c
from . import graph
from .types import InvalidArgument, iso

WINDOWS = (7, 30, 90)
MAX_ROWS = 20_000
MAX_SIGNATURES = 300
TOP = 10
CLUSTER_JACCARD = 0.5
PPR_ITERATIONS = 20
PPR_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Intent:
    label: str  # the latest query of the representative signature
    signature: str
    count: int
    signatures: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EntityScore:
    entity: str
    score: float


@dataclass(frozen=True)
class MemoryUse:
    id: str
    uses: int
    content: str


@dataclass(frozen=True)
class Profile:
    agent_id: str
    days: int
    since: datetime
    until: datetime
    queries: int
    intents: list[Intent]
    entities: list[EntityScore]
    memories: list[MemoryUse]

    def to_dict(self) -> dict[str, Any]:
        return {
            "days": self.days,
            "since": iso(self.since),
            "until": iso(self.until),
            "queries": self.queries,
            "intents": [
                {"label": i.label, "signature": i.signature, "count": i.count, "signatures": i.signatures}
                for i in self.intents
            ],
            "entities": [{"entity": e.entity, "score": round(e.score, 6)} for e in self.entities],
            "memories": [{"id": m.id, "uses": m.uses, "content": m.content} for m in self.memories],
        }


def profile(*, agent_id: str, days: int, at: datetime | None = None) -> Profile:
    """The agent's interest profile over the last ``days`` days (1 to 365; the pages show 7, 30 and 90)."""
    agent_id = c.check_agent_id(agent_id)
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 365:
        raise InvalidArgument("days must be an integer from 1 to 365", field="days")
    until = at or c.now()
    return _profile(agent_id, until - timedelta(days=days), until, days)


def _profile(agent_id: str, since: datetime, until: datetime, days: int) -> Profile:
    rows = list(
        QueryJournal.objects.filter(agent_id=agent_id, created_at__gte=since, created_at__lt=until)
        .order_by("-created_at", "-id")
        .values_list("signature", "query", "result_ids")[:MAX_ROWS]
    )
    sigs: Counter[str] = Counter()
    latest: dict[str, str] = {}
    used: Counter[str] = Counter()
    for sig, query, ids in rows:
        if sig:
            sigs[sig] += 1
            latest.setdefault(sig, query)
        used.update(i for i in (ids or []) if isinstance(i, str))
    intents = _intents(sigs, latest)
    asked = Counter({latest[s]: n for s, n in sigs.most_common(MAX_SIGNATURES)})
    return Profile(
        agent_id=agent_id,
        days=days,
        since=since,
        until=until,
        queries=len(rows),
        intents=intents,
        entities=_entities(agent_id, asked, until),
        memories=_memories(agent_id, used),
    )


def _intents(sigs: Counter[str], latest: dict[str, str]) -> list[Intent]:
    clusters: list[dict[str, Any]] = []
    for sig, n in sigs.most_common(MAX_SIGNATURES):
        words = set(sig.split())
        for cl in clusters:
            if len(words & cl["words"]) / max(1, len(words | cl["words"])) >= CLUSTER_JACCARD:
                cl["count"] += n
                cl["members"].append(sig)
                break
        else:
            clusters.append({"rep": sig, "words": words, "count": n, "members": [sig]})
    clusters.sort(key=lambda cl: (-cl["count"], cl["rep"]))
    return [Intent(latest[cl["rep"]], cl["rep"], cl["count"], cl["members"]) for cl in clusters[:TOP]]


def _entities(agent_id: str, asked: Counter[str], at: datetime) -> list[EntityScore]:
    g = graph.agent_graph(agent_id=agent_id, at=at)
    if g.triples == 0 or g.n_entities == 0:
        return []
    s = np.zeros(g.size, dtype=np.float64)
    for query, n in asked.items():
        seeds = g.seeds(query)
        for node in seeds:
            s[node] += n / len(seeds)
    if not s.any():
        s[: g.n_entities] = 1.0
    s /= s.sum()
    p, base = s.copy(), (1.0 - graph.DAMPING) * s
    for _ in range(PPR_ITERATIONS):
        nxt = base + graph.DAMPING * (g.walk @ p)
        change = float(np.abs(nxt - p).sum())
        p = nxt
        if change < PPR_TOLERANCE:
            break
    ent = p[: g.n_entities]
    order = sorted(range(g.n_entities), key=lambda i: (-ent[i], g.entities[i]))[:TOP]
    peak = float(ent[order[0]]) if order else 0.0
    return [EntityScore(g.entities[i], float(ent[i]) / peak if peak else 0.0) for i in order if ent[i] > 0]


def _memories(agent_id: str, used: Counter[str]) -> list[MemoryUse]:
    top = used.most_common(TOP)
    rows = dict(
        Memory.objects.filter(id__in=[i for i, _ in top], agent_id=agent_id).values_list("id", "content")
    )
    return [MemoryUse(i, n, " ".join(rows[i].split())[:200]) for i, n in top if i in rows]


# --- daily snapshots -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SnapshotRecord:
    agent_id: str
    day: date
    created_at: datetime
    profile: dict[str, Any]
    delta: dict[str, Any]


def _day(value: Any) -> date:
    if value is None:
        return c.now().astimezone(UTC).date()
    if isinstance(value, datetime):
        raise InvalidArgument("day must be a date, not a datetime", field="day")
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise InvalidArgument("day must be a date (YYYY-MM-DD)", field="day")


def _delta(before: dict[str, Any] | None, now: dict[str, Any], baseline: date | None) -> dict[str, Any]:
    """What changed since the day before: query count, intents and entities that came and went."""
    before = before or {}
    old_intents = {i["signature"]: i["label"] for i in before.get("intents", [])}
    new_intents = {i["signature"]: i["label"] for i in now.get("intents", [])}
    old_entities = [e["entity"] for e in before.get("entities", [])]
    new_entities = [e["entity"] for e in now.get("entities", [])]
    return {
        "baseline": baseline.isoformat() if baseline else None,
        "queries": now.get("queries", 0) - before.get("queries", 0),
        "intents_new": [label for sig, label in new_intents.items() if sig not in old_intents],
        "intents_gone": [label for sig, label in old_intents.items() if sig not in new_intents],
        "entities_new": [e for e in new_entities if e not in old_entities],
        "entities_gone": [e for e in old_entities if e not in new_entities],
    }


@c.write_transaction
def profile_snapshot(*, agent_id: str, day: Any = None, actor: str = "system:insights") -> SnapshotRecord:
    """The profile of one UTC day (default today) stored with its delta against the day before; a second run
    for the same day replaces it (the job is safe to run twice)."""
    agent_id = c.check_agent_id(agent_id)
    actor = c.check_actor(actor)
    d = _day(day)
    since = datetime.combine(d, time(0), tzinfo=UTC)
    t = c.now()
    current = _profile(agent_id, since, since + timedelta(days=1), 1).to_dict()
    previous = InterestSnapshot.objects.filter(agent_id=agent_id, day=d - timedelta(days=1)).first()
    delta = _delta(previous.profile if previous else None, current, previous.day if previous else None)
    InterestSnapshot.objects.update_or_create(
        agent_id=agent_id, day=d, defaults={"created_at": t, "profile": current, "delta": delta}
    )
    c.audit(
        agent_id=agent_id,
        actor=actor,
        action="interest_snapshot",
        reason=d.isoformat(),
        at=t,
        queries=current["queries"],
        delta_queries=delta["queries"],
    )
    return SnapshotRecord(agent_id, d, t, current, delta)


def interest_snapshots(*, agent_id: str, limit: int = 30) -> list[SnapshotRecord]:
    """The agent's daily snapshots, newest day first."""
    agent_id = c.check_agent_id(agent_id)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 366:
        raise InvalidArgument("limit must be an integer from 1 to 366", field="limit")
    rows = InterestSnapshot.objects.filter(agent_id=agent_id).order_by("-day")[:limit]
    return [SnapshotRecord(r.agent_id, r.day, r.created_at, r.profile, r.delta) for r in rows]
