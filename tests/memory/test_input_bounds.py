"""Validation under hostile input (issue 15): bounded work for floods of tags, NUL bytes refused alike on both
backends, times near the ends of the calendar refused as invalid_time."""

from __future__ import annotations

import pytest

from memory import engine
from memory.engine import common as c
from tests.memory.conftest import A, fact

pytestmark = pytest.mark.django_db


# --- item 2: tags ------------------------------------------------------------------------------------------


def test_a_flood_of_tags_is_refused_after_a_bounded_number_of_entries():
    consumed = 0

    def flood():
        nonlocal consumed
        for i in range(5_000):
            consumed += 1
            yield f"tag-{i}"

    with pytest.raises(engine.InvalidArgument) as refused:
        c.check_tags(flood())
    assert refused.value.field == "tags" and "at most 50 tags" in refused.value.message
    assert consumed <= c.MAX_RAW_TAGS + 1  # before: every entry was read (and compared with every other)
    with pytest.raises(engine.InvalidArgument):
        c.check_tags([f"tag-{i}" for i in range(100_000)])


def test_tags_keep_their_order_and_repeats_fold_into_one():
    assert c.check_tags([" a", "b", "a ", "b", "c"]) == ["a", "b", "c"]
    repeated = [f"t{i % 50}" for i in range(c.MAX_RAW_TAGS)]  # 200 entries, 50 distinct: accepted
    assert len(c.check_tags(repeated)) == 50
    with pytest.raises(engine.InvalidArgument):
        c.check_tags([f"t{i}" for i in range(51)])
    for bad in ("a,b", b"ab", {"a": 1}, [""], ["x" * 101], [3]):
        with pytest.raises(engine.InvalidArgument):
            c.check_tags(bad)


def test_every_entry_point_takes_the_bounded_check():
    many = [f"t{i}" for i in range(50_000)]
    with pytest.raises(engine.InvalidArgument):
        engine.search(agent_id=A, query="x", tags=many)
    with pytest.raises(engine.InvalidArgument):
        engine.store(agent_id=A, content="x", tags=many)
    with pytest.raises(engine.InvalidArgument):
        fact("s", "p", "o", tags=many)


# --- item 3: a row's full-text document is capped once normalised (both backends) ---------------------------


def test_the_document_is_cut_once_normalised_and_plain_text_never_is():
    from memory.engine import text

    lengthening = "\ufdfa" * 21_000  # 63 KB typed, 378,000 characters once normalised
    far = engine.store(agent_id=A, content=lengthening + " zebra").id
    near = engine.store(agent_id=A, content="zebra " + lengthening).id
    assert [h.id for h in engine.search(agent_id=A, query="zebra", touch=False)] == [near]
    assert len(text.document(lengthening)) == text.MAX_DOC_CHARS
    ascii_max = "w " * (engine.MAX_CONTENT_BYTES // 2 - 4) + "okapi"
    assert len(text.document(ascii_max, "s" * 512, "o" * 4096)) < text.MAX_DOC_CHARS
    plain = engine.store(agent_id=A, content=ascii_max).id
    assert [h.id for h in engine.search(agent_id=A, query="okapi", touch=False)] == [plain]
    assert far
