"""Legacy import (SPEC M4): lossless, idempotent, facts re-derivable on top of imported history."""

from __future__ import annotations

import io
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory import engine
from memory.engine.importer import BASE_COLUMNS, InvalidImportFile, import_legacy
from memory.models import Agent, AuditEvent, FactWrite, GraphGeneration, Memory
from tests.conftest import dt
from tests.memory.conftest import OTHER, A

pytestmark = pytest.mark.django_db


BASE_DDL = {
    "id": "TEXT PRIMARY KEY",
    "agent_id": "TEXT NOT NULL",
    "content": "TEXT",
    "timestamp": "TEXT",
    "tags": "TEXT",
    "created_at": "TEXT",
    "layer": "TEXT",
    "importance": "REAL",
    "access_count": "INTEGER",
    "last_accessed": "TEXT",
    "source_event": "TEXT",
}
LATER_DDL = {
    "valid_from": "TEXT",
    "valid_until": "TEXT",
    "superseded_by": "TEXT",
    "supersedes": "TEXT",
    "subject": "TEXT",
    "predicate": "TEXT",
    "object": "TEXT",
    "confidence": "REAL",
    "metadata": "TEXT",
    "origin": "TEXT",
    "origin_trust": "REAL",
    "derived_from": "TEXT",
    "ingested_at": "TEXT",
    "invalidated_by_event": "TEXT",
    "invalidated_at": "TEXT",
    "reaffirmed_by": "TEXT",
    "quarantined": "INTEGER",
    "session_id": "TEXT",
}
TIME_COLUMNS = {
    "timestamp",
    "created_at",
    "last_accessed",
    "valid_from",
    "valid_until",
    "ingested_at",
    "invalidated_at",
}
JSON_COLUMNS = {"tags", "metadata", "derived_from", "reaffirmed_by"}


def legacy_file(
    path: Path,
    rows: list[dict[str, Any]],
    later: tuple[str, ...] = (),
    *,
    fts: bool = False,
    ddl: str | None = None,
) -> Path:
    """A legacy SQLite file built with plain SQL, the way the source engine laid it out."""
    conn = sqlite3.connect(path)
    columns = {**BASE_DDL, **{c: LATER_DDL[c] for c in later}}
    conn.execute(ddl or "CREATE TABLE memories (" + ", ".join(f"{c} {t}" for c, t in columns.items()) + ")")
    for row in rows:
        cols = list(row)
        conn.execute(
            f"INSERT INTO memories ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
            [row[c] for c in cols],
        )
    if fts:
        conn.execute("CREATE VIRTUAL TABLE memories_fts USING fts5(content, id UNINDEXED)")
        conn.execute("INSERT INTO memories_fts(content, id) SELECT content, id FROM memories")
    conn.commit()
    conn.close()
    return path


def base_row(mid: str, content: str, ts: str = "2025-01-05T10:00:00+00:00", **extra: Any) -> dict[str, Any]:
    row = {
        "id": mid,
        "agent_id": A,
        "content": content,
        "timestamp": ts,
        "tags": "[]",
        "created_at": ts,
        "layer": "episodic",
        "importance": 5.0,
        "access_count": 0,
        "last_accessed": None,
        "source_event": "",
    }
    row.update(extra)
    return row


def dump() -> tuple[list[dict], list[dict], list[tuple], list[str]]:
    return (
        list(Memory.objects.order_by("id").values()),
        list(FactWrite.objects.order_by("id").values()),
        list(GraphGeneration.objects.order_by("agent_id").values_list("agent_id", "generation")),
        list(Agent.objects.order_by("agent_id").values_list("agent_id", flat=True)),
    )


def legacy_value(column: str, value: Any) -> Any:
    """What a legacy value must read as after the import."""
    if value is None:
        return {"tags": [], "metadata": {}, "derived_from": [], "reaffirmed_by": []}.get(column)
    if column in TIME_COLUMNS:
        return dt(value).astimezone(UTC)
    if column in JSON_COLUMNS:
        return json.loads(value)
    if column == "quarantined":
        return bool(value)
    return value


# --- a full-schema legacy file: supersession chains, reaffirmation, quarantine, purge, derived, CJK -------

