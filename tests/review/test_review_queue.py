"""The review queue page (SPEC D2, B7; UX "Every queue"): who may see it, the evidence card per kind, filters
and sort kept in the URL, the navigation badge, and a query count that does not grow with the items.

Items are proposed through ``engine.review_propose`` with the payload the dream loop writes
(tests/review/review_builders.py); the page reads them through review/review_selectors.py.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from memory import engine
from memory.models import Agent, DreamRun, ReviewItem
from tests.conftest import login, make_user
from tests.dashboard.conftest import assert_login_redirect, assert_same_404
from tests.review.review_builders import (
    fact,
    fingerprint,
    pair,
    propose_conflict,
    propose_lint,
    propose_low_confidence,
)

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
XSS = "<script>window.__xss=1</script>"


def url(agent_id: str) -> str:
    return reverse("review:review", args=[agent_id])


def action_url(name: str, agent_id: str, item_id: int) -> str:
    return reverse(f"review:review_{name}", args=[agent_id, item_id])


def card(html: str, item_id: int) -> str:
    match = re.search(rf'<article id="item-{item_id}".*?</article>', html, re.S)
    assert match, f"no card for item {item_id}"
    return match.group(0)


def card_ids(html: str) -> list[int]:
    return [int(i) for i in re.findall(r'<article id="item-(\d+)"', html)]


@pytest.fixture
def conflict(agent):
    old, new = pair(agent.agent_id)
    return {"old": old, "new": new, "item": propose_conflict(agent.agent_id, old, new)}


@pytest.fixture
def member(client, reviewer):
    return login(client, reviewer)


# --- access ----------------------------------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, agent, conflict):
    aid, item = agent.agent_id, conflict["item"]
    assert_login_redirect(client, url(aid))
    assert_login_redirect(client, reverse("review:review_log", args=[aid]))
    response = client.post(action_url("approve", aid, item.id), {"reason": "verified"})
    assert response.status_code == 302 and response["Location"].startswith("/login/?next=")


def test_a_viewer_reads_the_queue_but_decides_nothing(client, viewer, agent, conflict):
    aid, item = agent.agent_id, conflict["item"]
    login(client, viewer)
    response = client.get(url(aid))
    assert response.status_code == 200
    html = response.content.decode()
    c = card(html, item.id)
    assert 'class="side-text"' in c and "The judge proposes" in c  # the evidence is there
    assert "decide-form" not in c and "claim-form" not in c and "edit-form" not in c
    assert 'id="bulk-approve"' not in html and 'id="read-only-note"' in html
    assert client.get(reverse("review:review_log", args=[aid])).status_code == 200
    for name, data in (
        ("approve", {"reason": "verified"}),
        ("reject", {"reason": "wrong"}),
        ("edit", {"verdict": "MERGE", "reason": "corrected"}),
        ("claim", {}),
        ("undo", {}),
        ("revert", {"reason": "mistake"}),
    ):
        assert client.post(action_url(name, aid, item.id), data).status_code == 403
        assert client.post(action_url(name, aid, item.id), data, headers=HTMX).status_code == 403
    assert client.get(reverse("review:review_bulk", args=[aid]) + "?decision=reject").status_code == 403
    row = ReviewItem.objects.get(id=item.id)
    assert (row.status, row.claimed_by) == ("pending", "")


def test_another_team_gets_the_same_404_as_a_missing_agent(client, outsider, agent, conflict):
    aid, item = agent.agent_id, conflict["item"]
    login(client, outsider)
    assert_same_404(client, url(aid), url("no-such-agent"))
    log = reverse("review:review_log", args=[aid])
    assert_same_404(client, log, reverse("review:review_log", args=["no-such-agent"]))
    for name in ("approve", "reject", "edit", "claim", "undo", "revert"):
        assert client.post(action_url(name, aid, item.id), {"reason": "wrong"}).status_code == 404
    assert ReviewItem.objects.get(id=item.id).status == "pending"


def test_another_agents_item_is_byte_identical_to_a_missing_one(client, reviewer, team, agent, conflict):
    """Through an agent the reviewer may see, an item of another agent answers exactly like no item."""
    theirs = Agent.objects.create(agent_id="sister-bot", team=team)
    o, n = pair(theirs.agent_id, subject="sister")
    foreign = propose_conflict(theirs.agent_id, o, n)
    login(client, reviewer)
    aid = agent.agent_id
    missing = max(foreign.id, conflict["item"].id) + 100
    for name, data in (("approve", {"reason": "verified"}), ("edit", {"verdict": "MERGE"}), ("claim", {})):
        hidden = client.post(action_url(name, aid, foreign.id), data, headers=HTMX)
        absent = client.post(action_url(name, aid, missing), data, headers=HTMX)
        assert hidden.status_code == absent.status_code == 404
        assert hidden.content == absent.content
    # the list filtered on that id shows nothing either
    html = client.get(url(aid) + f"?status=all&item={foreign.id}").content.decode()
    assert card_ids(html) == [] and 'id="desk-empty"' in html
    assert ReviewItem.objects.get(id=foreign.id).status == "pending"


# --- the evidence card ----------------------------------------------------------------------------------------


def test_a_conflict_card_shows_old_vs_new_with_provenance_and_the_judge(member, agent, conflict):
    aid, item = agent.agent_id, conflict["item"]
    html = member.get(url(aid)).content.decode()
    c = card(html, item.id)
    # the text diff: what the new side drops and adds
    assert "<del>Cloudflare Workers</del>" in c and "<ins>cloudflare workers (CF)</ins>" in c
    # the triple, with the parts that differ marked, and links to both memories and their timelines
    assert 'class="mono triple-predicate changed">deploy_target_v2<' in c
    assert 'class="mono triple-subject">proj<' in c
    for memory_id in (conflict["old"], conflict["new"]):
        assert reverse("dashboard:memory", args=[aid, memory_id]) in c
    assert "timeline/?subject=proj&amp;predicate=deploy_target_v2" in c
    # provenance of both sides
    assert "user_direct" in c and "operator:crm" in c and "crm-sync-7" in c and "chat-1" in c and "s-1" in c
    # the valid intervals on one time axis
    svg = re.search(r"<svg.*?</svg>", c, re.S).group(0)
    assert svg.count('<g class="axis-bar') == 2 and 'class="axis-now"' in svg
    assert "old: valid from 2024-01-10 until further notice." in svg
    assert "new: valid from 2025-03-01 until further notice." in svg
    # confidence, impact, the judge's verdict, reason and rule, why it waits, what each memory is now
    assert 'class="confidence-value">0.55<' in c and 'class="impact-value">1<' in c
    assert 'class="verdict-name mono">UNSURE<' in c and 'class="mono rule">b<' in c
    assert "near-synonym predicates with near-equal objects" in c
    assert "confidence 0.55 is not above 0.80" in c and c.count("now current") == 2
    # an unsure judge: approve needs an edit, which a conflict card offers
    assert "edit-form" in c and reverse("review:review_edit", args=[aid, item.id]) in c


def test_lint_and_low_confidence_cards_say_what_was_found_and_why(member, agent):
    aid = agent.agent_id
    birthday = fact(aid, "ana", "birthday", "2990-01-01")
    lint = propose_lint(aid, birthday, finding="Ana's birthday is in the future")
    tea = fact(aid, "ana", "likes", "tea", confidence=0.3)
    low = propose_low_confidence(aid, tea, why="one mention from a low-trust origin")
    html = member.get(url(aid)).content.decode()
    c = card(html, lint.id)
    assert "Ana&#x27;s birthday is in the future" in c and "retract the fact" in c
    assert reverse("dashboard:memory", args=[aid, birthday]) in c and "edit-form" not in c
    c = card(html, low.id)
    assert "one mention from a low-trust origin" in c and "rejecting retracts it" in c
    assert 'class="mono triple-object">tea<' in c


def test_stored_text_is_escaped_everywhere(member, agent):
    aid = agent.agent_id
    old, new = pair(aid, subject="xss", old=XSS, new="safe value")
    item = propose_conflict(aid, old, new, judge_reason=XSS, title=XSS)
    html = member.get(url(aid)).content.decode()
    assert XSS not in html and "&lt;script&gt;window.__xss=1&lt;/script&gt;" in card(html, item.id)


# --- filters and sort in the URL ---------------------------------------------------------------------------------


@pytest.fixture
def mixed(agent):
    """Five pending items of three kinds, with different confidences, impacts, runs and expiries."""
    aid = agent.agent_id
    now = timezone.now()
    run = DreamRun.objects.create(agent_id=aid, actor="system:dream", started_at=now, heartbeat_at=now)
    items = {}
    specs = [("a", 0.62, 1, None), ("b", 0.31, 7, run.id), ("c", 0.75, 3, run.id)]
    for k, (name, confidence, impact, run_id) in enumerate(specs):
        with time_machine.travel(now - timedelta(days=3 - k), tick=False):
            o, n = pair(aid, subject=f"proj-{name}")
            items[name] = propose_conflict(aid, o, n, confidence=confidence, impact=impact, run_id=run_id)
    items["lint"] = propose_lint(aid, fact(aid, "ana", "birthday", "2990-01-01"), finding="future birthday")
    items["low"] = propose_low_confidence(aid, fact(aid, "bo", "likes", "jazz", confidence=0.2), why="weak")
    return items, run


def test_filters_and_sort_live_in_the_url(member, agent, mixed):
    items, run = mixed
    aid = agent.agent_id
    ids = {name: i.id for name, i in items.items()}

    def listed(query: str) -> list[int]:
        response = member.get(url(aid) + query)
        assert response.status_code == 200
        return card_ids(response.content.decode())

    # default: pending, lowest confidence first (lint 0.6, low 0.2 from their rows)
    assert listed("")[:2] == [ids["low"], ids["b"]]
    assert listed("?kind=conflict") == [ids["b"], ids["a"], ids["c"]]
    assert listed("?kind=conflict&sort=impact") == [ids["b"], ids["c"], ids["a"]]
    assert listed("?kind=conflict&sort=expiry") == [ids["a"], ids["b"], ids["c"]]
    assert listed("?kind=conflict&conf_min=0.5&conf_max=0.7") == [ids["a"]]
    assert listed("?impact=high") == [ids["b"]]
    assert ids["b"] not in listed("?impact=low")
    assert listed(f"?run={run.id}") == [ids["b"], ids["c"]]
    assert listed("?q=PROJ-C") == [ids["c"]]
    assert listed("?kind=lint") == [ids["lint"]]
    # the page says which filter it shows, and keeps it in the form
    html = member.get(url(aid) + "?kind=conflict&sort=impact").content.decode()
    assert '<option value="conflict" selected>Conflicts (3 pending)</option>' in html
    assert '<option value="impact" selected>Highest impact first</option>' in html
    assert "3\n    pending items (conflict),\n    highest impact first." in html
    # invalid values fall back to the defaults instead of failing
    assert listed("?conf_min=lots&sort=nonsense&kind=gossip&run=x")[:2] == [ids["low"], ids["b"]]


def test_decided_items_stay_on_record_under_their_status(member, agent, mixed):
    items, _ = mixed
    aid = agent.agent_id
    engine.review_decide(item_id=items["a"].id, decision="reject", actor="user:cora", reason="wrong")
    engine.review_decide(item_id=items["lint"].id, decision="approve", actor="user:cora")
    assert items["a"].id not in card_ids(member.get(url(aid)).content.decode())
    assert card_ids(member.get(url(aid) + "?status=rejected").content.decode()) == [items["a"].id]
    decided = card_ids(member.get(url(aid) + "?status=decided").content.decode())
    assert set(decided) == {items["a"].id, items["lint"].id}
    every = card_ids(member.get(url(aid) + "?status=all").content.decode())
    assert len(every) == 5 and set(every[-2:]) == {items["a"].id, items["lint"].id}  # pending first
    c = card(member.get(url(aid) + "?status=rejected").content.decode(), items["a"].id)
    assert 'data-status="rejected"' in c and 'class="decision-reason">wrong<' in c and "decide-form" not in c


def test_a_filter_change_over_htmx_gets_the_list_only(member, agent, mixed):
    response = member.get(url(agent.agent_id) + "?kind=lint", headers=HTMX)
    html = response.content.decode()
    assert (
        response.status_code == 200 and "<html" not in html and html.lstrip().startswith('<section id="desk"')
    )
    assert card_ids(html) == [mixed[0]["lint"].id]
    assert "Vary" in response and "HX-Request" in response["Vary"]


def test_the_dry_runs_proposals_are_not_in_the_queue(member, agent):
    aid = agent.agent_id
    old, new = pair(aid)
    proposal = engine.Proposal(
        kind="conflict",
        fingerprint=fingerprint("dry", old, new),
        title="dry",
        payload={"action": {"verdict": "MERGE", "old_id": old, "new_id": new}},
        memory_ids=[old, new],
        confidence=0.5,
    )
    dry = engine.review_propose(agent_id=aid, proposal=proposal, dry=True).item
    assert card_ids(member.get(url(aid) + "?status=all").content.decode()) == []
    response = member.post(action_url("approve", aid, dry.id), {"reason": "verified"}, headers=HTMX)
    assert response.status_code == 404


# --- time limits, badge, queries -----------------------------------------------------------------------------


def test_an_overdue_item_is_reminded_about_and_stays_decidable(member, agent, conflict):
    aid, item = agent.agent_id, conflict["item"]
    c = card(member.get(url(aid)).content.decode(), item.id)
    assert re.search(r'role="timer"[^>]*>6 d 23 h left<', c)
    with time_machine.travel(timezone.now() + timedelta(days=8)):
        engine.review_sweep()
        c = card(member.get(url(aid)).content.decode(), item.id)
        assert "review-overdue" in c and "overdue: reminder sent" in c and "decide-form" in c
        response = member.post(action_url("reject", aid, item.id), {"reason": "wrong"}, headers=HTMX)
        assert response.status_code == 200
    assert ReviewItem.objects.get(id=item.id).status == "rejected"


def test_the_navigation_badge_counts_pending_items(member, agent, mixed):
    html = member.get(reverse("dashboard:agent", args=[agent.agent_id])).content.decode()
    badge = re.search(r'<span id="review-count"[^>]*data-count="(\d+)"', html)
    assert badge and badge.group(1) == "5"
    assert reverse("review:review", args=[agent.agent_id]) in html


def test_query_count_is_constant_in_the_number_of_items(member, agent, django_assert_num_queries):
    aid = agent.agent_id
    first = []
    for k in range(3):
        o, n = pair(aid, subject=f"q{k}")
        first.append(propose_conflict(aid, o, n))
    # session, user, agent with its badges, membership, count, the page's ids then rows, their memories,
    # the kinds' counts, the runs
    with django_assert_num_queries(10):
        assert len(card_ids(member.get(url(aid)).content.decode())) == 3
    for k in range(3, 30):
        o, n = pair(aid, subject=f"q{k}")
        propose_conflict(aid, o, n)
    with django_assert_num_queries(10):
        assert len(card_ids(member.get(url(aid)).content.decode())) == 10  # a page
    with django_assert_num_queries(10):
        member.get(url(aid) + "?status=all&sort=impact&q=q1&kind=conflict")
    with django_assert_num_queries(8):  # an HTMX filter change: the list only
        member.get(url(aid) + "?kind=conflict", headers=HTMX)


def test_another_reviewer_of_the_team_sees_the_same_queue(client, team, agent, conflict):
    login(client, make_user("cora", team, "curator"))
    assert card_ids(client.get(url(agent.agent_id)).content.decode()) == [conflict["item"].id]
