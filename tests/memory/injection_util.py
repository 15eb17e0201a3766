"""Helpers shared by the injection tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from memory.engine.injection import matcher

T = TypeVar("T")


def with_full_search(fn: Callable[[], T]) -> T:
    """``fn()`` with the trigger prefilter, anchored matching and clause windows switched off: every rule searched
    over the whole text (what the optimisations must never differ from)."""
    matcher._PREFILTER = False
    try:
        return fn()
    finally:
        matcher._PREFILTER = True
