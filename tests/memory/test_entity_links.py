"""Issue 17 (item 4): entity links of plain memories, and the turn → entity → turn hop of search."""

from __future__ import annotations

import pytest
import time_machine

from memory import engine
from memory.engine import common as c
from memory.engine import graph
from memory.engine.types import RetrievalWeights
from memory.models import MemoryEntity

pytestmark = pytest.mark.django_db

A = "links-agent"
B = "links-other"
LINK = RetrievalWeights(w_link=0.5)
OFF = RetrievalWeights(w_link=0.0)


def ids(hits):
    return [h.id for h in hits]


def links(agent, memory_id):
    return graph.memory_links(agent_id=agent, memory_id=memory_id)


def test_extraction_finds_capitalised_spans_and_marked_cjk_names():
    text = "We walked through Golden Gate Park with Luna's vet. The Crown is on. Sure, it was fun."
    assert graph.extract(text) == ["golden gate park", "luna", "crown"]
    # a lone capitalised word opening a sentence is only a maybe ("Sure", "Thanks"… or a name)
    assert graph.extract("Luna slept. Thanks!") == []
    assert graph.extract("Luna slept. Thanks!", maybes=True) == ["?luna"]
    assert graph.extract("王老师说《红楼梦》很好看，Bart也喜欢。") == ["bart", "红楼梦", "王老师"]
    assert graph.extract("") == [] and graph.extract("what is my cat called?") == []


def test_a_plain_memory_links_the_names_it_mentions_and_a_sentence_opener_once_it_is_known():
    first = engine.store(agent_id=A, content="Yesterday Luna chased a mouse in Central Park.")
    later = engine.store(agent_id=A, content="Luna is asleep now. Sure, that is normal.")
    assert links(A, first.id) == ["central park", "luna"]
    assert links(A, later.id) == ["luna"]  # "Luna" opens a sentence but is a known name; "Sure" is not


def test_the_agents_known_entities_link_even_in_lower_case():
    engine.store_temporal(agent_id=A, content="Bob works at Initech", subject="bob", predicate="works_at",
                          object="initech")  # fmt: skip
    plain = engine.store(agent_id=A, content="had lunch with bob near initech today")
    assert links(A, plain.id) == ["bob", "initech"]


def test_a_query_hops_from_a_hit_through_a_shared_name_to_another_turn():
    hit = engine.store(agent_id=A, content="My cat is called Luna and she loves tuna.", session_id="s1")
    other = engine.store(agent_id=A, content="The vet said Luna needs a special diet.", session_id="s2")
    engine.store(agent_id=A, content="I repainted the fence.", session_id="s3")
    assert ids(engine.search(agent_id=A, query="what does my cat eat", touch=False, weights=OFF)) == [hit.id]
    got = engine.search(agent_id=A, query="what does my cat eat", touch=False, weights=LINK)
    assert ids(got) == [hit.id, other.id] and got[1].fts_position is None


def test_links_follow_aliases_and_merges_added_after_the_memories():
    a = engine.store(agent_id=A, content="Dinner with Bobby at the harbour.")
    b = engine.store(agent_id=A, content="Robert Smith called about the boat.")
    assert links(A, a.id) == ["bobby"] and links(A, b.id) == ["robert smith"]
    query = "what did Robert Smith say"
    assert a.id not in ids(engine.search(agent_id=A, query=query, touch=False, weights=LINK))
    engine.alias_add(agent_id=A, canonical="Robert Smith", alias="Bobby")  # a merge of the two names
    assert links(A, a.id) == ["robert smith"]
    assert a.id in ids(engine.search(agent_id=A, query=query, touch=False, weights=LINK))


