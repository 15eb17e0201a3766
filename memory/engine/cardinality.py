"""The one place the engine asks the predicate registry (SPEC B3) what a key is.

A fact's key is ``(agent_id, subject, predicate, value_key)``. For a single-valued predicate (every predicate
the registry does not declare ``multi``) ``value_key`` is empty, so one value at a time holds and a new value
supersedes the old (SPEC T3). For a multi-valued predicate (likes, speaks, has_child, ...) it is the normalised
object, so each value is its own key with its own timeline: "likes tea" and then "likes coffee" both hold.

The normalised object is the registry's ``normalize_text`` (NFKC, case-folded, whitespace folded): "Tea" and
" tea " are one value. A long object is keyed by a digest so the key stays indexable (``MAX_KEY_CHARS``).

The column is stored on ``memories`` and ``memory_fact_writes`` and is part of every index and query over a
key; the key lock stays per ``(agent, subject, predicate)`` (all values of a multi-valued predicate share one
lock: a coarser lock, never a missed one). When the registry flips a predicate's cardinality, the stored keys
are re-derived by ``rekey.rekey_predicates`` (``manage.py rekey_predicates``).
"""

from __future__ import annotations

import hashlib

from memory.registry import get_registry, normalize_text

__all__ = ["MAX_KEY_CHARS", "is_multi", "value_key"]

MAX_KEY_CHARS = 200


def is_multi(predicate: str | None) -> bool:
    """Whether the registry in force declares ``predicate`` (or a synonym of it) multi-valued."""
    return bool(predicate) and get_registry().cardinality(predicate or "") == "multi"


def value_key(predicate: str | None, obj: str | None, *, multi: bool | None = None) -> str:
    """The ``value_key`` of a fact: "" for a single-valued predicate, the normalised object for a multi-valued
    one (``multi`` skips the registry lookup when the caller already knows)."""
    if not (is_multi(predicate) if multi is None else multi):
        return ""
    text = normalize_text(obj)
    if len(text) <= MAX_KEY_CHARS:
        return text
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
