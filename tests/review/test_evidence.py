"""The review card's drawings (review/evidence.py): the word diff of old and new text, the triple's changes
and the valid intervals on one time axis. Pure functions: no database."""

from __future__ import annotations

from datetime import UTC, datetime

from review.evidence import Segment, text_diff, time_axis, triple_changes

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_diff_marks_what_the_new_text_drops_and_adds():
    old, new = text_diff("proj deploys to Cloudflare Workers", "proj deploys to fly.io now")
    assert old == [Segment("proj deploys to ", "same"), Segment("Cloudflare Workers", "del")]
    assert new == [Segment("proj deploys to ", "same"), Segment("fly.io now", "ins")]
    assert "".join(s.text for s in old) == "proj deploys to Cloudflare Workers"
    assert "".join(s.text for s in new) == "proj deploys to fly.io now"


def test_the_diff_goes_character_by_character_in_chinese():
    old, new = text_diff("张三住在北京", "张三不再住在北京，改住上海")
    assert [s for s in new if s.op == "ins"][0].text == "不再"
    assert all(s.op == "same" for s in old)
    assert "".join(s.text for s in new) == "张三不再住在北京，改住上海"


def test_identical_texts_have_no_change_and_empty_ones_no_segment():
    old, new = text_diff("same", "same")
    assert old == new == [Segment("same", "same")]
    assert text_diff("", "") == ([], [])


def test_triple_changes_name_the_parts_that_differ():
    a = {"subject": "ana", "predicate": "lives_in", "object": "Paris"}
    assert triple_changes(a, {**a, "object": "London"}) == {"object"}
    assert triple_changes(a, {**a, "predicate": "resides_in", "object": ""}) == {"predicate", "object"}
    assert triple_changes({}, {}) == set()


def test_the_axis_draws_both_intervals_in_order_with_an_open_end():
    axis = time_axis(
        [
            ("old", {"valid_from": "2020-01-01T00:00:00+00:00", "valid_until": "2023-01-01T00:00:00+00:00"}),
            ("new", {"valid_from": "2023-01-01T00:00:00+00:00", "valid_until": None}),
        ],
        NOW,
    )
    assert axis is not None
    old, new = axis.bars
    assert (old.label, new.label) == ("old", "new")
    assert old.x < new.x and abs(old.end_x - new.x) < 0.2  # the old ends where the new starts
    assert not old.open_end and new.open_end
    assert new.end_x == axis.now_x  # an open interval runs to now
    assert axis.left <= old.x and new.end_x <= axis.right_x
    assert [t.text for t in axis.ticks][0] == "2020-01-01" and axis.ticks[-1].text == "2026-01-01"


def test_the_axis_falls_back_to_ingestion_and_draws_nothing_without_times():
    axis = time_axis([("new", {"valid_from": None, "ingested_at": "2025-12-31T00:00:00Z"})], NOW)
    assert axis is not None and len(axis.bars) == 1 and axis.bars[0].width >= 2
    assert time_axis([("old", {}), ("new", {"valid_from": "not a time"})], NOW) is None


def test_the_cards_format_html_gives_djangos_output():
    """``evidence.format_html`` (the cheap one the cards' sides and axes use) escapes exactly like Django's."""
    from django.utils import html as django_html
    from django.utils.functional import lazy, lazystr
    from django.utils.safestring import SafeString, mark_safe

    from review import evidence

    class Html:
        def __html__(self) -> str:
            return "<b>own</b>"

    values = [
        "<script>alert('x') & \"y\"</script>",
        mark_safe("<i>kept</i>"),
        SafeString("<em>&amp;</em>"),
        0,
        0.25,
        None,
        lazystr("<lazy> & 'text'"),
        lazy(lambda: mark_safe("<u>lazy safe</u>"), SafeString)(),
        Html(),
        "plain",
    ]
    template = '<p class="{}">' + "{} · " * (len(values) - 1) + "</p>"
    ours = evidence.format_html(template, *values)
    assert evidence.format_html is not django_html.format_html
    assert ours == django_html.format_html(template, *values)
    assert isinstance(ours, SafeString)
    for v in values:
        assert evidence.format_html("[{}]", v) == django_html.format_html("[{}]", v)
