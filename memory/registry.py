"""The predicate registry (SPEC B3): per predicate its value type, cardinality, acyclicity and synonyms.

The registry is data: ``predicates.toml`` ships beside this module (``memory/``, a neutral place: the engine
reads cardinality for its write path and the background track reads the rest; ``memory.dream.registry``
re-exports this module); a deployment extends or overrides it with
``[registry] path = "..."`` in ``memdesk.toml`` (a predicate defined there replaces the shipped one of the same
name, and the synonyms it declares win). A malformed file raises ``RegistryError`` with the file and the key at
fault; ``active_registry()`` then falls back to the shipped registry and reports the error (logged once).

Predicate names compare normalised (trimmed, lower-cased, spaces and hyphens to ``_``). A predicate the
registry does not know is single-valued free text, not acyclic, its own canonical name.
"""

from __future__ import annotations

import logging
import re
import tomllib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "CARDINALITIES",
    "DEFAULT_PATH",
    "VALUE_TYPES",
    "PredicateSpec",
    "Registry",
    "RegistryError",
    "RegistryLoad",
    "ValueCheck",
    "active_registry",
    "default_registry",
    "extend_registry",
    "get_registry",
    "load_registry",
    "normalize_predicate",
    "normalize_text",
    "parse_registry",
]

log = logging.getLogger("memdesk.registry")

DEFAULT_PATH = Path(__file__).with_name("predicates.toml")
VALUE_TYPES = ("place", "person", "organisation", "date", "integer", "enum", "url", "email", "text")
CARDINALITIES = ("single", "multi")
_KEYS = {
    "type",
    "cardinality",
    "acyclic",
    "synonyms",
    "min",
    "max",
    "values",
    "not_future",
    "pattern",
    "description",
}
_ONLY_FOR = {"min": "integer", "max": "integer", "values": "enum", "not_future": "date", "pattern": "text"}
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s.]+(?:\.[^@\s.]+)*\.[^@\s.\d]{2,}$")
_INTEGER = re.compile(r"^[+-]?\d{1,3}(?:[,_ ]?\d{3})*$|^[+-]?\d+$")
MAX_VALUE = 4096
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})


def normalize_text(text: object) -> str:
    """NFKC, case-folded, curly apostrophes straightened, whitespace runs folded, trimmed."""
    if not isinstance(text, str):
        return ""
    return " ".join(unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).casefold().split())


def normalize_predicate(name: object) -> str:
    """Predicate names compare like this: trimmed, lower-cased, spaces and hyphens (runs) to one ``_``."""
    text = normalize_text(name)
    return re.sub(r"[\s\-]+", "_", text).strip("_")


class RegistryError(Exception):
    """A registry file that cannot be used; the message names the file and the key at fault."""

    code = "invalid_registry"


@dataclass(frozen=True)
class PredicateSpec:
    name: str
    type: str = "text"
    cardinality: str = "single"
    acyclic: bool = False
    synonyms: tuple[str, ...] = ()
    min: int | None = None
    max: int | None = None
    values: tuple[str, ...] = ()
    not_future: bool = False
    pattern: str | None = None
    description: str = ""


@dataclass(frozen=True)
class ValueCheck:
    """A domain check's answer: ``ok``, and when not, a plain ``message`` for the lint finding."""

    ok: bool
    message: str = ""

    def __bool__(self) -> bool:
        return self.ok


_UNKNOWN = PredicateSpec(name="")


