"""Text helpers shared by the conflict judge and its candidate generator (SPEC B2): normalisation, value keys,
near-equality, tokens for overlap and blocking, and the negation / change cues (English and Chinese)."""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from memory.registry import normalize_predicate, normalize_text  # the registry owns name normalisation

__all__ = [
    "NEAR_PREDICATE",
    "NEAR_TEXT",
    "STRICT_TYPES",
    "cues",
    "proper_names",
    "digits",
    "near_equal",
    "near_predicate",
    "normalize_predicate",
    "normalize_text",
    "overlap",
    "similarity",
    "tokens",
    "value_key",
]

NEAR_TEXT = 0.90  # two texts (or name-like values) at or above this similarity are near-duplicates
NEAR_PREDICATE = 0.88  # two predicate names at or above this similarity are near-identical
# Value types compared exactly (after normalisation): a near miss is a different value ("2021-03-04" vs "-05").
STRICT_TYPES = frozenset({"date", "integer", "enum", "url", "email"})

_PARENS = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|（[^（）]*）|【[^【】]*】")
_PUNCT = re.compile(r"[^\w\s]|_", re.UNICODE)
_LEGAL = re.compile(
    r"\b(?:inc|incorporated|ltd|limited|llc|gmbh|corp|corporation|co|company|plc|ag|sa|bv|pty|the)\b"
)
_WORD = re.compile(r"[0-9a-z\u00c0-\u024f]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
_DIGITS = re.compile(r"\d+")
_STOP = frozenset(
    "a an and are as at be been but by for from has have he her his i in is it its me my of on or our she so "
    "that the their them they this to was we were will with you your".split()
)

# (label, pattern) over normalised text. "negation" labels flip a statement's polarity; the rest mark a change.
_EN_CUES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern))
    for label, pattern in (
        ("negation", r"\bno longer\b|\bnot\b|n't\b|\bnever\b|\bno more\b|\banymore\b|\bany more\b"),
        ("switched", r"\bswitch(?:ed|ing)? (?:to|from|over)\b"),
        ("moved", r"\b(?:moved|relocated|migrated|moving) (?:to|from|over|away)\b"),
        ("instead", r"\binstead of\b|\brather than\b"),
        (
            "changed",
            r"\bchanged? (?:to|from)\b|\breplaced (?:by|with)\b|\bnow (?:uses|lives|works|prefers)\b",
        ),
        ("stopped", r"\b(?:stopped|quit|dropped|abandoned|left)\b"),
        ("formerly", r"\bused to\b|\bformerly\b|\bpreviously\b"),
    )
)
_ZH_CUES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("negation", ("不再", "已经不", "已經不", "已不", "不是", "没有", "沒有", "不用了", "别再", "別再")),
    ("switched", ("改用", "换成", "換成", "改成", "改为", "改為", "转用", "轉用", "换到", "換到")),
    ("moved", ("搬到", "搬去", "搬家", "迁到", "遷到", "迁移到", "遷移到", "转到", "轉到")),
    ("instead", ("而不是", "取代", "代替")),
    ("changed", ("现在用", "現在用", "现在住", "現在住", "变成", "變成")),
    ("stopped", ("离职", "離職", "辞职", "辭職", "停用", "放弃", "放棄")),
    ("formerly", ("以前", "之前", "曾经", "曾經")),
)


def value_key(value: object, value_type: str = "text") -> str:
    """The form two objects compare equal in. Strict types: normalised text (a URL without its trailing "/").
    Name-like types: also without bracketed asides, punctuation and legal suffixes ("Acme, Inc." = "acme")."""
    text = normalize_text(value)
    if value_type in STRICT_TYPES:
        return text.rstrip("/") if value_type == "url" else text
    loose = _LEGAL.sub(" ", _PUNCT.sub(" ", _PARENS.sub(" ", text)))
    return " ".join(loose.split()) or text


def digits(text: str) -> list[str]:
    """The numbers in a text, leading zeros dropped ("03:00" and "3:00" have the same numbers)."""
    return [d.lstrip("0") or "0" for d in _DIGITS.findall(text)]


def similarity(a: str, b: str) -> float:
    """Character and token-order-free similarity of two normalised texts, 0..1 (the larger of the two)."""
    if not a or not b:
        return 0.0
    return max(fuzz.ratio(a, b), fuzz.token_sort_ratio(a, b)) / 100.0


def near_equal(a: object, b: object, value_type: str = "text") -> tuple[bool, str]:
    """Whether two values are the same value, and how: ``"equal"`` (normalised text), ``"key"`` (equal value
    keys) or ``"fuzzy"`` (name-like values this similar with the same numbers); ``(False, "")`` otherwise."""
    na, nb = normalize_text(a), normalize_text(b)
    if not na or not nb:
        return False, ""
    if na == nb:
        return True, "equal"
    ka, kb = value_key(na, value_type), value_key(nb, value_type)
    if ka == kb:
        return True, "key"
    if value_type in STRICT_TYPES or digits(na) != digits(nb) or min(len(ka), len(kb)) < 4:
        return False, ""
    if max(fuzz.ratio(na, nb), fuzz.ratio(ka, kb)) / 100.0 >= NEAR_TEXT:
        return True, "fuzzy"
    return False, ""


def near_predicate(a: str, b: str) -> bool:
    """Two normalised predicate names that differ by a typo or an inflection (``deploy_target(s)``)."""
    return a == b or (min(len(a), len(b)) >= 4 and fuzz.ratio(a, b) / 100.0 >= NEAR_PREDICATE)


def tokens(text: object) -> set[str]:
    """Content tokens: Latin words of 2+ characters minus stop words, and CJK character bigrams (a lone CJK
    character stands for itself)."""
    norm = normalize_text(text)
    out = {w for w in _WORD.findall(norm) if len(w) >= 2 and w not in _STOP}
    for run in _CJK.findall(norm):
        if len(run) == 1:
            out.add(run)
        else:
            out.update(run[i : i + 2] for i in range(len(run) - 1))
    return out


def overlap(a: set[str], b: set[str]) -> float:
    """Overlap coefficient |a ∩ b| / min(|a|, |b|): 1.0 when one text's tokens all occur in the other."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def cues(text: object) -> frozenset[str]:
    """The negation and change cues in a text: labels such as ``negation``, ``switched``, ``moved``."""
    norm = normalize_text(text)
    found = {label for label, pattern in _EN_CUES if pattern.search(norm)}
    found.update(label for label, words in _ZH_CUES if any(w in norm for w in words))
    return frozenset(found)


_NAME = re.compile(r"(?<![\w#@])[A-Z][\w&.-]*[A-Za-z0-9]")
_SENTENCE_START = re.compile(r"(?:^|[.!?;:]\s+|\n\s*)([A-Z][\w&.-]*)")


def proper_names(text: object) -> frozenset[str]:
    """Capitalised words that are not the first word of a sentence (names of customers, people, products),
    case-folded: two texts that each name something the other does not are about different things."""
    raw = str(text or "")
    starts = {m.group(1) for m in _SENTENCE_START.finditer(raw)}
    return frozenset(w.casefold() for w in _NAME.findall(raw) if w not in starts or raw.count(w) > 1)
