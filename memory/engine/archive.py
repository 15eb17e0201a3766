"""The archive of a tiered row (SPEC B9): the text it was written with, before tiering shortened it."""

from __future__ import annotations

from memory.models import Memory, MemoryTier

ORIGINAL_SQL = (
    "COALESCE((SELECT a.original FROM memory_tiers a WHERE a.memory_id = {alias}.id), {alias}.content)"
)


def original_content(row: Memory) -> str:
    """The text a row was written with: its archived original when tiering shortened it (also for a
    continuation row of a shortened row), else its content. Write paths compare new writes against this, so
    writing a fact again reaffirms its shortened row (SPEC T5)."""
    ids = [row.id]
    parent = (row.metadata or {}).get("continuation_of")
    if isinstance(parent, str):
        ids.append(parent)
    found = dict(
        MemoryTier.objects.filter(memory_id__in=ids, original__isnull=False).values_list(
            "memory_id", "original"
        )
    )
    for mid in ids:
        if mid in found:
            return str(found[mid])
    return row.content
