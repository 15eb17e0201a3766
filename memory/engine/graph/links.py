"""Entity links of plain memories (issue 17): a conversation turn has no triple, so the fact graph (G1) never
reaches it. Each plain memory is linked, when it is written, to the names it mentions, found by a cheap
offline extraction (``extract``):

* the agent's known entities and aliases (the names of its fact graph, matched as search seeds are, G2);
* capitalised spans of Latin text ("Luna", "Golden Gate Park"), except a lone capitalised word opening a
  sentence and function words ("The", "What");
* CJK names where the text marks them: a span in 《》「」『』, and a name before a title (王老师, 李医生).

Links are rows of ``memory_entity`` (normalised names, not alias-resolved). Search (``link_scores``) walks
turn → entity → turn: the mass of the query's own names and of the top full-text hits flows to their
entities (alias-resolved at read time, so a merge applies to old links at once), and from each entity to the
current memories that mention it, split evenly among them (a name on many turns says little about each). A
link is read only while its memory is current (``belief.current_sql``): a retracted, quarantined or expired
memory links nothing, and a restored one links again; erasure deletes the rows. Another agent's links are never
read (every statement is keyed on the agent).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db import connection

from memory.models import Memory

from .. import common as c
from .. import rawsql
from ..belief import current_sql
from ..text import STOPWORDS
from .names import normalize_entity

MAX_LINKS = 16  # names per memory
MAX_NAME_CHARS = 64
MAX_SCAN_CHARS = 20_000  # a memory's text is scanned up to here
# a name on more of the agent's memories than this is too common to say which turn is meant (the walk would
# spread its mass thinly anyway); it is left out of the walk, so a search never reads thousands of links
MAX_ENTITY_MEMORIES = 200
MAX_WALK_NAMES = 48
HIT_SEEDS = 5  # the top full-text hits whose entities seed the walk

_UPPER = "A-ZÀ-ÖØ-Þ"
_WORD = f"[{_UPPER}][A-Za-zÀ-ÖØ-öø-ÿ0-9'’&-]*"
# Capitalised words joined by single spaces; not glued to a Latin letter or digit before it.
_CAPS = re.compile(f"(?<![A-Za-zÀ-ÿ0-9_]){_WORD}(?: {_WORD}){{0,4}}")
_SENTENCE_END = frozenset('.!?:;\n"“”()[]*#>-。！？')
_POSSESSIVE = re.compile(r"['’]s$")
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_BRACKETED = re.compile("[《「『]([^》」』\\n]{1,12})[》」』]")
_TITLED = re.compile(f"([{_CJK}]{{1,2}}(?:老师|医生|先生|女士|小姐|同学|教授|经理|阿姨|叔叔))")
# capitalised words that name no one: greetings, answers, days and months (dates are not entities here)
NOT_NAMES = frozenset(
    "i i'm i've i'll i'd im ok okay yes no hi hello hey thanks thank sure great yeah oh well please sorry also"
    " however here let lets let's mr mrs ms dr st yesterday today tomorrow tonight maybe actually just now"
    " monday tuesday wednesday thursday friday saturday sunday"
    " january february march april may june july august september october november december".split()
)


def _clean(span: str, at_start: bool) -> str | None:
    """The name a capitalised span gives; a lone word opening a sentence comes back marked ``?`` (a maybe)."""
    words = _POSSESSIVE.sub("", span).rstrip("'’&-").split(" ")
    while words and (words[0].lower() in STOPWORDS or words[0].lower() in NOT_NAMES):
        words.pop(0)
        at_start = False  # what follows a dropped opening word was not the sentence's first
    while words and (words[-1].lower() in STOPWORDS or words[-1].lower() in NOT_NAMES):
        words.pop()
    if not words:
        return None
    name = normalize_entity(" ".join(words))
    if not 2 <= len(name) <= MAX_NAME_CHARS:
        return None
    return "?" + name if len(words) == 1 and at_start else name


def _opens_sentence(text: str, start: int) -> bool:
    i = start - 1
    while i >= 0 and text[i] in " \t\r":
        i -= 1
    return i < 0 or text[i] in _SENTENCE_END


def extract(text: str, known: Any = None, *, maybes: bool = False) -> list[str]:
    """The names ``text`` mentions, normalised, first mention first (at most ``MAX_LINKS``). ``known``: the
    agent's fact graph (``build.Graph``), whose entity and alias names are matched too. A lone capitalised word
    opening a sentence ("Luna got sick", but also "Sure, …") is a name only if it is one elsewhere: with
    ``maybes`` such words come too, marked with a leading ``?``."""
    if not isinstance(text, str) or not text:
        return []
    text = text[:MAX_SCAN_CHARS]
    found: dict[str, None] = {}
    if known is not None and known.triples:
        for node in known.seeds(text):
            found[known.entities[node]] = None
    for m in _CAPS.finditer(text):
        name = _clean(m.group(0), _opens_sentence(text, m.start()))
        if name and (maybes or name[0] != "?"):
            found[name] = None
    if re.search(f"[{_CJK}]", text):
        for m in (*_BRACKETED.finditer(text), *_TITLED.finditer(text)):
            name = normalize_entity(m.group(1))
            if len(name) >= 2:
                found[name] = None
    sure = [n for n in found if n[0] != "?"]
    return (
        [*sure, *(n for n in found if n[0] == "?" and n[1:] not in found)][:MAX_LINKS]
        if maybes
        else sure[:MAX_LINKS]
    )


_INSERT = "INSERT INTO memory_entity (agent_id, memory_id, entity) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING"


def known_entities(agent_id: str, at: datetime | None = None) -> Any:
    """The agent's fact graph when it has one (its names are matched by ``extract``), else None; an agent that
    never wrote a triple costs one read of its generation row."""
    from .cache import _generation_key, agent_graph

    if _generation_key(agent_id)[0] == 0:
        return None
    return agent_graph(agent_id=agent_id, at=at)


def link_memory(*, agent_id: str, memory_id: str, content: str) -> int:
    """Link a plain memory just written (inside the write's transaction) to the names it mentions."""
    names = _confirmed(agent_id, extract(content, known_entities(agent_id), maybes=True))
    if names:
        rawsql.run_many(_INSERT, [(agent_id, memory_id, n) for n in names])
    return len(names)


def _confirmed(agent_id: str, names: list[str]) -> list[str]:
    """``names`` with each maybe (``?name``) kept, unmarked, only when the agent already links that name."""
    maybe = [n[1:] for n in names if n[0] == "?"]
    if not maybe:
        return names
    marks = ", ".join(["%s"] * len(maybe))
    cur = rawsql.run(
        f"SELECT DISTINCT entity FROM memory_entity WHERE agent_id = %s AND entity IN ({marks})",
        [agent_id, *maybe],
    )
    have = {r[0] for r in cur.fetchall()}
    return [n for n in names if n[0] != "?"] + [n for n in maybe if n in have]


def link_backfill(*, agent_id: str | None = None, after: str = "", batch: int = 500) -> dict[str, Any]:
    """Link the plain memories written before links existed (or before a name became known), in id order from
    ``after``, ``batch`` rows per transaction. Idempotent (a link that exists is left as it is) and resumable
    (pass the ``last`` id returned). Returns ``{"rows": …, "links": …, "last": …}``."""
    rows = links = 0
    last = after
    while True:
        done, n, last = _backfill_batch(agent_id, last, batch)
        rows += done
        links += n
        if done < batch:
            return {"rows": rows, "links": links, "last": last}


@c.write_transaction
def _backfill_batch(agent_id: str | None, after: str, batch: int) -> tuple[int, int, str]:
    sql = "SELECT id, agent_id, content FROM memories WHERE subject IS NULL AND id > %s"
    params: list[Any] = [after]
    if agent_id is not None:
        sql += " AND agent_id = %s"
        params.append(c.check_agent_id(agent_id))
    rows = rawsql.run(sql + " ORDER BY id LIMIT %s", [*params, batch]).fetchall()
    graphs: dict[str, Any] = {}
    out: list[tuple[str, str, str]] = []
    for mid, agent, content in rows:
        if agent not in graphs:
            graphs[agent] = known_entities(agent)
        out += [
            (agent, mid, n) for n in _confirmed(agent, extract(content or "", graphs[agent], maybes=True))
        ]
    if out:
        rawsql.run_many(_INSERT, out)
    return len(rows), len(out), rows[-1][0] if rows else after


def relink_since(*, agent_id: str, since: datetime, batch: int = 500) -> int:
    """Derive again the links of the agent's plain memories written at or after ``since`` (inside the caller's
    transaction), with the names the agent knows now: a merge's undo calls it, since a turn written while
    ``bob`` was an alias of ``robert`` was linked to ``robert`` for saying "Bob". Every name is extracted
    before any link changes (a maybe is confirmed by the links as they were); only memories whose links
    differ are rewritten. Returns how many memories' links changed."""
    known = known_entities(agent_id)
    changed = 0
    after = ""
    while True:
        rows = list(
            Memory.objects.filter(
                agent_id=agent_id, subject__isnull=True, created_at__gte=since, id__gt=after
            )
            .order_by("id")
            .values_list("id", "content")[:batch]
        )
        if not rows:
            return changed
        after = rows[-1][0]
        wanted = {
            mid: set(_confirmed(agent_id, extract(text or "", known, maybes=True))) for mid, text in rows
        }
        have = _links_of(agent_id, list(wanted), since)
        stale = [mid for mid, names in wanted.items() if names != set(have.get(mid, ()))]
        if stale:
            marks = ", ".join(["%s"] * len(stale))
            rawsql.execute(
                f"DELETE FROM memory_entity WHERE agent_id = %s AND memory_id IN ({marks})",
                [agent_id, *stale],
            )
            rawsql.run_many(_INSERT, [(agent_id, mid, n) for mid in stale for n in sorted(wanted[mid])])
            changed += len(stale)
        if len(rows) < batch:
            return changed


def erase_links(*, agent_id: str, memory_ids: Iterable[str], name: str | None = None) -> int:
    """Delete the links of erased memories, and every link to an erased name (erasure)."""
    ids = sorted(set(memory_ids))
    n = 0
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        marks = ", ".join(["%s"] * len(chunk))
        n += rawsql.execute(
            f"DELETE FROM memory_entity WHERE agent_id = %s AND memory_id IN ({marks})", [agent_id, *chunk]
        )
    if name:
        n += rawsql.execute("DELETE FROM memory_entity WHERE agent_id = %s AND entity = %s", [agent_id, name])
    return n


def reassign_links(*, memory_ids: Sequence[str], to_agent: str) -> None:
    """Links move with their memories to another agent (``erasure.reassign``)."""
    for i in range(0, len(memory_ids), 500):
        chunk = list(memory_ids[i : i + 500])
        marks = ", ".join(["%s"] * len(chunk))
        rawsql.execute(
            f"UPDATE memory_entity SET agent_id = %s WHERE memory_id IN ({marks})", [to_agent, *chunk]
        )


def _aliases(agent_id: str) -> dict[str, str]:
    """The agent's alias → canonical map, in one plain statement (on every linked search)."""
    rows = rawsql.run("SELECT alias, canonical FROM entity_alias WHERE agent_id = %s", [agent_id]).fetchall()
    return dict(rows)


def memory_links(*, agent_id: str, memory_id: str, at: datetime | None = None) -> list[str]:
    """The entities a current memory of the agent links to (alias-resolved, sorted); [] for any other id."""
    agent_id = c.check_agent_id(agent_id)
    at = at or c.now()
    with connection.cursor() as cur:
        cur.execute(
            "SELECT l.entity FROM memory_entity l JOIN memories m ON m.id = l.memory_id"
            f" WHERE l.agent_id = %s AND l.memory_id = %s AND m.agent_id = %s AND {current_sql()}",
            [agent_id, memory_id, agent_id, at, at],
        )
        names = [r[0] for r in cur.fetchall()]
    aliases = _aliases(agent_id) if names else {}
    return sorted({aliases.get(n, n) for n in names})


def link_scores(
    *, agent_id: str, query: str, hits: Sequence[str], at: datetime, known: Any = None
) -> dict[str, float]:
    """Turn → entity → turn (see the module): each current memory the walk reaches and the mass it received
    (capped at 1.0; a name the query says once gives its only memory 1.0, each of 50 memories 0.02); {} when the agent has no links or the query and hits name nothing. ``hits``: the full-text hits, best
    first (the first ``HIT_SEEDS`` seed the walk, the i-th with weight 1/(1+i))."""
    seeds: dict[str, float] = defaultdict(float)
    for name in extract(query, known, maybes=True):  # a maybe seeds only if some memory links it
        seeds[name.lstrip("?")] += 1.0
    top = list(hits[:HIT_SEEDS])
    hit_names = _links_of(agent_id, top, at)
    for i, mid in enumerate(top):
        names = hit_names.get(mid, [])
        for name in names:
            seeds[name] += 1.0 / (1 + i) / len(names)
    if not seeds:
        return {}
    aliases = _aliases(agent_id)
    canon: dict[str, float] = defaultdict(float)
    for name, mass in seeds.items():
        canon[aliases.get(name, name)] += mass
    # every raw name that resolves to a seeded entity (the entity itself and its aliases)
    forms: dict[str, str] = {name: name for name in canon}
    for alias, target in aliases.items():
        if target in canon:
            forms[alias] = target
    names = sorted(forms, key=lambda n: -canon[forms[n]])[:MAX_WALK_NAMES]
    members = _members(agent_id, names, at)
    by_entity: dict[str, set[str]] = defaultdict(set)
    for mid, name in members:
        by_entity[forms[name]].add(mid)
    scores: dict[str, float] = defaultdict(float)
    for entity, mids in by_entity.items():
        if len(mids) > MAX_ENTITY_MEMORIES:
            continue
        share = canon[entity] / len(mids)
        for mid in mids:
            scores[mid] += share
    return {mid: round(min(1.0, s), 12) for mid, s in scores.items()}


def _links_of(agent_id: str, ids: Sequence[str], at: datetime) -> dict[str, list[str]]:
    if not ids:
        return {}
    marks = ", ".join(["%s"] * len(ids))
    out: dict[str, list[str]] = defaultdict(list)
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT memory_id, entity FROM memory_entity WHERE agent_id = %s AND memory_id IN ({marks})",
            [agent_id, *ids],
        )
        for mid, name in cur.fetchall():
            out[mid].append(name)
    return out


def _members(agent_id: str, names: Sequence[str], at: datetime) -> list[tuple[str, str]]:
    """(memory id, raw name) of the agent's current memories linked to ``names``, leaving out names on more
    than ``MAX_ENTITY_MEMORIES`` memories (counted over every link row: bounded work, no join)."""
    if not names:
        return []
    marks = ", ".join(["%s"] * len(names))
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT entity FROM memory_entity WHERE agent_id = %s AND entity IN ({marks})"
            " GROUP BY entity HAVING COUNT(*) <= %s",
            [agent_id, *names, MAX_ENTITY_MEMORIES],
        )
        kept = [r[0] for r in cur.fetchall()]
        if not kept:
            return []
        marks = ", ".join(["%s"] * len(kept))
        cur.execute(
            "SELECT l.memory_id, l.entity FROM memory_entity l JOIN memories m ON m.id = l.memory_id"
            f" WHERE l.agent_id = %s AND l.entity IN ({marks}) AND m.agent_id = %s AND {current_sql()}",
            [agent_id, *kept, agent_id, at, at],
        )
        return list(cur.fetchall())
