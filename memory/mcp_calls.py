"""How MCP tool calls run (SPEC A2): on a bounded pool of database threads, within per-token limits.

Every tool's database work runs on one of ``MEMDESK_MCP_WORKERS`` threads (each keeps its own database
connection), never on one shared thread: a slow call occupies one worker, and other agents' calls go on
beside it. Before a call is handed to the pool, the caller's token must be within its limits:

* at most ``MEMDESK_MCP_TOKEN_CONCURRENCY`` of its calls in flight at once (so one token can never hold the
  whole pool), and
* a token bucket of ``MEMDESK_MCP_TOKEN_RATE`` calls per second with bursts of ``MEMDESK_MCP_TOKEN_BURST``, and
* a share of the server: ``MEMDESK_MCP_TOKEN_CPU_SHARE`` seconds of CPU per second (bursts of
  ``MEMDESK_MCP_TOKEN_CPU_BURST`` seconds), charged after each call with the CPU its thread used; a token in
  debt waits until its share pays it back. Cheap calls never come near it; a client of expensive calls (64 KB
  scans, hostile queries) gets its share of the server instead of the whole server.

A token that spent more than half its CPU burst lately is *heavy*: its calls run in the heavy lane, which
admits ``MEMDESK_MCP_HEAVY_LANES`` (1) such calls at a time across all tokens, so expensive callers compete
with each other, not with everyone else, for the interpreter. A call over any limit is answered
``rate_limited`` at once (``details``: which limit, and for the rate and the
share the seconds until a call is allowed again); nothing runs and nothing is written. The limits are kept per server
process (each uvicorn worker or ``manage.py mcp`` child counts its own calls); the daily quotas
(``memory_store`` per agent, ``memory_store_fact`` per token) are in the database and hold across processes.
"""

from __future__ import annotations

import asyncio
import functools
import math
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings

from memory import engine

T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    concurrency: int = 2
    rate: float = 20.0  # calls per second, sustained
    burst: int = 40
    cpu_share: float = 0.05  # CPU seconds of tool work per second, sustained
    cpu_burst: float = 0.5  # CPU seconds a token may spend at once before its share applies

    @classmethod
    def from_settings(cls) -> Limits:
        return cls(
            concurrency=int(getattr(settings, "MEMDESK_MCP_TOKEN_CONCURRENCY", cls.concurrency)),
            rate=float(getattr(settings, "MEMDESK_MCP_TOKEN_RATE", cls.rate)),
            burst=int(getattr(settings, "MEMDESK_MCP_TOKEN_BURST", cls.burst)),
            cpu_share=float(getattr(settings, "MEMDESK_MCP_TOKEN_CPU_SHARE", cls.cpu_share)),
            cpu_burst=float(getattr(settings, "MEMDESK_MCP_TOKEN_CPU_BURST", cls.cpu_burst)),
        )


def _refill(bucket: tuple[float, float] | None, now: float, rate: float, cap: float) -> float:
    level, at = bucket if bucket is not None else (cap, now)
    return min(cap, level + (now - at) * rate)


