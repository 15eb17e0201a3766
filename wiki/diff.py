"""Diffs of wiki revisions (SPEC D5; issue 19 item 15): line diffs with difflib, and within a changed line the
words that changed, so an edit inside one long paragraph reads as that edit, not as the paragraph replaced.

A revision is compared as text: its title, tags, summary and original text, one block each. The base of "the
changes since the last accepted revision" is that revision; a page nothing of was ever accepted (an auto page)
is compared with its first revision, the page as the agent first published it, never with an empty page (which
showed every line as added, whatever the edit).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

MAX_INTRALINE_CHARS = 4000  # a longer line pair is marked whole (SequenceMatcher is quadratic)
_WORDS = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


class Text(Protocol):
    title: str
    summary: str
    original_text: str
    tags: list[str]


class Revision(Text, Protocol):
    number: int
    accepted: bool


@dataclass(frozen=True)
class Draft:
    """Text not saved as a revision (the editor's preview)."""

    title: str
    summary: str
    original_text: str
    tags: list[str]


def lines_of(rev: Text | None) -> list[str]:
    if rev is None:
        return []
    body = f"# {rev.title}\n\ntags: {', '.join(rev.tags or [])}\n\n## Summary\n\n{rev.summary}\n\n"
    body += f"## Original text\n\n{rev.original_text}\n"
    return body.splitlines()


def unified(old: Text | None, new: Text | None, *, fromfile: str, tofile: str) -> list[str]:
    return list(
        difflib.unified_diff(lines_of(old), lines_of(new), fromfile=fromfile, tofile=tofile, lineterm="")
    )


@dataclass(frozen=True)
class Segment:
    text: str
    changed: bool = False


@dataclass
class Row:
    """One line of a unified diff: file, hunk, add, del or context; an add or del line paired with its
    counterpart carries its words as segments, the changed ones marked."""

    kind: str
    text: str
    segments: list[Segment] = field(default_factory=list)


def _kind(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "del"
    return "context"


def _mark(old: str, new: str) -> tuple[list[Segment], list[Segment]]:
    """The words of ``old`` and ``new`` with the ones that differ marked."""
    a, b = _WORDS.findall(old), _WORDS.findall(new)
    left: list[Segment] = []
    right: list[Segment] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        same = op == "equal"
        if i2 > i1:
            left.append(Segment("".join(a[i1:i2]), not same))
        if j2 > j1:
            right.append(Segment("".join(b[j1:j2]), not same))
    return left, right


def rows(lines: Sequence[str]) -> list[Row]:
    """Unified-diff lines as rows; a run of deleted lines followed by a run of added ones is paired line by line
    and the changed words inside each pair are marked."""
    out = [Row(_kind(line), str(line).rstrip("\n")) for line in lines]
    i = 0
    while i < len(out):
        if out[i].kind != "del":
            i += 1
            continue
        d_end = i
        while d_end < len(out) and out[d_end].kind == "del":
            d_end += 1
        a_end = d_end
        while a_end < len(out) and out[a_end].kind == "add":
            a_end += 1
        for d, a in zip(range(i, d_end), range(d_end, a_end), strict=False):
            old, new = out[d].text[1:], out[a].text[1:]
            if len(old) + len(new) <= MAX_INTRALINE_CHARS:
                out[d].segments, out[a].segments = _mark(old, new)
        i = a_end
    return out


def base_of(revisions: Sequence[Revision]) -> Revision | None:
    """What "the changes since the last accepted revision" compares with: the newest accepted revision, else
    the first one (nothing accepted yet). ``revisions``: any order."""
    ordered = sorted(revisions, key=lambda r: r.number)
    accepted = [r for r in ordered if r.accepted]
    if accepted:
        return accepted[-1]
    return ordered[0] if ordered else None


def since_accepted(revisions: Sequence[Revision]) -> list[str]:
    """Unified-diff lines from ``base_of`` to the latest revision (none when the latest is the base)."""
    if not revisions:
        return []
    latest = max(revisions, key=lambda r: r.number)
    base = base_of(revisions)
    if base is None or base.number == latest.number:
        return []
    label = f"r{base.number} (accepted)" if base.accepted else f"r{base.number} (first published)"
    return unified(base, latest, fromfile=label, tofile=f"r{latest.number}")


def between(old: Revision, new: Revision) -> list[str]:
    return unified(old, new, fromfile=f"r{old.number}", tofile=f"r{new.number}")
