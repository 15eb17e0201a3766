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


# --- item 14: times near the calendar's ends -------------------------------------------------------------------

EDGES = [
    "9999-12-31T23:00:00-05:00",  # year 10000 once in UTC
    "0001-01-01T01:00:00+05:00",  # year 0 once in UTC
    "9999-12-31T23:59:59.999999Z",
    "0001-01-01T00:00:00Z",
]


@pytest.mark.parametrize("when", EDGES)
def test_a_time_near_the_calendars_ends_is_invalid_time_everywhere(when):
    with pytest.raises(engine.InvalidTime):
        c.parse_time(when, field="at")
    with pytest.raises(engine.InvalidTime):
        fact("s", "p", "o", valid_from=when)
    with pytest.raises(engine.InvalidTime):
        fact("s", "p", "o", valid_until=when)
    with pytest.raises(engine.InvalidTime):
        engine.get_at(agent_id=A, subject="s", predicate="p", at=when)
    with pytest.raises(engine.InvalidTime):
        engine.get_at(agent_id=A, subject="s", predicate="p", at="2025-01-01T00:00:00Z", as_of=when)
    with pytest.raises(engine.InvalidTime):
        engine.invalidate_by_origin(agent_id=A, origin="channel:x", since=when)
    with pytest.raises(engine.InvalidTime):
        engine.token_create(agent_id=A, scopes="memory:read", expires_at=when)


def test_the_widest_accepted_times_work_end_to_end():
    first = fact("edge", "p", "far past", valid_from="0001-01-02T00:00:00Z")
    last = fact(
        "edge", "p", "far future", valid_from="9999-12-29T00:00:00Z", valid_until="9999-12-30T00:00:00Z"
    )
    assert engine.get_at(agent_id=A, subject="edge", predicate="p", at="9999-12-29T12:00:00Z").id == last
    assert engine.get_at(agent_id=A, subject="edge", predicate="p", at="5000-01-01T00:00:00Z").id == first
    assert engine.get_at(
        agent_id=A, subject="edge", predicate="p", at="9999-12-29T12:00:00Z", as_of="9999-12-30T00:00:00Z"
    )
    history = engine.get_history(agent_id=A, subject="edge", predicate="p")
    assert [h.object for h in history] == ["far past", "far future", "far past"]  # the past value continues


# --- item 15: NUL characters: invalid_argument on both backends ----------------------------------------------


def test_nul_characters_are_refused_alike_on_both_backends():
    """SQLite stored them (tags, source_event, derived_from); PostgreSQL failed with an internal error (also
    for ids and filters). Each is now ``invalid_argument`` before anything is read or written."""
    mid = engine.store(agent_id=A, content="kept").id
    cases = [
        lambda: engine.store(agent_id=A, content="x", tags=["a\x00b"]),
        lambda: fact("s", "p", "o", source_event="ev\x00"),
        lambda: fact("s", "p", "o", derived_from=[mid + "\x00"]),
        lambda: engine.get_by_ids(agent_id=A, ids=[mid, "m_\x00"]),
        lambda: engine.get_memory(agent_id=A, memory_id="m_\x00"),
        lambda: engine.search(agent_id=A, query="kept", tags=["\x00"]),
        lambda: engine.get_history(agent_id=A, subject="s\x00", predicate="p"),
        lambda: engine.get_at(agent_id=A, subject="s", predicate="p\x00", at="2025-01-01T00:00:00Z"),
        lambda: engine.feedback_record(agent_id=A, verdict="+", memory_id="m_\x00"),
        lambda: engine.invalidate_by_origin(agent_id=A, origin="channel:\x00"),
        lambda: engine.alias_add(agent_id=A, canonical="a\x00", alias="b"),
    ]
    for case in cases:
        with pytest.raises(engine.InvalidArgument):
            case()
    assert [h.id for h in engine.search(agent_id=A, query="kept\x00", touch=False)] == [mid]  # query: text
    assert engine.get_memory(agent_id=A, memory_id=mid).tags == []


def test_wiki_tags_with_nul_are_refused():
    from wiki import services

    with pytest.raises(engine.InvalidArgument):
        services.publish_auto(
            agent_id=A, doc_type="sop", title="t", summary="s", original_text="body", tags=["x\x00"]
        )
