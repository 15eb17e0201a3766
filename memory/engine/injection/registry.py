"""Detectors: rules written as small Python functions, registered under rule ids the rules file declares.

``@detector("rule.id", scope=...)`` registers a function; the rules file holds the rule's family, weight,
language and tested examples (``[[detector]]``), so an id the file does not declare is an error at import. A
function registered for several ids returns the one it found (or None); functions run in registration order.
Scopes: ``view`` (intent patterns over a whole view or a window of it), ``en`` and ``zh`` (one clause).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from .ruleset import RULESET, RulesetError

SCOPES = ("view", "en", "zh")
Fn = TypeVar("Fn", bound=Callable[..., Any])


@dataclass(frozen=True)
class Detector:
    ids: tuple[str, ...]
    scope: str
    fn: Callable[[Any], str | None]


REGISTRY: dict[str, list[Detector]] = {scope: [] for scope in SCOPES}
FAMILY: dict[str, str] = {spec.id: spec.family for spec in RULESET.detectors}


def detector(*ids: str, scope: str) -> Callable[[Fn], Fn]:
    if scope not in SCOPES:
        raise ValueError(f"unknown detector scope {scope!r}")
    for rule_id in ids:
        if rule_id not in FAMILY:
            raise RulesetError(f"detector {rule_id} is not declared in the rules file")

    def register(fn: Fn) -> Fn:
        REGISTRY[scope].append(Detector(ids=ids, scope=scope, fn=fn))
        return fn

    return register


def registered_ids() -> set[str]:
    return {rule_id for detectors in REGISTRY.values() for d in detectors for rule_id in d.ids}
