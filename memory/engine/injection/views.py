"""De-obfuscation views: spaced-out letters joined, leetspeak, hyphen splits, split payloads, rot13, reversed and
percent-encoded text, and base64/hex blobs that decode to text. A view is built only when the text shows the
trick, and only when it can spell a word the rules use."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from . import intent_lexicon, lexicon
from .compiler import _RULE_WORDS
from .normalise import _CJK, _CJK_ANY, _collapse, _trie_regex

_MAX_BLOBS = 12  # decoded blobs per scan (a flood of blobs cannot make the scan slow)
_MAX_BLOB_CHARS = 20_000

# "i g n o r e", "i.g.n.o.r.e", "i_g_n_o_r_e": four or more single characters with separators between them
_SPACED_RUN = re.compile(r"(?<![a-z0-9])[a-z0-9](?:[^a-z0-9\n]{1,3}[a-z0-9](?![a-z0-9])){3,}")

# a letter touching a digit or symbol that leetspeak uses for a letter
_LEET_ADJ = re.compile(r"[a-z'][0-9@$!|+]|[0-9@$!|+][a-z']")
_LEET_CHAR = re.compile(r"[0-9@$!|+]")
_LEET = str.maketrans(
    {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "9": "g"}
    | {"@": "a", "$": "s", "!": "i", "|": "l", "+": "t"}
)

_B64_BLOB = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX_BLOB = re.compile(
    r"(?:\\x[0-9a-f]{2}){8,}|(?<![0-9a-z])(?:0x)?[0-9a-f]{24,}(?![0-9a-z])|(?:[0-9a-f]{2}[ :]){11,}[0-9a-f]{2}",
    re.IGNORECASE,
)
_HEX_NOISE = re.compile(r"\\x|0x|[ :]", re.IGNORECASE)
_HEX_CANDIDATE = re.compile(r"[0-9a-fA-Fx\\: ]{24,}")
_PCT = re.compile(r"%[0-9a-f]{2}")
_ROT13_HINT = re.compile(r"rot[\W_]{0,2}13|caesar|凯撒")
_REVERSE_HINT = re.compile(r"revers|backwards|倒过来|倒序|反过来|反着")

_WORD_GAP = re.compile(r"[ \t]{2,}|\s*[/|]\s*")
_NON_WORD = re.compile(r"[^a-z0-9']")
_COMMON = (
    "a i an to of in on at by me my is it be do no so up us we or as if and the you your all any are was for not "
    "now new own off out can get has had her his him its let may our say see she too two use who why yes yet "
    "this that these those with from into what when then than them they their there here just only also very "
    "will would should could must been being have having does did done don't do not can't won't"
)


def _vocabulary() -> frozenset[str]:
    lexical = [
        v
        for module in (lexicon, intent_lexicon)
        for k, v in vars(module).items()
        if k.startswith("_L_") and isinstance(v, frozenset)
    ]
    return frozenset(_COMMON.split()) | _RULE_WORDS | frozenset().union(*lexical)


def _segment(glued: str) -> str:
    """Split a run of letters into words (fewest words, unknown letters cost more): "ignoreallprevious" ->
    "ignore all previous". Used only for fully spaced-out text, which lost its word boundaries."""
    vocab = _VOCAB
    n = len(glued)
    best: list[tuple[int, int]] = [(0, 0)] + [(1 << 30, 0)] * n  # (cost, start of last word)
    for end in range(1, n + 1):
        for start in range(max(0, end - 20), end):
            piece = glued[start:end]
            cost = 1 if piece in vocab else (3 if end - start == 1 else 1 << 20)
            total = best[start][0] + cost
            if total < best[end][0]:
                best[end] = (total, start)
    words, end = [], n
    while end > 0:
        start = best[end][1]
        words.append(glued[start:end])
        end = start
    return " ".join(reversed(words))


def _despace(run: str) -> str:
    words = [w for w in (_NON_WORD.sub("", part) for part in _WORD_GAP.split(run)) if w]
    if len(words) == 1 and len(words[0]) > 12:
        return _segment(words[0])
    return " ".join(words)


def _spaced_view(text: str) -> tuple[str, str] | None:
    """``i g n o r e  a l l`` -> ``ignore all`` (double gaps keep word boundaries; otherwise segment). Returns the
    text with its spaced-out runs joined, and the joined runs alone (scanned space-free); None when no spaced-out
    run spells a word the rules use (IP addresses, dates and initials stay as they are)."""
    runs = [r for r in _SPACED_RUN.findall(text) if _SIGNIFICANT.search(_NON_WORD.sub("", r))]
    if not runs:
        return None
    joined = _collapse(_SPACED_RUN.sub(lambda m: _despace(m.group()), text))
    return joined, "\n".join(_NON_WORD.sub("", run) for run in runs)


_CONCAT_HINT = re.compile(
    r"\b[a-z]\w{0,10}\s*\+\s*[a-z]\w{0,10}\b|\b(?:join|concatenate|combine|merge|glue)\b"
)
_QUOTED_PIECE = re.compile(r'"([^"\n]{1,60})"|\'([^\'\n]{1,60})\'')
_CJK_SEP = re.compile(f"([{_CJK}])[/·•\\-*_|.~・\\\\]+(?=[{_CJK}])")
_HYPHEN_SPLIT = re.compile(r"\b[a-z]{1,12}(?:-[a-z]{1,12})+\b")


def _dehyphen_text(text: str) -> str:
    """``_HYPHEN_SPLIT.sub(_dehyphen, text)``, looking only at the words around each hyphen."""
    out, last, i = [], 0, text.find("-")
    while i >= 0:
        lo = i
        while lo > 0 and "a" <= text[lo - 1] <= "z":
            lo -= 1
        hi = i + 1
        while hi < len(text) and (
            "a" <= text[hi] <= "z" or (text[hi] == "-" and hi + 1 < len(text) and "a" <= text[hi + 1] <= "z")
        ):
            hi += 1
        if lo < i < hi - 1 and lo >= last:
            m = _HYPHEN_SPLIT.fullmatch(text, lo, hi)
            if m is not None:
                out.append(text[last:lo])
                out.append(_dehyphen(m))
                last = hi
        i = text.find("-", max(hi, i + 1))
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _dehyphen(m: re.Match[str]) -> str:
    """Join a hyphen-split word when the join is a word the rules use ("instruc-tions"), else leave it."""
    word = m.group()
    glued = word.replace("-", "")
    return glued if glued in _VOCAB and len(glued) >= 5 else word


def _leet_view(text: str) -> str | None:
    """``1gn0r3 4ll pr3v10us`` -> ``ignore all previous``; None unless some chunk turns into a rule word."""
    if not _LEET_CHAR.search(text):
        return None
    useful = False
    for m in _LEET_ADJ.finditer(text):
        lo = text.rfind(" ", 0, m.start()) + 1
        hi = text.find(" ", m.end())
        chunk = text[lo : hi if hi >= 0 else len(text)]
        if _leet_word(chunk).strip(".,;:!?'\"()[]{}") in _RULE_WORDS:
            useful = True
            break
    if not useful:
        return None
    out = []
    for chunk in text.split(" "):
        if _LEET_ADJ.search(chunk) or (chunk.isdigit() and len(chunk) <= 3):
            chunk = _leet_word(chunk)
        out.append(chunk)
    return " ".join(out)


_LEET_L = str.maketrans({"1": "l"})


def _leet_word(chunk: str) -> str:
    """Undo leetspeak in one word. "1" stands for i or l: "ru1e5" is "rules", "adm1n" is "admin"; the reading
    that is a known word wins (i by default)."""
    as_i = chunk.translate(_LEET)
    if "1" not in chunk:
        return as_i
    as_l = chunk.translate(_LEET_L).translate(_LEET)
    core_l = as_l.strip(".,;:!?'\"()[]{}")
    if core_l in _VOCAB and as_i.strip(".,;:!?'\"()[]{}") not in _VOCAB:
        return as_l
    return as_i


def _printable_ratio(text: str) -> float:
    if not text:
        return 0.0
    good = sum(1 for ch in text if ch.isprintable() or ch in "\n\t\r")
    return good / len(text)


def _decode_bytes(data: bytes) -> str | None:
    try:
        out = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(out) < 6 or _printable_ratio(out) < 0.9:
        return None
    # text-like: letters and some spacing or CJK, not a random identifier that happens to decode
    wordish = sum(1 for ch in out if ch.isalpha() or ch == " ")
    if wordish < len(out) * 0.3 or (" " not in out and not _CJK_ANY.search(out)):
        return None
    return out


def _decoded_blobs(case_text: str) -> list[tuple[str, str]]:
    """(kind, decoded text) for base64 and hex blobs in the case-preserving text that decode to text."""
    out: list[tuple[str, str]] = []
    for m in _B64_BLOB.finditer(case_text):
        if len(out) >= _MAX_BLOBS:
            return out
        core = m.group()[:_MAX_BLOB_CHARS].rstrip("=")
        if core.isdigit() or (core.isalpha() and (core.islower() or core.isupper())):
            continue  # plain words and numbers are not worth decoding
        padded = core + "=" * (-len(core) % 4)
        for decoder in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                decoded = _decode_bytes(decoder(padded))
            except (binascii.Error, ValueError):
                continue
            if decoded:
                out.append(("base64", decoded))
                break
    for cand in _HEX_CANDIDATE.finditer(case_text):
        for m in _HEX_BLOB.finditer(cand.group()):
            if len(out) >= _MAX_BLOBS:
                return out
            digits = _HEX_NOISE.sub("", m.group())[: _MAX_BLOB_CHARS * 2]
            try:
                decoded = _decode_bytes(bytes.fromhex(digits[: len(digits) // 2 * 2]))
            except ValueError:
                continue
            if decoded:
                out.append(("hex", decoded))
    return out


_VOCAB = _vocabulary()
# words of five letters or more that the rules use: a spaced-out run is worth joining only if it spells one
_SIGNIFICANT = re.compile(_trie_regex(w for w in _VOCAB if len(w) >= 5 and w.isalpha()))


# --- scoping a derived view to what it changed ---------------------------------------------------------------
# A view that substitutes locally (leetspeak, hyphen splits, spaced-out letters, CJK separators, %XX) equals the
# text view outside a few places. A match wholly inside unchanged text was found in the text view already, so a
# long view is scanned only around its changes: each changed place with ``SCOPE_MARGIN`` characters and
# ``_SCOPE_CLAUSES`` clauses either side (the rules read the clause before, their own and the one after; the
# detectors read pieces of about 400 characters with a clause either side), cut where a clause ends.
SCOPE_MIN = 2_000  # shorter views are scanned whole
SCOPE_MARGIN = 500  # more than a detector piece (about 400) or a rule's longest gap (300 characters)
_SCOPE_CLAUSES = 2
_SCOPE_MAX_FRACTION = 0.6  # an excerpt longer than this share of the view: the view is scanned whole
_SYNC = 16  # characters that must agree to resume the alignment after a change
_SYNC_REACH = 4_096  # a change longer than this (in the view): the view is scanned whole
_CUT = re.compile(r"[.!?;]+\s|[。！？；]+")  # a clause end (then a space): where an excerpt may start or end
_CUT_REACH = 3_000  # no clause end this far: cut at a space


def _common_len(a: str, i: int, b: str, j: int) -> int:
    """Length of the common prefix of ``a[i:]`` and ``b[j:]`` (compares growing slices, then bisects)."""
    n = min(len(a) - i, len(b) - j)
    lo, step = 0, 64
    while lo < n:  # a[i:i+lo] == b[j:j+lo]; grow while the next slice agrees
        hi = min(n, lo + step)
        if a[i + lo : i + hi] != b[j + lo : j + hi]:
            break
        lo, step = hi, step * 2
    else:
        return n
    hi = min(n, lo + step)  # the first difference is in [lo, hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[i + lo : i + mid] == b[j + lo : j + mid]:
            lo = mid
        else:
            hi = mid
    return lo


def changed_spans(base: str, view: str) -> list[tuple[int, int]] | None:
    """The places (start, end in ``view``) where ``view`` differs from ``base``: everything else of ``view`` is a
    run of characters found as it is in ``base``, in order. None when the alignment is lost (the view is then
    scanned whole)."""
    spans: list[tuple[int, int]] = []
    i = j = 0
    n, m = len(base), len(view)
    while True:
        k = _common_len(base, i, view, j)
        i, j = i + k, j + k
        if j >= m:
            return spans
        if i >= n:
            spans.append((j, m))
            return spans
        # resume where a piece of the view a little further on is found in the text again
        step, s, a = 8, -1, -1
        while step <= _SYNC_REACH:
            s = j + step
            if s + _SYNC > m:
                spans.append((j, m))
                return spans
            a = base.find(view[s : s + _SYNC], i, i + 4 * step + 64 + _SYNC)
            if a >= 0:
                break
            step *= 2
        if a < 0:
            return None
        while s > j and a > i and base[a - 1] == view[s - 1]:  # the change may end before the piece
            a, s = a - 1, s - 1
        spans.append((j, s))
        i, j = a, s


def _cut_at(view: str, m: re.Match[str]) -> int:
    """Where to cut at a clause end: before the space after it (the clause end stays with its clause)."""
    return m.end() - 1 if view[m.end() - 1].isspace() else m.end()


def _last_cut(view: str, lo: int, hi: int) -> re.Match[str] | None:
    """The last ``_CUT`` match of ``_CUT.finditer(view, lo, hi)`` or None; its end is all the caller uses. Looked
    for in a short stretch before ``hi`` first, then in longer ones: a scan that starts later ends its last match
    at the same place (a clause end is a run of one class of marks, ending where the run ends, whichever of its
    characters a scan starts at), so only when the stretch holds no match is a longer one needed."""
    start = hi
    reach = 256
    while start > lo:
        start = max(lo, hi - reach)
        last = None
        for last in _CUT.finditer(view, start, hi):  # noqa: B007 (the last clause end before hi)
            pass
        if last is not None:
            return last
        reach *= 4
    return None


def _cut_before(view: str, pos: int) -> int:
    """The start of the clause ``_SCOPE_CLAUSES`` clauses before the one holding ``pos - SCOPE_MARGIN``."""
    pos = max(0, pos - SCOPE_MARGIN)
    for _ in range(_SCOPE_CLAUSES + 1):
        if pos <= 0:
            return 0
        lo = max(0, pos - _CUT_REACH)
        last = _last_cut(view, lo, pos - 1)
        if last is not None:
            pos = _cut_at(view, last)
        else:
            sp = view.rfind(" ", lo, pos)
            pos = sp if sp > 0 else lo
    return pos


def _cut_after(view: str, pos: int) -> int:
    """The end of the clause ``_SCOPE_CLAUSES`` clauses after the one holding ``pos + SCOPE_MARGIN``."""
    n = len(view)
    pos = min(n, pos + SCOPE_MARGIN)
    for _ in range(_SCOPE_CLAUSES + 1):
        if pos >= n:
            return n
        m = _CUT.search(view, pos, min(n, pos + _CUT_REACH))
        if m is not None:
            pos = _cut_at(view, m)
        else:
            sp = view.find(" ", pos + 1, min(n, pos + _CUT_REACH))
            pos = sp if sp >= 0 else min(n, pos + _CUT_REACH)
    return pos


_LEET_TOKEN = re.compile(r"[a-z]+")


def leet_relevant(view: str, start: int, end: int) -> bool:
    """Whether a change of the leet view spells a word the rules or detectors use (three letters or more, or a
    rule word) in the words it touches: "1gn0r3" -> "ignore" does; "thanks!" -> "thanksi", "1" -> "i", "4" -> "a"
    (every number and exclamation in a chat) do not, and are not worth scanning around."""
    lo = max(0, start - 40)
    for m in _LEET_TOKEN.finditer(view, lo, end + 40):
        if m.end() <= start or m.start() >= end:
            continue
        word = m.group()
        if word in _RULE_WORDS or (len(word) >= 3 and word in _VOCAB):
            return True
    return False


def scoped(base: str, view: str, relevant: Callable[[str, int, int], bool] | None = None) -> str:
    """What to scan of a locally substituted ``view`` of ``base`` (the text view): the view itself when short or
    changed in many places, else its changed places with their context, joined by newlines (a clause end).
    ``relevant(view, start, end)``: whether a change is worth scanning (all are by default)."""
    if len(view) < SCOPE_MIN:
        return view
    spans = changed_spans(base, view)
    if spans is None:
        return view
    if relevant is not None:
        spans = [(a, b) for a, b in spans if relevant(view, a, b)]
    windows: list[tuple[int, int]] = []
    for a, b in spans:
        if windows and a - SCOPE_MARGIN <= windows[-1][1]:
            lo = windows[-1][0]
            windows.pop()
        else:
            lo = _cut_before(view, a)
        windows.append((lo, _cut_after(view, b)))
        if windows[-1][1] >= len(view):
            break
    merged: list[tuple[int, int]] = []
    for lo, hi in windows:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    if sum(hi - lo for lo, hi in merged) > _SCOPE_MAX_FRACTION * len(view):
        return view
    return "\n".join(view[lo:hi] for lo, hi in merged)