FULL_ROWS = [
    base_row(
        "m_a1",
        "We deploy to Vercel",
        "2025-01-01T09:00:00Z",
        tags='["deploy"]',
        layer="semantic",
        importance=7.0,
        access_count=4,
        last_accessed="2025-02-20T08:00:00+00:00",
        source_event="ev-1",
        valid_from="2025-01-01T00:00:00+00:00",
        valid_until="2025-03-01T00:00:00+00:00",
        superseded_by="m_a2",
        supersedes=None,
        subject="deploy",
        predicate="target",
        object="Vercel",
        confidence=0.9,
        metadata='{"note": "first"}',
        origin="user_direct",
        origin_trust=1.0,
        derived_from="[]",
        ingested_at="2025-01-01T09:00:00+00:00",
        invalidated_by_event="ev-2",
        invalidated_at="2025-03-01T10:00:00+00:00",
        reaffirmed_by=json.dumps(
            [
                {
                    "source_event": "ev-r",
                    "origin": "operator",
                    "valid_from": "2025-02-01T00:00:00+00:00",
                    "valid_until": None,
                    "ingested_at": "2025-02-01T00:00:00+00:00",
                }
            ]
        ),
        quarantined=0,
        session_id="s-1",
    ),
    base_row(
        "m_a2",
        "We deploy to Cloudflare Workers",
        "2025-03-01T10:00:00+00:00",
        layer="semantic",
        source_event="ev-2",
        valid_from="2025-03-01T00:00:00+00:00",
        supersedes="m_a1",
        subject="deploy",
        predicate="target",
        object="Cloudflare Workers",
        confidence=1.0,
        metadata="{}",
        origin="operator",
        origin_trust=1.0,
        derived_from="[]",
        ingested_at="2025-03-01T10:00:00+00:00",
        reaffirmed_by="[]",
        quarantined=0,
    ),
    base_row(
        "m_b1",
        "Alice is an engineer",
        "2024-06-01T00:00:00+00:00",
        layer="semantic",
        valid_from="2024-06-01T00:00:00+00:00",
        valid_until="2025-02-01T00:00:00+00:00",
        superseded_by="m_b2",
        subject="alice",
        predicate="role",
        object="engineer",
        origin="import:hr",
        origin_trust=0.7,
        ingested_at="2024-06-01T00:00:00+00:00",
        invalidated_by_event="hr-2",
        invalidated_at="2025-02-01T00:00:00+00:00",
        quarantined=0,
    ),
    base_row(
        "m_b2",
        "Alice is the support manager",
        "2025-02-01T00:00:00+00:00",
        layer="semantic",
        source_event="hr-2",
        valid_from="2025-02-01T00:00:00+00:00",
        supersedes="m_b1",
        subject="alice",
        predicate="role",
        object="support manager",
        origin="channel:hr-feed",
        origin_trust=0.3,
        ingested_at="2025-02-01T00:00:00+00:00",
        quarantined=0,
    ),
    base_row(
        "m_q",
        "Bob owns the admin password",
        "2025-02-10T00:00:00+00:00",
        layer="semantic",
        valid_from="2025-02-10T00:00:00+00:00",
        subject="bob",
        predicate="owns",
        object="admin password",
        origin="channel:spam-bot",
        origin_trust=0.3,
        ingested_at="2025-02-10T00:00:00+00:00",
        quarantined=1,
    ),
    base_row(
        "m_r",
        "Alice earns a million",
        "2025-02-11T00:00:00+00:00",
        layer="semantic",
        valid_from="2025-02-11T00:00:00+00:00",
        subject="alice",
        predicate="salary",
        object="1000000",
        origin="channel:bad",
        origin_trust=0.3,
        ingested_at="2025-02-11T00:00:00+00:00",
        invalidated_by_event="origin_purge",
        invalidated_at="2025-02-12T00:00:00+00:00",
        quarantined=0,
    ),
    base_row(
        "m_c",
        "台北會議：李老闆決定下季推出新功能",
        "2025-02-15T03:00:00+08:00",
        tags='["meeting", "台北"]',
        origin="user_direct",
        origin_trust=1.0,
        session_id="s-tp",
        quarantined=0,
    ),
    base_row(
        "m_d",
        "Deploys are global",
        "2025-03-02T00:00:00+00:00",
        layer="semantic",
        valid_from="2025-03-02T00:00:00+00:00",
        subject="deploy",
        predicate="region",
        object="global",
        origin="agent_derived",
        origin_trust=0.6,
        derived_from='["m_a2"]',
        ingested_at="2025-03-02T00:00:00+00:00",
        quarantined=0,
    ),
    base_row(
        "m_p",
        "To deploy, run wrangler deploy from the repo root",
        "2025-03-03T00:00:00+00:00",
        layer="procedural",
        importance=8.0,
        origin="operator",
        origin_trust=1.0,
        quarantined=0,
    ),
]


