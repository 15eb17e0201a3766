"""Running the registered detectors over a view: intent detectors over the view (in windows when it is long),
clause detectors over each clause that holds one of their words."""

from __future__ import annotations

import bisect
import re

from . import clause as _clause_detectors  # noqa: F401 (registers the clause detectors)
from . import intent as _intent_detectors  # noqa: F401 (registers the intent detectors)
from .clause import EnClause, _has
from .intent import ViewText
from .lexicon import (
    _CLAUSE,
    _L_ANY,
    _L_OBJ,
    _L_SEND,
    _LEX_TOKEN,
    _P_AFTER_END,
    _P_END_OF,
    _Z_AFTER_END,
    _Z_DEST,
    _Z_END,
    _Z_END_SUBJ,
    _Z_FREE,
    _Z_OBJ,
    _Z_SECRET,
    _Z_SELF_PROMPT,
    _Z_STOP,
)
from .matcher import _SNIPPET, _Found
from .normalise import _trie_regex
from .registry import FAMILY, REGISTRY, Detector

_L_ANY_RE = re.compile(r"\b(?:" + _trie_regex(_L_ANY) + r")\b")
_Z_ANY_RE = re.compile(
    _trie_regex({*_Z_OBJ, *_Z_FREE, *_Z_DEST, *_Z_SECRET, *_Z_SELF_PROMPT, *_Z_END, *_Z_STOP})
)