class CallGate:
    """Per-token concurrency, call-rate and CPU limits. ``clock`` is monotonic seconds (a test passes its
    own). The CPU a call used is charged after it (``charge``): a token in debt waits until its share pays it
    back, so a client of expensive calls gets its share of the server, not the server."""

    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic):
        self._limits = limits
        self._clock = clock
        self._lock = threading.Lock()
        self._in_flight: dict[Any, int] = {}
        self._calls: dict[Any, tuple[float, float]] = {}  # key -> (calls left, at)
        self._cpu: dict[Any, tuple[float, float]] = {}  # key -> (CPU seconds left, may be negative; at)

    @property
    def limits(self) -> Limits:
        return self._limits or Limits.from_settings()

    def _check(self, key: Any, limits: Limits, now: float, *, count_call: bool) -> None:
        """Refuse a token in CPU debt or out of calls; count one call. Under ``self._lock``."""
        cpu = _refill(self._cpu.get(key), now, limits.cpu_share, limits.cpu_burst)
        self._cpu[key] = (cpu, now)
        if cpu < 0:
            wait = -cpu / limits.cpu_share if limits.cpu_share > 0 else math.inf
            raise engine.RateLimited(
                f"this token's calls used more than its share of the server ({limits.cpu_share:g} s of CPU "
                f"per second); retry in {wait:.2f} s",
                limit=limits.cpu_share,
                kind="cpu",
                retry_after=round(wait, 3),
            )
        if not count_call:
            return
        calls = _refill(self._calls.get(key), now, limits.rate, float(limits.burst))
        if calls < 1.0:
            self._calls[key] = (calls, now)
            wait = (1.0 - calls) / limits.rate if limits.rate > 0 else math.inf
            raise engine.RateLimited(
                f"more than {limits.rate:g} calls per second from one token; retry in {wait:.2f} s",
                limit=limits.rate,
                kind="rate",
                retry_after=round(wait, 3),
            )
        self._calls[key] = (calls - 1.0, now)

    def request(self, key: Any) -> Callable[[float], None]:
        """Admit one HTTP request of ``key`` (every request counts against the call rate, valid or not), or
        raise ``rate_limited``. Returns ``charge``: call it with the CPU the request's handling is taken to
        have cost (its body's parsing: ``PARSE_SECONDS_PER_BYTE``)."""
        limits = self.limits
        with self._lock:
            self._check(key, limits, self._clock(), count_call=True)
        return functools.partial(self._charge, key)

    @contextmanager
    def admit(self, key: Any, *, count_call: bool = True) -> Iterator[Callable[[float], None]]:
        """Hold one of ``key``'s call slots for a tool call, or raise ``rate_limited``. Yields ``charge``: call
        it with the CPU seconds the call used. ``count_call``: False when the request was already counted
        (HTTP; ``request``)."""
        limits = self.limits
        with self._lock:
            busy = self._in_flight.get(key, 0)
            if busy >= limits.concurrency:
                raise engine.RateLimited(
                    f"at most {limits.concurrency} calls of one token at a time; wait for one to finish",
                    limit=limits.concurrency,
                    kind="concurrency",
                )
            self._check(key, limits, self._clock(), count_call=count_call)
            self._in_flight[key] = busy + 1
        try:
            yield functools.partial(self._charge, key)
        finally:
            with self._lock:
                left = self._in_flight.get(key, 1) - 1
                if left > 0:
                    self._in_flight[key] = left
                else:
                    self._in_flight.pop(key, None)

    def is_heavy(self, key: Any) -> bool:
        """Whether ``key`` spent more than half its CPU burst lately: its calls go through the heavy lane."""
        limits = self.limits
        with self._lock:
            level = _refill(self._cpu.get(key), self._clock(), limits.cpu_share, limits.cpu_burst)
        return level < limits.cpu_burst * HEAVY_FRACTION

    def _charge(self, key: Any, seconds: float) -> None:
        limits = self.limits
        with self._lock:
            now = self._clock()
            cpu = _refill(self._cpu.get(key), now, limits.cpu_share, limits.cpu_burst)
            self._cpu[key] = (cpu - max(0.0, seconds), now)


HEAVY_FRACTION = 0.5
gate = CallGate()

# What reading a request costs the event loop per byte of its body (JSON parsing and validation of the
# arguments, serialising the answer: ~100 ms per MB): charged to the token, so that huge bodies (50,000 tags)
# and answers spend its share like expensive calls do.
PARSE_SECONDS_PER_BYTE = 100e-9

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def pool() -> ThreadPoolExecutor:
    """The database threads of this process (created on first use)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            workers = max(1, int(getattr(settings, "MEMDESK_MCP_WORKERS", 8)))
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mcp-db")
        return _pool


async def run_in_pool(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a database thread of the pool."""
    return await asyncio.get_running_loop().run_in_executor(pool(), functools.partial(fn, *args))


_lanes: threading.BoundedSemaphore | None = None
HEAVY_WAIT_S = 0.25


def heavy_lane(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in the heavy lane: at most ``MEMDESK_MCP_HEAVY_LANES`` (1) calls of tokens that spent much
    of their CPU lately run at once, so they share one core's worth of the interpreter among themselves and
    leave the rest to everyone else. A call that cannot get the lane within ``HEAVY_WAIT_S`` is
    ``rate_limited`` (nothing ran)."""
    global _lanes
    with _pool_lock:
        if _lanes is None:
            _lanes = threading.BoundedSemaphore(max(1, int(getattr(settings, "MEMDESK_MCP_HEAVY_LANES", 1))))
        lanes = _lanes
    if not lanes.acquire(timeout=HEAVY_WAIT_S):
        raise engine.RateLimited(
            "the server is busy with this token's kind of calls (expensive ones); retry shortly",
            kind="busy",
            retry_after=HEAVY_WAIT_S,
        )
    try:
        return fn(*args)
    finally:
        lanes.release()


def cpu_timed(fn: Callable[..., T], *args: Any) -> tuple[T | BaseException, float]:
    """``fn(*args)`` (its result, or the exception it raised) and the CPU seconds its thread spent on it."""
    started = time.thread_time()
    try:
        value: T | BaseException = fn(*args)
    except BaseException as exc:  # handed back to the caller, which raises it once the CPU is charged
        value = exc
    return value, time.thread_time() - started