@pytest.fixture
def full_file(tmp_path: Path) -> Path:
    return legacy_file(tmp_path / "full.sqlite3", FULL_ROWS, tuple(LATER_DDL), fts=True)


def test_full_schema_keeps_every_column(full_file: Path) -> None:
    # an admin's explicit choice to trust the file's origins (else trust is capped at the import class)
    result = import_legacy(path=full_file, trust_origins=True)
    assert (result.inserted, result.skipped, result.total) == (9, 0, 9)
    assert result.columns == [*BASE_DDL, *LATER_DDL]
    assert result.problems == [] and result.repaired_keys == 0 and result.trust_lowered == 0
    assert Memory.objects.count() == 9
    for row in FULL_ROWS:
        m = Memory.objects.get(id=row["id"])
        for column in [*BASE_DDL, *LATER_DDL]:
            if column not in row:
                continue
            want = legacy_value(column, row[column])
            if column == "source_event" and want is None:
                want = ""
            assert getattr(m, column) == want, (row["id"], column)


def test_full_schema_facts_get_write_log(full_file: Path) -> None:
    result = import_legacy(path=full_file)
    # 7 fact rows + one reaffirmation of m_a1 by the operator
    assert result.facts == 7 and result.fact_writes == 8
    states = dict(FactWrite.objects.filter(is_reaffirm=False).values_list("memory_id", "state"))
    assert states == {
        "m_a1": "believed",
        "m_a2": "believed",
        "m_b1": "believed",
        "m_b2": "believed",
        "m_q": "quarantined",
        "m_r": "retracted",
        "m_d": "believed",
    }
    a2 = FactWrite.objects.get(memory_id="m_a2")
    assert a2.req_from == dt("2025-03-01") and a2.req_until is None
    assert a2.believed_from == dt("2025-03-01T10:00:00Z")
    reaffirm = FactWrite.objects.get(memory_id="m_a1", is_reaffirm=True)
    assert reaffirm.origin == "operator" and reaffirm.req_from == dt("2025-02-01")
    assert FactWrite.objects.get(memory_id="m_q").believed_from is None


def test_temporal_reads_on_imported_chain(full_file: Path) -> None:
    import_legacy(path=full_file)
    at = engine.get_at
    assert at(agent_id=A, subject="deploy", predicate="target", at=dt("2024-12-01")) is None
    assert at(agent_id=A, subject="deploy", predicate="target", at=dt("2025-02-15")).id == "m_a1"
    assert at(agent_id=A, subject="deploy", predicate="target", at=dt("2025-03-01")).id == "m_a2"
    assert at(agent_id=A, subject="alice", predicate="role", at=dt("2025-01-01")).object == "engineer"
    assert at(agent_id=A, subject="alice", predicate="role", at=dt("2025-06-01")).object == "support manager"
    assert at(agent_id=A, subject="bob", predicate="owns", at=dt("2025-06-01")) is None  # quarantined
    assert at(agent_id=A, subject="alice", predicate="salary", at=dt("2025-06-01")) is None  # retracted
    # as believed before the switch was learned (record time)
    then = at(agent_id=A, subject="deploy", predicate="target", at=dt("2025-04-01"), as_of=dt("2025-02-15"))
    assert then is not None and then.id == "m_a1"

    history = engine.get_history(agent_id=A, subject="deploy", predicate="target")
    assert [h.id for h in history] == ["m_a1", "m_a2"]
    assert history[0].superseded_by == "m_a2" and history[1].supersedes == "m_a1"
    assert history[0].reaffirmed_by[0]["origin"] == "operator"
    salary = engine.get_history(agent_id=A, subject="alice", predicate="salary")
    assert salary[0].retracted


def test_search_finds_imported_content(full_file: Path) -> None:
    import_legacy(path=full_file)
    assert [h.id for h in engine.search(agent_id=A, query="Cloudflare")] == ["m_a2"]
    assert [h.id for h in engine.search(agent_id=A, query="台北")] == ["m_c"]
    assert [h.id for h in engine.search(agent_id=A, query="李老闆")] == ["m_c"]
    assert [h.id for h in engine.search(agent_id=A, query="wrangler")] == ["m_p"]
    assert engine.search(agent_id=A, query="Vercel") == []  # superseded: not current
    assert engine.search(agent_id=A, query="password") == []  # quarantined
    assert engine.search(agent_id=A, query="million") == []  # retracted


