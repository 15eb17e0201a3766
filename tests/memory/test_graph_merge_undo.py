"""Issue 19 item 3: a graph merge (``alias_add``) can be undone after the fact (``alias_undo``): the alias goes,
the names it flattened point back, turns written during the merge are linked again, the graph cache is
rebuilt, and the audit log names the merge taken back. Refusals have stable codes."""

from __future__ import annotations

import pytest

from memory import engine
from memory.engine import graph
from memory.engine.types import RetrievalWeights
from memory.models import AuditEvent, EntityAlias
from tests.memory.conftest import OTHER, A, fact

pytestmark = pytest.mark.django_db

LINK = RetrievalWeights(w_link=0.5)


def pairs(agent_id: str = A) -> list[tuple[str, str]]:
    return sorted((r.alias, r.canonical) for r in engine.alias_list(agent_id=agent_id))


def ids(hits) -> list[str]:
    return [h.id for h in hits]


def picture(agent_id: str = A, leave_out: frozenset[str] = frozenset()) -> dict:
    """What a reader of the agent sees of Bob and Robert: the graph around each, PPR seeds, search (less the
    memories in ``leave_out``, written later)."""
    out: dict = {}
    for name in ("bob", "robert"):
        view = engine.graph_view(agent_id=agent_id, entity=name)
        out[name] = (view.entity, sorted(e["memory_id"] for e in view.edges))
        scores = engine.graph_scores(agent_id=agent_id, query=f"where does {name} work")
        out[f"seeds {name}"] = scores.seeds if scores else None
        hits = engine.search(agent_id=agent_id, query=f"what about {name}", touch=False, weights=LINK)
        out[f"search {name}"] = [i for i in ids(hits) if i not in leave_out]
    return out


@pytest.fixture
def people():
    return {
        "bob": fact("bob", "works_at", "Initech"),
        "robert": fact("robert", "lives_in", "Paris"),
        "turn": engine.store(agent_id=A, content="Lunch with Bob near the office.").id,
    }


def test_alias_add_returns_its_event_and_records_what_it_flattened():
    engine.alias_add(agent_id=A, canonical="bob", alias="bobby")
    result = engine.alias_add(agent_id=A, canonical="robert", alias="bob")
    event = AuditEvent.objects.get(id=result.event_id)
    assert (event.action, event.agent_id) == ("alias_add", A)
    assert event.details["flattened_aliases"] == ["bobby"] and event.details["flattened"] == 1
    assert engine.alias_add(agent_id=A, canonical="robert", alias="bob").event_id is None  # no change


def test_undo_gives_back_the_graph_search_and_links_of_before_the_merge(people):
    before = picture()
    links_before = graph.memory_links(agent_id=A, memory_id=people["turn"])
    merge = engine.alias_add(agent_id=A, canonical="Robert", alias="Bob", actor="user:cur")
    merged = picture()
    assert merged != before and merged["bob"][0] == "robert"  # the merge changed what readers see
    during = engine.store(agent_id=A, content="Bob said the boat is ready.").id
    assert graph.memory_links(agent_id=A, memory_id=during) == ["robert"]  # linked while Bob was Robert

    result = engine.alias_undo(agent_id=A, event_id=merge.event_id, actor="user:cur", reason="not the same")
    assert (result.canonical, result.alias, result.merge_event_id) == ("robert", "bob", merge.event_id)
    assert pairs() == []
    assert picture(leave_out=frozenset({during})) == before
    assert graph.memory_links(agent_id=A, memory_id=people["turn"]) == links_before == ["bob"]
    # the turn written during the merge now links as if the merge had never been
    assert graph.memory_links(agent_id=A, memory_id=during) == ["bob"] and result.relinked == 1
    assert engine.resolve_entity(agent_id=A, name="Bob") == "bob"


def test_undo_points_flattened_aliases_back_at_the_merged_name():
    engine.alias_add(agent_id=A, canonical="bob", alias="bobby")
    engine.alias_add(agent_id=A, canonical="bob", alias="rob")
    merge = engine.alias_add(agent_id=A, canonical="robert", alias="bob")
    assert pairs() == [("bob", "robert"), ("bobby", "robert"), ("rob", "robert")]
    result = engine.alias_undo(agent_id=A, event_id=merge.event_id, actor="user:cur")
    assert result.restored_aliases == ["bobby", "rob"]
    assert pairs() == [("bobby", "bob"), ("rob", "bob")]
    assert engine.resolve_entity(agent_id=A, name="bobby") == "bob"


def test_undo_of_a_repointed_alias_points_it_where_it_pointed_before():
    engine.alias_add(agent_id=A, canonical="rob", alias="bob")
    merge = engine.alias_add(agent_id=A, canonical="robert", alias="bob")
    assert pairs() == [("bob", "robert")]
    engine.alias_undo(agent_id=A, event_id=merge.event_id, actor="user:cur")
    assert pairs() == [("bob", "rob")]


