"""Private helpers shared by the engine modules: validation, transactions, agents, audit."""

from __future__ import annotations

import base64
import contextlib
import functools
import itertools
import json
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, TypeVar

from django.db import IntegrityError, OperationalError, connection, transaction
from django.utils import timezone

from memory.models import LAYERS, RETRACT_EVENTS, Agent, AuditEvent, GraphGeneration

from . import rawsql
from .types import ContentTooLarge, InvalidArgument, InvalidTime, TooManyIds

MAX_CONTENT_BYTES = 64 * 1024
MAX_AGENT_ID = 128
MAX_TRIPLE_PART = 512
MAX_IDS = 100
MAX_TAGS = 50
RESERVED_EVENTS = set(RETRACT_EVENTS) | {"auto_page_removed"}

T = TypeVar("T")


_recorded_at: ContextVar[datetime | None] = ContextVar("recorded_at", default=None)


def now() -> datetime:
    """The engine's clock: real time, or the record time an import set with ``recorded_at``."""
    fixed = _recorded_at.get()
    return fixed if fixed is not None else timezone.now()


@contextlib.contextmanager
def recorded_at(when: Any) -> Iterator[datetime]:
    """Inside, the engine's writes happen at record time ``when`` (an import replaying a log, demo data): every
    time the engine stamps (ingestion, supersession, audit) is ``when``. Never for agent-facing paths. ``when``
    may not be in the future; callers replay in record-time order (each block no earlier than the last)."""
    t = parse_time(when, field="recorded_at")
    if t is None or t > timezone.now():
        raise InvalidTime("recorded_at must be a time that has passed", field="recorded_at")
    token = _recorded_at.set(t)
    try:
        yield t
    finally:
        _recorded_at.reset(token)


_ULID_ALPHABET = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", b"0123456789abcdefghjkmnpqrstvwxyz")
_ulid_last = [0, 0]  # millisecond and randomness of the last id made in this process
_ulid_lock = threading.Lock()
_MAX_RANDOMNESS = (1 << 80) - 1


def new_memory_id() -> str:
    """``m_`` and a ULID in lower-case Crockford base32: 48-bit millisecond time and 80 random bits, the
    randomness incremented within one millisecond, so ids made in one process sort in creation order (re-
    derivation orders continuation rows by id). Encoded as RFC 4648 base32 of the 130-bit value shifted to
    whole bytes, alphabet translated."""
    ms = time.time_ns() // 1_000_000
    with _ulid_lock:
        if ms == _ulid_last[0] and _ulid_last[1] < _MAX_RANDOMNESS:
            rand = _ulid_last[1] + 1
        else:
            rand = int.from_bytes(os.urandom(10), "big")
        _ulid_last[:] = [ms, rand]
    n = ms << 80 | rand
    return "m_" + base64.b32encode((n << 6).to_bytes(17, "big"))[:26].translate(_ULID_ALPHABET).decode()


# --- validation -------------------------------------------------------------------------------------------


_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")


def check_agent_id(agent_id: Any) -> str:
    if not isinstance(agent_id, str) or not agent_id.strip():
        raise InvalidArgument("agent_id must be a non-empty string", field="agent_id")
    agent_id = agent_id.strip()
    if len(agent_id) > MAX_AGENT_ID:
        raise InvalidArgument(f"agent_id is longer than {MAX_AGENT_ID} characters", field="agent_id")
    if _CONTROL_CHARS.search(agent_id):
        raise InvalidArgument("agent_id contains control characters", field="agent_id")
    return agent_id


