"""Deciding review items from the page (SPEC D2, B7): approve / reject with a required reason, edit then
approve (inline errors on invalid edits, nothing written), claims, the undo toast, a revert after the window
(a new decision), stale items refused and shown as stale, bulk decisions with a preview (high-impact items
left out), and the decision log. What agents read afterwards is checked through ``engine.get_at``."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from memory import engine
from memory.models import AuditEvent, FactWrite, Memory, ReviewItem
from tests.conftest import dt, login, make_user
from tests.review.review_builders import fact, pair, propose_conflict, propose_low_confidence
from tests.review.test_review_queue import HTMX, XSS, action_url, card, card_ids, url

pytestmark = pytest.mark.django_db
LATER = dt("2030-01-01")


def value_at(agent_id: str, predicate: str = "deploy_target_v2", subject: str = "proj") -> str | None:
    row = engine.get_at(agent_id=agent_id, subject=subject, predicate=predicate, at=LATER)
    return row.object if row else None


def status_of(item_id: int) -> str:
    return ReviewItem.objects.get(id=item_id).status


def triggers(response) -> dict:  # noqa: ANN001
    return json.loads(response["HX-Trigger"])


@pytest.fixture
def desk(client, reviewer):
    return login(client, reviewer)


@pytest.fixture
def other_desk(team):
    return login(Client(), make_user("ria", team, "reviewer"))


@pytest.fixture
def supersede(agent):
    """A conflict the judge would settle by SUPERSEDE: the new side replaces the old from its start."""
    old, new = pair(agent.agent_id, old="fly.io", new="Cloudflare Workers", new_origin="user_direct")
    item = propose_conflict(agent.agent_id, old, new, verdict="SUPERSEDE", confidence=0.7)
    return {"old": old, "new": new, "item": item}


@pytest.fixture
def unsure(agent):
    old, new = pair(agent.agent_id)
    return {"old": old, "new": new, "item": propose_conflict(agent.agent_id, old, new)}


# --- approve and reject ----------------------------------------------------------------------------------------


def test_reject_needs_a_reason_and_changes_nothing(desk, agent, unsure):
    aid, item = agent.agent_id, unsure["item"]
    before = (value_at(aid, "deploy_target"), value_at(aid))
    response = desk.post(action_url("reject", aid, item.id), {"reason": ""}, headers=HTMX)
    assert response.status_code == 422
    c = card(response.content.decode(), item.id)
    assert "A reason is required." in c and "Pick a reason: it is required." in c
    assert status_of(item.id) == "pending"
    response = desk.post(action_url("reject", aid, item.id), {"reason": "other"}, headers=HTMX)
    assert response.status_code == 422 and "needs a note" in response.content.decode()
    response = desk.post(
        action_url("reject", aid, item.id), {"reason": "not_related", "note": "two products"}, headers=HTMX
    )
    assert response.status_code == 200
    html = response.content.decode()
    c = card(html, item.id)
    assert 'data-status="rejected"' in c and 'class="decision-reason">not_related: two products<' in c
    # the navigation badge and the page's count follow by out-of-band swap
    assert re.search(r'id="review-count"[^>]*hx-swap-oob="true" data-count="0"', html)
    assert 'id="desk-pending-count" hx-swap-oob="true" data-count="0"' in html
    events = triggers(response)
    assert events["memdesk:toast"]["text"].startswith(f"Rejected #{item.id} ")
    assert events["memdesk:undo"]["url"] == action_url("undo", aid, item.id)
    assert (value_at(aid, "deploy_target"), value_at(aid)) == before
    # deciding it again is refused in place
    response = desk.post(action_url("approve", aid, item.id), {"reason": "verified"}, headers=HTMX)
    assert response.status_code == 409
    assert "already decided (rejected by user:rex)" in card(response.content.decode(), item.id)


def test_approving_a_supersede_changes_what_agents_read(desk, agent, supersede):
    aid, item = agent.agent_id, supersede["item"]
    assert value_at(aid, "deploy_target") == "fly.io"
    response = desk.post(action_url("approve", aid, item.id), {"reason": "verified"}, headers=HTMX)
    assert response.status_code == 200
    assert triggers(response)["memdesk:toast"]["text"].endswith(": SUPERSEDE applied.")
    assert status_of(item.id) == "approved"
    assert value_at(aid, "deploy_target") is None  # the old value ended where the new one starts
    assert value_at(aid) == "Cloudflare Workers"
    event = AuditEvent.objects.get(action="review_approved")
    assert event.actor == "user:rex" and event.details["item_id"] == item.id and event.reason == "verified"


def test_a_plain_post_is_redirected_to_the_decided_card(desk, agent, supersede):
    aid, item = agent.agent_id, supersede["item"]
    response = desk.post(action_url("approve", aid, item.id), {"reason": "verified"})
    assert response.status_code == 302 and response["Location"] == url(aid) + f"?status=all&item={item.id}"
    page = desk.get(response["Location"]).content.decode()
    assert card_ids(page) == [item.id] and "Approved #" in page
    response = desk.post(action_url("approve", aid, item.id), {"reason": "verified"})
    assert response.status_code == 409 and "<html" in response.content.decode()


def test_decisions_need_post_and_the_csrf_token(csrf_client, reviewer, agent, unsure):
    aid, item = agent.agent_id, unsure["item"]
    login(csrf_client, reviewer)
    assert csrf_client.get(action_url("approve", aid, item.id)).status_code == 405
    for name in ("approve", "reject", "edit", "claim", "revert"):
        response = csrf_client.post(action_url(name, aid, item.id), {"reason": "wrong"}, headers=HTMX)
        assert response.status_code == 403
    assert status_of(item.id) == "pending" and ReviewItem.objects.get(id=item.id).claimed_by == ""


# --- edit then approve ------------------------------------------------------------------------------------------


def test_edit_then_approve_writes_the_corrected_value(desk, agent, unsure):
    aid, item = agent.agent_id, unsure["item"]
    data = {
        "verdict": "SUPERSEDE",
        "content": "proj deploys to Cloudflare Workers",
        "object": "Cloudflare Workers",
        "reason": "corrected",
        "note": "same product, canonical name",
    }
    response = desk.post(action_url("edit", aid, item.id), data, headers=HTMX)
    assert response.status_code == 200
    row = engine.get_at(agent_id=aid, subject="proj", predicate="deploy_target_v2", at=LATER)
    assert row.object == "Cloudflare Workers" and row.origin == "operator:review"
    assert value_at(aid, "deploy_target") is None  # superseded
    decided = ReviewItem.objects.get(id=item.id)
    assert decided.status == "approved" and decided.edited["verdict"] == "SUPERSEDE"
    assert decided.decision_reason == "corrected: same product, canonical name"
    c = card(response.content.decode(), item.id)
    assert 'class="decision-edit"' in c and "Cloudflare Workers" in c
    note = triggers(response)["memdesk:toast"]["text"]
    assert "with your edit: SUPERSEDE applied, the value corrected to “Cloudflare Workers”" in note
    # the search agents run finds the corrected fact
    hits = engine.search(agent_id=aid, query="Cloudflare Workers canonical proj deploys", limit=10)
    assert row.id in {h.id for h in hits}


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"reason": "corrected"}, "verdict", "Choose the verdict."),
        ({"verdict": "MAYBE", "reason": "corrected"}, "verdict", "Select a valid choice"),
        (
            {"verdict": "MERGE", "object": "Cloudflare", "reason": "corrected"},
            "content",
            "Write the corrected fact as a sentence too.",
        ),
        ({"verdict": "MERGE", "content": "x", "reason": ""}, "reason", "Pick a reason"),
    ],
)
def test_an_invalid_edit_is_refused_inline_and_writes_nothing(desk, agent, unsure, data, field, message):
    aid, item = agent.agent_id, unsure["item"]
    writes, events = FactWrite.objects.count(), AuditEvent.objects.count()
    response = desk.post(action_url("edit", aid, item.id), data, headers=HTMX)
    assert response.status_code == 422
    c = card(response.content.decode(), item.id)
    assert re.search(r'<details class="decide-edit" data-decision="edit" open>', c)  # kept open, values kept
    assert message in c and "field-error" in c
    if data.get("object"):
        assert 'value="Cloudflare"' in c
    assert status_of(item.id) == "pending"
    assert FactWrite.objects.count() == writes and AuditEvent.objects.count() == events


def test_an_edit_the_engine_refuses_shows_on_the_card_and_nothing_is_written(desk, agent):
    """Plain memories have no value to correct: the form does not offer it, and a crafted POST is refused by
    the engine (``invalid_edit``) after nothing was kept, not even the verdict."""
    aid = agent.agent_id
    old = engine.store(agent_id=aid, content="We deploy on Fridays", origin="user_direct").id
    new = engine.store(agent_id=aid, content="We no longer deploy on Fridays", origin="user_direct").id
    item = propose_conflict(aid, old, new, verdict="SUPERSEDE")
    c = card(desk.get(url(aid)).content.decode(), item.id)
    assert "edit-form" in c and 'name="content"' not in c and "only the verdict can be changed" in c
    rows = {m.id: (m.valid_until, m.invalidated_by_event) for m in Memory.objects.filter(agent_id=aid)}
    response = desk.post(
        action_url("edit", aid, item.id),
        {"verdict": "SUPERSEDE", "content": "We deploy on Mondays", "reason": "corrected"},
        headers=HTMX,
    )
    assert response.status_code == 422
    c = card(response.content.decode(), item.id)
    assert "only a fact&#x27;s value can be edited" in c and 'class="field-error edit-error"' in c
    assert status_of(item.id) == "pending"
    assert {
        m.id: (m.valid_until, m.invalidated_by_event) for m in Memory.objects.filter(agent_id=aid)
    } == rows
    response = desk.post(
        action_url("edit", aid, item.id), {"verdict": "SUPERSEDE", "reason": "corrected"}, headers=HTMX
    )
    assert response.status_code == 200 and status_of(item.id) == "approved"
    assert Memory.objects.get(id=old).valid_until is not None


def test_an_unsure_verdict_cannot_be_approved_without_an_edit(desk, agent, unsure):
    aid, item = agent.agent_id, unsure["item"]
    response = desk.post(action_url("approve", aid, item.id), {"reason": "verified"}, headers=HTMX)
    assert response.status_code == 422
    assert "approve with an edited verdict" in card(response.content.decode(), item.id)
    assert status_of(item.id) == "pending"


# --- claims, undo, revert ----------------------------------------------------------------------------------------


def test_a_claim_shows_its_holder_and_refuses_other_reviewers(desk, other_desk, agent, unsure):
    aid, item = agent.agent_id, unsure["item"]
    response = desk.post(action_url("claim", aid, item.id), headers=HTMX)
    assert response.status_code == 200 and "Claimed by you" in card(response.content.decode(), item.id)
    theirs = card(other_desk.get(url(aid)).content.decode(), item.id)
    assert 'class="mono claim-holder">user:rex<' in theirs and 'data-held="true"' in theirs
    response = other_desk.post(action_url("reject", aid, item.id), {"reason": "wrong"}, headers=HTMX)
    assert response.status_code == 409 and "is claimed by user:rex until" in response.content.decode()
    response = other_desk.post(
        action_url("edit", aid, item.id), {"verdict": "MERGE", "reason": "corrected"}, headers=HTMX
    )
    assert response.status_code == 409
    assert status_of(item.id) == "pending"
    response = desk.post(action_url("release", aid, item.id), headers=HTMX)
    assert response.status_code == 200 and "Claim for 10 min" in card(response.content.decode(), item.id)
    assert other_desk.post(action_url("reject", aid, item.id), {"reason": "wrong"}).status_code == 302


def test_undo_inside_the_window_restores_the_reads_exactly(desk, agent, supersede):
    aid, item = agent.agent_id, supersede["item"]
    response = desk.post(action_url("approve", aid, item.id), {"reason": "verified"}, headers=HTMX)
    assert 'data-undo-until="' in card(response.content.decode(), item.id)
    assert value_at(aid, "deploy_target") is None
    response = desk.post(action_url("undo", aid, item.id), headers=HTMX)
    assert response.status_code == 200
    c = card(response.content.decode(), item.id)
    assert 'data-status="pending"' in c and "Claimed by you" in c
    assert triggers(response)["memdesk:toast"]["text"] == (
        f"Undone: #{item.id} “proj: “fly.io” vs “Cloudflare Workers”” is pending again, claimed by you."
    )
    assert value_at(aid, "deploy_target") == "fly.io" and status_of(item.id) == "pending"


def test_after_the_window_a_revert_is_a_new_decision(desk, other_desk, agent, supersede):
    aid, item = agent.agent_id, supersede["item"]
    desk.post(action_url("approve", aid, item.id), {"reason": "verified"}, headers=HTMX)
    with time_machine.travel(timezone.now() + timedelta(minutes=5)):
        c = card(desk.get(url(aid) + "?status=approved").content.decode(), item.id)
        assert "undo-form" not in c and "revert-form" in c
        # a reason is required; another reviewer may revert
        response = other_desk.post(action_url("revert", aid, item.id), {"reason": ""}, headers=HTMX)
        assert response.status_code == 422
        c = card(response.content.decode(), item.id)
        assert re.search(r'<details class="decide-revert" data-decision="revert" open>', c)
        response = other_desk.post(
            action_url("revert", aid, item.id), {"reason": "mistake", "note": "fly.io is right"}, headers=HTMX
        )
    assert response.status_code == 200
    c = card(response.content.decode(), item.id)
    assert 'data-status="rejected"' in c and "revert-form" not in c
    assert 'class="decision-reason">mistake: fly.io is right<' in c
    assert value_at(aid, "deploy_target") == "fly.io"
    row = ReviewItem.objects.get(id=item.id)
    assert (row.status, row.decided_by) == ("rejected", "user:ria")
    assert [e.action for e in AuditEvent.objects.filter(action__startswith="review_").order_by("id")][
        -2:
    ] == [
        "review_restore",
        "review_reverted",
    ]


def test_an_item_the_policy_applied_can_be_reverted_from_the_page(desk, agent):
    aid = agent.agent_id
    old, new = pair(aid, old="fly.io", new="Cloudflare Workers", new_origin="user_direct")
    rows = {m.id: m for m in Memory.objects.filter(id__in=[old, new])}
    proposal = engine.Proposal(
        kind="conflict",
        fingerprint="auto-applied-pair-1",
        title="applied by policy",
        payload={
            "action": {"verdict": "SUPERSEDE", "old_id": old, "new_id": new},
            "old": engine.side_of(rows[old]),
            "new": engine.side_of(rows[new]),
        },
        memory_ids=[old, new],
        confidence=0.95,
        state=engine.state_fingerprint(list(rows.values())),
    )
    item = engine.review_propose(agent_id=aid, proposal=proposal, auto_apply=True).item
    assert item.status == "applied" and value_at(aid, "deploy_target") is None
    c = card(desk.get(url(aid) + "?status=applied").content.decode(), item.id)
    assert "applied automatically" in c and "system:dream" in c and "revert-form" in c
    response = desk.post(action_url("revert", aid, item.id), {"reason": "wrong"}, headers=HTMX)
    assert response.status_code == 200 and value_at(aid, "deploy_target") == "fly.io"


# --- stale items ------------------------------------------------------------------------------------------------


def test_a_stale_item_is_shown_as_stale_and_refused(desk, agent, supersede):
    aid, item = agent.agent_id, supersede["item"]
    fact(aid, "proj", "deploy_target", "render.com", valid_from=dt("2025-06-01"))  # the old side moved on
    c = card(desk.get(url(aid)).content.decode(), item.id)
    assert 'data-stale="true"' in c and "review-stale" in c and "cannot be decided any more" in c
    assert "decide-form" not in c and "claim-form" not in c
    response = desk.post(action_url("approve", aid, item.id), {"reason": "verified"}, headers=HTMX)
    assert response.status_code == 409
    c = card(response.content.decode(), item.id)
    assert "changed since it was proposed" in c and 'data-status="stale"' in c
    assert status_of(item.id) == "stale" and value_at(aid, "deploy_target") == "render.com"
    assert card_ids(desk.get(url(aid) + "?status=stale").content.decode()) == [item.id]


# --- bulk ------------------------------------------------------------------------------------------------------


def test_bulk_leaves_high_impact_items_and_claims_out_and_audits_each(desk, other_desk, agent):
    aid = agent.agent_id
    items = []
    for k in range(4):
        o, n = pair(aid, subject=f"bulk-{k}")
        items.append(propose_conflict(aid, o, n, impact=9 if k == 3 else 1))
    other_desk.post(action_url("claim", aid, items[1].id))
    bulk = reverse("review:review_bulk", args=[aid])
    preview = desk.get(bulk + "?decision=reject&q=bulk", headers=HTMX)
    html = preview.content.decode()
    assert 'class="bulk-n">2<' in html and "bulk-held" in html and f"#{items[1].id} by" in html
    assert "Left out as high impact: 1 item" in html and f"#{items[3].id}</a> impact 9" in html
    ids = ",".join(str(i.id) for i in (items[0], items[2]))
    assert f'name="ids" value="{ids}"' in html and 'name="q" value="bulk"' in html
    response = desk.post(
        bulk,
        {"decision": "reject", "reason": "out_of_scope", "expected": 2, "ids": ids, "q": "bulk"},
        headers=HTMX,
    )
    assert response.status_code == 200
    assert "Rejected 2 items. 1 held by another reviewer left alone. 1 of high impact left" in (
        response.content.decode()
    )
    assert [status_of(i.id) for i in items] == ["rejected", "pending", "rejected", "pending"]
    assert AuditEvent.objects.filter(action="review_rejected").count() == 2


def test_bulk_over_the_threshold_needs_the_count_typed(desk, agent):
    aid = agent.agent_id
    items = [propose_low_confidence(aid, fact(aid, f"t{k}", "likes", "tea"), why="weak") for k in range(11)]
    ids = ",".join(str(i.id) for i in sorted(items, key=lambda i: i.id))
    bulk = reverse("review:review_bulk", args=[aid])
    data = {"decision": "approve", "reason": "verified", "expected": 11, "ids": ids}
    response = desk.post(bulk, data, headers=HTMX)
    assert response.status_code == 422 and "Type 11 to confirm." in response.content.decode()
    assert ReviewItem.objects.filter(status="pending").count() == 11
    response = desk.post(bulk, {**data, "confirm": "11"}, headers=HTMX)
    assert response.status_code == 200 and ReviewItem.objects.filter(status="approved").count() == 11


# --- the decision log --------------------------------------------------------------------------------------------


def test_the_decision_log_keeps_every_decision_per_item_and_for_the_queue(
    desk, client, viewer, agent, supersede
):
    aid, item = agent.agent_id, supersede["item"]
    desk.post(action_url("approve", aid, item.id), {"reason": "verified"}, headers=HTMX)
    desk.post(action_url("undo", aid, item.id), headers=HTMX)
    desk.post(action_url("reject", aid, item.id), {"reason": "other", "note": XSS}, headers=HTMX)
    other = propose_low_confidence(aid, fact(aid, "bo", "likes", "jazz"), why="weak")
    log = reverse("review:review_log", args=[aid])
    html = desk.get(log + f"?item={item.id}").content.decode()
    actions = re.findall(r'class="log-row" data-action="(\w+)" data-item="(\d+)"', html)
    assert [a for a, _ in actions] == ["review_rejected", "review_undo", "review_approved", "review_proposed"]
    assert {int(i) for _, i in actions} == {item.id}
    assert XSS not in html and "other: &lt;script&gt;" in html
    assert "before:" in html and "fly.io" in html  # what the decision was about
    everything = desk.get(log).content.decode()
    assert f'data-item="{other.id}"' in everything and f'data-item="{item.id}"' in everything
    # per fact: the decisions about the items that memory is part of, linked from each side of a card
    about = desk.get(log + f"?memory={supersede['old']}").content.decode()
    assert f'data-item="{item.id}"' in about and f'data-item="{other.id}"' not in about
    assert f"{log}?memory={supersede['old']}" in desk.get(url(aid) + "?status=all").content.decode()
    assert desk.get(log + "?memory=a/b&item=x").status_code == 200  # bad filters are ignored
    login(client, viewer)  # viewers read the log too
    assert client.get(log + f"?item={item.id}").status_code == 200
