"""SPEC B2 (a)-(d): conflict candidates on small real databases, written through the engine; read-only,
current rows only, one agent, bounded, blocked (never the whole graph pairwise)."""

from __future__ import annotations

import random

import pytest
import time_machine

from memory import engine
from memory.dream import conflicts
from memory.dream.conflicts import Candidate, find_candidates
from memory.dream.judge import judge
from memory.models import AuditEvent, Memory
from tests.conftest import dt

pytestmark = pytest.mark.django_db
A = "agent-dream"
NOW = dt("2026-03-01T12:00:00Z")
LATER = dt("2026-03-01T13:00:00Z")


@pytest.fixture(autouse=True)
def clock():
    with time_machine.travel(NOW, tick=True) as traveller:
        yield traveller


def fact(subject, predicate, obj, *, valid_from="2026-01-01", content=None, agent=A, origin=None):
    return engine.store_temporal(
        agent_id=agent,
        content=content or f"{subject} {predicate.replace('_', ' ')} {obj}",
        subject=subject,
        predicate=predicate,
        object=obj,
        valid_from=dt(valid_from),
        origin=origin,
    ).id


def note(content, *, agent=A):
    return engine.store(agent_id=agent, content=content).id


def pairs(scan, rule=None) -> set[tuple[str, str, str]]:
    return {(c.rule, c.old.id, c.new.id) for c in scan.candidates if rule is None or c.rule == rule}


def scan(**kwargs):
    """Candidates as of an hour after the writes (some tests write a few minutes after NOW)."""
    return find_candidates(agent_id=A, at=LATER, **kwargs)


# --- (a) the same key, equal or near-equal objects -------------------------------------------------------------


def test_a_respelt_value_that_superseded_its_predecessor():
    old = fact("webapp", "deploy_target", "Cloudflare Workers", valid_from="2026-01-01")
    new = fact("webapp", "deploy_target", "cloudflare workers (CF)", valid_from="2026-02-01")
    assert Memory.objects.get(id=old).superseded_by == new  # the engine saw a change
    result = scan()
    assert pairs(result) == {("a", old, new)}
    (candidate,) = result.candidates
    assert isinstance(candidate, Candidate) and candidate.old.object == "Cloudflare Workers"
    assert candidate.context == {"rule": "a", "same_subject": True}
    verdict = judge(candidate.old, candidate.new, candidate.context)
    assert verdict.verdict == "MERGE"


def test_a_real_change_of_value_is_no_rule_a_candidate():
    fact("webapp", "deploy_target", "Heroku", valid_from="2026-01-01")
    fact("webapp", "deploy_target", "Fly.io", valid_from="2026-02-01")
    assert scan().candidates == []


def test_a_two_spellings_of_one_key_with_equal_values():
    first = fact("Alice", "lives_in", "Berlin")
    with time_machine.travel(dt("2026-03-01T12:05:00Z")):
        second = fact("alice", "Lives In", "berlin")
    assert pairs(scan()) == {("a", first, second)}


def test_a_aliases_resolve_subjects_and_objects():
    engine.alias_add(agent_id=A, canonical="robert smith", alias="bob")
    engine.alias_add(agent_id=A, canonical="new york city", alias="nyc")
    first = fact("Robert Smith", "lives_in", "New York City")
    with time_machine.travel(dt("2026-03-01T12:05:00Z")):
        second = fact("Bob", "lives_in", "NYC")
    result = scan()
    assert pairs(result) == {("a", first, second)}
    assert result.candidates[0].context["aliases"] == {"bob": "robert smith", "nyc": "new york city"}
    assert (
        judge(result.candidates[0].old, result.candidates[0].new, result.candidates[0].context).verdict
        == "MERGE"
    )


# --- (b) synonym or near-identical predicates, same subject and object ---------------------------------------


def test_b_registry_synonyms_with_the_same_object():
    first = fact("alice", "lives_in", "Berlin")
    with time_machine.travel(dt("2026-03-01T12:05:00Z")):
        second = fact("alice", "resides_in", "Berlin")
    result = scan()
    assert pairs(result) == {("b", first, second)}
    assert judge(result.candidates[0].old, result.candidates[0].new).verdict == "MERGE"


def test_b_near_identical_predicate_names():
    first = fact("car", "favourite_colour", "blue")
    with time_machine.travel(dt("2026-03-01T12:05:00Z")):
        second = fact("car", "favourite_colours", "Blue")
    assert pairs(scan()) == {("b", first, second)}


