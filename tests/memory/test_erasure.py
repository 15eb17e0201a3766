"""SPEC M5: erasure (hard delete, text gone from every table, index, export and the database file) and
reassignment (rows move with their history; both agents' keys re-derived); the origin purge preview (D8)."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

import pytest
from django.apps import apps
from django.db import connection
from django.utils import timezone

from memory import engine
from memory.models import AuditEvent, FactWrite, Memory
from tests.conftest import dt, make_burst
from tests.memory.conftest import OTHER, A, fact
from wiki import services as wiki

pytestmark = pytest.mark.django_db

SECRET = "Zorblatt Quennington"
NEEDLE = "zorblatt"  # how the secret's first word appears anywhere (FTS lower-cases its terms)


def _seed_secret(agent_id: str = A, secret: str = SECRET) -> dict[str, str]:
    """The secret everywhere a write can put it: a key with history, a reaffirmation, a derived row, a held
    burst (approval, outbound event, guard counter), a review item, a wiki page, the query journal, a purge's
    audit event; and an unrelated fact that must survive."""
    first = fact(
        secret,
        "lives_in",
        "Vexmoor",
        agent_id=agent_id,
        valid_from=dt("2020-01-01"),
        content=f"{secret} lives in Vexmoor",
        origin="user_direct",
    )
    second = fact(
        secret,
        "lives_in",
        "Quillby",
        agent_id=agent_id,
        valid_from=dt("2022-01-01"),
        content=f"{secret} moved to Quillby",
        origin="user_direct",
    )
    fact(
        secret,
        "lives_in",
        "Quillby",
        agent_id=agent_id,
        valid_from=dt("2022-01-01"),
        content=f"{secret} moved to Quillby",
        origin="operator:crm",
    )
    derived = engine.store_temporal(
        agent_id=agent_id,
        content=f"Summary: {secret} is a Quillby resident",
        subject="residents",
        predicate="includes",
        object="someone",
        derived_from=[second],
        origin="agent_derived",
    ).id
    keep = fact("Bob", "likes", "tea", agent_id=agent_id, content="Bob likes green tea", origin="user_direct")
    make_burst(
        agent_id,
        secret,
        origin="channel:spam",
        facts=[(f"rumour_{k}", f"r{k}", f"{secret} rumour number {k}") for k in range(5)],
    )
    engine.review_propose(
        agent_id=agent_id,
        proposal=engine.Proposal(
            kind="lint",
            fingerprint="erase-test-1",
            title=f"Check {secret}",
            payload={"note": secret},
            memory_ids=[first],
            confidence=0.4,
        ),
    )
    wiki.publish_auto(
        agent_id=agent_id,
        doc_type="person",
        title="Resident profile",
        summary=f"About {secret}",
        original_text=f"{secret} lives in Quillby since 2022.",
    )
    engine.agent_search(agent_id=agent_id, query=f"where does {secret} live")
    poison = fact(
        secret,
        "lives_in",
        "Atlantis",
        agent_id=agent_id,
        valid_from=timezone.now() - timedelta(days=1),
        content=f"{secret} lives in Atlantis",
        origin="channel:poison",
    )
    engine.invalidate_by_origin(agent_id=agent_id, origin="channel:poison")
    return {"first": first, "second": second, "derived": derived, "keep": keep, "poison": poison}


def _all_text() -> str:
    """Every row of every table Django knows, as one lower-cased text."""
    parts = []
    for model in apps.get_models():
        for row in model.objects.all().values():
            parts.append(json.dumps(row, default=str, ensure_ascii=False))
    return "\n".join(parts).lower()


def _sqlite_file(*, vacuum: bool = False) -> bytes:
    """The test database's file image (``sqlite3_serialize``), lower-cased; ``vacuum``: of a copy rebuilt by
    VACUUM, so what remains is what the tables and indexes hold (free space an earlier rewrite of a row left
    is what an operator's VACUUM clears; see README, Erasure)."""
    connection.ensure_connection()
    image = connection.connection.serialize()
    if vacuum:
        copy = sqlite3.connect(":memory:")
        copy.deserialize(image)
        copy.execute("VACUUM")
        image = copy.serialize()
        copy.close()
    return image.lower()


def _fts_terms() -> set[str]:
    with connection.cursor() as cur:
        cur.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_terms USING fts5vocab(main, memories_fts, 'row')"
        )
        cur.execute("SELECT term FROM temp.fts_terms")
        return {r[0] for r in cur.fetchall()}


