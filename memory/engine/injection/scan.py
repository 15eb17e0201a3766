"""The scan (SPEC P4): normalise, look through every view with the rules and detectors, ask the classifier, and
decide: block, suspicious (quarantine for a person) or store.

The rules: a family counts once however many of its rules match; the rule score is the sum of the matched
families' weights plus the zero-width weight when the text holds more than ``zero_width_limit`` invisible
characters. The rules block at ``block_at`` or when a family that blocks alone matched. A family found only
through a de-obfuscation view also adds ``encoding_bypass`` (hiding an instruction is itself a signal). A long
view that substitutes locally (leetspeak, hyphen splits, spaced-out letters, CJK separators, %XX) is scanned
only around what it changes (``views.scoped``): a match in unchanged text was found in the text view.

The verdict: **block** when the rules block or the classifier's probability reaches the block threshold;
**suspicious** when the probability reaches the review threshold, the rule score reaches
:data:`SUSPICIOUS_SCORE`, the model is unavailable (fail closed), or the text is too long to scan whole;
otherwise store. Thresholds come from the model's calibration unless ``memdesk.toml [injection]`` sets them.
"""

from __future__ import annotations

import codecs
import re
import urllib.parse
from collections.abc import Callable

from . import classifier
from .compiler import _RAW_RULES, _TEXT_RULES, RAW_TRIGGERS
from .detectors import _lexical
from .intent_lexicon import _TURN_TOKEN, _any_in
from .matcher import _Found, _run, _View
from .normalise import (
    _TAG_RUN,
    _ZW_RE,
    _collapse,
    _count_zero_width,
    _fold_text,
    prepare,
)
from .result import RuleMatch, ScanResult
from .ruleset import RULESET
from .views import (
    _CJK_SEP,
    _CONCAT_HINT,
    _PCT,
    _QUOTED_PIECE,
    _REVERSE_HINT,
    _ROT13_HINT,
    _decoded_blobs,
    _dehyphen_text,
    _leet_view,
    _spaced_view,
    leet_relevant,
    scoped,
)

RULESET_VERSION = RULESET.version
WEIGHTS: dict[str, int] = RULESET.weights
BLOCKS_ALONE = RULESET.blocks_alone
BLOCK_THRESHOLD = RULESET.block_at
ZERO_WIDTH_LIMIT = RULESET.zero_width_limit
FAMILIES = tuple(WEIGHTS)
SUSPICIOUS_SCORE = 30  # a rule score this high without blocking is suspicious (SPEC P4)
MAX_SCAN_CHARS = (
    73_728  # characters scanned (64 KB of text and room); longer (NFKC can expand 18x): suspicious
)
# of binary data (control characters), scanned as text; the verdict is then suspicious anyway, so this is a
# sample: random bytes read as Latin-1 cost about 6 ms per KB (accented letters, symbols, digits start most views)
BINARY_SCAN_CHARS = 4_096
EXPANDED_SCAN_CHARS = 16_384  # of a text NFKC expands past MAX_SCAN_CHARS; the verdict is then suspicious
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")

# rule ids the scan itself produces (declared as [[detector]] in the rules file)
SCAN_RULE_IDS = frozenset(
    {
        "tm.raw.turn_token",
        "eb.decoded.base64",
        "eb.decoded.hex",
        "eb.decoded.tags",
        "eb.obfuscated",
        "zw.count",
    }
)
_MAX_DEPTH = 2  # nested decodes (base64 inside base64 ...)
_FAMILY = {rule_id: RULESET.spec(rule_id).family for rule_id in SCAN_RULE_IDS}


def _scan_local(
    view: str, base: str, name: str, found: _Found, relevant: Callable[[str, int, int], bool] | None = None
) -> None:
    """Scan a view that differs from ``base`` (the text view) only in places (a local substitution): a long one
    only around its changes (``views.scoped``), since a match in unchanged text was found in the text view."""
    part = scoped(base, view, relevant)
    _run(_TEXT_RULES, _View(part), name, found, False)
    _lexical(part, name, found, False, None if part is view else view)


