"""The background track (SPEC B): predicate registry, conflict candidates and judge, knowledge lint, the dream loop."""
