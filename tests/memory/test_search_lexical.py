"""Issue 17 (a): the terms of a memory search: stopwords left out, long CJK runs OR-ed as bigrams."""

from __future__ import annotations

import pytest

from memory import engine
from memory.engine import text

pytestmark = pytest.mark.django_db

A = "lexical-agent"


def ids(hits):
    return [h.id for h in hits]


def test_a_short_question_keeps_every_word():
    assert text.search_units("What is the name of my cat?") == [
        ["what"],
        ["is"],
        ["the"],
        ["name"],
        ["of"],
        ["my"],
        ["cat"],
    ]
    assert text.search_units("") == [] and text.search_units("!!! 🙂") == []


def test_a_long_query_leaves_its_stopwords_out():
    words = " ".join(f"word{i}" for i in range(30))
    units = text.search_units("the a of what is my " + words)
    assert units == [[f"word{i}"] for i in range(30)]
    only = " ".join(sorted(text.STOPWORDS))
    assert len(text.search_units(only)) == len(text.STOPWORDS)  # nothing else left: stopwords are searched


def test_long_cjk_runs_become_or_ed_bigrams_and_short_ones_stay_phrases():
    assert text.search_units("台北開會") == [["台北", "北開", "開會"]]
    assert text.search_units("我又要跳舞了") == [["我又"], ["又要"], ["要跳"], ["跳舞"], ["舞了"]]
    assert text.sqlite_match("台北開會") == '"台北 北開 開會"'
    assert text.pg_tsquery("跳舞了吗") == "('跳舞' <-> '舞了' <-> '了吗')"


def test_a_long_query_keeps_all_its_content_words_up_to_the_cap():
    words = " ".join(f"word{i}" for i in range(40))
    assert text.search_units("the a of " + words) == [[f"word{i}"] for i in range(40)]
    cap = text.MAX_SEARCH_UNITS
    units = text.search_units("the a of " + " ".join(f"word{i}" for i in range(cap + 10)))
    assert len(units) == cap and units[0] == ["word10"] and units[-1] == [f"word{cap + 9}"]


def test_a_chinese_sentence_finds_the_memory_that_shares_its_words():
    hit = engine.store(agent_id=A, content="Bart在圣诞节晚会上跳舞，感觉非常开心。")
    engine.store(agent_id=A, content="Lisa喜欢早上喝绿茶。")
    # the sentence as a whole occurs nowhere; before, its run was one phrase and nothing matched
    assert ids(engine.search(agent_id=A, query="我又要在圣诞节晚会上跳舞了！", touch=False)) == [hit.id]
    assert engine.search(agent_id=A, query="台南", touch=False) == []


def test_a_long_query_finds_the_memory_by_its_content_words():
    hit = engine.store(agent_id=A, content="Bart danced at the Christmas party")
    engine.store(agent_id=A, content="what is it that you would do")
    filler = " ".join(["what", "is", "it", "that", "you", "would", "do", "the", "a", "of"] * 3)
    query = "christmas party " + filler + " " + " ".join(f"zz{i}" for i in range(25))
    # 2 content words + 10 stopwords + 25 fillers = 37 units: past the cap the stopwords go, and the last 32 of
    # the rest still hold "christmas party"
    assert ids(engine.search(agent_id=A, query=query, touch=False)) == [hit.id]
