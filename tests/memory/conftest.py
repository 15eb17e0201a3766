"""Shared builders of the engine tests: the agents they write as, one fact writer, a name NFKC lengthens.

Test modules import them (``from tests.memory.conftest import A, fact``): constants, not fixtures, because
parametrize lists and helper defaults need them at import time.
"""

from __future__ import annotations

from typing import Any

from memory import engine

A = "agent-a"  # the agent a test writes and reads as
OTHER = "agent-other"  # another agent: nothing of it may show through A's reads
LONG = "\ufdfa"  # ARABIC LIGATURE SALLALLAHOU ALAYHE WASALLAM: NFKC makes 18 characters of it


def fact(
    subject: str,
    predicate: str,
    obj: str | None = None,
    *,
    agent_id: str = A,
    content: str | None = None,
    **kw: Any,
) -> str:
    """Store one fact through ``engine.store_temporal`` and return its row id. ``content`` defaults to the
    triple as text; ``kw`` (origin, valid_from, protect, ...) goes to the engine unchanged."""
    return engine.store_temporal(
        agent_id=agent_id,
        content=content or f"{subject} {predicate} {obj or ''}".strip(),
        subject=subject,
        predicate=predicate,
        object=obj,
        **kw,
    ).id
