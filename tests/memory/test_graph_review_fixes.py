"""Review fixes of the graph engine: names NFKC lengthens stay addressable (G1, D6), a curator's retract is
decided under the key lock (two at once: one wins), SPEC G6 "no aliases → rankings identical to before aliases
existed", and the per-agent cap on aliases."""

from __future__ import annotations

import re
import sys
import threading
import unicodedata

import numpy as np
import pytest
import time_machine
from django.db import connections
from django.utils import timezone

from memory import engine
from memory.engine import graph as g
from memory.engine import retrieval
from memory.engine.types import RetrievalWeights
from memory.models import AuditEvent, EntityAlias, Memory
from tests.conftest import dt

A = "agent-review"
LONG = "\ufdfa"  # ARABIC LIGATURE SALLALLAHOU ALAYHE WASALLAM: NFKC makes 18 characters of it


def fact(subject, predicate, obj=None, *, agent_id=A, content=None, **kw):
    return engine.store_temporal(
        agent_id=agent_id,
        content=content or f"{subject} {predicate} {obj or ''}".strip(),
        subject=subject,
        predicate=predicate,
        object=obj,
        **kw,
    ).id


# --- names NFKC lengthens ---------------------------------------------------------------------------------


def test_the_expansion_bound_is_the_longest_name_one_character_normalises_to():
    longest = max(
        len(engine.normalize_entity(chr(cp)))
        for cp in range(sys.maxunicode + 1)
        if not 0xD800 <= cp <= 0xDFFF
    )
    assert longest == g.NFKC_MAX_EXPANSION == len(engine.normalize_entity(LONG))
    assert g.MAX_ENTITY_CHARS == 512 * g.NFKC_MAX_EXPANSION


@pytest.mark.django_db
def test_an_entity_whose_name_nfkc_lengthens_is_addressable_by_its_node_name():
    short = fact(LONG * 30, "blesses", "o")  # 30 characters stored, 540 once normalised
    other = fact("Plain Name", "blesses", LONG * 40, origin="operator")
    nodes = {n["entity"] for n in engine.export_graph(agent_id=A)["nodes"]}
    for raw, mid in ((LONG * 30, short), (LONG * 40, other)):
        node = engine.normalize_entity(raw)
        assert node in nodes and len(node) == 18 * len(raw) > 512
        assert [m.id for m in engine.entity_facts(agent_id=A, entity=node)] == [mid]  # the node's name
        assert [m.id for m in engine.entity_facts(agent_id=A, entity=raw)] == [mid]  # the stored text
    assert [m.id for m in engine.entity_facts(agent_id=A, entity="o")] == [short]
    # the longest name a stored subject can normalise to is accepted (no such fact here: an empty answer; a
    # 512-character U+FDFA fact is not stored because PostgreSQL's full-text indexing of it takes minutes)
    widest = engine.normalize_entity(LONG * 512)
    assert len(widest) == g.MAX_ENTITY_CHARS and engine.entity_facts(agent_id=A, entity=widest) == []


@pytest.mark.django_db
def test_a_lookup_name_is_measured_before_it_is_normalised():
    with pytest.raises(engine.InvalidArgument) as too_long:
        engine.entity_facts(agent_id=A, entity="x" * (g.MAX_ENTITY_CHARS + 1))
    assert too_long.value.field == "entity"
    # the longest accepted input may normalise to far more (18x): it is still a plain, empty answer
    assert engine.entity_facts(agent_id=A, entity=LONG * g.MAX_ENTITY_CHARS) == []
    for bad in ("", "   ", "a\x00b", None):
        with pytest.raises(engine.InvalidArgument):
            engine.entity_facts(agent_id=A, entity=bad)


@pytest.mark.django_db
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


# --- retract under the key lock ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_second_retract_is_refused_and_changes_nothing():
    mid = fact("dana", "role", "lead")
    g0 = engine.graph_generation(agent_id=A)
    engine.retract_fact(agent_id=A, memory_id=mid, reason="wrong", actor="user:cora")
    g1 = engine.graph_generation(agent_id=A)
    with pytest.raises(engine.EngineError) as again:
        engine.retract_fact(agent_id=A, memory_id=mid, reason="wrong", actor="user:rex")
    assert again.value.code == "already_retracted"
    assert g1 == g0 + 1 == engine.graph_generation(agent_id=A)
    assert AuditEvent.objects.filter(agent_id=A, action="curator_retract").count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_retracts_of_one_fact_one_wins(on_postgres):
    assert on_postgres, "this race is only meaningful on PostgreSQL"
    for round_ in range(6):
        agent = f"race-retract-{round_}"
        mid = fact("dana", "role", "lead", agent_id=agent)
        g0 = engine.graph_generation(agent_id=agent)
        barrier = threading.Barrier(2)
        results: list[object] = [None, None]

        def curator(i, mid=mid, agent=agent, barrier=barrier, results=results):
            try:
                barrier.wait()
                results[i] = engine.retract_fact(
                    agent_id=agent, memory_id=mid, reason="wrong", actor=f"user:c{i}"
                )
            except BaseException as exc:  # noqa: BLE001 - the loser's error is the result
                results[i] = exc
            finally:
                connections.close_all()

        threads = [threading.Thread(target=curator, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        lost = [r for r in results if isinstance(r, BaseException)]
        assert len(lost) == 1 and getattr(lost[0], "code", None) == "already_retracted", (round_, results)
        assert AuditEvent.objects.filter(agent_id=agent, action="curator_retract").count() == 1
        assert engine.graph_generation(agent_id=agent) == g0 + 1
        assert Memory.objects.get(id=mid).invalidated_by_event == "curator_retract"


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


@pytest.mark.django_db
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


# --- the per-agent cap on aliases -------------------------------------------------------------------------


@pytest.mark.django_db
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