def test_new_write_supersedes_imported_fact(full_file: Path) -> None:
    import_legacy(path=full_file)
    res = engine.store_temporal(
        agent_id=A,
        content="We deploy to Fly.io",
        subject="deploy",
        predicate="target",
        object="Fly.io",
        valid_from=dt("2025-06-01"),
        origin="operator",
        source_event="ev-3",
    )
    assert res.outcome == "stored"
    history = engine.get_history(agent_id=A, subject="deploy", predicate="target")
    assert [h.id for h in history] == ["m_a1", "m_a2", res.id]
    a1, a2, new = history
    assert a2.valid_until == dt("2025-06-01") and a2.superseded_by == res.id
    assert a2.invalidated_by_event == "ev-3"
    assert new.supersedes == "m_a2" and new.valid_until is None
    # the imported history is not reshaped
    assert (a1.valid_from, a1.valid_until, a1.superseded_by) == (dt("2025-01-01"), dt("2025-03-01"), "m_a2")
    assert a1.invalidated_by_event == "ev-2"
    at = engine.get_at
    assert at(agent_id=A, subject="deploy", predicate="target", at=dt("2025-02-15")).id == "m_a1"
    assert at(agent_id=A, subject="deploy", predicate="target", at=dt("2025-04-15")).id == "m_a2"
    assert at(agent_id=A, subject="deploy", predicate="target", at=dt("2025-07-01")).id == res.id


def test_reaffirm_and_out_of_order_on_imported_key(full_file: Path) -> None:
    import_legacy(path=full_file)
    same = engine.store_temporal(
        agent_id=A,
        content="We deploy to Cloudflare Workers",
        subject="deploy",
        predicate="target",
        object="Cloudflare Workers",
        valid_from=dt("2025-04-01"),
        origin="user_direct",
    )
    assert (same.outcome, same.id) == ("reaffirmed", "m_a2")
    older = engine.store_temporal(
        agent_id=A,
        content="We deployed to Heroku",
        subject="deploy",
        predicate="target",
        object="Heroku",
        valid_from=dt("2024-06-01"),
        origin="user_direct",
    )
    history = engine.get_history(agent_id=A, subject="deploy", predicate="target")
    assert [h.id for h in history] == [older.id, "m_a1", "m_a2"]
    assert history[0].valid_until == dt("2025-01-01")
    assert engine.get_at(agent_id=A, subject="deploy", predicate="target", at=dt("2025-05-01")).id == "m_a2"


def test_purge_restores_imported_predecessor(full_file: Path) -> None:
    import_legacy(path=full_file)
    # m_b2 (channel:hr-feed) superseded m_b1; purging that channel restores m_b1 as current.
    result = engine.invalidate_by_origin(agent_id=A, origin="channel:hr-feed")
    assert result.retracted == 1 and result.restored == 1
    current = engine.get_at(agent_id=A, subject="alice", predicate="role", at=dt("2025-06-01"))
    assert current is not None and current.id == "m_b1" and current.valid_until is None
    # purging the operator: m_a2 goes, m_a1 (said by the user, reaffirmed by the operator) comes back
    engine.invalidate_by_origin(agent_id=A, origin="operator")
    current = engine.get_at(agent_id=A, subject="deploy", predicate="target", at=dt("2025-06-01"))
    assert current is not None and current.id == "m_a1"
    assert Memory.objects.get(id="m_a2").invalidated_by_event == "origin_purge"
    # the derived fact citing the purged row has its trust crushed (SPEC P2)
    assert Memory.objects.get(id="m_d").origin_trust == pytest.approx(0.1)


def test_second_import_changes_nothing(full_file: Path) -> None:
    first = import_legacy(path=full_file)
    before = dump()
    second = import_legacy(path=full_file)
    assert dump() == before
    assert (second.inserted, second.skipped, second.already_present, second.total) == (0, 9, 9, 9)
    assert first.inserted == 9
    assert AuditEvent.objects.filter(action="import").count() == 2