def _scan_into(raw: str, found: _Found, depth: int, plain: bool, origin: str) -> tuple[str, bool]:
    """Scan ``raw`` and everything hidden in it. Returns the text view (what the classifier reads) and whether
    normalisation made the text too long to scan whole. ``plain`` is False for text that was itself decoded."""
    p = prepare(raw, MAX_SCAN_CHARS, EXPANDED_SCAN_CHARS)
    nfkc, folded_nozw, stripped, raw_view, text_view = (
        p.nfkc,
        p.folded_nozw,
        p.stripped,
        p.raw_view,
        p.text_view,
    )
    has_zw, expanded = p.has_zw, p.expanded
    # look-alike letters or zero-width characters inside words are obfuscation: a match then is "hidden"
    clean = plain and not p.obfuscated
    prefix = f"{origin}:" if origin else ""

    text_v = _View(text_view)
    _run(_TEXT_RULES, text_v, prefix + "text", found, clean)
    _lexical(text_view, prefix + "text", found, clean)
    raw_v = text_v if raw_view == text_view else _View(raw_view, triggers=RAW_TRIGGERS)
    _run(_RAW_RULES, raw_v, prefix + "raw", found, clean)
    if "<" in raw_view:
        turn = _TURN_TOKEN.search(raw_view)
        if turn is not None:  # "<end_of_turn>", "<|eot_id|>": a fake end of the user's turn
            found.add("tm.raw.turn_token", _FAMILY["tm.raw.turn_token"], prefix + "raw", turn.group(), clean)

    spaced_views = _spaced_view(stripped)
    if spaced_views is not None:
        spaced, glued_runs = spaced_views
        _scan_local(spaced, text_view, prefix + "spaced", found)
        _run(_TEXT_RULES, _View(glued_runs, glued=True), prefix + "spaced", found, False, glued=True)
        spaced_raw = _spaced_view(folded_nozw)
        if spaced_raw is not None:
            spaced_r = scoped(raw_view, spaced_raw[0])
            _run(_RAW_RULES, _View(spaced_r, triggers=RAW_TRIGGERS), prefix + "spaced", found, False)
    if (
        ('"' in text_view or "'" in text_view)
        and ("+" in text_view or _any_in(text_view, ("join", "concat", "combin", "merge", "glue")))
        and _CONCAT_HINT.search(text_view)
    ):
        pieces = [a or b for a, b in _QUOTED_PIECE.findall(text_view)]
        if len(pieces) >= 2:  # 'a = "ignore prev"; b = "ious instructions"; do a + b'
            glued_p = _collapse("".join(pieces))
            _run(_TEXT_RULES, _View(glued_p), prefix + "concat", found, False)
            _lexical(glued_p, prefix + "concat", found, False)
    if not text_view.isascii() and len(_CJK_SEP.findall(text_view)) >= 4:
        joined_z = _CJK_SEP.sub(r"\1", text_view)  # "忽/略/之/前/的/指/令"
        _scan_local(joined_z, text_view, prefix + "cjk_joined", found)
    if "-" in text_view:
        joined_h = _dehyphen_text(text_view)
        if joined_h != text_view:  # "ig-nore prev-ious instruc-tions"
            _scan_local(joined_h, text_view, prefix + "dehyphen", found)
    leet = _leet_view(text_view)
    if leet is not None:
        _scan_local(leet, text_view, prefix + "leet", found, leet_relevant)
    if _ROT13_HINT.search(text_view):
        rot = codecs.decode(text_view, "rot13")
        _run(_TEXT_RULES, _View(rot), prefix + "rot13", found, False)
        _lexical(rot, prefix + "rot13", found, False)
    if _REVERSE_HINT.search(text_view):
        rev = text_view[::-1]
        _run(_TEXT_RULES, _View(rev), prefix + "reversed", found, False)
        _lexical(rev, prefix + "reversed", found, False)
    if _PCT.search(text_view):  # decoded whenever a %XX is present, and folded like the text view
        unq = _collapse(_fold_text(urllib.parse.unquote(text_view)))
        _scan_local(unq, text_view, prefix + "url", found)

    if depth >= _MAX_DEPTH:
        return text_view, expanded
    hidden: list[tuple[str, str]] = []
    for m in _TAG_RUN.finditer(raw) if has_zw else ():  # "ASCII smuggling" in Unicode tag characters
        hidden.append(("tags", "".join(chr(ord(ch) - 0xE0000) for ch in m.group())))
    case_text = _ZW_RE.sub("", nfkc) if has_zw else nfkc
    if len(case_text) >= 16:
        hidden.extend(_decoded_blobs(case_text))
    for kind, decoded in hidden:
        before = len(found.matches)
        _scan_into(decoded, found, depth + 1, False, prefix + kind)
        if len(found.matches) > before:
            found.add(f"eb.decoded.{kind}", _FAMILY[f"eb.decoded.{kind}"], prefix + kind, decoded, plain)
    return text_view, expanded


