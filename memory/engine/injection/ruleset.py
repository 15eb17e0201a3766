"""The rules file (``rules.toml``) and its loader: families, macros, phrase rules and detector metadata.

The file is data; this module reads and validates it (unknown keys, types, families, weights, languages, ids,
macros, examples) and expands the ``{MACRO}`` references in patterns. Compiling the patterns is
``compiler.py``'s job. A broken file raises :class:`RulesetError` at import: the scanner never runs with half
a ruleset.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RULES_PATH = Path(__file__).with_name("rules.toml")
FORMAT = 1
CORE_LANGS = frozenset({"en", "zh", "any"})  # the languages the detectors and de-obfuscation views read
# and the languages of phrase rules for translated attacks (ISO 639-1)
LANGS = CORE_LANGS | frozenset(
    {"es", "fr", "de", "it", "pt", "ru", "tr", "id", "vi", "tl", "hi", "bn", "ar", "ja", "ko", "th"}
)
VIEWS = frozenset({"text", "raw"})

_MACRO_REF = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")
_BREAK = re.compile(r"\n[ \t]*")
_ID = re.compile(r"^[a-z]+(?:\.[a-z0-9_]+)+$")


class RulesetError(ValueError):
    """The rules file is missing, malformed or inconsistent."""


@dataclass(frozen=True)
class Family:
    name: str
    weight: int
    blocks_alone: bool


@dataclass(frozen=True)
class RuleSpec:
    """A phrase rule (``kind == "rule"``: a ``template`` with its ``view`` and ``triggers``) or the metadata of
    a detector written in Python (``kind == "detector"``)."""

    id: str
    kind: str
    family: str
    weight: int
    lang: tuple[str, ...]
    examples: tuple[str, ...]
    counter_examples: tuple[str, ...]
    view: str = ""
    template: str = ""  # macros expanded; the shorthand (spaces, <n>) is rendered by the compiler
    triggers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ruleset:
    version: str
    block_at: int
    zero_width_limit: int
    families: dict[str, Family]
    rules: tuple[RuleSpec, ...]
    detectors: tuple[RuleSpec, ...]
    sha256: str

    @property
    def weights(self) -> dict[str, int]:
        return {name: fam.weight for name, fam in self.families.items()}

    @property
    def blocks_alone(self) -> frozenset[str]:
        return frozenset(name for name, fam in self.families.items() if fam.blocks_alone)

    def spec(self, rule_id: str) -> RuleSpec:
        for spec in (*self.rules, *self.detectors):
            if spec.id == rule_id:
                return spec
        raise KeyError(rule_id)


def _joined(value: str) -> str:
    """A multi-line pattern or macro: each line break goes, with the indentation after it."""
    return _BREAK.sub("", value).lstrip(" \t")


def _need(table: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in table:
        raise RulesetError(f"{where}: missing {key!r}")
    value = table[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RulesetError(f"{where}: {key!r} has the wrong type ({type(value).__name__})")
    return value


def _strings(table: dict[str, Any], key: str, where: str, *, required: bool) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise RulesetError(f"{where}: {key!r} must be a list of non-empty strings")
    if required and not value:
        raise RulesetError(f"{where}: {key!r} must not be empty")
    return tuple(value)


def _expand(template: str, macros: dict[str, str], where: str, used: set[str]) -> str:
    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in macros:
            raise RulesetError(f"{where}: unknown macro {{{name}}}")
        used.add(name)
        return macros[name]

    return _MACRO_REF.sub(sub, template)


_RULE_KEYS = {"id", "family", "weight", "lang", "view", "pattern", "triggers", "examples", "counter_examples"}
_DETECTOR_KEYS = {"id", "family", "weight", "lang", "examples", "counter_examples"}
_TOP_KEYS = {"version", "format", "block_at", "zero_width_limit", "families", "macros", "rule", "detector"}


def _spec(
    entry: Any, kind: str, families: dict[str, Family], macros: dict[str, str], used: set[str]
) -> RuleSpec:
    if not isinstance(entry, dict):
        raise RulesetError(f"[[{kind}]] entries must be tables")
    rule_id = _need(entry, "id", str, f"[[{kind}]]")
    where = f"[[{kind}]] {rule_id}"
    if not _ID.match(rule_id):
        raise RulesetError(f"{where}: malformed id")
    unknown = set(entry) - (_RULE_KEYS if kind == "rule" else _DETECTOR_KEYS)
    if unknown:
        raise RulesetError(f"{where}: unknown keys {sorted(unknown)}")
    family = _need(entry, "family", str, where)
    if family not in families:
        raise RulesetError(f"{where}: unknown family {family!r}")
    weight = _need(entry, "weight", int, where)
    if weight != families[family].weight:
        raise RulesetError(f"{where}: weight {weight} is not its family's ({families[family].weight})")
    lang = _strings(entry, "lang", where, required=True)
    if not set(lang) <= LANGS:
        raise RulesetError(f"{where}: lang must be among {sorted(LANGS)}")
    common = {
        "id": rule_id,
        "kind": kind,
        "family": family,
        "weight": weight,
        "lang": lang,
        "examples": _strings(entry, "examples", where, required=True),
        "counter_examples": _strings(entry, "counter_examples", where, required=True),
    }
    if kind == "detector":
        return RuleSpec(**common)
    view = _need(entry, "view", str, where)
    if view not in VIEWS:
        raise RulesetError(f"{where}: view must be one of {sorted(VIEWS)}")
    pattern = _joined(_need(entry, "pattern", str, where))
    triggers = tuple(_need(entry, "triggers", str, where).split())
    if not pattern or not triggers:
        raise RulesetError(f"{where}: empty pattern or triggers")
    template = _expand(pattern, macros, where, used)
    return RuleSpec(**common, view=view, template=template, triggers=triggers)


def parse(data: bytes) -> Ruleset:
    """Validate a rules file's bytes; :class:`RulesetError` names the first problem found."""
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RulesetError(f"rules file is not valid TOML: {exc}") from exc
    unknown = set(doc) - _TOP_KEYS
    if unknown:
        raise RulesetError(f"unknown top-level keys {sorted(unknown)}")
    if _need(doc, "format", int, "rules file") != FORMAT:
        raise RulesetError(f"rules file format {doc['format']} is not {FORMAT}")
    version = _need(doc, "version", str, "rules file")
    families: dict[str, Family] = {}
    for name, table in _need(doc, "families", dict, "rules file").items():
        if not isinstance(table, dict) or set(table) != {"weight", "blocks_alone"}:
            raise RulesetError(f"[families] {name}: needs exactly weight and blocks_alone")
        weight = _need(table, "weight", int, f"[families] {name}")
        families[name] = Family(name, weight, _need(table, "blocks_alone", bool, f"[families] {name}"))
    macros: dict[str, str] = {}
    for name, value in _need(doc, "macros", dict, "rules file").items():
        if not isinstance(value, str) or not _MACRO_REF.fullmatch("{" + name + "}"):
            raise RulesetError(f"[macros] {name}: must be an upper-case name with a string value")
        macros[name] = _joined(value)
    for name, value in macros.items():
        if _MACRO_REF.search(value):
            raise RulesetError(f"[macros] {name}: macros cannot reference macros")
    used: set[str] = set()
    rules = tuple(_spec(e, "rule", families, macros, used) for e in doc.get("rule", []))
    detectors = tuple(_spec(e, "detector", families, macros, used) for e in doc.get("detector", []))
    if set(macros) - used:
        raise RulesetError(f"unused macros {sorted(set(macros) - used)}")
    ids = [s.id for s in (*rules, *detectors)]
    if len(ids) != len(set(ids)):
        raise RulesetError(f"duplicate ids {sorted({i for i in ids if ids.count(i) > 1})}")
    return Ruleset(
        version=version,
        block_at=_need(doc, "block_at", int, "rules file"),
        zero_width_limit=_need(doc, "zero_width_limit", int, "rules file"),
        families=families,
        rules=rules,
        detectors=detectors,
        sha256=hashlib.sha256(data).hexdigest(),
    )


def load(path: Path = RULES_PATH) -> Ruleset:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RulesetError(f"cannot read the rules file {path}: {exc}") from exc
    return parse(data)


RULESET = load()
