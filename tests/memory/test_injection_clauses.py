"""The clause splitter (``lexicon._CLAUSE``) is a faster spelling of ``lexicon._CLAUSE_SPEC``: both find the same
cut spans, so every detector reads the same clauses."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.engine.injection.detectors import _clause_spans
from memory.engine.injection.lexicon import _CLAUSE, _CLAUSE_SPEC

SPEC = re.compile(_CLAUSE_SPEC)
# every character either branch cares about, and ordinary ones around them
ALPHABET = ".!?;\n。！？；\t \u3000\xa0\u2028-–—ab1'"


def _spans(rx: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in rx.finditer(text)]


@settings(max_examples=800, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=24))
def test_same_cuts_as_the_spec(text: str) -> None:
    assert _spans(_CLAUSE, text) == _spans(SPEC, text)
    assert _CLAUSE.split(text) == SPEC.split(text)


def test_same_cuts_on_prose() -> None:
    text = (
        "Ship it. Then -- maybe -- wait!\nNew line; more?  Done...\n\n好的。然后！再说？最后；\n"
        "e.g. 3.14 is pi.The end - really — yes\u3000-\u3000ok. last"
    )
    assert _spans(_CLAUSE, text) == _spans(SPEC, text)
    pieces = SPEC.split(text)
    assert [text[lo:hi] for lo, hi in _clause_spans(text)] == pieces
    assert len(pieces) > 8
