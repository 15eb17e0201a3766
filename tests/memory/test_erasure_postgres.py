"""SPEC M5 on PostgreSQL: after ``engine.erase`` the erased text is in no table of a ``pg_dump`` of the database
(nor in the stored full-text document ``fts_doc``, a generated column the dump leaves out), while it was there before."""

from __future__ import annotations

import subprocess

import pytest
from django.db import connection

from memory import engine
from memory.models import Memory
from tests.memory.conftest import A
from tests.memory.test_erasure import _seed_secret

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

SECRET = "Pgquorvex Tallimundo"


def _dump() -> str:
    db = connection.settings_dict
    env = {"PGPASSWORD": db.get("PASSWORD") or ""}
    out = subprocess.run(
        [
            "pg_dump",
            "--data-only",
            "-h",
            db.get("HOST") or "127.0.0.1",
            "-p",
            str(db.get("PORT") or 5432),
            "-U",
            db.get("USER") or "postgres",
            db["NAME"],
        ],
        capture_output=True,
        check=True,
        env=env,
        timeout=120,
    )
    return out.stdout.decode("utf-8", "replace").lower()


def _indexed() -> int:
    """Rows whose stored search document (a generated column: pg_dump leaves it out) has the word."""
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM memories WHERE fts_doc @@ to_tsquery('simple', 'pgquorvex')")
        return int(cur.fetchone()[0])


def test_erased_text_is_gone_from_a_pg_dump():
    ids = _seed_secret(secret=SECRET)
    before = _dump()
    assert "pgquorvex" in before and _indexed() > 0

    engine.erase(agent_id=A, subject=SECRET, reason="request", actor="user:ada")

    after = _dump()
    assert "pgquorvex" not in after and _indexed() == 0
    assert "green tea" in after and Memory.objects.filter(id=ids["keep"]).exists()
    assert engine.search(agent_id=A, query="Pgquorvex") == []