def check_content(content: Any, *, field: str = "content") -> str:
    if not isinstance(content, str):
        raise InvalidArgument(f"{field} must be a string", field=field)
    if "\x00" in content:
        raise InvalidArgument(f"{field} contains a NUL character", field=field)
    if not content.strip():
        raise InvalidArgument(f"{field} must not be empty", field=field)
    size = len(content.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise ContentTooLarge(
            f"{field} is {size} bytes; the limit is {MAX_CONTENT_BYTES} bytes",
            field=field,
            limit=MAX_CONTENT_BYTES,
        )
    return content


def check_text(value: Any, *, field: str, required: bool, limit: int = MAX_TRIPLE_PART) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip() and not required):
        if required:
            raise InvalidArgument(f"{field} is required", field=field)
        return None
    if not isinstance(value, str):
        raise InvalidArgument(f"{field} must be a string", field=field)
    value = value.strip()
    if not value:
        raise InvalidArgument(f"{field} must not be empty", field=field)
    if "\x00" in value:
        raise InvalidArgument(f"{field} contains a NUL character", field=field)
    if len(value) > limit:
        raise InvalidArgument(f"{field} is longer than {limit} characters", field=field)
    return value


def check_layer(layer: Any) -> str:
    if layer not in LAYERS:
        raise InvalidArgument(f"layer must be one of {', '.join(LAYERS)}", field="layer")
    return str(layer)