def test_erase_by_subject_removes_the_text_from_every_table_and_export():
    ids = _seed_secret()
    assert NEEDLE in _all_text()
    generation = engine.graph_generation(agent_id=A)

    result = engine.erase(agent_id=A, subject=SECRET, reason=f"GDPR request of {SECRET}", actor="user:ada")

    assert NEEDLE not in _all_text()
    assert not Memory.objects.filter(
        id__in=[ids["first"], ids["second"], ids["derived"], ids["poison"]]
    ).exists()
    assert Memory.objects.filter(id=ids["keep"]).exists()  # nothing else goes
    assert not FactWrite.objects.filter(subject=SECRET).exists()
    assert engine.search(agent_id=A, query="Zorblatt") == []
    assert engine.search(agent_id=A, query="green tea")[0].id == ids["keep"]
    exported = json.dumps([m for m in engine.export_memories(agent_id=A)], default=str).lower()
    assert NEEDLE not in exported and "green tea" in exported
    assert NEEDLE not in json.dumps(engine.export_graph(agent_id=A), default=str).lower()
    assert engine.graph_generation(agent_id=A) > generation

    event = AuditEvent.objects.get(action="erase")
    assert event.details["subject_hash"] == engine.keyed_hash(SECRET) == result.subject_hash
    assert event.details["counts"]["memories"] == result.rows == 10  # 2 + derived + 5 held + poison + pointer
    assert result.counts["wiki_pages"] == 1 and result.counts["approvals"] == 1
    assert result.counts["review_items"] == 1 and result.counts["audit_redacted"] >= 1
    assert "[erased]" in event.reason


@pytest.mark.sqlite_only
def test_erased_text_is_gone_from_the_sqlite_file_and_its_fulltext_index():
    # a word no other test writes: pages an earlier test rolled back may still hold that test's words
    secret, needle = "Quaxelbrund Yorvikk", "quaxelbrund"
    _seed_secret(secret=secret)
    assert needle.encode() in _sqlite_file()
    assert needle in _fts_terms()

    engine.erase(agent_id=A, subject=secret, reason="request", actor="user:ada")

    assert needle not in _fts_terms()
    assert "tea" in _fts_terms()
    assert needle.encode() not in _sqlite_file(vacuum=True)


def test_erase_by_origin_keeps_what_another_origin_also_said():
    leaky, since = "channel:leaky", dt("2024-01-01")
    said_twice = fact(
        "Ana",
        "phone",
        "555-0100",
        content="Ana's phone is 555-0100",
        origin=leaky,
        valid_from=since,
        source_event="leak-7",
    )
    fact(
        "Ana",
        "phone",
        "555-0100",
        content="Ana's phone is 555-0100",
        origin="user_direct",
        source_event="u1",
        valid_from=since,
    )
    only_leaky = fact("Ana", "pet", "cat", content="Ana has a cat named Zorblatt", origin=leaky)
    user_row = fact(
        "Ana", "city", "Porto", content="Ana lives in Porto", origin="user_direct", valid_from=since
    )
    fact(
        "Ana",
        "city",
        "Porto",
        content="Ana lives in Porto",
        origin=leaky,
        valid_from=since,
        source_event="leak-8",
    )
    assert Memory.objects.get(id=user_row).reaffirmed_by and Memory.objects.get(id=said_twice).origin == leaky

    result = engine.erase(agent_id=A, origin=leaky, reason="channel leaked", actor="user:ada")

    text = _all_text()
    assert NEEDLE not in text and "leak-7" not in text and "leak-8" not in text
    assert not Memory.objects.filter(id=only_leaky).exists()
    kept = Memory.objects.get(id=said_twice)
    assert (kept.origin, kept.source_event, kept.origin_trust) == ("user_direct", "u1", 1.0)
    assert engine.get_at(agent_id=A, subject="Ana", predicate="phone", at=timezone.now()).id == said_twice
    assert Memory.objects.get(id=user_row).reaffirmed_by == []
    assert not FactWrite.objects.filter(origin=leaky).exists()
    assert result.kept == 1 and result.origin_hash == engine.keyed_hash(leaky)


