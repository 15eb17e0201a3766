"""The main pages at volume (issue 19 "Done when": <= 50 ms server time with constant query counts at 100k
memories; benchmarks/bench_pages.py times them). Here, untimed: every main page makes the same number of queries
for a small and a larger corpus, and each shortcut the pages take gives the answer of the full path."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from dashboard import selectors
from memory import engine
from memory.engine.graph import view_cache
from memory.engine.graph.aliases import _alias_map
from memory.engine.graph.scan import _edge_columns
from memory.models import ApprovalRequest, Memory
from tests.conftest import login, make_burst
from tests.dashboard.conftest import make_memories
from web.http import CappedPaginator
from wiki import services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("guard_defaults")]


# --- constant query counts ----------------------------------------------------------------------------------


def review_items(agent_id: str, start: int, stop: int) -> None:
    """Conflict items over pairs of facts, as the dream loop proposes them."""
    for n in range(start, stop):
        old, new = (
            Memory.objects.get(
                id=engine.store_temporal(
                    agent_id=agent_id, content=f"svc-{n} {p} {v}", subject=f"svc-{n}", predicate=p, object=v
                ).id
            )
            for p, v in (("deploy_target", f"region-{n}"), ("deploy_target_v2", f"Region {n}"))
        )
        engine.review_propose(
            agent_id=agent_id,
            proposal=engine.Proposal(
                kind="conflict",
                fingerprint=f"volume-{n}",
                title=f"{old.subject}: {old.object} vs {new.object}",
                payload={
                    "action": {"verdict": "UNSURE", "old_id": old.id, "new_id": new.id},
                    "old": engine.side_of(old),
                    "new": engine.side_of(new),
                    "rule": "b",
                    "judge_reason": "near-synonym predicates",
                },
                memory_ids=[old.id, new.id],
                confidence=0.5,
                impact=n % 9,
                reason="unsure",
                judge="heuristic",
                state=engine.state_fingerprint([old, new]),
                verdict_type="conflict:UNSURE",
            ),
        )


def grow(agent_id: str, start: int, stop: int) -> None:
    """Memories, facts, held batches (every other one superseding a told fact) and review items."""
    make_memories(agent_id, stop - start, word=f"w{start}")
    for b in range(start, stop):
        subject = f"client-{b}"
        if b % 2 == 0:
            engine.store_temporal(agent_id=agent_id, content=f"{subject} plan", subject=subject,
                                  predicate="claim_0", object="told", origin="user_direct")  # fmt: skip
        make_burst(agent_id, subject, origin=f"channel:crm-{b % 3}")
    review_items(agent_id, start, stop)
    engine.discover(agent_id=agent_id)


PAGES = {
    "home": ("dashboard:home", None, ""),
    "agent_home": ("dashboard:agent", "", ""),
    "memories": ("dashboard:memories", "", ""),
    "memories_filter": ("dashboard:memories", "", "?layer=semantic&origin_class=user"),
    "memories_history": ("dashboard:memories", "", "?status=all&q=number"),
    "memories_search": ("dashboard:memories", "", "?q=report"),
    "memory_detail": ("dashboard:memory", "detail", ""),
    "timeline_keys": ("dashboard:timeline", "", ""),
    "timeline_keys_search": ("dashboard:timeline", "", "?q=customer"),
    "timeline_key": ("dashboard:timeline", "", "?subject=dana&predicate=lives_in"),
    "desk_expiry": ("review:quarantine", "", ""),
    "desk_size": ("review:quarantine", "", "?sort=size"),
    "desk_impact": ("review:quarantine", "", "?sort=impact"),
    "desk_origin": ("review:quarantine", "", "?sort=origin"),
    "desk_all": ("review:quarantine", "", "?status=all"),
    "review_queue": ("review:review", "", ""),
    "discoveries": ("review:discoveries", "", ""),
    "graph": ("dashboard:graph", "", ""),
    "graph_entity": ("dashboard:graph", "", "?entity=email"),
    "wiki_list": ("wiki:list", "", ""),
    "wiki_page": ("wiki:page", "wiki", ""),
    "audit": ("dashboard:audit", "", ""),
    "operations": ("dashboard:operations", "", ""),
    "tokens": ("dashboard:tokens", "", ""),
    "mistakes": ("dashboard:mistakes", "", ""),
    "insights": ("dashboard:insights", "", ""),
}


def page_queries(client, urls: dict[str, str]) -> dict[str, int]:
    """Each page's queries on its second load (the first may fill what pages keep between loads)."""
    out = {}
    for name, url in urls.items():
        assert client.get(url).status_code == 200, url
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200, url
        out[name] = len(ctx.captured_queries)
    return out