def test_import_registers_agent_and_bumps_generation_and_audits(full_file: Path) -> None:
    assert engine.graph_generation(agent_id=A) == 0
    import_legacy(path=full_file, actor="operator:ops")
    assert Agent.objects.filter(agent_id=A, team__isnull=True).exists()
    assert engine.graph_generation(agent_id=A) >= 1
    event = AuditEvent.objects.get(action="import")
    assert event.actor == "operator:ops" and event.agent_id == A
    assert event.details["inserted"] == 9 and event.details["file_total"] == 9


# --- partial schemas ---------------------------------------------------------------------------------------


def test_base_only_file(tmp_path: Path) -> None:
    rows = [
        base_row("b1", "naive time row", "2025-01-05 10:00:00", tags='["a", "b"]', importance=3.0),
        base_row("b2", "offset time row", "2025-01-05T12:00:00+02:00", last_accessed="2025-01-06T00:00:00Z"),
        base_row("b3", "zulu time row", "2025-01-05T10:00:00.250000Z", layer="semantic", access_count=7),
    ]
    path = legacy_file(tmp_path / "base.sqlite3", rows)
    result = import_legacy(path=path)
    assert (result.inserted, result.total, result.facts) == (3, 3, 0)
    assert result.columns == list(BASE_COLUMNS)
    b1, b2, b3 = (Memory.objects.get(id=i) for i in ("b1", "b2", "b3"))
    assert b1.timestamp == datetime(2025, 1, 5, 10, tzinfo=UTC)  # naive = UTC
    assert b2.timestamp == datetime(2025, 1, 5, 10, tzinfo=UTC)
    assert b3.timestamp == datetime(2025, 1, 5, 10, 0, 0, 250000, tzinfo=UTC)
    assert b1.tags == ["a", "b"] and b1.importance == 3.0 and b3.access_count == 7 and b3.layer == "semantic"
    assert b2.last_accessed == datetime(2025, 1, 6, tzinfo=UTC)
    for m in (b1, b2, b3):
        # later columns take the model defaults; origin is "import" at its ceiling (SPEC P1)
        assert (m.origin, m.origin_trust) == ("import", 0.7)
        assert (m.subject, m.valid_from, m.valid_until, m.metadata, m.derived_from) == (
            None,
            None,
            None,
            {},
            [],
        )
        assert m.confidence == 1.0 and m.quarantined is False and m.reaffirmed_by == []
        assert m.ingested_at == m.timestamp  # record time: when the legacy engine wrote it
    assert FactWrite.objects.count() == 0
    assert [h.id for h in engine.search(agent_id=A, query="zulu")] == ["b3"]


def test_base_plus_some_later_columns(tmp_path: Path) -> None:
    later = ("subject", "predicate", "object", "valid_from", "origin_trust")
    rows = [
        base_row(
            "f1",
            "Bob manages Alice",
            "2025-01-01T00:00:00Z",
            subject="alice",
            predicate="manager",
            object="bob",
            valid_from="2025-01-01T00:00:00Z",
            origin_trust=0.9,
        ),  # fmt: skip
        base_row(
            "f2",
            "Carol manages Alice",
            "2025-02-01T00:00:00Z",
            subject="alice",
            predicate="manager",
            object="carol",
            valid_from=None,
            origin_trust=None,
        ),  # fmt: skip
        base_row("p1", "plain note", origin_trust=0.2),
    ]
    result = import_legacy(path=legacy_file(tmp_path / "some.sqlite3", rows, later))
    assert (result.inserted, result.facts) == (3, 2)
    f1, f2, p1 = (Memory.objects.get(id=i) for i in ("f1", "f2", "p1"))
    assert f1.origin == "import" and f1.origin_trust == 0.7
    assert f1.metadata["legacy_raw"]["origin_trust"] == 0.9  # the legacy value is not lost
    assert f2.origin_trust == 0.7 and "legacy_raw" not in f2.metadata
    assert p1.origin_trust == 0.2 and p1.metadata == {}
    # f2 had no valid_from: its world time starts at its timestamp; only one open row per key
    assert f2.valid_from == dt("2025-02-01")
    assert [m.id for m in Memory.objects.filter(subject="alice", valid_until__isnull=True)] == ["f2"]
    assert f1.valid_until == dt("2025-02-01") and f1.superseded_by == "f2" and f2.supersedes == "f1"
    assert result.repaired_keys == 1
    assert (
        engine.get_at(agent_id=A, subject="alice", predicate="manager", at=dt("2025-01-15")).object == "bob"
    )


