"""Running the compiled phrase rules over one view, and collecting what matched during a scan."""

from __future__ import annotations

import bisect
import re

from .compiler import (
    _ANCHOR_WORDS,
    _LIT_START_SET,
    _RULE_INDEX,
    _WORD,
    _WORD_TRIGGERS,
    TRIGGERS,
    _Rule,
    _Triggers,
)
from .result import RuleMatch

_SNIPPET = 80
_MAX_MATCHES_PER_FAMILY = 3


class _Found:
    """Matches collected during one scan, keyed by family, remembering whether a plain view matched."""

    def __init__(self) -> None:
        self.matches: list[RuleMatch] = []
        self.per_family: dict[str, int] = {}
        self.plain: set[str] = set()
        self.seen: set[tuple[str, str]] = (
            set()
        )  # (rule id, view) already matched: skip its other alternatives
        self.rule_ids: set[str] = set()  # the rules in ``matches``
        # detectors.py: the live detectors per state, and the pieces and clauses read so far (-> read plain)
        self.live: dict[tuple[object, ...], list] = {}
        self.pieces: dict[str, bool] = {}
        self.en_clauses: set[tuple[str, bool]] = set()
        self.zh_clauses: dict[str, bool] = {}

    def settled(self, rule: str, family: str, plain: bool) -> bool:
        """True when matching ``rule`` (of ``family``) again could change nothing: ``add`` would record no match
        (the rule is recorded already, or its family is full) and, for a plain view, the family is known plain
        already. The scan then skips the rule's search: same result, less work."""
        return (not plain or family in self.plain) and (
            rule in self.rule_ids or self.per_family.get(family, 0) >= _MAX_MATCHES_PER_FAMILY
        )

    def saturated(self, families: frozenset[str], plain: bool) -> bool:
        """True when ``add`` could change nothing more for these families: each holds its maximum number of
        matches and, for a plain view, is already known to be plain."""
        per = self.per_family
        return all(per.get(f, 0) >= _MAX_MATCHES_PER_FAMILY for f in families) and (
            not plain or families <= self.plain
        )

    def add(self, rule: str, family: str, view: str, snippet: str, plain: bool) -> None:
        self.seen.add((rule, view))
        if plain:
            self.plain.add(family)
        n = self.per_family.get(family, 0)
        if n >= _MAX_MATCHES_PER_FAMILY or rule in self.rule_ids:
            return
        self.per_family[family] = n + 1
        self.rule_ids.add(rule)
        self.matches.append(RuleMatch(rule=rule, family=family, view=view, snippet=snippet[:_SNIPPET]))


_PREFILTER = True  # tests turn this off to check that triggers and clause windows never hide a match
_CLAUSE_END = re.compile(r"[.!?;\n。！？；]+")
_WINDOW_MIN = 400  # shorter views are searched whole
_WINDOW_GAP = 300  # windows closer than this are searched as one


