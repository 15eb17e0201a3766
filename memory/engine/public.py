"""The engine surface for apps that keep their own tables next to memory (the wiki).

Those apps must not import the engine's private modules (``common``, ``text``, ``rawsql``, …;
tests/test_architecture.py enforces it). What they need is here, re-exported from ``memory.engine``:

* ``audit_record``: an audit event for an action on the app's own rows, validated (the audit log is a memory
  table, so only the engine writes it);
* ``write_transaction`` and ``lock_key``: the engine's transaction (retried on transient lock errors) and its
  per-key writer lock, so the app's writes and the engine writes they call commit together;
* the engine's validators and the belief filter, so the app refuses what the engine would refuse;
* the text units of the memory FTS index, so the app's search normalises text the same way.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.db.models import Q

from memory.models import AuditEvent

from . import common, text
from .belief import current_q
from .common import (
    MAX_CONTENT_BYTES,
    MAX_RAW_TAGS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    check_actor,
    check_agent_id,
    check_tags,
    check_text,
    lock_key,
    parse_time,
    write_transaction,
)
from .types import InvalidArgument

ACTION_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
MAX_AUDIT_REASON = 2000
MAX_AUDIT_DETAILS_BYTES = 16 * 1024

__all__ = [
    "MAX_CONTENT_BYTES",
    "MAX_RAW_TAGS",
    "MAX_TAG_CHARS",
    "MAX_TAGS",
    "audit_record",
    "belief_current_q",
    "check_actor",
    "check_agent_id",
    "check_tags",
    "check_text",
    "is_cjk_run",
    "lock_key",
    "parse_time",
    "query_units",
    "text_units",
    "write_transaction",
]


def audit_record(
    *,
    agent_id: str,
    actor: str,
    action: str,
    subject: str | None = None,
    memory_id: str | None = None,
    reason: str = "",
    details: dict[str, Any] | None = None,
) -> int:
    """Write one audit event (``action`` a lower-case identifier such as ``wiki_promote``) and return its id.

    ``subject`` is the key the action is about, ``memory_id`` the memory row it touched, ``details`` a small
    JSON object (at most 16 KB). Everything is validated; an invalid value is ``invalid_argument``."""
    agent_id = check_agent_id(agent_id)
    actor = check_actor(actor)
    if not isinstance(action, str) or not ACTION_RE.fullmatch(action):
        raise InvalidArgument("action must be a lower-case identifier (a-z, 0-9, _)", field="action")
    subject = check_text(subject, field="subject", required=False)
    memory_id = check_text(memory_id, field="memory_id", required=False, limit=40)
    if not isinstance(reason, str) or "\x00" in reason:
        raise InvalidArgument("reason must be a string", field="reason")
    if len(reason) > MAX_AUDIT_REASON:
        raise InvalidArgument(f"reason is longer than {MAX_AUDIT_REASON} characters", field="reason")
    details = {} if details is None else details
    if not isinstance(details, dict) or not all(isinstance(k, str) for k in details):
        raise InvalidArgument("details must be an object with string keys", field="details")
    try:
        size = len(json.dumps(details, allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError):
        raise InvalidArgument(
            "details must be JSON (strings, numbers, lists, objects)", field="details"
        ) from None
    if size > MAX_AUDIT_DETAILS_BYTES:
        raise InvalidArgument(f"details are larger than {MAX_AUDIT_DETAILS_BYTES} bytes", field="details")
    return _write_audit(
        agent_id=agent_id,
        actor=actor,
        action=action,
        subject=subject,
        memory_id=memory_id,
        reason=reason,
        details=details,
    )


@write_transaction
def _write_audit(**kwargs: Any) -> int:
    return int(AuditEvent.objects.create(created_at=common.now(), **kwargs).pk)


def belief_current_q() -> Q:
    """The filter of memory rows believed and current now (not quarantined, not retracted, in validity)."""
    return current_q(common.now())


def text_units(value: str) -> list[list[str]]:
    """The units of a text as the memory FTS index sees them (NFKC, lower case): a word, or a CJK run's
    bigrams."""
    return text.tokens(value)


def query_units(query: str) -> list[list[str]]:
    """A query's distinct units (at most 32), as the memory search reads a query."""
    return text._query_units(query)


def is_cjk_run(value: str) -> bool:
    return bool(text.CJK_RUN.fullmatch(value))