def test_trust_ceiling_by_origin_class_and_derived_sources(tmp_path: Path) -> None:
    later = ("origin", "origin_trust", "derived_from")
    rows = [
        base_row("t1", "from a channel", origin="channel:telegram-ops", origin_trust=0.9),
        base_row("t2", "from the user", origin="user", origin_trust=1.0),
        base_row("t3", "derived from t1", origin="agent_derived", origin_trust=0.6, derived_from='["t1"]'),
        base_row(
            "t4", "derived from nothing known", origin="operator", origin_trust=1.0, derived_from='["gone"]'
        ),
        base_row("t5", "no origin", origin=None, origin_trust=0.5),
    ]
    result = import_legacy(path=legacy_file(tmp_path / "trust.sqlite3", rows, later), trust_origins=True)
    trust = dict(Memory.objects.values_list("id", "origin_trust"))
    assert trust == {"t1": 0.3, "t2": 1.0, "t3": 0.3, "t4": 0.0, "t5": 0.5}
    assert Memory.objects.get(id="t5").origin == "import"
    assert Memory.objects.get(id="t2").origin == "user"  # the string is kept as is
    assert result.trust_lowered == 3
    assert Memory.objects.get(id="t4").metadata["legacy_raw"]["origin_trust"] == 1.0


def test_malformed_values_are_reported_not_fatal(tmp_path: Path) -> None:
    later = ("metadata", "derived_from", "reaffirmed_by", "valid_from", "subject", "predicate", "quarantined")
    rows = [
        base_row(
            "x1",
            "broken json everywhere",
            tags="not json",
            metadata="[1, 2",
            derived_from='{"a": 1}',
            reaffirmed_by="nope",
            importance="lots",
            last_accessed="yesterday-ish",
            layer="working",
            quarantined=0,
        ),
        base_row(
            "x2", "fine row", tags="", metadata=None, derived_from=None, reaffirmed_by=None, quarantined=0
        ),
        base_row("x3", "no timestamp at all", ts="garbage", quarantined=0),
        base_row("", "no id", quarantined=0),
    ]
    result = import_legacy(path=legacy_file(tmp_path / "bad.sqlite3", rows, later))
    assert (result.total, result.inserted, result.invalid) == (4, 2, 2)
    x1 = Memory.objects.get(id="x1")
    assert (x1.tags, x1.derived_from, x1.reaffirmed_by, x1.importance, x1.layer) == (
        [],
        [],
        [],
        5.0,
        "episodic",
    )
    assert x1.last_accessed is None
    raw = x1.metadata["legacy_raw"]
    assert raw == {
        "tags": "not json",
        "metadata": "[1, 2",
        "derived_from": '{"a": 1}',
        "reaffirmed_by": "nope",
        "importance": "lots",
        "last_accessed": "yesterday-ish",
        "layer": "working",
    }
    x2 = Memory.objects.get(id="x2")
    assert (x2.tags, x2.metadata) == ([], {})
    reported = {p["id"]: p["problems"] for p in result.problems}
    assert set(reported) == {"x1", "x3", ""}
    assert any(p.startswith("tags: malformed JSON") for p in reported["x1"])
    assert reported["x3"] == ["timestamp: no usable timestamp or created_at"]
    assert result.problem_rows == 3


def test_json_null_characters_and_too_many_reaffirmations(tmp_path: Path) -> None:
    later = ("metadata", "reaffirmed_by")
    entries = [{"source_event": f"e{i}", "origin": "user_direct", "valid_from": None} for i in range(25)]
    rows = [base_row("n1", "nul\x00inside", metadata='{"k": "a\\u0000b"}', reaffirmed_by=json.dumps(entries))]
    import_legacy(path=legacy_file(tmp_path / "nul.sqlite3", rows, later))
    m = Memory.objects.get(id="n1")
    assert "\x00" not in m.content and m.metadata["k"] == "a\ufffdb"
    assert [e["source_event"] for e in m.reaffirmed_by] == [f"e{i}" for i in range(5, 25)]
    assert len(json.loads(m.metadata["legacy_raw"]["reaffirmed_by"])) == 25


# --- keys that break the one-open-row rule -----------------------------------------------------------------


