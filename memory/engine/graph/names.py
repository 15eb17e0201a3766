"""Entity names (SPEC G1, G6): normalisation, the bounds on a name, and raw text to canonical entity."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import numpy as np

from .. import common as c
from ..types import InvalidArgument

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"


_CJK_CHAR = re.compile(f"[{_CJK}]")


def normalize_entity(text: str) -> str:
    """Trim, NFKC, lower-case and fold whitespace runs to one space."""
    if not isinstance(text, str):
        return ""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


# NFKC can lengthen a name: one character becomes up to 18 (U+FDFA; a test pins the bound). A stored subject or
# object has at most MAX_TRIPLE_PART characters, so its entity name has at most MAX_ENTITY_CHARS: lookups accept
# that many (a node of the graph is always addressable); an alias is stored in a MAX_TRIPLE_PART column.
NFKC_MAX_EXPANSION = 18


MAX_ENTITY_CHARS = c.MAX_TRIPLE_PART * NFKC_MAX_EXPANSION


# A fact's subject is at most MAX_TRIPLE_PART characters once normalised too (its object at most its own limit):
# the bound that holds a stored name's entity to a fixed size, whatever NFKC makes of it (issue 15).
MAX_OBJECT_CHARS = 4096


def check_entity_length(value: str | None, *, field: str, limit: int = c.MAX_TRIPLE_PART) -> None:
    """Refuse a subject or object whose entity name (``normalize_entity``) is longer than ``limit``. ASCII
    never lengthens (NFKC leaves it, lower-casing keeps its length), so only other text is normalised here."""
    if value is None or value.isascii():
        return
    size = len(normalize_entity(value))
    if size > limit:
        raise InvalidArgument(
            f"{field} is {size} characters once normalised (NFKC); the limit is {limit}",
            field=field,
            limit=limit,
        )


def _check_name(value: Any, *, field: str, limit: int = MAX_ENTITY_CHARS) -> str:
    """``value`` normalised. Its length is checked before normalising (bounded work; NFKC can lengthen it)."""
    if not isinstance(value, str):
        raise InvalidArgument(f"{field} must be a string", field=field)
    if "\x00" in value or len(value.strip()) > limit:
        raise InvalidArgument(f"{field} must be at most {limit} characters", field=field)
    name = normalize_entity(value)
    if not name:
        raise InvalidArgument(f"{field} must not be empty", field=field)
    return name


def _check_alias_name(value: Any, *, field: str) -> str:
    name = _check_name(value, field=field, limit=c.MAX_TRIPLE_PART)
    if len(name) > c.MAX_TRIPLE_PART:
        raise InvalidArgument(
            f"{field} is {len(name)} characters once normalised; an alias side can have at most "
            f"{c.MAX_TRIPLE_PART}",
            field=field,
        )
    return name


class _Resolver:
    """Raw subject/object text → canonical entity, memoised (many facts share names)."""

    def __init__(self, aliases: dict[str, str]):
        self.aliases = aliases
        self.memo: dict[str, str] = {}

    def __call__(self, raw: str | None) -> str | None:
        if raw is None:
            return None
        hit = self.memo.get(raw)
        if hit is None:
            norm = normalize_entity(raw)
            hit = self.aliases.get(norm, norm)
            self.memo[raw] = hit
        return hit or None


# Python's str.split() separators among ASCII characters (normalize_entity folds their runs to one space)
_ASCII_SPACE_RUN = r"[\t\n\x0b\x0c\r\x1c-\x1f ]+"


def normalize_names(raw: Any) -> Any:
    """``normalize_entity`` of every value of an Arrow string array: in C for ASCII values (NFKC leaves ASCII
    as it is; lower-case, whitespace runs to one space, trimmed), in Python for the others."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out = pc.ascii_lower(raw)
    out = pc.utf8_trim(pc.replace_substring_regex(out, pattern=_ASCII_SPACE_RUN, replacement=" "), " ")
    ascii_mask = pc.string_is_ascii(raw)
    if len(raw) and not pc.all(ascii_mask).as_py():
        others = pc.invert(ascii_mask)
        fixed = [normalize_entity(x) for x in raw.filter(others).to_pylist()]
        out = pc.replace_with_mask(out, others, pa.array(fixed, type=out.type))
    return out


def _strings(values: Any) -> Any:
    """A column of names or ids as an Arrow large_string array (as it is when the scan already made one)."""
    import pyarrow as pa

    if isinstance(values, pa.Array):
        return values if values.type == pa.large_string() else values.cast(pa.large_string())
    return pa.array(list(values), type=pa.large_string())


def _encode_names(subjects: Any, objects: Any) -> tuple[np.ndarray, Any]:
    """Both name columns dictionary-encoded by Arrow (in C, no Python object per value): each value's code
    into the distinct raw names (-1 for no name), and those names (an Arrow array)."""
    import pyarrow as pa

    names = pa.concat_arrays([_strings(subjects), _strings(objects)])
    encoded = names.dictionary_encode()
    codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, encoded.dictionary


def _entity_nodes(distinct: Any, aliases: dict[str, str]) -> tuple[np.ndarray, Any]:
    """Each distinct raw name's entity node (normalised, alias-resolved; -1 for a name that normalises to
    nothing), with one more slot, -1, for "no name"; and the entities' names (Arrow), in node order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = normalize_names(distinct)
    if aliases:
        keys = pa.array(list(aliases), type=pa.large_string())
        canonical = pa.array(list(aliases.values()), type=pa.large_string())
        names = pc.coalesce(canonical.take(pc.index_in(names, value_set=keys)), names)
    names = pc.if_else(pc.equal(names, ""), pa.scalar(None, pa.large_string()), names)
    encoded = names.dictionary_encode()
    nodes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    return np.append(nodes, -1), encoded.dictionary
