"""The predicate registry lives in ``memory.registry`` (a neutral module: the engine's write path reads its
cardinality, SPEC B3); this name stays for the background track's modules."""

from memory.registry import (  # noqa: F401  (re-exported)
    CARDINALITIES,
    DEFAULT_PATH,
    VALUE_TYPES,
    PredicateSpec,
    Registry,
    RegistryError,
    RegistryLoad,
    ValueCheck,
    _active,
    _reported,
    active_registry,
    default_registry,
    extend_registry,
    get_registry,
    load_registry,
    parse_registry,
)

__all__ = [
    "CARDINALITIES",
    "DEFAULT_PATH",
    "VALUE_TYPES",
    "PredicateSpec",
    "Registry",
    "RegistryError",
    "RegistryLoad",
    "ValueCheck",
    "active_registry",
    "default_registry",
    "extend_registry",
    "get_registry",
    "load_registry",
    "parse_registry",
]