def test_two_open_rows_for_a_key_keep_the_newest_open(tmp_path: Path) -> None:
    later = ("subject", "predicate", "object", "valid_from", "valid_until", "ingested_at")
    rows = [
        base_row(
            "o1",
            "Boss is Lee",
            "2025-01-01T00:00:00Z",
            subject="老闆",
            predicate="is",
            object="李老闆",
            valid_from="2025-01-01T00:00:00Z",
        ),  # fmt: skip
        base_row(
            "o2",
            "Boss is Wang",
            "2025-03-01T00:00:00Z",
            subject="老闆",
            predicate="is",
            object="王老闆",
            valid_from="2025-03-01T00:00:00Z",
        ),  # fmt: skip
    ]
    result = import_legacy(path=legacy_file(tmp_path / "dup.sqlite3", rows, later))
    assert result.inserted == 2 and result.repaired_keys == 1
    repair = result.repairs[0]
    assert (repair["subject"], repair["predicate"]) == ("老闆", "is")
    assert repair["changes"][0]["id"] == "o1"
    assert repair["changes"][0]["valid_until"] == [None, "2025-03-01T00:00:00+00:00"]
    o1, o2 = Memory.objects.get(id="o1"), Memory.objects.get(id="o2")
    assert (o1.valid_until, o1.superseded_by, o2.supersedes, o2.valid_until) == (
        dt("2025-03-01"),
        "o2",
        "o1",
        None,
    )
    assert Memory.objects.filter(subject="老闆", valid_until__isnull=True).count() == 1
    assert engine.get_at(agent_id=A, subject="老闆", predicate="is", at=dt("2025-02-01")).object == "李老闆"
    assert [h.id for h in engine.search(agent_id=A, query="王老闆")] == ["o2"]
    # idempotent even after a repair
    before = dump()
    import_legacy(path=legacy_file(tmp_path / "dup2.sqlite3", rows, later))
    assert dump() == before


def test_import_onto_a_key_with_native_history(tmp_path: Path) -> None:
    native = engine.store_temporal(
        agent_id=A, content="Deploy to Fly", subject="deploy", predicate="target", object="Fly",
        valid_from=dt("2025-05-01"), origin="operator",
    )  # fmt: skip
    later = ("subject", "predicate", "object", "valid_from")
    rows = [base_row("old", "Deploy to Heroku", "2025-01-01T00:00:00Z", subject="deploy", predicate="target",
                     object="Heroku", valid_from="2025-01-01T00:00:00Z")]  # fmt: skip
    result = import_legacy(path=legacy_file(tmp_path / "onto.sqlite3", rows, later))
    assert result.repaired_keys == 1
    history = engine.get_history(agent_id=A, subject="deploy", predicate="target")
    assert [(h.id, h.valid_until) for h in history] == [("old", dt("2025-05-01")), (native.id, None)]


# --- agents and conflicts ----------------------------------------------------------------------------------


def test_conflicting_id_of_another_agent_is_skipped_not_overwritten(tmp_path: Path) -> None:
    import_legacy(path=legacy_file(tmp_path / "a.sqlite3", [base_row("same-id", "belongs to A")]))
    other = base_row("same-id", "claims to be B's")
    other["agent_id"] = OTHER
    result = import_legacy(path=legacy_file(tmp_path / "b.sqlite3", [other, base_row("fresh", "new row")]))
    assert (result.inserted, result.conflicts, result.conflict_ids) == (1, 1, ["same-id"])
    m = Memory.objects.get(id="same-id")
    assert (m.agent_id, m.content) == (A, "belongs to A")
    again = import_legacy(path=tmp_path / "b.sqlite3")
    assert (again.inserted, again.conflicts, again.already_present) == (0, 1, 1)
    assert Memory.objects.get(id="same-id").content == "belongs to A"


def test_agent_override(tmp_path: Path) -> None:
    rows = [base_row("r1", "one"), {**base_row("r2", "two"), "agent_id": "someone-else"}]
    path = legacy_file(tmp_path / "o.sqlite3", rows)
    result = import_legacy(path=path, agent_id="support-bot")
    assert result.agents == ["support-bot"]
    assert set(Memory.objects.values_list("agent_id", flat=True)) == {"support-bot"}
    assert import_legacy(path=path, agent_id="support-bot").inserted == 0


