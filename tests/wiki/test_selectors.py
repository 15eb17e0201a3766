"""SPEC W4 and D5 reads (wiki.selectors): listing and filtering pages, one page by id, ranked search."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from memory import engine
from tests.conftest import dt
from wiki import selectors, services

from .conftest import publish

pytestmark = pytest.mark.django_db
A = "support-bot"
T0 = dt("2026-06-01T09:00:00")


def test_search_stays_importable_from_services_as_spec_section_11_promises():
    assert services.search is selectors.search


# --- D5: pages ----------------------------------------------------------------------------------------------


def test_list_pages_filters():
    with time_machine.travel(T0 - timedelta(days=10), tick=False):
        old = publish(title="Old charter", doc_type="charter").page
    with time_machine.travel(T0, tick=False):
        sop = publish().page
        gone = publish(title="Gone spec", doc_type="spec").page
        services.remove(page=gone, actor="user:cora", reason="obsolete")
        publish(agent_id="other-bot", title="Not mine")
        services.promote(page=sop, actor="user:cora", reason="ok")
        ids = lambda qs: [p.pk for p in qs]  # noqa: E731
        assert ids(selectors.list_pages(agent_id=A)) == [sop.pk, old.pk]
        assert ids(selectors.list_pages(agent_id=A, namespace="auto")) == [old.pk]
        assert ids(selectors.list_pages(agent_id=A, doc_type="charter")) == [old.pk]
        assert ids(selectors.list_pages(agent_id=A, age_days=7)) == [sop.pk]
        assert ids(selectors.list_pages(agent_id=A, status="removed")) == [gone.pk]
        assert set(ids(selectors.list_pages(agent_id=A, status="all"))) == {sop.pk, old.pk, gone.pk}
        with pytest.raises(engine.InvalidArgument):
            selectors.list_pages(agent_id=A, namespace="secret")
        with pytest.raises(engine.NotFound):
            selectors.get_page(agent_id="other-bot", page_id=sop.pk)
        assert selectors.get_page(agent_id=A, page_id=str(sop.pk)).pk == sop.pk


# --- W4: ranking --------------------------------------------------------------------------------------------


def test_ranking_uses_trust_and_the_source_type_factor_so_curated_outranks_equal_auto():
    auto = publish(title="Deploy runbook", slug="deploy-a").page
    other = publish(title="Deploy runbook", slug="deploy-b").page
    services.promote(page=other, actor="user:cora", reason="verified")
    hits = selectors.search(agent_id=A, query="deploy runbook")
    assert [h.page.pk for h in hits] == [other.pk, auto.pk]
    curated_hit, auto_hit = hits
    assert curated_hit.relevance == auto_hit.relevance > 0
    assert auto_hit.score == pytest.approx(auto_hit.relevance * (0.5 + 0.3) * 0.6)
    assert curated_hit.score == pytest.approx(curated_hit.relevance * (0.5 + 0.8) * 1.0)


def test_relevance_still_matters_more_than_a_small_trust_gap():
    weak = publish(title="Holiday calendar", summary="Mentions deploy once.", slug="calendar").page
    strong = publish(title="Deploy freeze policy", summary="When deploys stop.", doc_type="policy").page
    services.promote(page=weak, actor="user:cora", reason="ok")
    hits = selectors.search(agent_id=A, query="deploy freeze policy")
    assert hits[0].page.pk == strong.pk
    assert selectors.search(agent_id=A, query="zebra unicorn") == []
    assert selectors.search(agent_id=A, query="   ") == []


def test_search_matches_chinese_by_bigrams():
    page = publish(title="部署流程說明", summary="上線前先跑金絲雀。", doc_type="sop").page
    publish(title="請假規定", summary="年假與病假。", doc_type="policy")
    assert [h.page.pk for h in selectors.search(agent_id=A, query="部署流程")] == [page.pk]
    assert [h.page.pk for h in selectors.search(agent_id=A, query="金絲雀")] == [page.pk]
    assert selectors.search(agent_id="other-bot", query="部署") == []


def test_the_search_index_follows_revisions_and_weights_fields():
    page = publish(original_text="Check the zeppelin hangar first.").page
    assert [h.page.pk for h in selectors.search(agent_id=A, query="zeppelin")] == [page.pk]
    services.revise(
        page=page, actor="user:cora", original_text="Check the airship hangar first.", reason="wording"
    )
    assert selectors.search(agent_id=A, query="zeppelin") == []
    [hit] = selectors.search(agent_id=A, query="airship")
    assert hit.relevance == pytest.approx(0.4)  # found in the original text only
    assert selectors.search(agent_id=A, query="runbook")[0].relevance == pytest.approx(1.0)  # in the title
    assert selectors.search(agent_id=A, query="safely")[0].relevance == pytest.approx(0.7)  # in the summary
    assert selectors.search(agent_id=A, query="runbook zebra")[0].relevance == pytest.approx(0.5)


def test_ranking_formula_factors():
    assert selectors.rank_score(1.0, 0.3, "raw_dialogue") == pytest.approx(0.48)
    assert selectors.rank_score(1.0, 0.8, "user_statement") == pytest.approx(1.3)
    assert selectors.rank_score(0.5, 1.0, "verified_fact") == pytest.approx(0.9)
    assert selectors.rank_score(1.0, 0.5, "tool_output") == pytest.approx(0.9)
    assert selectors.rank_score(1.0, 0.5, "unknown") == pytest.approx(0.8)
    assert selectors.rank_score(1.0, 0.5, "made_up") == pytest.approx(0.8)