class Registry:
    """Answers about predicates, by normalised name or synonym."""

    def __init__(self, predicates: Mapping[str, PredicateSpec], *, source: str = "") -> None:
        self.source = source
        self._specs = dict(predicates)
        self._names: dict[str, str] = {}
        for name, spec in self._specs.items():
            self._names[name] = name
            for synonym in spec.synonyms:
                self._names[synonym] = name
        self._patterns = {
            name: re.compile(spec.pattern) for name, spec in self._specs.items() if spec.pattern is not None
        }

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, predicate: object) -> bool:
        return normalize_predicate(predicate) in self._names

    @property
    def names(self) -> list[str]:
        return sorted(self._specs)

    def canonical(self, predicate: str) -> str:
        """The canonical name (a synonym maps to its predicate; an unknown name is itself, normalised)."""
        norm = normalize_predicate(predicate)
        return self._names.get(norm, norm)

    def spec(self, predicate: str) -> PredicateSpec | None:
        return self._specs.get(self.canonical(predicate))

    def _spec(self, predicate: str) -> PredicateSpec:
        return self.spec(predicate) or _UNKNOWN

    def cardinality(self, predicate: str) -> str:
        return self._spec(predicate).cardinality

    def value_type(self, predicate: str) -> str:
        return self._spec(predicate).type

    def is_acyclic(self, predicate: str) -> bool:
        return self._spec(predicate).acyclic

    def synonyms(self, a: str, b: str) -> bool:
        """Whether two predicate names are one predicate (equal after normalisation, or declared synonyms)."""
        return self.canonical(a) == self.canonical(b)

    def check_value(self, predicate: str, value: Any, *, today: date | None = None) -> ValueCheck:
        """The value-domain check lint uses: dates parse (and a ``not_future`` date is not after today),
        integers parse and lie in range, enums are in the set, URLs and emails look like ones, patterns match."""
        spec = self._spec(predicate)
        if not isinstance(value, str) or not value.strip():
            return ValueCheck(False, "the value is empty")
        text = " ".join(value.split())
        if len(text) > MAX_VALUE:
            return ValueCheck(False, f"the value is longer than {MAX_VALUE} characters")
        checker = _CHECKS.get(spec.type)
        if checker is not None:
            return checker(self, spec, text, today)
        pattern = self._patterns.get(spec.name)
        if pattern is not None and not pattern.fullmatch(text):
            return ValueCheck(False, f"{text!r} does not look like a {spec.name} value")
        return ValueCheck(True)


def _check_date(reg: Registry, spec: PredicateSpec, text: str, today: date | None) -> ValueCheck:
    parsed = _parse_date(text)
    if parsed is None:
        return ValueCheck(False, f"{text!r} is not a date (expected YYYY-MM-DD, YYYY-MM or YYYY)")
    earliest, precision = parsed
    today = today or datetime.now(UTC).date()
    if spec.not_future and earliest > today:
        return ValueCheck(False, f"{text!r} is in the future")
    if earliest.year < 1000:
        return ValueCheck(False, f"{text!r} is not a plausible {precision}")
    return ValueCheck(True)


def _parse_date(text: str) -> tuple[date, str] | None:
    """The earliest day a date value can mean, and its precision; None when it does not parse."""
    for fmt, precision in (("%Y-%m-%d", "date"), ("%Y-%m", "month"), ("%Y", "year")):
        try:
            return datetime.strptime(text, fmt).date(), precision
        except ValueError:
            continue
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date(), "date"
    except ValueError:
        return None


def _check_integer(reg: Registry, spec: PredicateSpec, text: str, today: date | None) -> ValueCheck:
    if not _INTEGER.match(text):
        return ValueCheck(False, f"{text!r} is not a whole number")
    number = int(re.sub(r"[,_ ]", "", text))
    if spec.min is not None and number < spec.min:
        return ValueCheck(False, f"{number} is below the minimum {spec.min}")
    if spec.max is not None and number > spec.max:
        return ValueCheck(False, f"{number} is above the maximum {spec.max}")
    return ValueCheck(True)


def _check_enum(reg: Registry, spec: PredicateSpec, text: str, today: date | None) -> ValueCheck:
    if normalize_text(text) in spec.values:
        return ValueCheck(True)
    return ValueCheck(False, f"{text!r} is not one of {', '.join(spec.values)}")


def _check_url(reg: Registry, spec: PredicateSpec, text: str, today: date | None) -> ValueCheck:
    candidate = text if "://" in text else f"https://{text}"
    try:
        parts = urlsplit(candidate)
        host = parts.hostname or ""
    except ValueError:
        return ValueCheck(False, f"{text!r} is not a URL")
    plausible = "." in host or host == "localhost"
    if parts.scheme not in ("http", "https") or not plausible or " " in text:
        return ValueCheck(False, f"{text!r} is not an http(s) URL")
    return ValueCheck(True)


