"""``memdesk.toml`` (path from MEMDESK_CONFIG): settings with fail-safe defaults (SPEC P6, B0, B3)."""

from __future__ import annotations

import logging
import os
import re
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
    # plain memories (no subject) from one low-trust origin within the window (SPEC P5, issue 15 item 9)
    max_plain_per_origin: int = 10
    # a write this much less trusted than the value it would supersede is held for a reviewer (SPEC P5a)
    override_margin: float = 0.4


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
        "max_plain_per_origin": lambda v: (
            isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 100_000
        ),
        "override_margin": lambda v: isinstance(v, int | float) and not isinstance(v, bool) and 0 < v <= 1,
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


# --- [llm] (SPEC B0) ------------------------------------------------------------------------------------------

_section_cache: dict[tuple[str, str], tuple[float, Any]] = {}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class LLMSettings:
    """An OpenAI-compatible endpoint. ``api_key_env`` names the environment variable holding the key ("" for a
    local server that needs none); ``strong_model`` defaults to ``model``."""

    base_url: str
    model: str
    strong_model: str
    api_key_env: str = ""
    timeout_s: float = 20.0
    max_calls_per_run: int = 200


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return -1.0


def _cached(name: str, path: Path, build: Any) -> Any:
    mtime = _mtime(path)
    key = (name, str(path))
    hit = _section_cache.get(key)
    if hit and hit[0] == mtime:
        return hit[1]
    data = _read(path) if mtime >= 0 else None
    value = build(path, data)
    _section_cache[key] = (mtime, value)
    return value


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _build_llm(path: Path, data: dict[str, Any] | None) -> LLMSettings | None:
    if data is None or "llm" not in data:
        return None
    section = data["llm"]
    if not isinstance(section, dict):
        _warn_once(f"{path}:llm", f"memdesk config {path}: [llm] is not a table; the LLM layer is off")
        return None
    checks: dict[str, Any] = {
        "base_url": lambda v: isinstance(v, str) and v.startswith(("http://", "https://")) and len(v) <= 2048,
        "model": lambda v: isinstance(v, str) and 0 < len(v.strip()) <= 256,
        "strong_model": lambda v: isinstance(v, str) and 0 < len(v.strip()) <= 256,
        "api_key_env": lambda v: isinstance(v, str) and (v == "" or bool(_ENV_NAME.match(v))),
        "timeout_s": lambda v: _number(v) and 0 < v <= 600,
        "max_calls_per_run": lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 100_000,
    }
    bad = [name for name, ok in checks.items() if name in section and not ok(section[name])]
    bad += [name for name in ("base_url", "model") if name not in section]
    if bad:
        _warn_once(
            f"{path}:llm:invalid",
            f"memdesk config {path}: [llm] {', '.join(sorted(set(bad)))} missing or invalid; the LLM layer is off",
        )
        return None
    unknown = sorted(set(section) - set(checks))
    if unknown:
        _warn_once(f"{path}:llm:unknown", f"memdesk config {path}: unknown [llm] keys {unknown} ignored")
    model = section["model"].strip()
    return LLMSettings(
        base_url=section["base_url"].rstrip("/"),
        model=model,
        strong_model=str(section.get("strong_model", model)).strip(),
        api_key_env=section.get("api_key_env", ""),
        timeout_s=float(section.get("timeout_s", 20.0)),
        max_calls_per_run=section.get("max_calls_per_run", 200),
    )


def llm_settings() -> LLMSettings | None:
    """The ``[llm]`` section, or None (the LLM layer is off) when it is missing; a malformed section is off too,
    with one warning. Re-read when the file changes."""
    return _cached("llm", _path(), _build_llm)


# --- [registry] (SPEC B3) -------------------------------------------------------------------------------------


def _build_registry(path: Path, data: dict[str, Any] | None) -> Path | None:
    section = (data or {}).get("registry")
    if section is None:
        return None
    value = section.get("path") if isinstance(section, dict) else None
    if not isinstance(value, str) or not value.strip():
        _warn_once(
            f"{path}:registry",
            f"memdesk config {path}: [registry] path must be a file name; using the shipped predicate registry",
        )
        return None
    file = Path(value.strip()).expanduser()
    return file if file.is_absolute() else path.parent / file


