"""How MCP tool calls run (SPEC A2): on a bounded pool of database threads, within per-token limits.

Every tool's database work runs on one of ``MEMDESK_MCP_WORKERS`` threads (each keeps its own database
connection), never on one shared thread: a slow call occupies one worker, and other agents' calls go on
beside it. Before a call is handed to the pool, the caller's token must be within its limits:

* at most ``MEMDESK_MCP_TOKEN_CONCURRENCY`` of its calls in flight at once (so one token can never hold the
  whole pool), and
* a token bucket of ``MEMDESK_MCP_TOKEN_RATE`` calls per second with bursts of ``MEMDESK_MCP_TOKEN_BURST``.

A call over either limit is answered ``rate_limited`` at once (``details``: which limit, and for the rate the
seconds until a call is allowed again); nothing runs and nothing is written. The limits are kept per server
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

    @classmethod
    def from_settings(cls) -> Limits:
        return cls(
            concurrency=int(getattr(settings, "MEMDESK_MCP_TOKEN_CONCURRENCY", cls.concurrency)),
            rate=float(getattr(settings, "MEMDESK_MCP_TOKEN_RATE", cls.rate)),
            burst=int(getattr(settings, "MEMDESK_MCP_TOKEN_BURST", cls.burst)),
        )


class CallGate:
    """Per-token concurrency and rate limits. ``clock`` is monotonic seconds (a test passes its own)."""

    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic):
        self._limits = limits
        self._clock = clock
        self._lock = threading.Lock()
        self._in_flight: dict[Any, int] = {}
        self._buckets: dict[Any, tuple[float, float]] = {}  # key -> (tokens, at)

    @property
    def limits(self) -> Limits:
        return self._limits or Limits.from_settings()

    @contextmanager
    def admit(self, key: Any) -> Iterator[None]:
        """Hold one of ``key``'s call slots for the duration, or raise ``rate_limited``."""
        limits = self.limits
        with self._lock:
            busy = self._in_flight.get(key, 0)
            if busy >= limits.concurrency:
                raise engine.RateLimited(
                    f"at most {limits.concurrency} calls of one token at a time; wait for one to finish",
                    limit=limits.concurrency,
                    kind="concurrency",
                )
            now = self._clock()
            tokens, at = self._buckets.get(key, (float(limits.burst), now))
            tokens = min(float(limits.burst), tokens + (now - at) * limits.rate)
            if tokens < 1.0:
                wait = (1.0 - tokens) / limits.rate if limits.rate > 0 else math.inf
                self._buckets[key] = (tokens, now)
                raise engine.RateLimited(
                    f"more than {limits.rate:g} calls per second from one token; retry in {wait:.2f} s",
                    limit=limits.rate,
                    kind="rate",
                    retry_after=round(wait, 3),
                )
            self._buckets[key] = (tokens - 1.0, now)
            self._in_flight[key] = busy + 1
        try:
            yield
        finally:
            with self._lock:
                left = self._in_flight.get(key, 1) - 1
                if left > 0:
                    self._in_flight[key] = left
                else:
                    self._in_flight.pop(key, None)


gate = CallGate()

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