def _check_email(reg: Registry, spec: PredicateSpec, text: str, today: date | None) -> ValueCheck:
    if _EMAIL.match(text):
        return ValueCheck(True)
    return ValueCheck(False, f"{text!r} is not an email address")


_CHECKS = {
    "date": _check_date,
    "integer": _check_integer,
    "enum": _check_enum,
    "url": _check_url,
    "email": _check_email,
}


# --- loading and validation ------------------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_spec(raw_name: str, body: Any, problems: list[str]) -> PredicateSpec | None:
    name = normalize_predicate(raw_name)
    where = f"predicates.{raw_name}"
    if not name:
        problems.append(f"{where}: the predicate name is empty")
        return None
    if not isinstance(body, dict):
        problems.append(f"{where}: must be a table")
        return None
    before = len(problems)
    for key in sorted(set(body) - _KEYS):
        problems.append(f"{where}.{key}: unknown key (allowed: {', '.join(sorted(_KEYS))})")
    kind = body.get("type")
    if kind not in VALUE_TYPES:
        problems.append(f"{where}.type: {kind!r} is not one of {', '.join(VALUE_TYPES)}")
    for key, owner in _ONLY_FOR.items():
        if key in body and kind != owner:
            problems.append(f"{where}.{key}: only a {owner} predicate takes {key}")
    cardinality = body.get("cardinality", "single")
    if cardinality not in CARDINALITIES:
        problems.append(f"{where}.cardinality: {cardinality!r} is not single or multi")
    for flag in ("acyclic", "not_future"):
        if flag in body and not isinstance(body[flag], bool):
            problems.append(f"{where}.{flag}: must be true or false")
    synonyms = body.get("synonyms", [])
    if not isinstance(synonyms, list) or not all(
        isinstance(s, str) and normalize_predicate(s) for s in synonyms
    ):
        problems.append(f"{where}.synonyms: must be a list of non-empty names")
        synonyms = []
    low, high = body.get("min"), body.get("max")
    for key, bound in (("min", low), ("max", high)):
        if bound is not None and not _is_int(bound):
            problems.append(f"{where}.{key}: must be an integer")
    if isinstance(low, int) and isinstance(high, int) and _is_int(low) and _is_int(high) and low > high:
        problems.append(f"{where}: min {low} is above max {high}")
    values = body.get("values", [])
    if kind == "enum" and (
        not isinstance(values, list)
        or not values
        or not all(isinstance(v, str) and v.strip() for v in values)
    ):
        problems.append(f"{where}.values: an enum needs a non-empty list of names")
        values = []
    pattern = body.get("pattern")
    if pattern is not None and not isinstance(pattern, str):
        problems.append(f"{where}.pattern: must be text")
    elif pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            problems.append(f"{where}.pattern: not a regular expression ({exc})")
    description = body.get("description", "")
    if not isinstance(description, str):
        problems.append(f"{where}.description: must be text")
    if len(problems) > before:
        return None
    return PredicateSpec(
        name=name,
        type=str(kind),
        cardinality=cardinality,
        acyclic=body.get("acyclic", False),
        synonyms=tuple(dict.fromkeys(s for s in map(normalize_predicate, synonyms) if s != name)),
        min=low,
        max=high,
        values=tuple(dict.fromkeys(normalize_text(v) for v in values)),
        not_future=body.get("not_future", False),
        pattern=pattern,
        description=description,
    )


def parse_registry(data: Any, *, source: str) -> dict[str, PredicateSpec]:
    """Validated predicate specs from a parsed registry document; every problem at once in a RegistryError."""
    problems: list[str] = []
    if not isinstance(data, dict):
        raise RegistryError(f"{source}: not a registry document")
    for key in sorted(set(data) - {"version", "predicates"}):
        problems.append(f"{key}: unknown top-level key (allowed: version, predicates)")
    if data.get("version", 1) != 1:
        problems.append(f"version: {data.get('version')!r} is not supported (expected 1)")
    table = data.get("predicates")
    if not isinstance(table, dict) or not table:
        problems.append("predicates: a [predicates.<name>] table is required")
        table = {}
    specs: dict[str, PredicateSpec] = {}
    for raw_name, body in table.items():
        spec = _parse_spec(raw_name, body, problems)
        if spec is None:
            continue
        if spec.name in specs:
            problems.append(f"predicates.{raw_name}: {spec.name!r} is defined twice")
        specs[spec.name] = spec
    _check_names(specs, problems)
    if problems:
        raise RegistryError(f"{source}: " + "; ".join(problems))
    return specs