def test_every_main_page_makes_the_same_queries_for_5_and_40_items(client, team_admin, agent):
    a = agent.agent_id
    for city in ("lisbon", "berlin", "tokyo"):
        engine.store_temporal(agent_id=a, content=f"Dana lives in {city}", subject="dana",
                              predicate="lives_in", object=city, origin="user_direct")  # fmt: skip
    detail = Memory.objects.filter(agent_id=a, subject="dana").exclude(superseded_by=None).first().id
    engine.token_create(agent_id=a, scopes=["memory:read"], name="bot", actor="user:ada")
    engine.record_mistake(agent_id=a, category="factual", input_summary="q", what_went_wrong="old value")
    grow(a, 0, 5)
    first = ApprovalRequest.objects.filter(agent_id=a, status="pending").order_by("id").first()
    engine.quarantine_reject(request_id=first.id, actor="user:ada", reason="wrong")
    wiki = services.publish_auto(agent_id=a, doc_type="runbook", title="Deploys", summary="How we deploy.",
                                 original_text="## Steps\n\nShip it.", actor="bench")  # fmt: skip
    login(client, team_admin)
    urls = {}
    for name, (view, arg, query) in PAGES.items():
        if arg is None:
            urls[name] = reverse(view) + query
        elif view.startswith("wiki:"):
            kwargs = {"agent_id": a, **({"page_id": wiki.id} if arg == "wiki" else {})}
            urls[name] = reverse(view, kwargs=kwargs) + query
        else:
            urls[name] = reverse(view, args=[a, *([detail] if arg == "detail" else [])]) + query
    small = page_queries(client, urls)
    grow(a, 5, 40)
    large = page_queries(client, urls)
    assert Memory.objects.filter(agent_id=a).count() > 8 * 40  # the larger corpus is larger
    assert ApprovalRequest.objects.filter(agent_id=a, status="pending").count() >= 39
    assert large == small


def hold_one(agent_id: str, subject: str, predicate: str, obj: str, origin: str = "channel:spam") -> str:
    """One more fact from an origin whose burst is held: quarantined on arrival."""
    result = engine.store_temporal(agent_id=agent_id, content=f"{subject} {predicate} {obj}", subject=subject,
                                   predicate=predicate, object=obj, origin=origin, protect=True)  # fmt: skip
    assert result.outcome == "quarantined", result
    return result.id


# --- the graph page's kept columns ------------------------------------------------------------------------


def columns_of(edges) -> dict[str, list]:
    return {
        "ids": edges.ids.to_pylist(),
        "predicates": edges.predicates.to_pylist(),
        "subjects": [edges.name(int(i)) if i >= 0 else None for i in edges.subjects],
        "objects": [edges.name(int(i)) if i >= 0 else None for i in edges.objects],
        "trusts": edges.trusts.tolist(),
        "quarantined": edges.quarantined.tolist(),
    }


def full_view(a: str, **kw):
    """``graph_view`` as the full path gives it: every current row read again."""
    view_cache.clear_view_cache()
    view = engine.graph_view(agent_id=a, **kw)
    view_cache.clear_view_cache()
    return view


def assert_kept_equals_full(a: str) -> None:
    at = timezone.now()
    aliases = _alias_map(a)
    kept = view_cache.view_columns(a, at, aliases=aliases)
    assert columns_of(kept) == columns_of(_edge_columns(a, at, aliases=aliases))
    for kw in (
        {},
        {"entity": "Acme", "depth": 2},
        {"focus_over": 2},
        {"predicate": "works_at", "min_trust": 0.5},
    ):
        expected = full_view(a, **kw)
        engine.graph_view(agent_id=a, **kw)  # fills the cache
        assert engine.graph_view(agent_id=a, **kw) == expected, kw


