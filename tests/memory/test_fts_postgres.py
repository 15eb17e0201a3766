"""PostgreSQL full-text documents (migration 0009): the linear bigram body gives the same documents as 0002's
quadratic one, and the largest texts a write accepts are indexed within a bounded time."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection

from memory import engine
from tests.memory.conftest import A

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]
fts = importlib.import_module("memory.migrations.0009_fts_doc_linear")

SAMPLES = [
    ("plain ascii text, with punctuation: c++ & c#!", None, None),
    ("我想找李老闆喝茶", "李老闆", "茶館"),
    ("mixed 中文 and English 日本語のテキスト 한국어 문장", "Ｆｕｌｌ Ｗｉｄｔｈ", "x"),
    ("單", "一", None),  # single CJK characters make no bigram
    ("中a文 中_文 中-文", None, "ﷺ"),  # runs broken by a letter, an underscore, a dash; U+FDFA expands
    (None, None, None),
    ("tabs\tand\nnewlines  中文\u3000全角空格", "s", "o"),
]


def doc(cur, function, parts):
    cur.execute(f"SELECT {function}(%s, %s, %s)::text", list(parts))
    return cur.fetchone()[0]


def test_the_linear_body_gives_the_documents_of_the_quadratic_one(on_postgres):
    assert on_postgres
    with connection.cursor() as cur:
        cur.execute(fts.function_sql("pg_temp.fts_quadratic", fts.QUADRATIC_BIGRAMS))
        for parts in SAMPLES + [("中文" * 400 + " tail", "頭" * 30, None)]:
            assert doc(cur, "memdesk_fts_doc", parts) == doc(cur, "pg_temp.fts_quadratic", parts), parts


def test_the_largest_subject_and_content_are_written_and_found_within_a_statement_timeout(on_postgres):
    """The longest subject U+FDFA can make (28 copies, 504 characters after NFKC; a subject has at most 512
    once normalised) and ~21k CJK characters of content took minutes with the quadratic body; bounded work now
    (a 20 s cap, about 100× what it needs)."""
    assert on_postgres
    content = ("我想找李老闆喝茶談一談新的計畫" * 1500)[: engine.MAX_CONTENT_BYTES // 3 - 10] + " lantern"
    with connection.cursor() as cur:
        cur.execute("SET LOCAL statement_timeout = '20s'")
    stored = engine.store_temporal(
        agent_id=A, content=content, subject="\ufdfa" * 28, predicate="blesses", object="李老闆"
    )
    hits = engine.search(agent_id=A, query="李老闆 lantern", touch=False)
    assert stored.id in [h.id for h in hits]
