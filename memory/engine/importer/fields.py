"""Field parsers: one legacy value to the value memdesk keeps, and whether (or why) it could not be kept."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .. import common as c
from ..provenance import ceiling
from ..types import InvalidArgument

IMPORT_ORIGIN = "import"
_LIMITS = {
    "object": 4096,
    "id": 40,
    "superseded_by": 40,
    "supersedes": 40,
    "subject": 512,
    "predicate": 512,
    "origin": 256,
    "invalidated_by_event": 256,
    "session_id": 256,
}
_MAX_INT = 2_147_483_647


def _raw(value: Any) -> Any:
    """A JSON-safe copy of a legacy value, for ``metadata.legacy_raw``."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, float) and value != value:
        return None
    return value


def _text(value: Any) -> tuple[str | None, bool]:
    """(text, changed): bytes are decoded, NUL characters (which PostgreSQL cannot store) replaced."""
    if value is None:
        return None, False
    changed = False
    if isinstance(value, bytes):
        text = value.decode("utf-8", "replace")
        changed = "\ufffd" in text and b"\xef\xbf\xbd" not in value
    elif isinstance(value, str):
        text = value
    else:
        text = str(value)
    if "\x00" in text:
        text, changed = text.replace("\x00", "\ufffd"), True
    return text, changed


def _time(value: Any) -> tuple[datetime | None, bool]:
    """(aware UTC datetime or None, ok). Naive times are UTC; numbers are Unix seconds."""
    if value is None:
        return None, True
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, UTC), True
        text, _ = _text(value)
        text = (text or "").strip()
        if not text:
            return None, True
        if text[-1] in "zZ":
            text = text[:-1] + "+00:00"
        dt = datetime.fromisoformat(text)
        if dt.tzinfo is None or dt.tzinfo.utcoffset(dt) is None:
            dt = dt.replace(tzinfo=UTC)
        return dt.astimezone(UTC), True
    except (ValueError, OverflowError, OSError):
        return None, False


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _scrub(value: Any) -> tuple[Any, bool]:
    """Replace NUL characters inside parsed JSON (PostgreSQL's jsonb cannot hold them)."""
    if isinstance(value, str):
        return (value.replace("\x00", "\ufffd"), True) if "\x00" in value else (value, False)
    if isinstance(value, list):
        out, changed = [], False
        for item in value:
            new, ch = _scrub(item)
            out.append(new)
            changed |= ch
        return out, changed
    if isinstance(value, dict):
        d, changed = {}, False
        for k, v in value.items():
            nk, ch1 = _scrub(k)
            nv, ch2 = _scrub(v)
            d[nk] = nv
            changed |= ch1 or ch2
        return d, changed
    return value, False


def _json(value: Any, kind: type) -> tuple[Any, str | None]:
    """(parsed value or kind(), problem). NULL and empty text are simply the default."""
    if value is None:
        return kind(), None
    if value == "[]" and kind is list or value == "{}" and kind is dict:
        return kind(), None
    text, _ = _text(value)
    if not (text or "").strip():
        return kind(), None
    try:
        parsed = json.loads(text or "", parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return kind(), "malformed JSON"
    if not isinstance(parsed, kind):
        return kind(), f"JSON {type(parsed).__name__} where a {kind.__name__} was expected"
    parsed, scrubbed = _scrub(parsed)
    return parsed, "NUL characters replaced" if scrubbed else None


def _number(value: Any, default: float, low: float, high: float) -> tuple[float, str | None]:
    if value is None or (isinstance(value, str | bytes) and not value.strip()):
        return default, None
    if isinstance(value, bytes):
        return default, "not a number"
    try:
        x = float(value)
    except (TypeError, ValueError):
        return default, "not a number"
    if x != x or x in (float("inf"), float("-inf")):
        return default, "not a number"
    if x < low:
        return low, f"below {low}"
    if x > high:
        return high, f"above {high}"
    return x, None


def _flag(value: Any) -> tuple[bool, str | None]:
    if value is None:
        return False, None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value != 0, None
    text = (_text(value)[0] or "").strip().lower()
    if text in {"", "0", "false", "f", "no", "n"}:
        return False, None
    if text in {"1", "true", "t", "yes", "y"}:
        return True, None
    return False, "not a boolean"


def _origin(value: Any) -> str:
    text = (_text(value)[0] or "").strip()
    return text or IMPORT_ORIGIN


def _id_list(value: Any) -> tuple[list[str], str | None]:
    parsed, problem = _json(value, list)
    ids = [i for i in parsed if isinstance(i, str) and i]
    if len(ids) != len(parsed) and problem is None:
        problem = "entries that are not ids were dropped"
    return ids, problem


def _base_trust(origin: str, legacy: Any, top: float | None = None) -> tuple[float, bool]:
    """(min(legacy trust or 1.0, ``top`` or the ceiling of the origin class), legacy value was unusable)."""
    requested, problem = _number(legacy, 1.0, 0.0, 1.0)
    return round(min(requested, ceiling(origin) if top is None else top), 6), problem is not None


@dataclass(frozen=True)
class ImportPolicy:
    """Where rows may go and how far their trust is taken (issue 15 item 12).

    ``agent_id`` puts every row into that agent; ``agent_map`` (``{file agent: target agent}``) imports only
    the rows of the agents it names, each into its target, and refuses the others; with neither, rows keep
    their own agent. Trust is at most the ``import`` class's ceiling (0.7) unless ``trust_origins``: then the
    file's origins are trusted up to their own classes' ceilings (SPEC P1)."""

    agent_id: str | None = None
    agent_map: dict[str, str] | None = None
    trust_origins: bool = False

    def target(self, raw_agent: Any) -> str:
        if self.agent_id is not None:
            return self.agent_id
        agent = c.check_agent_id(_text(raw_agent)[0])
        if self.agent_map is None:
            return agent
        if agent not in self.agent_map:
            raise InvalidArgument(
                f"rows of agent {agent[:60]!r} are not named by the import", field="agent_id"
            )
        return self.agent_map[agent]

    def ceiling(self, origin: str) -> float:
        top = ceiling(origin)
        return top if self.trust_origins else min(top, ceiling(IMPORT_ORIGIN))