class _View:
    """One view of the text: the trigger words present in it, and (for long views) where.

    A rule runs only if one of its triggers is present. Alternatives that start with a known word are matched at
    that word's positions only; the others are searched over the clauses around their triggers (the clause before,
    the trigger's own clause and the one after) once the view is longer than ``_WINDOW_MIN``: a short fact is
    searched whole, a long page costs time in proportion to its suspicious parts rather than its length."""

    __slots__ = (
        "text",
        "present",
        "glued",
        "_anchors",
        "_spans",
        "_cjk",
        "_starts",
        "_clause_at",
        "_trigger_clauses",
        "_tracked",
    )

    def __init__(self, text: str, glued: bool = False, triggers: _Triggers = TRIGGERS) -> None:
        """``triggers``: the triggers of the rules this view is run with (all of them by default)."""
        self.text = text
        self.glued = glued
        self._tracked = triggers.tracked
        # the tracked words' positions (one scan) also tell which word triggers are present
        self._anchors: dict[str, list[int]] | None = None if glued else triggers.positions(text)
        self.present = triggers.present(text, glued, self._anchors)
        self._spans: dict[frozenset[str], list[tuple[int, int]]] | None = None
        self._clause_at: list[int] | None = None
        self._trigger_clauses: dict[str, set[int]] | None = None
        self._cjk: dict[str, list[int]] | None = None
        self._starts: set[str] | None = None

    def anchors(self) -> dict[str, list[int]]:
        """Start positions of the words that rules start with or are triggered by."""
        if self._anchors is None:  # a glued view (its anchored rules are searched, not matched at words)
            found: dict[str, list[int]] = {}
            tracked = self._tracked
            for m in _WORD.finditer(self.text):
                word = m.group()
                if word in tracked:
                    found.setdefault(word, []).append(m.start())
            self._anchors = found
        return self._anchors

    def present_starts(self) -> set[str]:
        """The start words and Chinese start literals that occur in this view."""
        if self._starts is None:
            found = set(self.anchors())
            found.update(t for t in self.present if t in _LIT_START_SET)
            self._starts = found
        return self._starts

    def positions(self, start: str) -> list[int]:
        """Where an anchored alternative may start: word positions, or every occurrence of a Chinese literal."""
        if start in _ANCHOR_WORDS:
            return self.anchors().get(start, [])
        if self._cjk is None:
            self._cjk = {}
        hits = self._cjk.get(start)
        if hits is None:
            hits, i = [], self.text.find(start)
            while i >= 0:
                hits.append(i)
                i = self.text.find(start, i + 1)
            self._cjk[start] = hits
        return hits

    def windows(self, triggers: frozenset[str]) -> list[tuple[int, int]]:
        """The clauses around the given trigger words (the clause before, the trigger's and the one after),
        merged when close; cached per trigger set."""
        text = self.text
        if self.glued or not _PREFILTER or len(text) < _WINDOW_MIN:
            return [(0, len(text))]
        if self._spans is None:
            self._spans = {}
        spans = self._spans.get(triggers)
        if spans is None:
            starts = self._clause_starts()
            n = len(starts)
            clauses: set[int] = set()
            for trig in triggers:
                clauses |= self._clauses_of(trig)
            spans = []
            for i in sorted(clauses):
                lo = starts[max(0, i - 1)]
                hi = starts[i + 2] if i + 2 < n else len(text)
                if (
                    spans and lo <= spans[-1][1] + _WINDOW_GAP
                ):  # close windows: one search is cheaper than two
                    spans[-1] = (spans[-1][0], max(hi, spans[-1][1]))
                else:
                    spans.append((lo, hi))
            self._spans[triggers] = spans
        return spans

    def _clause_starts(self) -> list[int]:
        if self._clause_at is None:
            self._clause_at = [0] + [m.end() for m in _CLAUSE_END.finditer(self.text)]
        return self._clause_at

    def _clauses_of(self, trigger: str) -> set[int]:
        """Indices of the clauses a trigger occurs in."""
        if self._trigger_clauses is None:
            self._trigger_clauses = {}
        found = self._trigger_clauses.get(trigger)
        if found is None:
            starts = self._clause_starts()
            if trigger in _WORD_TRIGGERS:
                hits = self.anchors().get(trigger, [])
            else:
                hits, i = [], self.text.find(trigger)
                while i >= 0:
                    hits.append(i)
                    i = self.text.find(trigger, i + 1)
            found = {bisect.bisect_right(starts, pos) - 1 for pos in hits}
            self._trigger_clauses[trigger] = found
        return found


def _run(
    rules: tuple[_Rule, ...],
    view: _View,
    name: str,
    found: _Found,
    plain: bool,
    glued: bool = False,
) -> None:
    text = view.text
    if _PREFILTER:
        if not view.present:
            return
        index = _RULE_INDEX[id(rules)]
        picked: set[int] = set()
        for t in view.present:
            picked.update(index.get(t, ()))
        candidates = [rules[i] for i in sorted(picked)]
    else:
        candidates = list(rules)
    anchored = _PREFILTER and not glued
    present_starts = view.present_starts() if anchored else set()
    word_positions = view.anchors() if anchored else {}
    present = view.present
    seen = found.seen
    # ``found.settled``, inlined (it is asked for every candidate rule): nothing recorded yet settles nothing
    rule_ids, per_family, plain_families = found.rule_ids, found.per_family, found.plain
    for rule in candidates:
        if _PREFILTER and (
            (rule.rule_id, name) in seen
            or (
                rule_ids
                and (not plain or rule.family in plain_families)
                and (rule.rule_id in rule_ids or per_family.get(rule.family, 0) >= _MAX_MATCHES_PER_FAMILY)
            )
        ):
            continue
        if rule.starts is not None and anchored:
            if rule.gate.isdisjoint(present):
                continue
            match = rule.rx.match
            hit = None
            for start in rule.starts.intersection(present_starts):
                positions = word_positions.get(start)
                for pos in positions if positions is not None else view.positions(start):
                    hit = match(text, pos)
                    if hit:
                        break
                if hit:
                    found.add(rule.rule_id, rule.family, name, hit.group(), plain)
                    break
            continue
        rx = rule.rx_glued if glued and rule.rx_glued is not None else rule.rx
        for lo, hi in view.windows(rule.triggers & present):
            m = rx.search(text, lo, hi)
            if m:
                found.add(rule.rule_id, rule.family, name, m.group(), plain)
                break