def test_the_kept_graph_columns_equal_reading_every_row_again(agent):
    a = agent.agent_id
    start = timezone.now() - timedelta(days=1)
    with time_machine.travel(start, tick=False):
        for i in range(12):
            engine.store_temporal(agent_id=a, content=f"p{i} works at Acme", subject=f"Person {i}",
                                  predicate="works_at", object="Acme")  # fmt: skip
        wrong = engine.store_temporal(agent_id=a, content="p0 lives in Oslo", subject="Person 0",
                                      predicate="lives_in", object="Oslo", origin="agent_inferred").id  # fmt: skip
    assert_kept_equals_full(a)
    reads = view_cache.stats["reads"]
    engine.graph_view(agent_id=a)
    assert view_cache.stats["reads"] == reads  # answered from the kept columns

    # a retracted fact leaves the graph; a held burst shows (flagged); an alias merges two names
    engine.retract_fact(agent_id=a, memory_id=wrong, reason="wrong", actor="user:cora")
    make_burst(a, "Person 3", origin="channel:spam",
               facts=[(f"claim_{k}", "Globex", f"p3 claim {k}") for k in range(6)])  # fmt: skip
    view = engine.graph_view(agent_id=a)
    assert wrong not in {e["memory_id"] for e in view.edges}
    assert any(e["quarantined"] for e in view.edges)
    assert_kept_equals_full(a)
    held_more = hold_one(a, "Person 3", "claim_9", "Globex")  # one more fact held into the open batch
    assert held_more in {e["memory_id"] for e in engine.graph_view(agent_id=a, entity="globex").edges}
    assert_kept_equals_full(a)
    engine.alias_add(agent_id=a, canonical="acme", alias="globex", actor="user:cora")
    assert_kept_equals_full(a)
    nodes = {n["id"] for n in engine.graph_view(agent_id=a, limit=1000).nodes}
    assert "acme" in nodes and "globex" not in nodes

    # world time alone: a fact that ends, one that starts later
    soon = timezone.now() + timedelta(hours=1)
    engine.store_temporal(agent_id=a, content="p5 at Initech until soon", subject="Person 5", predicate="contracts_for",
                          object="Initech", valid_until=soon)  # fmt: skip
    engine.store_temporal(agent_id=a, content="p6 at Hooli from soon", subject="Person 6", predicate="contracts_for",
                          object="Hooli", valid_from=soon)  # fmt: skip
    before = engine.graph_view(agent_id=a, limit=1000)
    assert "initech" in {n["id"] for n in before.nodes} and "hooli" not in {n["id"] for n in before.nodes}
    with time_machine.travel(soon + timedelta(minutes=1), tick=False):
        after = engine.graph_view(agent_id=a, limit=1000)
        assert "initech" not in {n["id"] for n in after.nodes} and "hooli" in {n["id"] for n in after.nodes}
        assert_kept_equals_full(a)


def test_a_write_by_another_process_is_seen_through_the_generation(agent):
    """The kept columns are checked against the generation row on every read, so a row written by any process
    (here: behind the engine's back, as another worker's commit looks to this one) shows at once."""
    a = agent.agent_id
    for i in range(3):
        engine.store_temporal(
            agent_id=a, content=f"c{i}", subject=f"c{i}", predicate="uses", object="Zendesk"
        )
    first = engine.graph_view(agent_id=a)
    assert first == engine.graph_view(agent_id=a)
    engine.store_temporal(agent_id=a, content="c9", subject="c9", predicate="uses", object="Zendesk")
    assert engine.graph_view(agent_id=a).total_edges == first.total_edges + 1


# --- the key picker's kept keys ---------------------------------------------------------------------------


def test_the_kept_picker_keys_equal_grouping_every_row(agent):
    a = agent.agent_id
    make_memories(a, 4)
    for query in ("", "customer", "nothing-like-this"):
        expected = {
            "keys": selectors.fact_keys(a, query=query, limit=50, most_changed=True),
            "total": selectors.fact_key_count(a, query=query),
        }
        assert selectors.key_picker_keys(a, query=query, limit=50) == expected
        assert selectors.key_picker_keys(a, query=query, limit=50) == expected  # kept
    # every kind of fact-row change shows: a supersession, a held fact, a decision
    engine.store_temporal(agent_id=a, content="c0 sms", subject="customer-0", predicate="prefers_channel",
                          object="sms")  # fmt: skip
    batch = make_burst(a, "customer-1", origin="channel:spam")
    held = selectors.key_picker_keys(a, query="", limit=50)
    assert held == {
        "keys": selectors.fact_keys(a, limit=50, most_changed=True),
        "total": selectors.fact_key_count(a),
    }
    assert {(k.subject, k.predicate): k.rows for k in held["keys"]}[("customer-0", "prefers_channel")] >= 2
    assert held["total"] == 4 + 5  # four customers' channels, five held claims
    hold_one(a, "customer-1", "claim_9", "value-9")  # one more fact held into the open batch
    assert selectors.key_picker_keys(a, query="", limit=50)["total"] == 4 + 6
    engine.quarantine_reject(request_id=batch.id, actor="user:rex", reason="wrong")
    assert selectors.key_picker_keys(a, query="", limit=50) == {
        "keys": selectors.fact_keys(a, limit=50, most_changed=True),
        "total": selectors.fact_key_count(a),
    }