def test_many_rows_in_batches(tmp_path: Path) -> None:
    later = ("subject", "predicate", "object", "valid_from")
    rows = []
    for i in range(2500):
        key = {}
        if i % 2:
            key = {"subject": f"user-{(i // 2) % 300}", "predicate": "status", "object": f"v{i}",
                   "valid_from": f"2025-01-01T00:00:{i % 60:02d}.{i:06d}Z"}  # fmt: skip
        rows.append(base_row(f"row-{i:05d}", f"memory number {i}", **key))
    result = import_legacy(path=legacy_file(tmp_path / "many.sqlite3", rows, later))
    assert (result.inserted, result.facts) == (2500, 1250)
    open_rows = Memory.objects.filter(subject__isnull=False, valid_until__isnull=True).count()
    assert open_rows == 300
    assert import_legacy(path=legacy_file(tmp_path / "many2.sqlite3", rows, later)).inserted == 0


def test_small_batches_and_chunks_keep_keys_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memory.engine.importer import sizes

    monkeypatch.setattr(sizes, "BATCH_ROWS", 7)
    monkeypatch.setattr(sizes, "CHUNK", 3)
    later = ("subject", "predicate", "object", "valid_from")
    rows = [
        base_row(
            f"k{i:03d}",
            f"big key value {i}",
            subject="big",
            predicate="key",
            object=f"v{i}",
            valid_from=f"2025-01-{1 + i % 28:02d}T00:00:{i % 60:02d}Z",
        )  # fmt: skip
        for i in range(40)
    ]
    rows += [base_row(f"p{i:03d}", f"plain {i}") for i in range(20)]
    rows += [
        base_row(
            f"s{i:03d}",
            f"small key {i}",
            subject=f"small-{i // 2}",
            predicate="p",
            object=str(i),
            valid_from=f"2025-02-01T00:00:0{i % 2}Z",
        )  # fmt: skip
        for i in range(20)
    ]
    path = legacy_file(tmp_path / "chunks.sqlite3", rows, later)
    result = import_legacy(path=path)
    assert result.inserted == 80
    # every key ends with exactly one open believed row and a non-overlapping timeline
    assert Memory.objects.filter(subject="big", valid_until__isnull=True).count() == 1
    for i in range(10):
        assert Memory.objects.filter(subject=f"small-{i}", valid_until__isnull=True).count() == 1
    history = engine.get_history(agent_id=A, subject="big", predicate="key")
    segments = [
        (h.valid_from, h.valid_until)
        for h in history
        if h.valid_until is None or h.valid_until > h.valid_from
    ]
    for (_, end), (start, _) in zip(segments, segments[1:], strict=False):
        assert end is not None and end <= start
    before = dump()
    assert import_legacy(path=path).inserted == 0
    assert dump() == before


# --- bad files ---------------------------------------------------------------------------------------------


def _assert_nothing_written() -> None:
    assert Memory.objects.count() == 0
    assert FactWrite.objects.count() == 0
    assert AuditEvent.objects.count() == 0
    assert Agent.objects.count() == 0


@pytest.mark.parametrize("kind", ["text", "missing", "no_table", "missing_column", "empty"])
def test_bad_files_raise_and_write_nothing(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "bad.db"
    if kind == "text":
        path.write_text("this is not a database\n" * 50)
    elif kind == "no_table":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE notes (id TEXT)")
        conn.commit()
        conn.close()
    elif kind == "missing_column":
        legacy_file(
            path,
            [],
            ddl="CREATE TABLE memories (id TEXT PRIMARY KEY, agent_id TEXT, content TEXT, timestamp TEXT)",
        )
    elif kind == "empty":
        path.write_bytes(b"")
    with pytest.raises(InvalidImportFile) as exc:
        import_legacy(path=path)
    assert exc.value.code == "invalid_import_file"
    assert isinstance(exc.value, engine.EngineError)
    _assert_nothing_written()


def test_command_imports_and_reports(full_file: Path) -> None:
    out = io.StringIO()
    call_command("import_memories", str(full_file), "--agent-map", f"{A}={A}", stdout=out)
    assert "imported 9 of 9 rows" in out.getvalue()
    out = io.StringIO()
    call_command("import_memories", str(full_file), "--agent", A, "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert (report["inserted"], report["already_present"]) == (0, 9)


def test_command_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    path.write_text("nope " * 100)
    with pytest.raises(CommandError, match="invalid_import_file"):
        call_command("import_memories", str(path), "--agent", A)
    _assert_nothing_written()
