"""Seed matching (SPEC G2): the entity nodes a query names, in time linear in the query.

A whole-word name matches where it spans whole *tokens* of the query (a token is a run of word characters or
one other character), so a word name is a token sequence to find among the query's tokens; a name with CJK
characters matches as a plain substring. Names of at most ``SHORT_NAME_CHARS`` characters (nearly all) are
looked up in the name dicts for every query span that short; longer names go into Aho–Corasick automata
(tokens for word names, characters for CJK names), built on first use from the long names alone and kept with
the graph. Either way the work is at most ``SHORT_NAME_CHARS`` lookups per query token plus one automaton step
per token or character: a planted name of 9,000 characters no longer makes a query cost its length times the
query's.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

from .names import _CJK, _CJK_CHAR, normalize_entity

SHORT_NAME_CHARS = 32
MAX_SEED_QUERY_CHARS = 4000
# the raw query is cut before it is normalised (NFKC can lengthen a character 18-fold; folding spaces shortens)
MAX_RAW_QUERY_CHARS = 4 * MAX_SEED_QUERY_CHARS

_TOKEN = re.compile(f"[^\\W{_CJK}]+|.", re.S)


class Automaton:
    """Aho–Corasick over sequences of symbols (tokens or characters): which patterns occur in a text, found in
    one pass. Each pattern carries a value (its entity node)."""

    def __init__(self, patterns: Iterable[tuple[Sequence[str], int]]):
        goto: list[dict[str, int]] = [{}]
        value: list[int] = [-1]
        for symbols, node in patterns:
            state = 0
            for sym in symbols:
                nxt = goto[state].get(sym)
                if nxt is None:
                    nxt = len(goto)
                    goto[state][sym] = nxt
                    goto.append({})
                    value.append(-1)
                state = nxt
            value[state] = node
        fail = [0] * len(goto)
        out = [-1] * len(goto)  # the nearest proper suffix state that ends a pattern
        queue = deque(goto[0].values())
        while queue:
            state = queue.popleft()
            for sym, child in goto[state].items():
                f = fail[state]
                while f and sym not in goto[f]:
                    f = fail[f]
                target = goto[f].get(sym, 0)
                fail[child] = target if target != child else 0
                out[child] = fail[child] if value[fail[child]] >= 0 else out[fail[child]]
                queue.append(child)
        self.goto, self.value, self.fail, self.out = goto, value, fail, out

    def find(self, symbols: Iterable[str], found: set[int]) -> None:
        """Add the value of every pattern occurring in ``symbols`` to ``found``. Each pattern's state is
        reported once (the chain after a reported state was reported with it), so the pass stays linear."""
        goto, value, fail, out = self.goto, self.value, self.fail, self.out
        reported: set[int] = set()
        state = 0
        for sym in symbols:
            while state and sym not in goto[state]:
                state = fail[state]
            state = goto[state].get(sym, 0)
            hit = state if value[state] >= 0 else out[state]
            while hit >= 0 and hit not in reported:
                reported.add(hit)
                found.add(value[hit])
                hit = out[hit]


def tokens(text: str) -> list[str]:
    """Word runs (letters, digits, ``_``; CJK excluded) and single other characters, in order."""
    return _TOKEN.findall(text)


class SeedMatcher:
    """The seeding names of one graph, split into short ones (looked up) and long ones (automata)."""

    def __init__(self, word_names: dict[str, int], cjk_names: dict[str, int]):
        self.word_names = word_names
        self.cjk_names = cjk_names
        self.word_short = _short_max(word_names)
        self.cjk_short = _short_max(cjk_names)
        long_words = [(tokens(n), node) for n, node in _long(word_names)]
        long_cjk = list(_long(cjk_names))
        self.word_automaton = Automaton(long_words) if long_words else None
        self.cjk_automaton = Automaton(long_cjk) if long_cjk else None

    def match(self, query: str) -> list[int]:
        q = normalize_entity(query[:MAX_RAW_QUERY_CHARS])[:MAX_SEED_QUERY_CHARS]
        found: set[int] = set()
        if not q:
            return []
        if self.word_names:
            spans = [(m.start(), m.end()) for m in _TOKEN.finditer(q)]
            self._short_words(q, spans, found)
            if self.word_automaton is not None:
                self.word_automaton.find((q[a:b] for a, b in spans), found)
        if self.cjk_names and _CJK_CHAR.search(q):
            self._short_cjk(q, found)
            if self.cjk_automaton is not None:
                self.cjk_automaton.find(q, found)
        return sorted(found)

    def _short_words(self, q: str, spans: list[tuple[int, int]], found: set[int]) -> None:
        """Every span of whole tokens, neither starting nor ending with a space, at most ``word_short``
        characters long, looked up."""
        names, limit = self.word_names, self.word_short
        n = len(spans)
        for i, (start, _) in enumerate(spans):
            if q[start] == " ":
                continue
            for k in range(i, n):
                end = spans[k][1]
                if end - start > limit:
                    break
                if q[end - 1] != " ":
                    node = names.get(q[start:end])
                    if node is not None:
                        found.add(node)

    def _short_cjk(self, q: str, found: set[int]) -> None:
        names, limit, n = self.cjk_names, self.cjk_short, len(q)
        for i in range(n):
            for j in range(i + 1, min(n, i + limit) + 1):
                node = names.get(q[i:j])
                if node is not None:
                    found.add(node)


def _short_max(names: dict[str, int]) -> int:
    return max((len(n) for n in names if len(n) <= SHORT_NAME_CHARS), default=0)


def _long(names: dict[str, int]) -> Iterable[tuple[str, int]]:
    return ((n, node) for n, node in names.items() if len(n) > SHORT_NAME_CHARS)


def seed_nodes(graph: Any, query: str) -> list[int]:
    """The entity nodes ``query`` names in ``graph`` (its ``word_names`` and ``cjk_names``). The matcher is
    built on the graph's first query and kept on it while its name dicts stay the same objects and sizes."""
    key = (
        graph.generation,
        id(graph.word_names),
        len(graph.word_names),
        id(graph.cjk_names),
        len(graph.cjk_names),
    )
    kept = graph.__dict__.get("_seed_matcher")
    if kept is None or kept[0] != key:
        kept = (key, SeedMatcher(graph.word_names, graph.cjk_names))
        graph.__dict__["_seed_matcher"] = kept
    matcher: SeedMatcher = kept[1]
    return matcher.match(query)
