"""Origin classes, trust ceilings and derived trust (SPEC P1)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memory.models import Memory

from .common import check_ids
from .types import InvalidArgument

TRUST_CEILINGS: dict[str, float] = {
    "user_direct": 1.0,
    "operator": 1.0,
    "import": 0.7,
    "agent_derived": 0.6,
    "tool_echo": 0.5,
    "channel": 0.3,
    "mcp_external": 0.3,
    "unattributed": 0.6,
}
CLASS_ALIASES = {"user": "user_direct", "user_profile": "user_direct"}
DEFAULT_CEILING = 0.6
# Classes whose reaffirmation never counts as independent corroboration (SPEC T5).
NON_CORROBORATING = {"agent_derived", "tool_echo"}
DEFAULT_ORIGIN = "unattributed"


def origin_class(origin: str) -> str:
    cls = origin.split(":", 1)[0].strip().lower()
    return CLASS_ALIASES.get(cls, cls)


def ceiling(origin: str) -> float:
    return TRUST_CEILINGS.get(origin_class(origin), DEFAULT_CEILING)


def check_origin(origin: Any) -> str:
    if origin is None:
        return DEFAULT_ORIGIN
    if not isinstance(origin, str) or not origin.strip() or len(origin) > 256 or "\x00" in origin:
        raise InvalidArgument("origin must be a non-empty string of at most 256 characters", field="origin")
    return origin.strip()


def derived_trust(agent_id: str, derived_from: Iterable[str]) -> tuple[list[str], float]:
    """The ids (validated) and the lowest trust among them; an id unknown to this agent counts 0.0."""
    ids = check_ids(list(derived_from))
    if not ids:
        return [], 1.0
    # By primary key, owner checked here: with agent_id in the WHERE clause SQLite (without ANALYZE statistics)
    # walks the agent's whole index instead of the primary key.
    rows = Memory.objects.filter(id__in=ids).values_list("id", "agent_id", "origin_trust")
    found = {mid: trust for mid, owner, trust in rows if owner == agent_id}
    return ids, min(float(found.get(i, 0.0)) for i in ids)


def effective_trust(
    *, agent_id: str, origin: str, requested: Any = None, derived_from: Iterable[str] = ()
) -> tuple[float, list[str]]:
    if requested is None:
        req = 1.0
    elif isinstance(requested, bool) or not isinstance(requested, int | float) or not 0.0 <= requested <= 1.0:
        raise InvalidArgument("origin_trust must be a number between 0 and 1", field="origin_trust")
    else:
        req = float(requested)
    ids, lowest = derived_trust(agent_id, derived_from)
    return round(min(req, ceiling(origin), lowest), 6), ids