def _check_names(specs: Mapping[str, PredicateSpec], problems: list[str]) -> None:
    """A name or synonym must point at exactly one predicate."""
    owner: dict[str, str] = {name: name for name in specs}
    for name, spec in specs.items():
        for synonym in spec.synonyms:
            other = owner.get(synonym)
            if other is not None and other != name:
                what = "a predicate" if synonym in specs else f"a synonym of {other!r}"
                problems.append(f"predicates.{name}.synonyms: {synonym!r} is already {what}")
            owner.setdefault(synonym, name)


def _read_toml(path: Path) -> Any:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise RegistryError(f"{path}: no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise RegistryError(f"{path}: unreadable ({exc})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise RegistryError(f"{path}: not valid TOML ({exc})") from exc


def load_registry(path: Path | str) -> Registry:
    """The registry in one file alone (RegistryError when it is malformed)."""
    path = Path(path)
    return Registry(parse_registry(_read_toml(path), source=str(path)), source=str(path))


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The shipped registry (``memory/predicates.toml``)."""
    return load_registry(DEFAULT_PATH)


def extend_registry(base: Registry, path: Path | str) -> Registry:
    """``base`` extended by the predicates of ``path``: a predicate defined there replaces the base's, and a
    name or synonym it claims is taken away from the base's predicates."""
    path = Path(path)
    extra = parse_registry(_read_toml(path), source=str(path))
    claimed = {name for spec in extra.values() for name in (spec.name, *spec.synonyms)}
    merged: dict[str, PredicateSpec] = {}
    for name, spec in base._specs.items():
        if name in extra:
            continue
        if name in claimed:
            raise RegistryError(
                f"{path}: {name!r} is a shipped predicate; define [predicates.{name}] to replace it"
            )
        kept = tuple(s for s in spec.synonyms if s not in claimed)
        merged[name] = spec if kept == spec.synonyms else _replace(spec, synonyms=kept)
    merged.update(extra)
    problems: list[str] = []
    _check_names(merged, problems)
    if problems:
        raise RegistryError(f"{path}: " + "; ".join(problems))
    return Registry(merged, source=f"{base.source} + {path}")


def _replace(spec: PredicateSpec, **changes: Any) -> PredicateSpec:
    values = {f: getattr(spec, f) for f in PredicateSpec.__dataclass_fields__}
    values.update(changes)
    return PredicateSpec(**values)


@dataclass(frozen=True)
class RegistryLoad:
    """The registry in force and, when the deployment's file could not be used, why (``error``)."""

    registry: Registry
    error: str = ""
    override: str = ""


_active: dict[str, tuple[float, RegistryLoad]] = {}
_reported: set[str] = set()


def active_registry() -> RegistryLoad:
    """The shipped registry extended by ``[registry] path`` from memdesk.toml; a malformed override falls back
    to the shipped registry with ``error`` set (and one warning). Re-read when the file changes."""
    from memory import config

    path = config.registry_path()
    if path is None:
        return RegistryLoad(default_registry())
    try:
        mtime = path.stat().st_mtime
    except OSError:
        mtime = -1.0
    hit = _active.get(str(path))
    if hit and hit[0] == mtime:
        return hit[1]
    try:
        load = RegistryLoad(extend_registry(default_registry(), path), override=str(path))
    except RegistryError as exc:
        message = str(exc)
        if message not in _reported:
            _reported.add(message)
            log.warning("predicate registry override unusable, using the shipped registry: %s", message)
        load = RegistryLoad(default_registry(), error=message, override=str(path))
    _active[str(path)] = (mtime, load)
    return load


def get_registry() -> Registry:
    """The registry in force (see ``active_registry``)."""
    return active_registry().registry
