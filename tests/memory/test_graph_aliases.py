"""SPEC G6: aliases: normalisation, self/empty rejection, chain flattening, upsert, audit, generation."""

from __future__ import annotations

import pytest

from memory import engine
from memory.models import AuditEvent, EntityAlias

pytestmark = pytest.mark.django_db
A = "agent-alias"


def pairs(agent_id: str = A) -> list[tuple[str, str]]:
    return [(r.alias, r.canonical) for r in engine.alias_list(agent_id=agent_id)]


def test_normalize_entity_trims_lowers_and_folds_whitespace():
    assert engine.normalize_entity("  Li   Laoban\t\n") == "li laoban"
    assert engine.normalize_entity("ＺＨＩＸＵ") == "zhixu"  # NFKC full-width
    assert engine.normalize_entity("老闆") == "老闆"


def test_alias_add_normalises_both_sides_and_is_listed():
    result = engine.alias_add(agent_id=A, canonical="  Zhixu ", alias="Li  LAOBAN")
    assert (result.canonical, result.alias, result.created, result.flattened) == (
        "zhixu",
        "li laoban",
        True,
        0,
    )
    assert pairs() == [("li laoban", "zhixu")]
    assert engine.resolve_entity(agent_id=A, name="LI laoban") == "zhixu"
    assert engine.resolve_entity(agent_id=A, name="Someone Else") == "someone else"


@pytest.mark.parametrize(
    ("canonical", "alias"), [("bob", "bob"), (" Bob ", "BOB"), ("", "x"), ("x", "   "), ("x", None)]
)
def test_self_alias_and_empty_sides_are_rejected(canonical, alias):
    with pytest.raises(engine.InvalidArgument) as err:
        engine.alias_add(agent_id=A, canonical=canonical, alias=alias)
    assert err.value.code == "invalid_argument"
    assert EntityAlias.objects.count() == 0


def test_chain_flattening_a_b_then_b_c_gives_a_c_and_b_c():
    engine.alias_add(agent_id=A, canonical="b", alias="a")
    result = engine.alias_add(agent_id=A, canonical="c", alias="b")
    assert result.flattened == 1
    assert sorted(pairs()) == [("a", "c"), ("b", "c")]
    assert engine.resolve_entity(agent_id=A, name="a") == "c"


def test_alias_of_an_alias_is_stored_against_the_final_canonical():
    engine.alias_add(agent_id=A, canonical="c", alias="a")
    result = engine.alias_add(agent_id=A, canonical="a", alias="x")
    assert result.canonical == "c"
    assert sorted(pairs()) == [("a", "c"), ("x", "c")]


def test_cycle_through_an_alias_is_rejected():
    engine.alias_add(agent_id=A, canonical="a", alias="b")
    with pytest.raises(engine.InvalidArgument):
        engine.alias_add(agent_id=A, canonical="b", alias="a")
    assert pairs() == [("b", "a")]


def test_upsert_on_agent_and_alias():
    engine.alias_add(agent_id=A, canonical="one", alias="x")
    again = engine.alias_add(agent_id=A, canonical="one", alias="X ")
    assert (again.created, again.flattened) == (False, 0)
    moved = engine.alias_add(agent_id=A, canonical="two", alias="x")
    assert moved.created is False
    assert pairs() == [("x", "two")]
    assert EntityAlias.objects.filter(agent_id=A).count() == 1


def test_aliases_are_per_agent():
    engine.alias_add(agent_id=A, canonical="one", alias="x")
    engine.alias_add(agent_id="agent-other", canonical="two", alias="x")
    assert pairs() == [("x", "one")]
    assert pairs("agent-other") == [("x", "two")]
    assert engine.resolve_entity(agent_id="agent-third", name="x") == "x"


def test_alias_add_is_audited_and_bumps_the_generation_only_on_change():
    engine.store(agent_id=A, content="registers the agent")
    g0 = engine.graph_generation(agent_id=A)
    engine.alias_add(agent_id=A, canonical="zhixu", alias="老闆", actor="user:cora")
    g1 = engine.graph_generation(agent_id=A)
    assert g1 == g0 + 1
    event = AuditEvent.objects.get(agent_id=A, action="alias_add")
    assert event.actor == "user:cora"
    assert event.details["alias"] == "老闆" and event.details["canonical"] == "zhixu"
    engine.alias_add(agent_id=A, canonical="zhixu", alias="老闆")  # no change: no bump, no audit
    assert engine.graph_generation(agent_id=A) == g1
    assert AuditEvent.objects.filter(agent_id=A, action="alias_add").count() == 1


def test_alias_list_is_sorted_by_canonical_then_alias():
    engine.alias_add(agent_id=A, canonical="zed", alias="b")
    engine.alias_add(agent_id=A, canonical="amy", alias="z")
    engine.alias_add(agent_id=A, canonical="amy", alias="c")
    assert [(r.canonical, r.alias) for r in engine.alias_list(agent_id=A)] == [
        ("amy", "c"),
        ("amy", "z"),
        ("zed", "b"),
    ]


def fact(subject, predicate, obj, **kw):
    return engine.store_temporal(
        agent_id=A,
        content=f"{subject} {predicate} {obj}",
        subject=subject,
        predicate=predicate,
        object=obj,
        **kw,
    ).id


def test_alias_preview_lists_both_sides_and_conflicts_without_writing():
    moving = fact("Li Laoban", "owns", "the tea shop")
    staying = fact("zhixu", "lives_in", "Taipei")
    obj_side = fact("tea shop", "owned_by", "li laoban")
    engine.alias_add(agent_id=A, canonical="mr li", alias="laoban")
    preview = engine.alias_preview(agent_id=A, canonical="Zhixu", alias="li laoban")
    assert preview.canonical == "zhixu" and preview.alias == "li laoban"
    assert sorted(f.id for f in preview.facts_moving) == sorted([moving, obj_side])
    assert [f.id for f in preview.facts_canonical] == [staying]
    assert preview.conflicts == []
    assert EntityAlias.objects.filter(agent_id=A).count() == 1

    conflicted = engine.alias_preview(agent_id=A, canonical="laoban", alias="zhixu")
    assert conflicted.canonical == "mr li"
    assert any("is an alias of 'mr li'" in x for x in conflicted.conflicts)
    engine.alias_add(agent_id=A, canonical="boss", alias="zhixu")
    moved = engine.alias_preview(agent_id=A, canonical="mr li", alias="zhixu")
    assert any("already an alias of 'boss'" in x for x in moved.conflicts)
    selfish = engine.alias_preview(agent_id=A, canonical="zhixu", alias="boss")
    assert any("self-alias" in x for x in selfish.conflicts)
    with pytest.raises(engine.InvalidArgument):
        engine.alias_preview(agent_id=A, canonical=" ", alias="x")