def check_number(value: Any, *, field: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidArgument(f"{field} must be a number", field=field)
    if value != value or not (low <= float(value) <= high):
        raise InvalidArgument(f"{field} must be between {low} and {high}", field=field)
    return float(value)


MAX_TAG_CHARS = 100
MAX_RAW_TAGS = 4 * MAX_TAGS  # entries looked at before de-duplication (repeats allowed, floods refused)


def check_tags(tags: Any) -> list[str]:
    """Trimmed, de-duplicated tags in order. Counts and sizes come first, so the work is bounded whatever the
    caller sends: more than ``MAX_RAW_TAGS`` entries or ``MAX_TAGS`` distinct ones is refused at once."""
    if tags is None:
        return []
    if isinstance(tags, str | bytes | dict) or not isinstance(tags, Iterable):
        raise InvalidArgument("tags must be a list of strings", field="tags")
    if not isinstance(tags, list | tuple):
        tags = list(itertools.islice(tags, MAX_RAW_TAGS + 1))
    if len(tags) > MAX_RAW_TAGS:
        raise InvalidArgument(f"at most {MAX_TAGS} tags", field="tags", limit=MAX_TAGS)
    out: list[str] = []
    seen: set[str] = set()
    for tag in tags:
        if not isinstance(tag, str) or len(tag) > MAX_TAG_CHARS or not tag.strip():
            raise InvalidArgument(
                f"each tag must be a non-empty string of at most {MAX_TAG_CHARS} characters", field="tags"
            )
        if "\x00" in tag:
            raise InvalidArgument("a tag contains a NUL character", field="tags")
        tag = tag.strip()
        if tag not in seen:
            seen.add(tag)
            out.append(tag)
            if len(out) > MAX_TAGS:
                raise InvalidArgument(f"at most {MAX_TAGS} tags", field="tags", limit=MAX_TAGS)
    return out


# Times are accepted between these bounds (UTC), so that no later arithmetic of the engine (a window, a TTL, a
# key's next segment) or of a database can overflow: near the calendar's ends ("9999-12-31T23:00:00-05:00" is
# year 10000 in UTC) a time is ``invalid_time``, never an internal error.
MIN_TIME = datetime(1, 1, 2, tzinfo=UTC)
MAX_TIME = datetime(9999, 12, 30, tzinfo=UTC)


def parse_time(value: Any, *, field: str) -> datetime | None:
    """Accept an aware datetime or an RFC 3339 string with an offset; reject naive input (SPEC T8)."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            value = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "zZ" else text)
        except ValueError:
            raise InvalidTime(
                f"{field} is not an ISO-8601/RFC 3339 time: {text[:40]!r}", field=field
            ) from None
    if not isinstance(value, datetime):
        raise InvalidTime(f"{field} must be a timezone-aware datetime or an RFC 3339 string", field=field)
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise InvalidTime(f"{field} has no timezone; send an offset such as +00:00 or Z", field=field)
    try:
        utc = value.astimezone(UTC)
    except OverflowError:
        raise InvalidTime(
            f"{field} is outside the calendar's range once in UTC (years 1 to 9999)", field=field
        ) from None
    if not MIN_TIME <= utc <= MAX_TIME:
        raise InvalidTime(
            f"{field} must lie between {MIN_TIME:%Y-%m-%d} and {MAX_TIME:%Y-%m-%d} (UTC)", field=field
        )
    return utc


def check_ids(ids: Any) -> list[str]:
    if isinstance(ids, str) or not isinstance(ids, list | tuple):
        raise InvalidArgument("ids must be a list of strings", field="ids")
    if len(ids) > MAX_IDS:
        raise TooManyIds(f"at most {MAX_IDS} ids per call; got {len(ids)}", field="ids", limit=MAX_IDS)
    out: list[str] = []
    for i in ids:
        if not isinstance(i, str) or not i or len(i) > 64:
            raise InvalidArgument("each id must be a non-empty string", field="ids")
        if "\x00" in i:
            raise InvalidArgument("an id contains a NUL character", field="ids")
        if i not in out:
            out.append(i)
    return out


def check_source_event(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > 256:
        raise InvalidArgument("source_event must be a string of at most 256 characters", field="source_event")
    if "\x00" in value:
        raise InvalidArgument("source_event contains a NUL character", field="source_event")
    if value in RESERVED_EVENTS:
        raise InvalidArgument(f"source_event {value!r} is reserved", field="source_event")
    return value


def check_session(value: Any) -> str | None:
    return check_text(value, field="session_id", required=False, limit=256)


def check_actor(actor: Any) -> str:
    if not isinstance(actor, str) or not actor.strip() or len(actor) > 256:
        raise InvalidArgument("actor must be a non-empty string", field="actor")
    return actor.strip()


# --- transactions -----------------------------------------------------------------------------------------


def _retryable(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "database is locked" in text or "deadlock detected" in text or "could not serialize" in text


def write_transaction(func: Callable[..., T]) -> Callable[..., T]:
    """Run ``func`` in one transaction; retry the whole call on transient lock errors at the outermost level."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        if connection.in_atomic_block:
            with transaction.atomic():
                return func(*args, **kwargs)
        attempt = 0
        while True:
            try:
                with transaction.atomic():
                    return func(*args, **kwargs)
            except OperationalError as exc:
                attempt += 1
                if attempt >= 8 or not _retryable(exc):
                    raise
                time.sleep(min(2.0, 0.02 * (2**attempt)) * (0.5 + random.random()))

    return wrapper


def _advisory_lock(name: str) -> None:
    """A transaction-scoped lock on ``name`` (PostgreSQL). SQLite's IMMEDIATE transactions already serialise
    all writers."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [name])


def lock_key(agent_id: str, subject: str, predicate: str) -> None:
    """Serialise writers of one key."""
    _advisory_lock(f"key\x1f{agent_id}\x1f{subject}\x1f{predicate}")


def lock_feedback(agent_id: str) -> None:
    """Serialise the feedback of one agent (weights and knowledge gaps are read, then written)."""
    _advisory_lock(f"feedback\x1f{agent_id}")


def lock_keys(agent_id: str, keys: Iterable[tuple[str, str]]) -> None:
    """``lock_key`` for many keys of one agent in one statement, in sorted order (as other multi-key writers
    take them, so two of them never wait on each other in a cycle)."""
    if connection.vendor != "postgresql":
        return
    names = [f"key\x1f{agent_id}\x1f{s}\x1f{p}" for s, p in sorted(set(keys))]
    if names:
        with connection.cursor() as cur:  # unnest keeps the array's order
            cur.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest(%s::text[]) AS k", [names]
            )


def lock_origin(agent_id: str, origin: str) -> None:
    """Serialise an origin purge with a decision's undo, which could bring that origin's writes back: the undo
    checks for a purge after the decision, so the purge must not run between that check and the restore.
    Taken before any key lock (purge and undo both lock keys after it)."""
    _advisory_lock(f"origin\x1f{agent_id}\x1f{origin}")


# The bump: one UPDATE moves the generation and puts the bump's line on top of the change log (SPEC G5). SET
# reads the row as it was, so the line carries the new number. Parameters: time, line, agent.
_BUMP_SQL = (
    "UPDATE graph_generation SET generation = generation + 1, updated_at = %s,"
    f" changes = substr(CAST(generation + 1 AS TEXT) || %s || COALESCE(changes, ''), 1, {GraphGeneration.CHANGES_MAX})"
    " WHERE agent_id = %s"
)


def change_line(token: int, changed: Iterable[str] | None) -> str:
    """A bump's line in the change log, after its generation number: `` <token> <ids as JSON>\n``, or ``*`` for
    the ids when they are not known or would take more than half the log."""
    ids = "*" if changed is None else json.dumps(sorted({i for i in changed if i}), separators=(",", ":"))
    if len(ids) > GraphGeneration.CHANGES_MAX // 2:
        ids = "*"
    return f" {token} {ids}\n"


def _record_bump(agent_id: str, changed: Iterable[str] | None) -> bool:
    """Bump the agent's generation and log what changed; False if the agent has no generation row."""
    line = change_line(random.getrandbits(63), changed)
    when = now()
    stamp = when if rawsql.vendor() == "postgresql" else rawsql.sqlite_datetime(when)
    return bool(rawsql.run(_BUMP_SQL, [stamp, line, agent_id]).rowcount)


_deferred: ContextVar[dict[str, set[str] | None] | None] = ContextVar("deferred_bumps", default=None)


@contextlib.contextmanager
def one_bump() -> Iterator[None]:
    """Inside, generation bumps are gathered (per agent, the union of the rows they changed) and made once,
    when the block ends without an error: a batch of writes moves the generation once."""
    token = _deferred.set({})
    try:
        yield
        pending = _deferred.get() or {}
    finally:
        _deferred.reset(token)
    for agent_id in sorted(pending):
        bump_generation(agent_id, pending[agent_id])


def ensure_agent(agent_id: str, *, bump_generation: bool, changed: Iterable[str] | None = None) -> None:
    """Register an unknown agent (no team) and, for triple changes, bump its graph generation (SPEC T9),
    logging the memory rows that changed (``changed``; None when not known: caches then rebuild)."""
    # the hot path of every write: one plain statement
    pending = _deferred.get()
    if bump_generation and pending is not None:
        known = pending.get(agent_id, set())
        pending[agent_id] = None if known is None or changed is None else known | set(changed)
        return
    if bump_generation:
        if _record_bump(agent_id, changed):
            return
    elif rawsql.run("SELECT 1 FROM graph_generation WHERE agent_id = %s", [agent_id]).fetchone():
        return
    try:
        with transaction.atomic():
            Agent.objects.get_or_create(agent_id=agent_id)
    except IntegrityError:
        pass
    try:
        with transaction.atomic():
            GraphGeneration.objects.create(agent_id=agent_id, generation=0)
    except IntegrityError:
        pass
    if bump_generation:
        _record_bump(agent_id, changed)


def bump_generation(agent_id: str, changed: Iterable[str] | None = None) -> None:
    """Move the agent's graph generation (SPEC T9). ``changed``: the memory rows the write changed, logged for
    the graph cache's delta; None (not known) makes caches rebuild."""
    ensure_agent(agent_id, bump_generation=True, changed=changed)


def graph_generation(*, agent_id: str) -> int:
    row = GraphGeneration.objects.filter(agent_id=agent_id).values_list("generation", flat=True).first()
    return int(row or 0)


def audit(
    *,
    agent_id: str,
    actor: str,
    action: str,
    memory_id: str | None = None,
    subject: str | None = None,
    reason: str = "",
    at: datetime | None = None,
    **details: Any,
) -> AuditEvent:
    return AuditEvent.objects.create(
        created_at=at or now(),
        agent_id=agent_id,
        actor=actor,
        action=action,
        memory_id=memory_id,
        subject=subject,
        reason=reason,
        details=details,
    )
