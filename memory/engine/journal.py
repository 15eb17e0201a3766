"""The query journal (SPEC B8): every search an agent makes, and the search itself (``agent_search``).

``agent_search`` is what ``memory_search`` calls: ``engine.search`` plus one journal row (agent, normalised
query signature, time, returned ids) written in the same transaction that counts the read of the returned rows.
Its id is the reply's ``query_id``; ``memory_feedback`` refers to it. ``engine.search`` (people's searches in the
dashboard, internal reads) is never journaled. The reply also carries the open knowledge gap of the query's
signature (``gaps``). Journal rows live ``journal_retention_days`` (``[insights]``, default 90); the sweep deletes
older ones, and a query id past retention is ``not_found`` even before the sweep ran.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from memory.config import insights_settings
from memory.models import QueryJournal

from . import common as c
from . import rawsql, text
from .gaps import GapRecord, open_gaps
from .retrieval import search, touch_rows
from .types import InvalidArgument, InvalidTime, NotFound, RetrievalWeights, SearchHit

MAX_SIGNATURE = 255
MAX_QUERY_TEXT = 300
SWEEP_BATCH = 5000
QUERY_ID = re.compile(r"^q_[0-9a-z]{26}$")
# Words that carry no intent of their own: "what is the deploy target?" and "deploy target" are one signature.
STOPWORDS = frozenset(
    """a about an and any are as at be been but by can could did do does find for from get gets give had has
    have how i if in into is it its know me my of on or our please show should so tell than that the their
    them then there these this those to us was we were what when where which who whom why will with would
    you your""".split()
)


def signature(query: str) -> str:
    """The normalised signature of a query: its distinct content words (NFKC, lower case; a CJK run kept
    whole), stop words dropped, sorted, space-joined, at most 255 characters."""
    if not isinstance(query, str):
        return ""
    units = text.tokens(query.replace("\x00", " ")[: text.MAX_QUERY_CHARS])
    words = {unit[0] + "".join(bigram[1:] for bigram in unit[1:]) for unit in units}  # CJK runs rejoined
    kept = sorted(w for w in words if w and w not in STOPWORDS)
    out = " ".join(kept)
    return out[:MAX_SIGNATURE].rstrip()


@dataclass(frozen=True)
class AgentSearch:
    """An agent's search: the hits, the journal id to give feedback on, and the open gap of its signature."""

    hits: list[SearchHit]
    query_id: str
    signature: str
    gaps: list[GapRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": [h.to_dict() for h in self.hits],
            "total": len(self.hits),
            "query_id": self.query_id,
            "gaps": [g.to_dict() for g in self.gaps],
        }


def new_query_id() -> str:
    """An opaque journal id (``q_`` + 26 characters)."""
    return c.new_memory_id().replace("m_", "q_", 1)


def check_at(at: Any) -> datetime:
    """An event time given by the caller (replays, the demo): aware and not in the future; default now."""
    t = c.now()
    when = c.parse_time(at, field="at")
    if when is None:
        return t
    if when > t + timedelta(seconds=1):
        raise InvalidTime("at must not be in the future", field="at")
    return when


def agent_search(
    *,
    agent_id: str,
    query: str,
    limit: int = 10,
    layer: str | None = None,
    tags: Any = None,
    weights: RetrievalWeights | None = None,
    at: datetime | str | None = None,
) -> AgentSearch:
    """The journaled search an agent makes (``memory_search``): ``search`` ranked as for everyone, one journal
    row, and the open gap of the query's signature. ``at`` dates the journal row (default now)."""
    agent_id = c.check_agent_id(agent_id)
    when = check_at(at)
    hits = search(
        agent_id=agent_id, query=query, limit=limit, layer=layer, tags=tags, weights=weights, touch=False
    )
    sig = signature(query)
    qid = new_query_id()
    _journal(agent_id, qid, sig, query, [h.id for h in hits], when, c.now())
    return AgentSearch(hits=hits, query_id=qid, signature=sig, gaps=open_gaps(agent_id, sig))


@c.write_transaction
def _journal(
    agent_id: str, qid: str, sig: str, query: str, ids: list[str], when: datetime, t: datetime
) -> None:
    if ids:
        touch_rows(ids, t)
    rawsql.insert(
        QueryJournal,
        {
            "id": qid,
            "agent_id": agent_id,
            "signature": sig,
            "query": " ".join(query.split())[:MAX_QUERY_TEXT],
            "created_at": when,
            "result_ids": ids,
        },
    )


def retention() -> timedelta:
    return timedelta(days=insights_settings().journal_retention_days)


def journal_entry(*, agent_id: str, query_id: Any, at: datetime | None = None) -> QueryJournal:
    """The agent's journal row ``query_id``; unknown, another agent's and past-retention ids are the same
    ``not_found``. A string that is not shaped like a query id is ``invalid_argument``."""
    if not isinstance(query_id, str) or not QUERY_ID.match(query_id):
        raise InvalidArgument("query_id must be a query_id returned by memory_search", field="query_id")
    t = at or c.now()
    row = QueryJournal.objects.filter(id=query_id, agent_id=agent_id, created_at__gte=t - retention()).first()
    if row is None:
        raise NotFound("no search with that query_id", field="query_id")
    return row


def journal_sweep(*, retention_days: int | None = None, actor: str = "system:journal") -> dict[str, int]:
    """Delete journal rows older than the retention (default ``[insights] journal_retention_days``), in
    batches, one audit event per agent. Snapshots, gaps and feedback are kept. Safe to run twice."""
    actor = c.check_actor(actor)
    days = insights_settings().journal_retention_days if retention_days is None else retention_days
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 3650:
        raise InvalidArgument("retention_days must be an integer from 1 to 3650", field="retention_days")
    t = c.now()
    cutoff = t - timedelta(days=days)
    deleted: dict[str, int] = {}
    while True:
        n = _sweep_batch(cutoff, deleted)
        if n < SWEEP_BATCH:
            break
    for agent_id, n in sorted(deleted.items()):
        _audit_sweep(agent_id, actor, n, days, t)
    return {"deleted": sum(deleted.values()), "agents": len(deleted)}


@c.write_transaction
def _sweep_batch(cutoff: datetime, deleted: dict[str, int]) -> int:
    rows = list(
        QueryJournal.objects.filter(created_at__lt=cutoff)
        .order_by("created_at")
        .values_list("id", "agent_id")[:SWEEP_BATCH]
    )
    if rows:
        QueryJournal.objects.filter(id__in=[r[0] for r in rows]).delete()
    for _, agent_id in rows:
        deleted[agent_id] = deleted.get(agent_id, 0) + 1
    return len(rows)


@c.write_transaction
def _audit_sweep(agent_id: str, actor: str, n: int, days: int, t: datetime) -> None:
    c.audit(
        agent_id=agent_id, actor=actor, action="journal_swept", reason=f"older than {days} days", at=t, rows=n
    )