def registry_path() -> Path | None:
    """The deployment's predicate registry file from ``[registry] path`` (relative to the config file), or
    None: the shipped registry alone."""
    return _cached("registry", _path(), _build_registry)


@dataclass(frozen=True)
class InjectionSettings:
    """``[injection]`` (SPEC P4): the classifier's thresholds. None means the shipped model's calibrated value
    (block: <= 0.5 % of benign texts; review: the suspicious band below it). The scan itself has no switch."""

    block_threshold: float | None = None
    review_threshold: float | None = None


_injection_cache: dict[str, tuple[float, InjectionSettings]] = {}


def _probability(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0.0 < value <= 1.0


def injection_settings() -> InjectionSettings:
    """The ``[injection]`` section. Missing or malformed values fall back to the model's calibrated thresholds
    with one warning; a review threshold above the block threshold is lowered to it. Re-read when the file
    changes."""
    path = _path()
    try:
        mtime = path.stat().st_mtime
    except OSError:
        mtime = -1.0
    cached = _injection_cache.get(str(path))
    if cached and cached[0] == mtime:
        return cached[1]
    data = _read(path) if mtime >= 0 else None
    section = (data or {}).get("injection", {})
    if not isinstance(section, dict):
        _warn_once(
            f"{path}:injection", f"memdesk config {path}: [injection] is not a table; using the defaults"
        )
        section = {}
    values: dict[str, float] = {}
    for name in ("block_threshold", "review_threshold"):
        if name not in section:
            continue
        if _probability(section[name]):
            values[name] = float(section[name])
        else:
            _warn_once(
                f"{path}:injection.{name}",
                f"memdesk config {path}: injection.{name} = {section[name]!r} is not a probability in (0, 1]; "
                "using the model's calibrated value",
            )
    unknown = sorted(set(section) - {"block_threshold", "review_threshold"})
    if unknown:
        _warn_once(
            f"{path}:injection.unknown", f"memdesk config {path}: unknown injection keys {unknown} ignored"
        )
    result = InjectionSettings(**values)
    _injection_cache[str(path)] = (mtime, result)
    return result


# --- [insights] (SPEC B6, B8) ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class InsightsSettings:
    journal_retention_days: int = 90  # the query journal's rows are swept after this many days
    attitude_half_life_days: float = (
        90.0  # an attitude's confidence halves this long after its last affirmation
    )
    attitude_floor: float = 0.3  # reflexion context includes current attitudes at or above this confidence


def _build_insights(path: Path, data: dict[str, Any] | None) -> InsightsSettings:
    defaults = InsightsSettings()
    section = (data or {}).get("insights")
    if section is None:
        return defaults
    if not isinstance(section, dict):
        _warn_once(
            f"{path}:insights", f"memdesk config {path}: [insights] is not a table; using the defaults"
        )
        return defaults
    checks: dict[str, Any] = {
        "journal_retention_days": lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 3650,
        "attitude_half_life_days": lambda v: _number(v) and 1 <= v <= 3650,
        "attitude_floor": lambda v: _number(v) and 0 <= v <= 1,
    }
    values: dict[str, Any] = {}
    for name, ok in checks.items():
        if name not in section:
            continue
        if ok(section[name]):
            values[name] = section[name]
        else:
            _warn_once(
                f"{path}:insights:{name}",
                f"memdesk config {path}: insights.{name} = {section[name]!r} is invalid; "
                f"using {getattr(defaults, name)!r}",
            )
    unknown = sorted(set(section) - set(checks))
    if unknown:
        _warn_once(
            f"{path}:insights:unknown", f"memdesk config {path}: unknown [insights] keys {unknown} ignored"
        )
    return InsightsSettings(**values)


def insights_settings() -> InsightsSettings:
    """The ``[insights]`` section; missing or invalid values fall back to the defaults (one warning each)."""
    return _cached("insights", _path(), _build_insights)
