"""Seed matching under hostile input (issue 15 item 1, SPEC G2): linear in the query, long names still seed,
and entity names bounded after NFKC at the write."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory import engine
from memory.engine import graph as g
from memory.engine.graph import seeds as seeding
from tests.memory.conftest import LONG, A, fact

pytestmark = pytest.mark.django_db


class CountingDict(dict):
    """A name dict that counts lookups (the seed matcher's only way into it)."""

    calls = 0

    def get(self, key, default=None):  # noqa: ANN001
        CountingDict.calls += 1
        return super().get(key, default)


def counted(graph):
    graph.word_names = CountingDict(graph.word_names)
    graph.cjk_names = CountingDict(graph.cjk_names)
    CountingDict.calls = 0
    return graph


def planted_graph():
    rows = [
        ("m_1", LONG * 512, "blessing", 0.6),  # 9,216 characters once normalised
        ("m_2", "你" * 512, "ni", 0.6),
        ("m_3", "(" * 512, "paren", 0.6),
        ("m_4", "bob", "new york", 0.6),
    ]
    return g.build_graph(rows, {})


@pytest.mark.parametrize(
    "query", ["(" * 1000, "你" * 1000, "( " * 500, "x(" * 500, engine.normalize_entity(LONG) * 60]
)
def test_a_planted_long_name_costs_a_bounded_number_of_lookups_per_query_character(query):
    graph = counted(planted_graph())
    graph.seeds(query)
    # before: one lookup per pair of token boundaries up to the longest name (~500,000 here)
    assert CountingDict.calls <= 2 * seeding.SHORT_NAME_CHARS * len(query)


def test_long_names_seed_like_short_ones():
    long_words = "the quick brown fox jumps over the lazy dog near the river bank"  # 63 characters
    long_cjk = (
        "李老闆的茶館在台北市大安區的一條小巷子裡面" * 2
    )  # 44 CJK characters: longer than the old cap of 32
    rows = [("m_1", long_words, "x", 0.6), ("m_2", long_cjk, "y", 0.6), ("m_3", "bob", None, 0.6)]
    graph = g.build_graph(rows, {})

    def names(q):
        return sorted(graph.entities[i] for i in graph.seeds(q))

    assert names(f"did you see {long_words.upper()}, bob?") == sorted(["bob", long_words])
    assert names(f"{long_words}s") == []  # whole words only
    assert names(f"我記得{long_cjk}吧") == [long_cjk]
    assert names(long_cjk[:-1]) == []
    planted = planted_graph()
    assert [planted.entities[i] for i in planted.seeds("(" * 600)] == ["(" * 512]
    assert [planted.entities[i] for i in planted.seeds("你" * 600)] == ["你" * 512]


def reference(word_names, cjk_names, query):
    """G2 spelled out: every span between token boundaries that is a word name; every substring that is a
    CJK name."""
    q = engine.normalize_entity(query)[: seeding.MAX_SEED_QUERY_CHARS]
    cuts = {0, len(q)}
    pos = 0
    for tok in seeding.tokens(q):
        pos += len(tok)
        cuts.add(pos)
    cuts = sorted(cuts)
    found = set()
    for a in cuts:
        for b in cuts:
            if a < b and q[a] != " " and q[b - 1] != " " and q[a:b] in word_names:
                found.add(word_names[q[a:b]])
    for i in range(len(q)):
        for j in range(i + 1, len(q) + 1):
            if q[i:j] in cjk_names:
                found.add(cjk_names[q[i:j]])
    return sorted(found)


ALPHABET = st.sampled_from(list("ab (.-_") + ["你", "好", "é"])


@settings(max_examples=150, deadline=None)
@given(
    names=st.lists(st.text(ALPHABET, min_size=1, max_size=45), min_size=1, max_size=8),
    query=st.text(ALPHABET, max_size=80),
)
def test_the_matcher_agrees_with_the_definition(names, query):
    rows = [(f"m_{i}", name, None, 0.5) for i, name in enumerate(names)]
    graph = g.build_graph(rows, {})
    assert graph.seeds(query) == reference(graph.word_names, graph.cjk_names, query)


# --- the bound after NFKC (issue 15 item 1) -----------------------------------------------------------------


def test_a_subject_longer_than_512_characters_once_normalised_is_refused():
    with pytest.raises(engine.InvalidArgument) as refused:
        fact(LONG * 512, "blesses", "x")  # 512 characters typed, 9,216 once normalised
    assert refused.value.field == "subject" and "once normalised" in refused.value.message
    with pytest.raises(engine.InvalidArgument):
        fact(LONG * 29, "blesses", "x")  # 522 once normalised
    assert fact(LONG * 28, "blesses", "x")  # 504
    assert fact("你" * 512, "says", "hello")  # 512 either way
    with pytest.raises(engine.InvalidArgument) as obj:
        fact("s", "p", LONG * 228)  # an object: at most 4,096 once normalised
    assert obj.value.field == "object"
    assert fact("s", "p", LONG * 227)
    assert engine.search(agent_id=A, query="你" * 4000, touch=False) is not None