# --- the agents list's counts -----------------------------------------------------------------------------


def test_agents_list_counts_match_plain_filters(agent, other_agent):
    from django.db.models import Q

    from memory.engine.belief import NOT_RETRACTED, RETRACTED, current_q
    from memory.models import Agent

    for a in (agent.agent_id, other_agent.agent_id):
        make_memories(a, 3)
    make_burst(agent.agent_id, "held")
    batch = make_burst(other_agent.agent_id, "held")
    engine.quarantine_reject(request_id=batch.id, actor="user:rex", reason="wrong")
    summaries = selectors.agents_with_counts(Agent.objects.order_by("agent_id"))
    assert len(summaries) == 2
    for s in summaries:
        rows = Memory.objects.filter(agent_id=s.agent.agent_id)
        current = rows.filter(current_q(timezone.now()))
        assert s.counts == selectors.AgentCounts(
            current=current.count(),
            facts=current.filter(subject__isnull=False).count(),
            quarantined=rows.filter(Q(quarantined=True) & NOT_RETRACTED).count(),
            retracted=rows.filter(RETRACTED).count(),
            total=rows.count(),
        )
    assert {s.agent.agent_id: (s.counts.quarantined > 0, s.counts.retracted > 0) for s in summaries} == {
        agent.agent_id: (True, False),
        other_agent.agent_id: (False, True),
    }


# --- the memory list's capped count -----------------------------------------------------------------------


def test_a_capped_count_is_exact_below_the_cap_and_walks_on_past_it(agent):
    a = agent.agent_id
    make_memories(a, 15)  # 30 rows
    rows = Memory.objects.filter(agent_id=a).order_by("-timestamp", "-id")
    exact = CappedPaginator(rows, 5, number=1, ahead=10)
    assert (exact.count, exact.capped, exact.num_pages) == (30, False, 6)
    capped = CappedPaginator(rows, 5, number=1, ahead=2)  # counts 15 rows at most
    assert (capped.count, capped.capped, capped.num_pages) == (15, True, 3)
    assert capped.get_page(1).has_next()
    further = CappedPaginator(rows, 5, number=3, ahead=2)  # page 3 lets the count reach 25
    page = further.get_page(3)
    assert (further.count, further.capped) == (25, True)
    assert [m.id for m in page.object_list] == [m.id for m in rows[10:15]]
    last = CappedPaginator(rows, 5, number=6, ahead=2)
    assert (last.count, last.capped, last.get_page(6).has_next()) == (30, False, False)


def test_the_memory_list_says_more_than_when_capped(client, viewer, agent, monkeypatch):
    from web import http

    make_memories(agent.agent_id, 30)  # 60 current rows
    login(client, viewer)
    url = reverse("dashboard:memories", args=[agent.agent_id])
    assert "60 current memories" in client.get(url).content.decode()
    monkeypatch.setattr(http, "COUNT_AHEAD_PAGES", 1)  # count one page past the asked one
    html = client.get(url).content.decode()
    assert "More than 50 current memories" in html and "Page 1 of 2+" in html
    second = client.get(url + "?page=2").content.decode()
    assert "60 current memories" in second and "Page 2 of 3<" in second


@pytest.mark.parametrize("raw", ["9223372036854775807", "99999999999999999999", "0", "-3", "x"])
def test_any_page_number_gives_a_page_not_an_error(client, viewer, agent, raw):
    make_memories(agent.agent_id, 3)  # 6 rows: one page
    login(client, viewer)
    url = reverse("dashboard:memories", args=[agent.agent_id])
    response = client.get(url, {"page": raw})
    assert response.status_code == 200
    assert "Page 1 of 1" in response.content.decode() or "6 current memories" in response.content.decode()