def test_b_unrelated_predicates_with_the_same_object_are_not_candidates():
    fact("alice", "lives_in", "Berlin")
    fact("alice", "born_in", "Berlin")
    fact("alice", "works_at", "Berlin")
    assert scan().candidates == []


# --- (c) single-valued predicate, two current values, one entity -----------------------------------------------


def test_c_alias_subjects_with_two_values_of_a_single_valued_predicate():
    engine.alias_add(agent_id=A, canonical="robert smith", alias="bob")
    old = fact("Robert Smith", "works_at", "Acme", valid_from="2025-01-01")
    with time_machine.travel(dt("2026-03-01T12:05:00Z")):
        new = fact("Bob", "works_at", "Globex", valid_from="2026-02-01")
    result = scan()
    assert pairs(result) == {("c", old, new)}
    (candidate,) = result.candidates
    assert candidate.context["same_subject"] is True
    verdict = judge(candidate.old, candidate.new, candidate.context)
    assert (verdict.verdict, verdict.rule) == ("SUPERSEDE", "later_valid_from")


def test_c_synonym_predicates_with_two_values():
    old = fact("alice", "lives_in", "Berlin", valid_from="2025-01-01")
    with time_machine.travel(dt("2026-03-01T12:05:00Z")):
        new = fact("alice", "home_city", "Paris", valid_from="2026-02-01")
    assert pairs(scan()) == {("c", old, new)}


def test_c_three_values_pair_each_with_the_newest():
    engine.alias_add(agent_id=A, canonical="robert smith", alias="bob")
    engine.alias_add(agent_id=A, canonical="robert smith", alias="rob")
    a = fact("Robert Smith", "works_at", "Acme")
    with time_machine.travel(dt("2026-03-01T12:05:00Z")):
        b = fact("Bob", "works_at", "Globex")
    with time_machine.travel(dt("2026-03-01T12:10:00Z")):
        c = fact("Rob", "works_at", "Initech")
    assert pairs(scan()) == {("c", a, c), ("c", b, c)}


def test_c_multi_valued_predicates_never_pair_different_values():
    engine.alias_add(agent_id=A, canonical="robert smith", alias="bob")
    fact("Robert Smith", "likes", "tea")
    fact("Bob", "likes", "coffee")
    fact("Bob", "speaks", "English")
    fact("robert smith", "speaks", "中文")
    assert scan().candidates == []


def test_different_entities_are_never_paired():
    fact("alice", "lives_in", "Berlin")
    fact("bob", "lives_in", "Paris")
    fact("carol", "lives_in", "Berlin")
    assert scan().candidates == []


# --- (d) plain memories ------------------------------------------------------------------------------------------


def test_d_near_duplicate_plain_memories():
    first = note("The staging server restarts every night at 03:00 UTC.")
    with time_machine.travel(dt("2026-03-01T12:05:00Z")):
        second = note("the staging server restarts every night at 3:00 UTC")
    note("Ana prefers morning meetings on Tuesdays")
    result = scan()
    assert pairs(result) == {("d", first, second)}
    assert result.candidates[0].context == {"rule": "d"}
    assert judge(result.candidates[0].old, result.candidates[0].new).verdict == "MERGE"


def test_d_exact_duplicates_pair_with_the_first():
    first = note("Deploys freeze on Fridays.")
    with time_machine.travel(dt("2026-03-01T12:05:00Z")):
        second = note("deploys freeze on fridays")
    with time_machine.travel(dt("2026-03-01T12:10:00Z")):
        third = note("Deploys  freeze on Fridays!")
    assert pairs(scan()) == {("d", first, second), ("d", first, third)}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I use vim for all my coding", "I no longer use vim for my coding; I switched to Helix"),
        ("我用 vim 写代码", "我不再用 vim 写代码，改用 Helix"),
        ("公司办公室在北京朝阳区", "公司办公室搬到北京海淀区了"),
    ],
)
def test_d_high_overlap_with_a_change_cue(old, new):
    first = note(old)
    with time_machine.travel(dt("2026-03-01T12:05:00Z")):
        second = note(new)
    note("Bob repaired the printer on floor three")
    result = scan()
    assert pairs(result) == {("d", first, second)}
    assert judge(result.candidates[0].old, result.candidates[0].new).verdict == "SUPERSEDE"


def test_d_overlap_without_a_cue_or_a_cue_without_overlap_is_no_candidate():
    note("The payments team owns the billing service")
    note("The payments team owns the invoicing service and the ledger")
    note("Carol moved to the Lisbon office")
    assert scan().candidates == []


