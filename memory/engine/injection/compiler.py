"""The rule compiler: ``rules.toml`` phrase rules to regular expressions, with the trigger index the scanner
uses to run only the rules that can match.

Template shorthand (see the rules file): a literal space is a word separator, `` ?`` an optional one, ``<n>`` up
to n filler words, ``<n!>`` the same not starting with an owner word. Every English rule is also compiled in a
space-free ("glued") form for the ``spaced`` view, where ``i g n o r e a l l`` becomes ``ignoreall``.

One tokenizer (:func:`_tokens`) reads the template language; splitting at top-level ``|`` and finding a group's
end are both walks over its tokens. A rule is compiled in at most two parts: the *anchored* part joins the
alternatives that start with a known word or literal and is matched only where one of those words occurs; the
*searched* part joins the rest and runs when one of the rule's triggers is present.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .normalise import _CJK, _CJK_ANY, _T2S, _fold_text, _trie_regex
from .ruleset import CORE_LANGS, RULESET, RulesetError, RuleSpec

_SEP = r"[\W_]{1,3}"
_GAP_RE = re.compile(r"<(\d+)(!?)>")
_OWNER_WORDS = r"(?:my|our|his|her|their)\b"


def _forms(ch: str) -> list[str]:
    """What a rule's non-ASCII letter can be in the text view, which is folded (NFKC, look-alikes, lower case,
    accents, Traditional Chinese) before matching: its own fold and, should its capital fold differently, that
    one too (Cyrillic "п" folds to the look-alike "n"; so does "П", which lower-cases to it, since the folding
    maps look-alikes again after lower-casing: "Покажи" and "покажи" both read "nokaжи")."""
    forms = [_fold_text(ch)]
    upper = ch.upper()
    if len(upper) == 1 and upper != ch and _fold_text(upper) not in forms:
        forms.append(_fold_text(upper))
    return forms


def _fold_template(template: str, where: str) -> str:
    """A template's non-ASCII letters folded as the text is (:func:`_forms`): one form is written as it is, two
    as a class; inside a class every form joins it (a form of two characters there is an error: Thai SARA AM,
    which NFKC splits, cannot sit in a class)."""
    if template.isascii():
        return template
    out = []
    for _, token, _ in _tokens(template):
        if token.isascii():
            out.append(token)
        elif token.startswith("[") and len(token) > 1:
            body: list[str] = []
            for ch in token[1:-1]:
                forms = [ch] if ch.isascii() else _forms(ch)
                if any(len(f) != 1 for f in forms):
                    raise RulesetError(f"rule {where}: {ch!r} folds to {forms!r}, which a class cannot hold")
                body.extend(f for f in forms if f not in body)
            out.append("[" + "".join(body) + "]")
        else:
            forms = _forms(token)
            if len(forms) == 1:
                out.append(forms[0] if len(forms[0]) == 1 else f"(?:{re.escape(forms[0])})")
            elif all(len(f) == 1 for f in forms):
                out.append("[" + "".join(forms) + "]")
            else:
                out.append("(?:" + "|".join(re.escape(f) for f in forms) + ")")
    return "".join(out)


def _fold_trigger(trigger: str) -> set[str]:
    """Every folded spelling of a trigger (:func:`_forms`, letter by letter)."""
    out = {""}
    for ch in trigger:
        forms = [ch] if ch.isascii() else _forms(ch)
        out = {a + f for a in out for f in forms}
        if len(out) > 64:
            raise RulesetError(f"trigger {trigger!r} has too many folded spellings")
    return out


def _render(template: str, glued: bool) -> str:
    template = template.translate(_T2S)  # rules see the folded text, so fold their Chinese the same way
    template = template.replace(" ?", "\x00")  # "a ?b": an optional separator
    if glued:
        out = template.replace(r"\b", "").replace(" ", r"[\W_]{0,3}").replace("\x00", r"[\W_]{0,3}")
        out = out.replace(r"\w+", r"\w{1,24}")
        return _GAP_RE.sub(lambda m: f".{{0,{int(m.group(1)) * 12}}}?", out)
    out = template.replace(" ", _SEP).replace("\x00", r"[\W_]{0,3}")
    return _GAP_RE.sub(
        lambda m: f"(?:{'(?!' + _OWNER_WORDS + ')' if m.group(2) else ''}[^\\W_]+{_SEP}){{0,{m.group(1)}}}?",
        out,
    )


# An escape, a character class, a group opening (with its "(?:", "(?!", "(?<=" ... prefix), or one character.
_TEMPLATE_TOKEN = re.compile(r"\\.|\[(?:\\.|[^\]\\])*\]|\((?:\?(?:<[=!]|[:=!]))?|.", re.DOTALL)


def _tokens(template: str) -> Iterator[tuple[int, str, int]]:
    """(offset, token, group depth before the token) for each token of a template."""
    depth = 0
    for m in _TEMPLATE_TOKEN.finditer(template):
        token = m.group()
        yield m.start(), token, depth
        if token[0] == "(":
            depth += 1
        elif token == ")":
            depth -= 1


def _alternatives(template: str) -> list[str]:
    """Split a template at its top-level ``|`` (outside groups and character classes)."""
    parts, start = [], 0
    for pos, token, depth in _tokens(template):
        if token == "|" and depth == 0:
            parts.append(template[start:pos])
            start = pos + 1
    parts.append(template[start:])
    return parts


def _group_end(text: str, start: int) -> int:
    """Index of the ``)`` closing the group opened at ``start``; -1 when unbalanced."""
    for pos, token, depth in _tokens(text[start:]):
        if token == ")" and depth == 1:
            return start + pos
    return -1


_WORD = re.compile(r"[a-z0-9]+")
_ASCII_WORD = _WORD


@dataclass(frozen=True)
class _Rule:
    family: str
    rule_id: str
    view: str  # "text" or "raw"
    rx: re.Pattern[str]
    rx_glued: re.Pattern[str] | None
    triggers: frozenset[str]
    starts: (
        frozenset[str] | None
    )  # every match starts with one of these words (then rx.match at their positions)
    gate: frozenset[str] = frozenset()  # anchored parts: one of the rule's triggers must be present as well


def _expand(piece: str, limit: int = 64) -> set[str] | None:
    """All strings a small regex piece can match: literals, ``x?``, ``[ab]`` and ``(?:a|b)`` only."""
    out = {""}
    i = 0
    while i < len(piece):
        ch = piece[i]
        if ch == "(":
            if not piece.startswith("(?:", i):
                return None
            end = _group_end(piece, i)
            if end < 0:
                return None
            options: set[str] = set()
            for alt in _alternatives(piece[i + 3 : end]):
                sub = _expand(alt, limit)
                if sub is None:
                    return None
                options |= sub
            i = end + 1
        elif ch == "[":
            end = piece.find("]", i)
            body = piece[i + 1 : end]
            if end < 0 or not re.fullmatch(r"[a-z0-9']+", body):
                return None
            options = set(body)
            i = end + 1
        elif ch == "\\" or ch in ".*+{}|^$":
            return None
        else:
            options = {ch}
            i += 1
        if i < len(piece) and piece[i] == "?":
            options = options | {""}
            i += 1
        out = {a + b for a in out for b in options}
        if len(out) > limit:
            return None
    return out


def _first_token(text: str) -> str | None:
    """The part of an expanded option the scanner can look up: its first word, or its Chinese literal."""
    m = re.match(r"[a-z0-9]+", text)
    if m:
        return m.group()
    m = re.match(f"[{_CJK}]+", text)
    return m.group() if m else None


# the first word of a template option: letters, Chinese, apostrophes, "x?", "[ab]" and "(?:a|b)" without spaces
_WORD_PIECE = re.compile(
    f"(?:[a-z0-9'{_CJK}]|\\[[a-z0-9']+\\]|\\(\\?:[a-z0-9'|{_CJK}]+\\))(?:\\?)?(?:(?:[a-z0-9'{_CJK}]|"
    f"\\[[a-z0-9']+\\]|\\(\\?:[a-z0-9'|{_CJK}]+\\))\\??)*"
)


_LITERAL_PREFIX = re.compile(r"(?:[^\\\[\](){}.*+?|^$\s]|\\[|\[\]().*+?{}/<>!-])+")


def _literal_start(alt: str) -> frozenset[str] | None:
    """A symbol literal every match starts with (``<|im_start|>``, ``</``), when the template begins with one."""
    m = _LITERAL_PREFIX.match(alt)
    if not m:
        return None
    literal = re.sub(r"\\(.)", r"\1", m.group())
    rest = alt[m.end() : m.end() + 1]
    if rest in ("?", "*", "{"):  # the last character is optional or repeated: drop it
        literal = literal[:-1]
    if len(literal) < 2 or literal[0].isalnum():
        return None
    return frozenset({literal})


def _cjk_literal(option: str) -> str | None:
    """The Chinese characters an option certainly starts with (a character made optional by ``?`` is not)."""
    m = re.match(f"[{_CJK}]+", option)
    if not m:
        return None
    literal = m.group()
    if option[m.end() : m.end() + 1] in ("?", "*", "{"):
        literal = literal[:-1]
    return literal or None


def _leading_words(alt: str) -> frozenset[str] | None:
    """The first words (or Chinese literals) every match of a template alternative starts with, or None.

    Handles a leading ``\\b``, lookbehinds, optional groups and small constructs inside the first word; anything
    else (classes, wildcards, anchors) leaves the alternative to the windowed search."""
    body = alt
    while body.startswith(("(?<!", "(?<=")):
        end = _group_end(body, 0)
        if end < 0:
            return None
        body = body[end + 1 :]
    if body.startswith("\\b"):
        body = body[2:]
    firsts: set[str] = set()
    while True:
        if body.startswith("(?:"):
            end = _group_end(body, 0)
            if end < 0:
                return None
            glued = body[end + 1 : end + 2]
            if glued == "?":
                glued = body[end + 2 : end + 3]
            if all(o.endswith(" ") for o in _alternatives(body[3:end])):
                glued = ""  # "(?:alle |sämtliche )?(...)": every option ends with a separator, so ends a word
            if glued and (glued.isalnum() or glued in "(['" or _CJK_ANY.match(glued)):
                # the group is only the start of the first word ("(?:assistant|ai)s?"). Chinese has no word
                # boundaries, so each option's leading Chinese literal is itself a valid start; English words are
                # expanded whole.
                literals = [_cjk_literal(o.translate(_T2S)) for o in _alternatives(body[3:end])]
                if all(literals):
                    firsts |= {lit for lit in literals if lit}
                    if body[end + 1 : end + 2] == "?":  # optional: the match may start with what follows
                        body = body[end + 2 :]
                        continue
                    return frozenset(firsts)
                piece = _WORD_PIECE.match(body)
                if not piece or piece.end() <= end:
                    return None
                expanded = _expand(piece.group())
                if not expanded or body[piece.end() : piece.end() + 1] not in ("", " ", "\\"):
                    return None
                for text in expanded:
                    token = _first_token(text)
                    if token is None:
                        return None
                    firsts.add(token)
                return frozenset(firsts)
            optional = body[end + 1 : end + 2] == "?"
            for option in _alternatives(body[3:end]):
                if option.startswith(("(?:", "\\b(?:")):
                    sub = _leading_words(option)
                    if sub is None:
                        return None
                    firsts |= sub
                    continue
                word = _WORD_PIECE.match(option.removeprefix("\\b"))
                if word and not option.removeprefix("\\b")[word.end() : word.end() + 1].isascii():
                    return None  # a word of another script continues it: not a whole word the scanner sees
                expanded = _expand(word.group()) if word else None
                if not expanded:
                    return None
                for text in expanded:
                    token = _first_token(text)
                    if token is None:
                        return None
                    firsts.add(token)
            if not optional:
                return frozenset(firsts)
            body = body[end + 2 :]
            if body.startswith("\\b"):
                body = body[2:]
            continue
        word = _WORD_PIECE.match(body)
        if word and not body[word.end() : word.end() + 1].isascii():
            return None  # "bc[eё]" (все, всё): the scanner's words are [a-z0-9] runs, "bc" is not one
        expanded = _expand(word.group()) if word else None
        if not expanded:
            return None
        for text in expanded:
            token = _first_token(text)
            if token is None:
                return None
            firsts.add(token)
        return frozenset(firsts)


def _compile(alternatives: list[str], glued: bool) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{_render(alt, glued)})" for alt in alternatives))


def _build(specs: tuple[RuleSpec, ...]) -> tuple[_Rule, ...]:
    """At most two compiled parts per rule. The *anchored* part joins the template alternatives that start with a
    known word or literal; it is matched only where one of those start words occurs, and the start words are its
    triggers (exact: no match is possible without one). The *searched* part joins the rest; its triggers are the
    rule's (English) triggers that occur in its alternatives, or all of the rule's triggers."""
    out = []
    for spec in specs:
        family, rule_id, view = spec.family, spec.id, spec.view
        template = _fold_template(spec.template, rule_id)
        triggers = frozenset(f for t in spec.triggers for f in _fold_trigger(t))
        cjk = any(
            _CJK_ANY.search(t) for t in triggers
        )  # Chinese alternations split across groups: no narrowing
        anchored: list[str] = []
        starts: set[str] = set()
        loose: list[str] = []
        loose_triggers: set[str] = set()
        for alt in _alternatives(template):
            first = _leading_words(alt) or _literal_start(alt)
            if first:
                anchored.append(alt)
                starts |= first
                continue
            loose.append(alt)
            words = frozenset(t for t in triggers if t in alt and _WORD.fullmatch(t))
            own = frozenset() if cjk or not words else words | {t for t in triggers if not _WORD.fullmatch(t)}
            loose_triggers |= own or triggers
        for part, part_triggers, part_starts in (
            (anchored, frozenset(starts), frozenset(starts)),
            (loose, frozenset(loose_triggers), None),
        ):
            gate = triggers if part is anchored else frozenset()
            if part:
                try:
                    rx = _compile(part, glued=False)
                    rx_glued = _compile(part, glued=True) if view == "text" else None
                except re.error as exc:
                    raise RulesetError(f"rule {rule_id}: pattern does not compile: {exc}") from exc
                out.append(
                    _Rule(
                        family=family,
                        rule_id=rule_id,
                        view=view,
                        rx=rx,
                        rx_glued=rx_glued,
                        triggers=part_triggers,
                        starts=part_starts,
                        gate=gate,
                    )
                )
    return tuple(out)


_ALL_RULES = _build(RULESET.rules)
_TEXT_RULES = tuple(r for r in _ALL_RULES if r.view == "text")
_RAW_RULES = tuple(r for r in _ALL_RULES if r.view == "raw")


def _index(rules: tuple[_Rule, ...]) -> dict[str, tuple[int, ...]]:
    by_trigger: dict[str, list[int]] = {}
    for i, rule in enumerate(rules):
        for t in rule.triggers:
            by_trigger.setdefault(t, []).append(i)
    return {t: tuple(ix) for t, ix in by_trigger.items()}


_RULE_INDEX = {id(_TEXT_RULES): _index(_TEXT_RULES), id(_RAW_RULES): _index(_RAW_RULES)}
# every English word the rules spell out: a leetspeak token is only worth decoding if it becomes one of these (the
# de-obfuscation views' vocabulary; the words of rules in other languages are not in it, so they change nothing
# the spaced-out, hyphen-split and leetspeak views of English text decode)
_RULE_WORDS = frozenset(
    w
    for s in RULESET.rules
    if set(s.lang) <= CORE_LANGS
    for w in re.findall(r"(?<![\\?])[a-z]{3,}", s.template)
)
_ALL_TRIGGERS = frozenset().union(*(r.triggers | r.gate for r in _ALL_RULES))
_WORD_TRIGGERS = frozenset(t for t in _ALL_TRIGGERS if _ASCII_WORD.fullmatch(t))
_ANCHOR_WORDS = frozenset(w for r in _ALL_RULES if r.starts for w in r.starts if _WORD.fullmatch(w))
# Chinese and symbol start literals, by first character
_LIT_START_SET = frozenset(w for r in _ALL_RULES if r.starts for w in r.starts if not _WORD.fullmatch(w))


# characters that make ASCII ``\b`` differ from a boundary of ``[a-z0-9]+`` runs
_NOT_B = re.compile("[A-Z_]")


class _Triggers:
    """Finding which of a set of triggers a view holds. Words are looked up among the view's words. The others
    (Chinese, symbols): one trie scan finds the longest trigger at each match position (the trie tries the longer
    branch first), and the triggers starting there are exactly that one's prefixes among them; positions inside a
    match are tried again. An ASCII view is scanned for the ASCII triggers only."""

    def __init__(self, triggers: frozenset[str], rules: tuple[_Rule, ...]) -> None:
        self.all = triggers
        self.words = frozenset(t for t in triggers if _ASCII_WORD.fullmatch(t))
        subs = sorted(triggers - self.words, key=len, reverse=True)
        self.sub_scan = re.compile(_trie_regex(subs)) if subs else None
        ascii_subs = [t for t in subs if t.isascii()]
        self.ascii_scan = re.compile(_trie_regex(ascii_subs)) if ascii_subs else None
        self.first = frozenset(t[0] for t in subs)
        sub_set = frozenset(subs)
        self.prefixes = {t: frozenset(t[:k] for k in range(1, len(t) + 1) if t[:k] in sub_set) for t in subs}
        anchors = frozenset(w for r in rules if r.starts for w in r.starts if _WORD.fullmatch(w))
        self.tracked = self.words | anchors  # words whose positions the matcher looks up
        # one scan finds every tracked word that is a whole [a-z0-9]+ run (the trie tries longer words first);
        # ``\b`` in ASCII mode is the same boundary, and quicker, when the text has no "_" or capital letter
        trie = _trie_regex(self.tracked)
        self._tracked_scan = re.compile(f"(?<![a-z0-9])(?:{trie})(?![a-z0-9])")
        self._tracked_scan_b = re.compile(f"\\b(?:{trie})\\b", re.ASCII)

    def positions(self, text: str) -> dict[str, list[int]]:
        """Start positions of the tracked words in ``text``, as ``_WORD`` tokens (whole runs of letters and
        digits): ``{word: [start, ...]}``."""
        scan = self._tracked_scan if _NOT_B.search(text) else self._tracked_scan_b
        found: dict[str, list[int]] = {}
        for m in scan.finditer(text):
            word = m.group()
            hits = found.get(word)
            if hits is None:
                found[word] = [m.start()]
            else:
                hits.append(m.start())
        return found

    def present(self, text: str, glued: bool, positions: dict[str, list[int]] | None = None) -> set[str]:
        """The triggers ``text`` holds; ``positions`` (from :meth:`positions`) spares the word scan."""
        if glued:  # no word boundaries left: every trigger is a substring check
            return {t for t in self.all if t in text}
        if positions is None:
            found = set(self.words.intersection(_WORD.findall(text)))
        else:
            found = set(self.words.intersection(positions))
        scan = self.ascii_scan if text.isascii() else self.sub_scan
        if scan is None or (scan is self.ascii_scan and scan.search(text) is None):
            return found
        match, prefixes, first = scan.match, self.prefixes, self.first
        for m in scan.finditer(text):
            longest = m.group()
            found |= prefixes[longest]
            start = m.start()
            for k in range(1, len(longest)):
                if longest[k] in first and (inner := match(text, start + k)) is not None:
                    found |= prefixes[inner.group()]
        return found


TRIGGERS = _Triggers(_ALL_TRIGGERS, _ALL_RULES)  # every rule's (views the text rules read)
RAW_TRIGGERS = _Triggers(  # the raw rules' only (views only they read)
    frozenset().union(*(r.triggers | r.gate for r in _RAW_RULES)), _RAW_RULES
)