def _rule_result(found: _Found, zero_width: int) -> tuple[list[str], int, bool]:
    """(matched families in family order, rule score, whether the rules block)."""
    families = {m.family for m in found.matches}
    hidden_only = families - found.plain - {"encoding_bypass"}
    if hidden_only:
        fam = sorted(hidden_only)[0]
        view = next(m.view for m in found.matches if m.family == fam)
        found.add("eb.obfuscated", _FAMILY["eb.obfuscated"], view, f"{fam} only after de-obfuscation", True)
        families.add(_FAMILY["eb.obfuscated"])
    if zero_width > ZERO_WIDTH_LIMIT:
        families.add(_FAMILY["zw.count"])
        found.matches.append(
            RuleMatch(
                rule="zw.count", family=_FAMILY["zw.count"], view="raw", snippet=f"{zero_width} zero-width"
            )
        )
    rules = [fam for fam in FAMILIES if fam in families]
    score = sum(WEIGHTS[fam] for fam in rules)
    return rules, score, score >= BLOCK_THRESHOLD or any(fam in BLOCKS_ALONE for fam in rules)


def _as_text(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _is_binary(raw: str) -> bool:
    """Binary data rather than text: at least 8 control characters, and more than 1 % of the text."""
    n = len(_CONTROL.findall(raw))
    return n >= 8 and n * 100 > len(raw)


def scan_text(
    text: str,
    *,
    block_threshold: float | None = None,
    review_threshold: float | None = None,
    model: classifier.Model | None = None,
) -> ScanResult:
    """Scan one text with the rules and the classifier (SPEC P4). Thresholds default to the model's calibrated
    ones, ``model`` to the shipped one. Never raises on any text; a model that cannot be loaded makes the
    verdict at least suspicious."""
    return _scan(text, block_threshold, review_threshold, model, use_model=True)


def scan_rules(text: str) -> ScanResult:
    """The rules and detectors alone, without the classifier (for tests of the rules and the benchmark)."""
    return _scan(text, None, None, None, use_model=False)


def _scan(
    text: str,
    block_threshold: float | None,
    review_threshold: float | None,
    model: classifier.Model | None,
    use_model: bool,
) -> ScanResult:
    raw = _as_text(text)
    truncated = len(raw) > MAX_SCAN_CHARS
    raw = raw[:MAX_SCAN_CHARS]
    binary = _is_binary(raw)
    if binary:  # bounded work; a person decides
        raw = _CONTROL.sub(" ", raw[:BINARY_SCAN_CHARS])
    found = _Found()
    view = ""
    if raw:
        view, expanded = _scan_into(raw, found, 0, True, "")
        truncated = truncated or expanded
    zero_width = _count_zero_width(raw)
    rules, score, rules_block = _rule_result(found, zero_width)
    probability: float | None = None
    model_error: str | None = None
    if use_model:
        try:
            model = model or classifier.current()
        except classifier.ModelUnavailable as exc:
            model, model_error = None, str(exc)
    if model is not None:
        probability = model.probability(view)
        block_threshold = model.block_threshold if block_threshold is None else block_threshold
        review_threshold = model.review_threshold if review_threshold is None else review_threshold
        review_threshold = min(review_threshold, block_threshold)
    blocked = rules_block or (
        probability is not None and block_threshold is not None and probability >= block_threshold
    )
    suspicious = not blocked and (
        score >= SUSPICIOUS_SCORE
        or model_error is not None
        or truncated
        or binary
        or (probability is not None and review_threshold is not None and probability >= review_threshold)
    )
    return ScanResult(
        blocked=blocked,
        score=score,
        rules=rules,
        matches=tuple(found.matches),
        zero_width=zero_width,
        probability=probability,
        suspicious=suspicious,
        model_error=model_error,
        truncated=truncated,
        binary=binary,
        ruleset=RULESET_VERSION,
        model=model.version if model is not None else "",
        block_threshold=block_threshold if model is not None else None,
        review_threshold=review_threshold if model is not None else None,
    )