def _clause_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of the pieces ``_CLAUSE.split(text)`` returns."""
    cuts = [m.span() for m in _CLAUSE.finditer(text)]
    return list(
        zip([0, *(end for _start, end in cuts)], [*(start for start, _end in cuts), len(text)], strict=True)
    )


def _any_between(positions: list[int], lo: int, hi: int) -> bool:
    i = bisect.bisect_left(positions, lo)
    return i < len(positions) and positions[i] < hi


_GENERAL_FAMILIES = frozenset(
    {"instruction_override", "role_hijack", "tool_abuse", "data_exfiltration", "termination_manipulation"}
)
_LEX_FAMILIES = _GENERAL_FAMILIES | {"system_prompt_extraction"}
_GENERAL_WHOLE = 600  # views up to this long get the intent patterns in one piece
_GENERAL_CHUNK = 400  # longer ones in clause-aligned pieces of about this size, with a clause either side


def _general_windows(spans: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """Where the intent patterns run: the whole view when it is short; otherwise runs of clauses of about
    ``_GENERAL_CHUNK`` characters, each widened by one clause before and after (an order and its target sit in
    neighbouring clauses), so the word gates stay local and a long page costs in proportion to its suspicious
    parts."""
    if length <= _GENERAL_WHOLE:
        return [(0, length)]
    windows: list[tuple[int, int]] = []
    i, n = 0, len(spans)
    while i < n:
        j = i
        while j + 1 < n and spans[j + 1][1] - spans[i][0] <= _GENERAL_CHUNK:
            j += 1
        windows.append((spans[max(0, i - 1)][0], spans[min(n - 1, j + 1)][1]))
        i = j + 1
    return windows


def _live(scope: str, found: _Found, plain: bool) -> list[Detector]:
    """The detectors of ``scope`` whose finding could still change the result (see ``_Found.settled``)."""
    if not found.rule_ids:  # nothing recorded yet (most benign text): every detector is live
        return REGISTRY[scope]
    key = (scope, plain, len(found.rule_ids), len(found.plain))  # what ``settled`` depends on only grows
    live = found.live.get(key)
    if live is None:
        settled = found.settled
        live = [d for d in REGISTRY[scope] if not all(settled(i, FAMILY[i], plain) for i in d.ids)]
        found.live[key] = live
    return live


def _run_view(piece: str, detectors: list[Detector] | None = None) -> list[str]:
    v = ViewText(piece)
    detectors = REGISTRY["view"] if detectors is None else detectors
    return [rule_id for d in detectors if (rule_id := d.fn(v)) is not None]


def _relaxed_may_differ(clause: str) -> bool:
    """Whether the English clause detectors may find something else in ``clause`` read relaxed (hidden text)
    than read plainly. Relaxed reading changes only two things (``clause.py``): "the" counts as a target of an
    instruction noun, and a send verb with any destination counts; so the clause needs "the" and an instruction
    noun, or a send verb. Checked on the clause's words and their forms without "'s" (``EnClause``'s tokens);
    a clause with "system" in it (which ``EnClause`` may rewrite) always may differ."""
    if "system" in clause:
        return True
    words = set(_LEX_TOKEN.findall(clause))
    if "'" in clause:
        words |= {t[:-2] for t in words if t.endswith("'s")}
    return not words.isdisjoint(_L_SEND) or ("the" in words and not words.isdisjoint(_L_OBJ))


def _run_en(clause: str, relaxed: bool, detectors: list[Detector] | None = None) -> list[str]:
    detectors = REGISTRY["en"] if detectors is None else detectors
    if not detectors:
        return []
    c = EnClause(clause, relaxed)
    if len(c.tokens) < 3 or _L_ANY.isdisjoint(c.words):
        return []
    return [rule_id for d in detectors if (rule_id := d.fn(c)) is not None]


def _run_zh(clause: str, detectors: list[Detector] | None = None) -> list[str]:
    detectors = REGISTRY["zh"] if detectors is None else detectors
    return [rule_id for d in detectors if (rule_id := d.fn(clause)) is not None]


def _lexical(text: str, view: str, found: _Found, plain: bool, whole: str | None = None) -> None:
    """Every detector over one view. ``plain`` is False for text that was hidden (decoded, spaced out, ...).
    ``whole``: the view when ``text`` is only its changed places with their context (``views.scoped``); the
    checks that read the whole view then read it when the excerpt holds one of their parts (a part elsewhere is
    unchanged text, where the text view found it already), and take their snippet from its start."""
    spans = _clause_spans(text)
    done: set[str] = set()  # a piece seen before in this view adds nothing (repetitive text stays cheap)
    for lo, hi in _general_windows(spans, len(text)):
        if found.saturated(_GENERAL_FAMILIES, plain):
            break  # nothing more could be recorded: every family the patterns report is full
        piece = text[lo:hi]
        if piece in done:
            continue
        done.add(piece)
        before = found.pieces.get(piece)  # the same piece in an earlier view: the same findings
        if before is not None and (before or not plain):
            continue  # recorded then (or its family full); a plain view may still need to mark it plain
        found.pieces[piece] = plain or bool(before)
        live = _live("view", found, plain)
        if not live:
            break  # every view detector is settled: nothing more to record
        for rule_id in _run_view(piece, live):
            found.add(rule_id, FAMILY[rule_id], view, piece.strip()[:_SNIPPET], plain)
    # where the clause detectors' words occur: one pass over the view, then each clause looks its hits up
    en_at = [m.start() for m in _L_ANY_RE.finditer(text)]
    zh_at = [m.start() for m in _Z_ANY_RE.finditer(text)] if not text.isascii() else []
    en, zh = bool(en_at), bool(zh_at)
    if not (en or zh):
        return
    # "end of the document. everything after this is a new instruction" spans clauses: checked on the whole text
    if (
        en
        and ("end" in text or " over" in text or "finish" in text or "complete" in text)
        and not found.settled("tm.lex.end_then_orders", "termination_manipulation", plain)
    ):
        tokens = _LEX_TOKEN.findall(text)
        words, joined = set(tokens), f" {' '.join(tokens)} "
        end_of, after_end = _P_END_OF.in_clause(words, joined), _P_AFTER_END.in_clause(words, joined)
        if whole is not None and (end_of or after_end) and not (end_of and after_end):
            tokens = _LEX_TOKEN.findall(whole)
            words, joined = set(tokens), f" {' '.join(tokens)} "
            end_of, after_end = _P_END_OF.in_clause(words, joined), _P_AFTER_END.in_clause(words, joined)
        if end_of and after_end:
            found.add(
                "tm.lex.end_then_orders", "termination_manipulation", view, (whole or text)[:_SNIPPET], plain
            )
    if (zh or (whole is not None and not text.isascii())) and not found.settled(
        "tm.lex.zh_end_then_orders", "termination_manipulation", plain
    ):
        parts = (_Z_END, _Z_END_SUBJ, _Z_AFTER_END)
        if whole is not None and any(_has(text, part) for part in parts):
            text_z = whole
        else:
            text_z = text
        if all(_has(text_z, part) for part in parts):
            found.add("tm.lex.zh_end_then_orders", "termination_manipulation", view, text_z[:_SNIPPET], plain)
    seen_clauses: set[str] = set()
    for lo, hi in spans:
        if found.saturated(_LEX_FAMILIES, plain):
            break
        if hi - lo < 6:
            continue
        clause = text[lo:hi]
        if clause in seen_clauses:
            continue
        seen_clauses.add(clause)
        # a clause the detectors read in an earlier view gives the same findings (the English ones also depend
        # on ``plain``): skipped, as for the pieces above
        hits = []
        if en and _any_between(en_at, lo, hi) and (clause, plain) not in found.en_clauses:
            found.en_clauses.add((clause, plain))
            # read plainly before, and reading it relaxed cannot differ: the same findings, recorded already
            if plain or (clause, True) not in found.en_clauses or _relaxed_may_differ(clause):
                hits = _run_en(clause, not plain, _live("en", found, plain))
        if zh and _any_between(zh_at, lo, hi):
            before = found.zh_clauses.get(clause)
            if before is None or not (before or not plain):
                found.zh_clauses[clause] = plain or bool(before)
                hits += _run_zh(clause, _live("zh", found, plain))
        for rule_id in hits:
            found.add(rule_id, FAMILY[rule_id], view, clause.strip(), plain)