def test_undo_is_audited_and_a_second_undo_is_refused(people):
    merge = engine.alias_add(agent_id=A, canonical="robert", alias="bob")
    result = engine.alias_undo(
        agent_id=A, event_id=str(merge.event_id), actor="user:cur", reason="two people"
    )
    event = AuditEvent.objects.get(id=result.event_id)
    assert (event.action, event.actor, event.reason) == ("merge_undone", "user:cur", "two people")
    assert event.details["merge_undo_of"] == merge.event_id and event.subject == "robert"
    assert engine.undone_merges(A, [merge.event_id]) == {merge.event_id}
    with pytest.raises(engine.AlreadyUndone) as err:
        engine.alias_undo(agent_id=A, event_id=merge.event_id, actor="user:other")
    assert err.value.code == "already_undone" and "user:cur" in err.value.message
    assert AuditEvent.objects.filter(action="merge_undone").count() == 1


def test_another_agents_merge_and_other_events_are_not_found():
    theirs = engine.alias_add(agent_id=OTHER, canonical="robert", alias="bob")
    for agent, event_id in ((A, theirs.event_id), (A, 99999999)):
        with pytest.raises(engine.NotFound) as err:
            engine.alias_undo(agent_id=agent, event_id=event_id, actor="user:cur")
        assert err.value.code == "not_found"
    not_a_merge = engine.audit_record(agent_id=A, actor="user:cur", action="wiki_remove", reason="x")
    with pytest.raises(engine.NotFound):
        engine.alias_undo(agent_id=A, event_id=not_a_merge, actor="user:cur")
    for bad in ("12a", "", -1, 1.5, None, True):
        with pytest.raises(engine.InvalidArgument):
            engine.alias_undo(agent_id=A, event_id=bad, actor="user:cur")
    assert pairs(OTHER) == [("bob", "robert")]  # untouched


def test_a_later_merge_that_moved_the_names_must_be_undone_first():
    first = engine.alias_add(agent_id=A, canonical="robert", alias="bob")
    second = engine.alias_add(agent_id=A, canonical="roberto", alias="robert")  # flattens bob -> roberto
    with pytest.raises(engine.MergeChanged) as err:
        engine.alias_undo(agent_id=A, event_id=first.event_id, actor="user:cur")
    assert err.value.code == "merge_changed"
    assert pairs() == [("bob", "roberto"), ("robert", "roberto")]  # nothing changed
    engine.alias_undo(agent_id=A, event_id=second.event_id, actor="user:cur")
    assert pairs() == [("bob", "robert")]
    engine.alias_undo(agent_id=A, event_id=first.event_id, actor="user:cur")  # in reverse order it works
    assert pairs() == []


def test_a_later_merge_that_moved_a_name_away_and_back_must_be_undone_first():
    first = engine.alias_add(agent_id=A, canonical="robert", alias="bob")
    second = engine.alias_add(agent_id=A, canonical="bobby", alias="bob")
    third = engine.alias_add(agent_id=A, canonical="robert", alias="bob")  # bob points at robert again
    with pytest.raises(engine.MergeChanged) as err:
        engine.alias_undo(agent_id=A, event_id=first.event_id, actor="user:cur")
    assert err.value.details["later_event_id"] == second.event_id
    assert pairs() == [("bob", "robert")]  # the later merges' work is kept
    for merge, after in ((third, [("bob", "bobby")]), (second, [("bob", "robert")]), (first, [])):
        engine.alias_undo(agent_id=A, event_id=merge.event_id, actor="user:cur")  # newest first works
        assert pairs() == after


def test_a_later_merge_that_kept_the_merged_name_blocks_the_undo():
    first = engine.alias_add(agent_id=A, canonical="robert", alias="bob")
    engine.alias_add(agent_id=A, canonical="bob", alias="bobby")  # "bobby is bob": stored as bobby -> robert
    with pytest.raises(engine.MergeChanged) as err:
        engine.alias_undo(agent_id=A, event_id=first.event_id, actor="user:cur")
    assert "bob" in err.value.message
    assert EntityAlias.objects.filter(agent_id=A).count() == 2


def test_undo_invalidates_the_cached_graph(people):
    for i in range(3):
        fact(f"robert friend {i}", "knows", "robert")
    merge = engine.alias_add(agent_id=A, canonical="robert", alias="bob")
    warm = engine.graph_scores(agent_id=A, query="bob")
    assert warm is not None and people["bob"] in warm.top and warm.seeds == ["robert"]
    engine.alias_undo(agent_id=A, event_id=merge.event_id, actor="user:cur")
    cold = engine.graph_scores(agent_id=A, query="bob")
    assert cold is not None and cold.seeds == ["bob"] and people["robert"] not in cold.top