def test_a_retracted_memory_links_nothing():
    keep = engine.store(agent_id=A, content="Our cat Luna sleeps on the sofa", origin="user")
    gone = engine.store(agent_id=A, content="I bought a collar for Luna.", origin="channel:bad")
    assert links(A, gone.id) == ["luna"]
    engine.invalidate_by_origin(agent_id=A, origin="channel:bad")
    assert links(A, gone.id) == []
    got = ids(engine.search(agent_id=A, query="where does Luna sleep", touch=False, weights=LINK))
    assert got == [keep.id]
    assert graph.link_scores(agent_id=A, query="Luna", hits=[], at=c.now()) == {keep.id: 1.0}


def test_erasure_deletes_the_links_of_erased_rows_and_of_the_erased_name():
    gone = engine.store(agent_id=A, content="Mallory visited Paris", origin="channel:x")
    other = engine.store(agent_id=A, content="Then Trudy and Mallory met in Rome")
    engine.erase(agent_id=A, origin="channel:x", reason="request")
    assert not MemoryEntity.objects.filter(memory_id=gone.id).exists()
    assert links(A, other.id) == ["mallory", "rome", "trudy"]
    result = engine.erase(agent_id=A, subject="Mallory", reason="request")
    assert not MemoryEntity.objects.filter(agent_id=A, entity="mallory").exists()
    assert result.counts["memory_entities"] >= 1


def test_another_agents_entities_and_links_never_link():
    engine.store_temporal(agent_id=B, content="zorro lives in spain", subject="zorro", predicate="lives_in",
                          object="spain")  # fmt: skip
    theirs = engine.store(agent_id=B, content="Zorro rode to Madrid")
    mine = engine.store(agent_id=A, content="watched a film about zorro in spain")
    assert links(A, mine.id) == []  # B's known entities are not A's
    assert links(A, theirs.id) == []  # another agent's memory behaves as absent
    assert graph.link_scores(agent_id=A, query="Zorro Madrid", hits=[], at=c.now()) == {}
    assert ids(engine.search(agent_id=A, query="Zorro", touch=False, weights=LINK)) == [mine.id]


def test_the_backfill_links_old_rows_and_is_idempotent_and_resumable():
    rows = [engine.store(agent_id=A, content=f"Note {i} about Paris and Anna") for i in range(5)]
    expected = {(r.id, n) for r in rows for n in ("paris", "anna")}
    MemoryEntity.objects.all().delete()
    first = graph.link_backfill(agent_id=A, batch=2)
    assert first["rows"] == 5 and first["links"] == 10
    got = set(MemoryEntity.objects.values_list("memory_id", "entity"))
    assert got == expected
    again = graph.link_backfill(agent_id=A, batch=2)  # idempotent: nothing new, nothing doubled
    assert set(MemoryEntity.objects.values_list("memory_id", "entity")) == expected
    assert MemoryEntity.objects.count() == 10 and again["rows"] == 5
    MemoryEntity.objects.all().delete()
    part = graph.link_backfill(agent_id=A, after=sorted(r.id for r in rows)[2])  # resumes after an id
    assert part["rows"] == 2


@time_machine.travel("2026-03-01 12:00", tick=False)
def test_with_links_off_or_no_links_the_ranking_is_unchanged():
    rows = [engine.store(agent_id=A, content=f"kitten note number {i}") for i in range(6)]
    assert rows
    base = engine.search(agent_id=A, query="kitten note", touch=False, weights=OFF)
    on = engine.search(agent_id=A, query="kitten note", touch=False, weights=LINK)  # no names: no links
    assert [(h.id, h.score) for h in on] == [(h.id, h.score) for h in base]


def test_the_link_memories_command_backfills_once():
    from io import StringIO

    from django.core.management import call_command

    row = engine.store(agent_id=A, content="Dinner with Anna in Paris")
    MemoryEntity.objects.all().delete()
    out = StringIO()
    call_command("link_memories", "--agent", A, stdout=out)
    assert '"links": 2' in out.getvalue() and links(A, row.id) == ["anna", "paris"]
    call_command("link_memories", stdout=StringIO())
    assert MemoryEntity.objects.count() == 2
