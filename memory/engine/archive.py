"""The archive of a tiered row (SPEC B9): the text it was written with, before tiering shortened it."""

from __future__ import annotations

from memory.models import Memory, MemoryTier

ORIGINAL_SQL = (
    "COALESCE((SELECT a.original FROM memory_tiers a WHERE a.memory_id = {alias}.id), {alias}.content)"
)


def holds(row: Memory, written: str) -> bool:
    """Whether ``row`` holds the text ``written`` (trimmed): its content, or, when tiering shortened it, the text
    it was written with (SPEC T5: writing a fact again reaffirms its shortened row). The archive is read only
    when the content differs."""
    return row.content.strip() == written.strip() or original_content(row).strip() == written.strip()


def original_content(row: Memory) -> str:
    """The text a row was written with: its archived original when tiering shortened it (also for a
    continuation row of a shortened row), else its content."""
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


def same_text(memory_id: str, content: str, written: str) -> bool:
    """Whether a row holds ``written`` (trimmed): its content, or, when tiering shortened it, its archived
    original (looked up only when the content differs)."""
    if content.strip() == written.strip():
        return True
    original = MemoryTier.objects.filter(memory_id=memory_id).values_list("original", flat=True).first()
    return original is not None and original.strip() == written.strip()
