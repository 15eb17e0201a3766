"""SPEC G6: aliases: normalisation, self/empty rejection, chain flattening, upsert, audit, generation; names
NFKC lengthens (G1), the per-agent cap, and "no aliases -> rankings identical to before aliases existed"."""

from __future__ import annotations

import re
import sys
import unicodedata

import numpy as np
import pytest
import time_machine
from django.utils import timezone

from memory import engine
from memory.engine import graph as g
from memory.engine import retrieval
from memory.engine.types import RetrievalWeights
from memory.models import AuditEvent, EntityAlias, Memory
from tests.conftest import dt
from tests.memory.conftest import LONG, OTHER, A, fact

pytestmark = pytest.mark.django_db


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
    engine.alias_add(agent_id=OTHER, canonical="two", alias="x")
    assert pairs() == [("x", "one")]
    assert pairs(OTHER) == [("x", "two")]
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


# --- names NFKC lengthens (SPEC G1) ----------------------------------------------------------------------


def test_the_expansion_bound_is_the_longest_name_one_character_normalises_to():
    longest = max(
        len(engine.normalize_entity(chr(cp)))
        for cp in range(sys.maxunicode + 1)
        if not 0xD800 <= cp <= 0xDFFF
    )
    assert longest == g.NFKC_MAX_EXPANSION == len(engine.normalize_entity(LONG))
    assert g.MAX_ENTITY_CHARS == 512 * g.NFKC_MAX_EXPANSION


def test_an_alias_side_must_fit_its_column_once_normalised():
    with pytest.raises(engine.InvalidArgument) as lengthened:
        engine.alias_add(agent_id=A, canonical="boss", alias=LONG * 30)  # 30 characters, 540 normalised
    assert lengthened.value.field == "alias" and "once normalised" in lengthened.value.message
    with pytest.raises(engine.InvalidArgument) as canonical:
        engine.alias_preview(agent_id=A, canonical=LONG * 29, alias="boss")
    assert canonical.value.field == "canonical"
    with pytest.raises(engine.InvalidArgument):
        engine.alias_add(agent_id=A, canonical="boss", alias="x" * 513)
    assert not EntityAlias.objects.exists()
    fitting = LONG * 28  # 504 characters once normalised
    assert engine.alias_add(agent_id=A, canonical="boss", alias=fitting).alias == engine.normalize_entity(
        fitting
    )


# --- the per-agent cap on aliases -------------------------------------------------------------------------


def test_an_agent_has_at_most_max_aliases():
    t = timezone.now()
    EntityAlias.objects.bulk_create(
        EntityAlias(agent_id=A, canonical="hub", alias=f"name {k}", created_at=t, updated_at=t)
        for k in range(g.MAX_ALIASES - 1)
    )
    engine.alias_add(agent_id=A, canonical="hub", alias="the last one")  # the 5,000th
    g0 = engine.graph_generation(agent_id=A)
    with pytest.raises(engine.EngineError) as full:
        engine.alias_add(agent_id=A, canonical="hub", alias="one too many")
    assert full.value.code == "too_many_aliases" and full.value.field == "alias"
    assert str(g.MAX_ALIASES) in full.value.message
    assert EntityAlias.objects.filter(agent_id=A).count() == g.MAX_ALIASES
    assert engine.graph_generation(agent_id=A) == g0
    assert not AuditEvent.objects.filter(agent_id=A, details__alias="one too many").exists()
    # re-pointing an existing alias adds no row, so it is still allowed; so is another agent's first alias
    assert engine.alias_add(agent_id=A, canonical="other hub", alias="name 7").created is False
    assert engine.alias_add(agent_id="agent-fresh", canonical="hub", alias="one too many").created


# --- SPEC G6: no aliases, rankings as before aliases existed ----------------------------------------------