def test_d_a_fact_and_plain_memories_are_kept_apart():
    fact("alice", "lives_in", "Berlin", content="alice lives in berlin")
    note("alice lives in berlin")
    assert scan().candidates == []


# --- scope: current rows, one agent, bounded, read-only ---------------------------------------------------------


def test_retracted_rows_are_not_current_and_not_candidates():
    fact("alice", "lives_in", "Berlin")
    fact("alice", "resides_in", "Berlin", origin="channel:spam")
    engine.invalidate_by_origin(agent_id=A, origin="channel:spam")
    assert scan().candidates == []


def test_ended_rows_are_not_current():
    engine.store_temporal(
        agent_id=A,
        content="alice lived in Berlin",
        subject="alice",
        predicate="resides_in",
        object="Berlin",
        valid_from=dt("2025-01-01"),
        valid_until=dt("2025-06-01"),
    )
    fact("alice", "lives_in", "Berlin")
    assert scan().candidates == []


def test_another_agents_rows_are_never_read():
    fact("alice", "lives_in", "Berlin")
    fact("alice", "resides_in", "Berlin", agent="other-agent")
    note("Deploys freeze on Fridays.")
    note("Deploys freeze on Fridays.", agent="other-agent")
    engine.alias_add(agent_id="other-agent", canonical="alice", alias="ally")
    fact("ally", "lives_in", "Berlin")
    assert scan().candidates == []
    assert find_candidates(agent_id="other-agent", at=LATER).candidates == []


def test_limit_truncates_rules_in_order_and_newest_first():
    a_old = fact("alice", "lives_in", "Berlin")
    with time_machine.travel(dt("2026-03-01T12:05:00Z")):
        a_new = fact("Alice", "lives_in", "berlin")
    d_old = note("Deploys freeze on Fridays.")
    with time_machine.travel(dt("2026-03-01T12:10:00Z")):
        d_new = note("deploys freeze on fridays")
    assert pairs(scan()) == {("a", a_old, a_new), ("d", d_old, d_new)}
    limited = scan(limit=1)
    assert pairs(limited) == {("a", a_old, a_new)} and limited.truncated
    assert not scan().truncated
    assert limited.counts == {"a": 1, "b": 0, "c": 0, "d": 0}


def test_rules_and_skip_pairs_filter():
    a_old = fact("alice", "lives_in", "Berlin")
    with time_machine.travel(dt("2026-03-01T12:05:00Z")):
        a_new = fact("Alice", "lives_in", "berlin")
    d_old = note("Deploys freeze on Fridays.")
    d_new = note("deploys freeze on fridays")
    assert pairs(scan(rules=["d"])) == {("d", d_old, d_new)}
    assert pairs(scan(skip_pairs=[(a_new, a_old)])) == {("d", d_old, d_new)}
    result = scan(rules="d")
    assert result.facts_scanned == 0 and result.plain_scanned == 2


@pytest.mark.parametrize(
    "kwargs",
    [
        {"limit": 0},
        {"limit": 50_001},
        {"limit": True},
        {"rules": ["e"]},
        {"rules": []},
        {"agent_id": " "},
        {"at": "yesterday"},
    ],
)
def test_bad_arguments(kwargs):
    with pytest.raises(engine.EngineError) as err:
        find_candidates(**{"agent_id": A, **kwargs})
    assert err.value.code in ("invalid_argument", "invalid_time")


def test_candidate_generation_writes_nothing():
    fact("alice", "lives_in", "Berlin")
    fact("Alice", "resides_in", "Berlin")
    rows = list(Memory.objects.order_by("id").values())
    audits = AuditEvent.objects.count()
    assert scan().candidates
    assert list(Memory.objects.order_by("id").values()) == rows
    assert AuditEvent.objects.count() == audits


def test_plain_blocking_checks_far_fewer_pairs_than_all(monkeypatch):
    """Not pairwise: 80 unrelated memories and one duplicate pair; the verifier sees under a tenth of the 3,321 pairs."""
    checked = []
    original = conflicts._Plain.check

    def spy(self, i, j):
        checked.append((i, j))
        return original(self, i, j)

    monkeypatch.setattr(conflicts._Plain, "check", spy)
    rng = random.Random(5)
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    pool = sorted({"".join(rng.choice(syllables) for _ in range(3)) for _ in range(400)})
    for _ in range(80):
        note(" ".join(rng.sample(pool, 6)))
    first = note("The staging server restarts every night at 03:00 UTC")
    second = note("The staging server restarts nightly at 03:00 UTC")
    assert pairs(scan()) == {("d", first, second)}
    assert 1 <= len(checked) < 3321 // 10