def test_erase_preview_counts_without_changing_anything():
    _seed_secret()
    before = Memory.objects.count(), AuditEvent.objects.count()
    preview = engine.erase_preview(agent_id=A, subject=SECRET)
    assert preview.dry_run and preview.rows == 10 and preview.counts["wiki_pages"] == 1
    assert (Memory.objects.count(), AuditEvent.objects.count()) == before
    assert engine.erase(agent_id=A, subject=SECRET, reason="r").counts["memories"] == preview.rows


@pytest.mark.parametrize(
    "kwargs,code",
    [
        ({"reason": "r"}, "invalid_argument"),
        ({"subject": "x", "reason": ""}, "invalid_argument"),
        ({"subject": "x" * 600, "reason": "r"}, "invalid_argument"),
        ({"origin": "x" * 300, "reason": "r"}, "invalid_argument"),
    ],
)
def test_erase_refuses_bad_input_with_a_stable_code(kwargs, code):
    fact("x", "p", "o")
    with pytest.raises(engine.EngineError) as err:
        engine.erase(agent_id=A, **kwargs)
    assert err.value.code == code
    assert Memory.objects.filter(subject="x").exists()


def test_erase_touches_only_the_named_agent():
    fact(SECRET, "lives_in", "Vexmoor", agent_id=OTHER)
    fact(SECRET, "lives_in", "Vexmoor")
    engine.erase(agent_id=A, subject=SECRET, reason="r")
    assert Memory.objects.filter(agent_id=OTHER, subject=SECRET).count() == 1
    assert not Memory.objects.filter(agent_id=A, subject=SECRET).exists()


def test_reassign_moves_rows_with_history_and_rederives_both_agents():
    from memory.models import Agent

    Agent.objects.create(agent_id=OTHER)
    fact("carol", "lives_in", "Oslo", valid_from=dt("2019-01-01"))
    fact("carol", "lives_in", "Rome", valid_from=dt("2021-01-01"))
    stays = fact("dave", "lives_in", "Lima")
    theirs = fact("carol", "lives_in", "Kyiv", agent_id=OTHER, valid_from=dt("2023-01-01"))
    gens = engine.graph_generation(agent_id=A), engine.graph_generation(agent_id=OTHER)

    result = engine.reassign(from_agent=A, to_agent=OTHER, subject="carol", actor="user:ada")

    assert result.rows == 2 and result.keys == 1
    assert engine.get_history(agent_id=A, subject="carol", predicate="lives_in") == []
    history = engine.get_history(agent_id=OTHER, subject="carol", predicate="lives_in")
    assert [h.object for h in history] == ["Oslo", "Rome", "Kyiv"]
    now = timezone.now()
    assert engine.get_at(agent_id=OTHER, subject="carol", predicate="lives_in", at=now).id == theirs
    assert (
        engine.get_at(agent_id=OTHER, subject="carol", predicate="lives_in", at=dt("2022-01-01")).object
        == "Rome"
    )
    assert Memory.objects.get(id=stays).agent_id == A
    assert engine.graph_generation(agent_id=A) > gens[0] and engine.graph_generation(agent_id=OTHER) > gens[1]
    assert AuditEvent.objects.filter(action="reassign").count() == 2


def test_reassign_refuses_an_unknown_target_and_the_same_agent():
    fact("carol", "lives_in", "Oslo")
    for target, code in (("nobody-here", "not_found"), (A, "invalid_argument")):
        with pytest.raises(engine.EngineError) as err:
            engine.reassign(from_agent=A, to_agent=target)
        assert err.value.code == code
    assert Memory.objects.get(subject="carol").agent_id == A


def test_purge_preview_shows_what_the_purge_would_retract_and_restore_and_changes_nothing():
    clean = fact("erin", "works_at", "Acme", valid_from=dt("2020-01-01"), origin="user_direct")
    poison = fact(
        "erin", "works_at", "EvilCorp", valid_from=timezone.now() - timedelta(days=1), origin="channel:x"
    )
    preview = engine.purge_preview(agent_id=A, origin="channel:x")
    assert preview.retracted == [poison] and preview.restored == [clean]
    assert preview.rows[poison].object == "EvilCorp"
    assert engine.get_at(agent_id=A, subject="erin", predicate="works_at", at=timezone.now()).id == poison
    assert not AuditEvent.objects.filter(action="origin_purge").exists()
