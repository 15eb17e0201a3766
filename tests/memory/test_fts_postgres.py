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


# --- issue 15 item 3: the document is stored, never recomputed by a search ----------------------------------


def _plans(cur, queries):
    plans = []
    for q in queries:
        if q["sql"].lstrip().upper().startswith("SELECT") and "fts" in q["sql"]:
            cur.execute("EXPLAIN (VERBOSE) " + q["sql"])
            plans.append("\n".join(r[0] for r in cur.fetchall()))
    return plans


def test_a_search_reads_the_stored_document_and_never_recomputes_it(on_postgres):
    """A small agent's search is planned over its rows by agent_id: with the document as an index expression,
    every row's document was recomputed by the filter and by ts_rank (~0.3 s per 64 KB row of U+FDFA)."""
    from django.test.utils import CaptureQueriesContext

    assert on_postgres
    for i in range(5):
        engine.store(agent_id=A, content=f"deploy note {i} " + "\ufdfa" * 2000)
    with CaptureQueriesContext(connection) as ctx:
        hits = engine.search(agent_id=A, query="deploy", touch=False)
    assert len(hits) == 5
    with connection.cursor() as cur:
        plans = _plans(cur, ctx.captured_queries)
        assert plans and all("memdesk_fts_doc" not in p for p in plans), plans
        assert any("fts_doc" in p for p in plans)
        cur.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'memories' AND indexdef LIKE '%%USING gin%%'"
        )
        assert [r[0] for r in cur.fetchall()] == [
            "CREATE INDEX memories_fts_doc_gin ON public.memories USING gin (fts_doc)"
        ]


def test_the_stored_document_is_the_function_of_the_row(on_postgres):
    assert on_postgres
    mid = engine.store(agent_id=A, content="我想找李老闆喝茶 c++ & plain", tags=["x"]).id
    with connection.cursor() as cur:
        cur.execute(
            "SELECT fts_doc::text = memdesk_fts_doc(content, subject, predicate, object)::text FROM memories WHERE id = %s",
            [mid],
        )
        assert cur.fetchone()[0] is True
