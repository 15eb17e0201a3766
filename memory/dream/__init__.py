"""The background track (SPEC B): predicate registry, conflict judge and candidates; the loop comes later."""
