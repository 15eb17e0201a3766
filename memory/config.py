"""``memdesk.toml`` (path from MEMDESK_CONFIG): engine settings with fail-safe defaults (SPEC P6)."""

from __future__ import annotations

import logging
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

log = logging.getLogger("memdesk.config")


@dataclass(frozen=True)
class GuardSettings:
    enabled: bool = True
    window_secs: int = 3600
    max_per_subject: int = 5


_cache: dict[str, tuple[float, GuardSettings]] = {}
_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        log.warning(message)


def _path() -> Path:
    return Path(
        str(os.environ.get("MEMDESK_CONFIG") or getattr(settings, "MEMDESK_CONFIG_PATH", "memdesk.toml"))
    )


def _read(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        _warn_once(f"{path}:parse", f"memdesk config {path} is unreadable ({exc}); using the defaults")
        return None


def guard_settings() -> GuardSettings:
    """The ``[knowledge_guard]`` section. Missing or malformed values fall back to the defaults (the detector
    stays on) with one warning; re-read when the file changes."""
    path = _path()
    try:
        mtime = path.stat().st_mtime
    except OSError:
        mtime = -1.0
    cached = _cache.get(str(path))
    if cached and cached[0] == mtime:
        return cached[1]
    defaults = GuardSettings()
    data = _read(path) if mtime >= 0 else None
    section = (data or {}).get("knowledge_guard")
    if data is not None and not isinstance(section, dict):
        _warn_once(
            f"{path}:section", f"memdesk config {path}: no [knowledge_guard] table; using the defaults"
        )
        section = {}
    section = section or {}
    values: dict[str, Any] = {}
    checks = {
        "enabled": lambda v: isinstance(v, bool),
        "window_secs": lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 30 * 86400,
        "max_per_subject": lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 10_000,
    }
    for name, ok in checks.items():
        if name not in section:
            continue
        if ok(section[name]):
            values[name] = section[name]
        else:
            _warn_once(
                f"{path}:{name}",
                f"memdesk config {path}: knowledge_guard.{name} = {section[name]!r} is invalid; "
                f"using {getattr(defaults, name)!r}",
            )
    unknown = sorted(set(section) - set(checks))
    if unknown:
        _warn_once(
            f"{path}:unknown", f"memdesk config {path}: unknown knowledge_guard keys {unknown} ignored"
        )
    result = GuardSettings(**values)
    _cache[str(path)] = (mtime, result)
    return result