def plain_name(text):
    """G1's entity name with no notion of aliases: NFKC, lower-case, whitespace folded."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def reference_graph_scores(agent_id, query):
    """G1–G3 written out with nothing of aliases: the graph of the agent's current facts over plain names, the
    seeds (names in the query as whole words), the exact power iteration, memory scores over the top."""
    rows = list(
        Memory.objects.filter(agent_id=agent_id, subject__isnull=False, predicate__isnull=False)
        .order_by("id")
        .values_list("id", "subject", "object", "origin_trust")
    )
    names = sorted({plain_name(s) for _, s, _, _ in rows} | {plain_name(o) for _, _, o, _ in rows if o})
    index = {name: i for i, name in enumerate(names)}
    n_e, n = len(names), len(names) + len(rows)
    w = np.zeros((n, n))
    for k, (_, s, o, trust) in enumerate(rows):
        for end in [s] + ([o] if o else []):
            e, m = index[plain_name(end)], n_e + k
            w[e, m] += trust
            w[m, e] += trust
    degree = w.sum(axis=1)
    walk = w / np.where(degree > 0, degree, 1.0)[None, :]  # Aᵀ = W·D⁻¹
    q = plain_name(query)
    seeds = [index[x] for x in names if re.search(rf"(?<!\w){re.escape(x)}(?!\w)", q)]
    if not seeds:
        return None
    s = np.zeros(n)
    s[seeds] = 1.0 / len(seeds)
    p = s.copy()
    for _ in range(20):
        nxt = 0.5 * s + 0.5 * (walk @ p)
        done = np.abs(nxt - p).sum() < 1e-6
        p = nxt
        if done:
            break
    mem = p[n_e:]
    peak = mem.max()
    scores = {rows[k][0]: round(float(mem[k]) / peak, 12) for k in range(len(rows)) if mem[k] > 0}
    top = [mid for mid, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:5]]
    return scores, top, sorted(names[i] for i in seeds)


def reference_search(agent_id, query, limit=10):
    """R2 + G4 fusion over the reference graph scores (FTS candidates and the R2 score are the engine's own)."""
    at = timezone.now()
    wts = RetrievalWeights()
    cands = retrieval._fts_candidates(agent_id, query, max(limit * 3, 30), at, None, [])
    ref = reference_graph_scores(agent_id, query)
    if ref is None:
        entries = [(retrieval.score(m, pos, at, wts), pos, m) for pos, m in enumerate(cands)]
    else:
        scores, top, _ = ref
        seen = {m.id for m in cands}
        extra = [Memory.objects.get(id=mid) for mid in top if mid not in seen][:3]
        entries = [
            (retrieval.score(m, pos, at, wts, ppr=scores.get(m.id, 0.0)), pos, m)
            for pos, m in enumerate(cands)
        ]
        entries += [
            (retrieval.score(m, None, at, wts, ppr=scores.get(m.id, 0.0)), len(cands) + k, m)
            for k, m in enumerate(extra)
        ]
    entries.sort(key=lambda t: (-t[0], t[1]))
    return [(m.id, s) for s, _, m in entries[:limit]]


QUERIES = (
    "what does Alice do at Acme?",
    "ALICE   SMITH and the robert question",
    "bob",
    "who is in paris",
    "acme release train",
    "nothing named here",
)


@time_machine.travel(dt("2026-05-01T12:00:00"), tick=False)
def test_without_aliases_rankings_are_the_alias_free_algorithms():
    """An agent with no alias ranks exactly as G1–G4 over plain names do (here written out independently), while
    another agent's aliases would merge its names: alias handling changes nothing until an alias exists."""
    facts = [
        ("Alice", "works_at", "Acme", "user_direct"),
        ("alice  smith", "lives_in", "Paris", "operator"),
        ("ALICE", "knows", "Bob", "import"),
        ("Robert", "manages", "Acme", "channel:ops"),
        ("bob", "likes", "tea", "user_direct"),
        ("Acme", "runs", "release train", "operator"),
        ("release train", "leaves", "Tuesday", "channel:ops"),
        ("Paris", "is_in", "France", "import"),
        ("Bob", "visited", "Paris", "user_direct"),
        ("carol", "prefers", None, "operator"),
    ]
    for k, (s, p, o, origin) in enumerate(facts):
        fact(s, p, o, origin=origin, importance=float(1 + k % 9), content=f"note {k}: {s} {p} {o or ''}")
        engine.store(agent_id=A, content=f"free text {k} about {s} and paris", importance=float(k % 7))
    # the same names, merged for another agent: its aliases must not reach this one
    engine.alias_add(agent_id="agent-merged", canonical="bob", alias="robert")
    engine.alias_add(agent_id="agent-merged", canonical="alice", alias="alice smith")
    assert not EntityAlias.objects.filter(agent_id=A).exists()

    graphs = 0
    for query in QUERIES:
        ref = reference_graph_scores(A, query)
        got = engine.graph_scores(agent_id=A, query=query, method="exact")
        if ref is None:
            assert got is None, query
        else:
            graphs += 1
            scores, top, seeds = ref
            assert sorted(got.seeds) == seeds and got.top == top, query
            assert got.scores.keys() == scores.keys()
            assert all(got.scores[k] == pytest.approx(v, abs=1e-9) for k, v in scores.items()), query
        hits = engine.search(agent_id=A, query=query, touch=False)
        expected = reference_search(A, query)
        assert [h.id for h in hits] == [mid for mid, _ in expected], query
        # search walks the graph by forward push, pinned to the exact iteration within 1e-4 (test_graph_ppr)
        assert [h.score for h in hits] == pytest.approx([s for _, s in expected], abs=1e-4), query
    assert graphs == 5  # every query but the last names an entity
