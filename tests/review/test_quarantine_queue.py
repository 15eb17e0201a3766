"""The desk as a queue (UX "Every queue"): claims that show their holder and expire, a short undo after each
decision, filters kept in the URL, and bulk decisions over "every batch matching this filter"."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from memory import engine
from memory.models import ApprovalRequest, AuditEvent, FactWrite
from tests.conftest import login, make_burst, make_user
from tests.review.test_quarantine import HTMX, approve_url, card, card_ids, reject_url, status_of, url

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("guard_defaults")]


def claim_url(agent_id: str, request_id: int) -> str:
    return reverse("review:quarantine_claim", args=[agent_id, request_id])


def release_url(agent_id: str, request_id: int) -> str:
    return reverse("review:quarantine_release", args=[agent_id, request_id])


def undo_url(agent_id: str, request_id: int) -> str:
    return reverse("review:quarantine_undo", args=[agent_id, request_id])


def bulk_url(agent_id: str) -> str:
    return reverse("review:quarantine_bulk", args=[agent_id])


@pytest.fixture
def batch(agent):
    return make_burst(agent.agent_id, "alice")


@pytest.fixture
def desk(client, reviewer):
    return login(client, reviewer)


@pytest.fixture
def ria(team):
    return make_user("ria", team, "reviewer")


@pytest.fixture
def other_desk(ria):
    from django.test import Client

    return login(Client(), ria)


# --- access -------------------------------------------------------------------------------------------------


def test_viewer_is_refused_every_queue_action(client, viewer, agent, batch):
    login(client, viewer)
    aid = agent.agent_id
    for target in (claim_url(aid, batch.id), release_url(aid, batch.id), undo_url(aid, batch.id)):
        assert client.post(target).status_code == 403
        assert client.post(target, headers=HTMX).status_code == 403
    assert client.get(bulk_url(aid) + "?decision=reject").status_code == 403
    response = client.post(bulk_url(aid), {"decision": "reject", "reason": "wrong", "expected": 1})
    assert response.status_code == 403
    request = ApprovalRequest.objects.get(id=batch.id)
    assert (request.status, request.claimed_by) == ("pending", "")


def test_outsider_and_another_agents_batch_are_not_found(client, outsider, other_team, agent, batch):
    aid = agent.agent_id
    login(client, outsider)
    for target in (claim_url(aid, batch.id), release_url(aid, batch.id), undo_url(aid, batch.id)):
        assert client.post(target).status_code == 404
    assert client.get(bulk_url(aid) + "?decision=reject").status_code == 404
    assert (
        client.post(bulk_url(aid), {"decision": "reject", "reason": "wrong", "expected": 1}).status_code
        == 404
    )
    from memory.models import Agent

    Agent.objects.create(agent_id="their-bot", team=other_team)
    login(client, make_user("rita", other_team, "reviewer"))
    assert client.post(claim_url("their-bot", batch.id)).status_code == 404
    assert client.post(undo_url("their-bot", batch.id)).status_code == 404
    # a bulk decision through their own agent never reaches this agent's batch
    response = client.post(bulk_url("their-bot"), {"decision": "reject", "reason": "wrong", "expected": 0})
    assert status_of(batch.id) == "pending" and response.status_code in (200, 302)
    assert ApprovalRequest.objects.get(id=batch.id).claimed_by == ""


def test_queue_actions_need_post_and_the_csrf_token(csrf_client, reviewer, agent, batch):
    aid = agent.agent_id
    login(csrf_client, reviewer)
    assert csrf_client.get(claim_url(aid, batch.id)).status_code == 405
    assert csrf_client.get(undo_url(aid, batch.id)).status_code == 405
    assert csrf_client.post(claim_url(aid, batch.id), headers=HTMX).status_code == 403
    assert (
        csrf_client.post(bulk_url(aid), {"decision": "reject", "reason": "wrong", "expected": 1}).status_code
        == 403
    )
    assert ApprovalRequest.objects.get(id=batch.id).claimed_by == "" and status_of(batch.id) == "pending"
    engine.quarantine_reject(batch.id, actor="user:rex", reason="wrong")
    assert csrf_client.post(undo_url(aid, batch.id), headers=HTMX).status_code == 403
    assert status_of(batch.id) == "denied"


# --- claims --------------------------------------------------------------------------------------------------


def test_a_claim_shows_its_holder_to_everyone_and_refuses_other_reviewers(desk, other_desk, agent, batch):
    aid = agent.agent_id
    response = desk.post(claim_url(aid, batch.id), headers=HTMX)
    assert response.status_code == 200
    c = card(response.content.decode(), batch.id)
    assert "Claimed by you" in c and 'data-claimed-by="user:rex"' in c and "Release claim" in c
    assert re.search(r'class="claim-left">(9|10) min \d\d s left<', c)
    toast = json.loads(response["HX-Trigger"])["memdesk:toast"]
    assert toast["text"].startswith(f"Claimed batch #{batch.id} for 10 minutes")
    # the other reviewer sees who holds it, and cannot claim or decide it
    theirs = card(other_desk.get(url(aid)).content.decode(), batch.id)
    assert 'class="mono claim-holder">user:rex<' in theirs and 'data-held="true"' in theirs
    assert "a decision by anyone else is refused" in theirs and "claim-form" not in theirs
    response = other_desk.post(reject_url(aid, batch.id), {"reason": "poisoning"}, headers=HTMX)
    assert response.status_code == 409
    assert "is claimed by user:rex until" in card(response.content.decode(), batch.id)
    assert other_desk.post(claim_url(aid, batch.id), headers=HTMX).status_code == 409
    assert status_of(batch.id) == "pending"
    # the holder decides; the decision releases the claim
    response = desk.post(reject_url(aid, batch.id), {"reason": "poisoning"}, headers=HTMX)
    assert response.status_code == 200
    request = ApprovalRequest.objects.get(id=batch.id)
    assert (request.status, request.claimed_by) == ("denied", "")


def test_a_claim_expires_by_itself(desk, other_desk, agent, batch):
    aid = agent.agent_id
    desk.post(claim_url(aid, batch.id), headers=HTMX)
    with time_machine.travel(timezone.now() + timedelta(seconds=engine.CLAIM_SECS + 5), tick=False):
        theirs = card(other_desk.get(url(aid)).content.decode(), batch.id)
        assert "claim-holder" not in theirs and "claim-form" in theirs
        response = other_desk.post(approve_url(aid, batch.id), {"reason": "verified"}, headers=HTMX)
    assert response.status_code == 200 and status_of(batch.id) == "approved"


def test_release_gives_the_batch_back(desk, other_desk, agent, batch):
    aid = agent.agent_id
    desk.post(claim_url(aid, batch.id), headers=HTMX)
    response = desk.post(release_url(aid, batch.id))  # a plain POST: back to the card
    assert response.status_code == 302 and response["Location"].endswith(f"?status=all&batch={batch.id}")
    assert ApprovalRequest.objects.get(id=batch.id).claimed_by == ""
    assert other_desk.post(claim_url(aid, batch.id), headers=HTMX).status_code == 200
    assert ApprovalRequest.objects.get(id=batch.id).claimed_by == "user:ria"
    assert list(
        AuditEvent.objects.filter(details__request_id=batch.id)
        .values_list("action", flat=True)
        .order_by("id")
    ) == [
        "knowledge_quarantined",
        "quarantine_claimed",
        "quarantine_released",
        "quarantine_claimed",
    ]


# --- undo -----------------------------------------------------------------------------------------------------


def test_a_decision_offers_an_undo_that_puts_the_batch_back(desk, agent, batch):
    aid = agent.agent_id
    response = desk.post(approve_url(aid, batch.id), {"reason": "verified"}, headers=HTMX)
    trigger = json.loads(response["HX-Trigger"])
    offer = trigger["memdesk:undo"]
    assert offer["card"] == f"batch-{batch.id}" and offer["url"] == undo_url(aid, batch.id)
    assert offer["text"] == f"Undo the approval of #{batch.id}"
    assert trigger["memdesk:toast"]["text"].startswith("Approved: 5 facts")
    c = card(response.content.decode(), batch.id)
    assert 'class="undo-form' in c and f'hx-post="{undo_url(aid, batch.id)}"' in c
    assert {h.id for h in engine.search(agent_id=aid, query="alice claim", limit=50, touch=False)}
    response = desk.post(undo_url(aid, batch.id), headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    c = card(html, batch.id)
    assert 'data-status="pending"' in c and "decide-form" in c and "Claimed by you" in c
    assert (
        "Undone: 5 facts about “alice” are held again"
        in json.loads(response["HX-Trigger"])["memdesk:toast"]["text"]
    )
    assert re.search(r'<span id="quarantine-count"[^>]*data-count="1"', html)  # the badge counts it again
    assert engine.search(agent_id=aid, query="alice claim", limit=50, touch=False) == []
    assert set(FactWrite.objects.filter(agent_id=aid).values_list("state", flat=True)) == {"quarantined"}
    undo = AuditEvent.objects.get(action="quarantine_undo")
    assert undo.actor == "user:rex" and undo.details["undone"] == "approved"
    # and it is decided again as usual
    response = desk.post(reject_url(aid, batch.id), {"reason": "poisoning"}, headers=HTMX)
    assert response.status_code == 200 and status_of(batch.id) == "denied"


def test_only_the_decider_sees_and_may_use_the_undo(desk, other_desk, agent, batch):
    aid = agent.agent_id
    desk.post(reject_url(aid, batch.id), {"reason": "poisoning"}, headers=HTMX)
    theirs = card(other_desk.get(url(aid) + "?status=decided").content.decode(), batch.id)
    assert "undo-form" not in theirs
    response = other_desk.post(undo_url(aid, batch.id), headers=HTMX)
    assert response.status_code == 409
    assert "only the reviewer who decided may undo it" in card(response.content.decode(), batch.id)
    assert status_of(batch.id) == "denied"


def test_after_the_window_the_undo_is_gone_and_refused(desk, agent, batch):
    aid = agent.agent_id
    desk.post(reject_url(aid, batch.id), {"reason": "poisoning"}, headers=HTMX)
    with time_machine.travel(timezone.now() + timedelta(seconds=engine.UNDO_SECS + 1), tick=False):
        mine = card(desk.get(url(aid) + "?status=decided").content.decode(), batch.id)
        assert "undo-form" not in mine
        response = desk.post(undo_url(aid, batch.id), headers=HTMX)
        plain = desk.post(undo_url(aid, batch.id))  # a plain POST gets the page with the error
    assert response.status_code == 409
    assert "the undo window has passed" in card(response.content.decode(), batch.id)
    assert plain.status_code == 409 and "<html" in plain.content.decode()
    assert (
        status_of(batch.id) == "denied" and not AuditEvent.objects.filter(action="quarantine_undo").exists()
    )


def test_undo_after_an_origin_purge_is_refused_and_the_facts_stay_purged(desk, agent, batch):
    aid = agent.agent_id
    desk.post(reject_url(aid, batch.id), {"reason": "poisoning"}, headers=HTMX)
    engine.invalidate_by_origin(agent_id=aid, origin="channel:spam", actor="user:ada")
    response = desk.post(undo_url(aid, batch.id), headers=HTMX)
    assert response.status_code == 409
    assert "user:ada purged the origin channel:spam" in card(response.content.decode(), batch.id)
    assert (
        status_of(batch.id) == "denied" and not AuditEvent.objects.filter(action="quarantine_undo").exists()
    )
    assert set(FactWrite.objects.filter(agent_id=aid).values_list("state", flat=True)) == {"retracted"}
    response = desk.post(approve_url(aid, batch.id), {"reason": "verified"}, headers=HTMX)
    assert response.status_code == 409
    assert engine.search(agent_id=aid, query="alice claim", limit=50, touch=False) == []


def test_undo_of_a_pending_batch_says_there_is_nothing_to_undo(desk, agent, batch):
    response = desk.post(undo_url(agent.agent_id, batch.id), headers=HTMX)
    assert response.status_code == 409
    assert "there is no decision to undo" in card(response.content.decode(), batch.id)


# --- filters ---------------------------------------------------------------------------------------------------


def test_filters_by_origin_class_subject_and_expiry_live_in_the_url(desk, agent):
    aid = agent.agent_id
    spam = make_burst(aid, "acme-pricing", origin="channel:spam")
    tool = make_burst(aid, "acme-office", origin="tool_echo:crawler")
    old = make_burst(aid, "globex", origin="channel:other", start=timezone.now() - timedelta(hours=20))
    base = url(aid)
    assert card_ids(desk.get(base).content.decode()) == [old.id, spam.id, tool.id]
    assert card_ids(desk.get(base + "?origin_class=channel").content.decode()) == [old.id, spam.id]
    assert card_ids(desk.get(base + "?q=ACME").content.decode()) == [spam.id, tool.id]
    assert card_ids(desk.get(base + "?expiring=6").content.decode()) == [old.id]
    assert card_ids(desk.get(base + "?q=acme&origin_class=tool_echo").content.decode()) == [tool.id]
    html = desk.get(base + "?origin_class=channel&q=acme&expiring=24").content.decode()
    assert '<option value="channel" selected>channel</option>' in html
    assert 'name="q" value="acme"' in html and '<option value="24" selected>24 h</option>' in html
    # the bulk buttons carry the same filter
    assert (
        f'href="{bulk_url(aid)}?origin_class=channel&amp;q=acme&amp;expiring=24&amp;decision=reject"' in html
    )
    for bad in ("?expiring=0", "?expiring=x", "?expiring=100000", "?origin_class=" + "c" * 100):
        response = desk.get(base + bad)
        assert response.status_code == 200 and len(card_ids(response.content.decode())) == 3


# --- bulk ------------------------------------------------------------------------------------------------------


def bursts(agent_id: str, n: int, *, origin: str = "channel:spam", first: int = 0) -> list[int]:
    return [make_burst(agent_id, f"subject-{k:02d}", origin=origin).id for k in range(first, first + n)]


def previewed(desk, agent_id: str, query: str) -> dict[str, str]:
    """What the preview's form carries to its POST: the count and the exact batch ids the reviewer saw."""
    html = desk.get(bulk_url(agent_id) + "?" + query, headers=HTMX).content.decode()
    form = {"expected": re.search(r'name="expected" value="(\d+)"', html).group(1)}
    if ids := re.search(r'name="ids" value="([\d,]*)"', html):
        form["ids"] = ids.group(1)
    return form


def test_bulk_preview_shows_the_count_a_sample_and_who_holds_what(desk, agent, ria):
    aid = agent.agent_id
    ids = bursts(aid, 4)
    mine = make_burst(aid, "kept", origin="user_direct:web")
    engine.quarantine_claim(request_id=ids[2], actor="user:ria")
    response = desk.get(bulk_url(aid) + "?origin_class=channel&decision=reject", headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card bulk-panel"')  # the partial
    assert (
        'data-count="3"' in html
        and '<strong class="bulk-n">3</strong> pending batches would be rejected' in html
    )
    assert f'#{ids[2]} by <span class="mono">user:ria</span>' in html
    sample = [int(i) for i in re.findall(r'<li data-batch="(\d+)">', html)]
    assert sample == [ids[0], ids[1], ids[3]] and mine.id not in sample
    assert 'name="expected" value="3"' in html and 'name="confirm"' not in html  # under the threshold
    assert f'name="ids" value="{ids[0]},{ids[1]},{ids[3]}"' in html  # exactly what the POST may decide
    assert 'name="origin_class" value="channel"' in html
    full = desk.get(bulk_url(aid) + "?origin_class=channel&decision=reject")
    assert "<html" in full.content.decode() and "Bulk decision" in full.content.decode()


def test_bulk_reject_records_one_audit_entry_per_batch_and_leaves_claims_alone(desk, agent):
    aid = agent.agent_id
    ids = bursts(aid, 4)
    engine.quarantine_claim(request_id=ids[1], actor="user:ria")
    post = {
        "decision": "reject",
        "reason": "poisoning",
        "note": "bot farm",
        "origin_class": "channel",
        **previewed(desk, aid, "origin_class=channel&decision=reject"),
    }
    assert post["expected"] == "3"
    response = desk.post(bulk_url(aid), post, headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Rejected 3 batches. 1 held by another reviewer left alone." in html
    trigger = json.loads(response["HX-Trigger"])
    assert trigger["memdesk:toast"]["text"] == "Rejected 3 batches. 1 held by another reviewer left alone."
    assert "memdesk:desk-changed" in trigger
    assert re.search(r'<span id="quarantine-count"[^>]*hx-swap-oob="true" data-count="1"', html)
    assert {i: status_of(i) for i in ids} == {
        ids[0]: "denied",
        ids[1]: "pending",
        ids[2]: "denied",
        ids[3]: "denied",
    }
    events = AuditEvent.objects.filter(action="quarantine_denied")
    assert sorted(e.details["request_id"] for e in events) == [ids[0], ids[2], ids[3]]
    assert {e.reason for e in events} == {"poisoning: bot farm"} and {e.actor for e in events} == {"user:rex"}


def test_bulk_above_the_threshold_needs_the_count_typed(desk, agent):
    aid = agent.agent_id
    ids = bursts(aid, 11)
    html = desk.get(bulk_url(aid) + "?decision=approve", headers=HTMX).content.decode()
    assert 'name="confirm"' in html and "Type <strong>11</strong> to confirm" in html
    assert len(re.findall(r'<li data-batch="\d+">', html)) == 5 and "…and 11 in all." in html
    post = {"decision": "approve", "reason": "legitimate_update", **previewed(desk, aid, "decision=approve")}
    for confirm in ("", "10", "eleven"):
        response = desk.post(bulk_url(aid), {**post, "confirm": confirm}, headers=HTMX)
        assert response.status_code == 422
        assert "Type the number of batches (11) to confirm" in response.content.decode()
    assert {status_of(i) for i in ids} == {"pending"}
    response = desk.post(bulk_url(aid), {**post, "confirm": "11"}, headers=HTMX)
    assert response.status_code == 200 and "Approved 11 batches." in response.content.decode()
    assert {status_of(i) for i in ids} == {"approved"}
    assert AuditEvent.objects.filter(action="quarantine_approved").count() == 11


def test_bulk_approve_leaves_high_impact_batches_for_one_by_one_review(desk, agent):
    aid = agent.agent_id
    engine.store_temporal(
        agent_id=aid,
        content="Alice lives in Lisbon",
        subject="alice",
        predicate="lives_in",
        object="Lisbon",
        valid_from=timezone.now() - timedelta(days=30),
        origin="user_direct",
    )
    risky = make_burst(
        aid,
        "alice",
        facts=[("lives_in", "Atlantis", "Alice lives in Atlantis")]
        + [(f"note_{k}", f"n{k}", f"Alice note {k}") for k in range(4)],
    )
    plain = bursts(aid, 2)
    html = desk.get(bulk_url(aid) + "?decision=approve", headers=HTMX).content.decode()
    assert 'data-count="2"' in html and f"#{risky.id}</a> supersedes 1" in html
    # a rejection is never high impact: it changes nothing agents read
    assert 'data-count="3"' in desk.get(bulk_url(aid) + "?decision=reject", headers=HTMX).content.decode()
    post = {"decision": "approve", "reason": "verified", **previewed(desk, aid, "decision=approve")}
    response = desk.post(bulk_url(aid), post, headers=HTMX)
    assert response.status_code == 200
    assert "Approved 2 batches. 1 that would supersede current facts left for one-by-one review." in (
        response.content.decode()
    )
    assert [status_of(i) for i in plain] == ["approved", "approved"] and status_of(risky.id) == "pending"
    now = timezone.now()
    assert engine.get_at(agent_id=aid, subject="alice", predicate="lives_in", at=now).object == "Lisbon"


def test_bulk_refuses_when_the_matching_set_changed_since_the_preview(desk, agent):
    aid = agent.agent_id
    ids = bursts(aid, 2)
    post = {"decision": "reject", "reason": "wrong", **previewed(desk, aid, "decision=reject")}
    late = bursts(aid, 1, origin="channel:late", first=2)  # arrived after the reviewer looked at 2
    response = desk.post(bulk_url(aid), post, headers=HTMX)
    assert response.status_code == 409
    html = response.content.decode()
    assert "changed (3 now, 2 when you looked)" in html and 'name="expected" value="3"' in html
    assert {status_of(i) for i in ids + late} == {"pending"}


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_bulk_refuses_a_different_set_of_the_same_size_and_decides_only_what_was_previewed(
    desk, agent, decision
):
    aid = agent.agent_id
    seen = bursts(aid, 2)
    post = {
        "decision": decision,
        "reason": "verified" if decision == "approve" else "wrong",
        **previewed(desk, aid, f"decision={decision}"),
    }
    assert post["expected"] == "2"
    # meanwhile: one of the two is rejected on its own and a new burst arrives, so the count is 2 again
    engine.quarantine_reject(seen[0], actor="user:ria", reason="wrong")
    unseen = bursts(aid, 1, origin="channel:late", first=2)
    response = desk.post(bulk_url(aid), post, headers=HTMX)
    assert response.status_code == 409
    html = response.content.decode()
    assert "still 2, but 1 new and 1 no longer matching. Nothing was decided" in html
    assert {i: status_of(i) for i in seen + unseen} == {
        seen[0]: "denied",
        seen[1]: "pending",
        unseen[0]: "pending",
    }
    assert not AuditEvent.objects.filter(actor="user:rex", action__startswith="quarantine_").exists()
    # the refusal shows the new set, and confirming that one decides exactly it
    assert f'name="ids" value="{seen[1]},{unseen[0]}"' in html and 'name="expected" value="2"' in html
    response = desk.post(bulk_url(aid), {**post, "ids": f"{seen[1]},{unseen[0]}"}, headers=HTMX)
    assert response.status_code == 200
    done = "approved" if decision == "approve" else "denied"
    assert {i: status_of(i) for i in seen + unseen} == {seen[0]: "denied", seen[1]: done, unseen[0]: done}


def test_bulk_without_the_previewed_ids_or_with_forged_ones_decides_nothing(desk, agent):
    aid = agent.agent_id
    ids = bursts(aid, 2)
    base = {"decision": "reject", "reason": "wrong", "expected": 2}
    for ids_value in (None, "", f"{ids[0]}", f"{ids[0]},{ids[0] + 100}", f"{ids[1]},{ids[0]},{ids[0] + 100}"):
        post = base if ids_value is None else {**base, "ids": ids_value}
        assert desk.post(bulk_url(aid), post, headers=HTMX).status_code == 409
    for bad in ("x", "1,,2", "-1", "1;2"):
        assert desk.post(bulk_url(aid), {**base, "ids": bad}, headers=HTMX).status_code == 422
    assert {status_of(i) for i in ids} == {"pending"}
    # the order and duplicates do not matter: it is the set that must match
    response = desk.post(bulk_url(aid), {**base, "ids": f"{ids[1]},{ids[0]},{ids[1]}"}, headers=HTMX)
    assert response.status_code == 200 and {status_of(i) for i in ids} == {"denied"}


@pytest.mark.parametrize("decision", [None, "", "delete", "Approve", "approve "])
def test_bulk_post_without_a_known_decision_is_a_form_error_not_a_reject(desk, agent, decision):
    aid = agent.agent_id
    ids = bursts(aid, 2)
    post = {"reason": "wrong", **previewed(desk, aid, "decision=reject"), "q": "subject"}
    if decision is not None:
        post["decision"] = decision
    for headers in (HTMX, {}):
        response = desk.post(bulk_url(aid), post, headers=headers)
        assert response.status_code == 422
        html = response.content.decode()
        assert "did not say which, so nothing was decided" in html
        assert 'name="decision"' not in html  # no form that would decide anything
        assert f'href="{bulk_url(aid)}?q=subject&amp;decision=approve"' in html
        assert f'href="{bulk_url(aid)}?q=subject&amp;decision=reject"' in html
    assert {status_of(i) for i in ids} == {"pending"}
    assert not AuditEvent.objects.filter(action="quarantine_denied").exists()


def test_bulk_needs_a_reason_and_a_plain_post_is_redirected_to_the_desk(desk, agent):
    aid = agent.agent_id
    ids = bursts(aid, 2)
    response = desk.post(bulk_url(aid), {"decision": "reject", "expected": 2}, headers=HTMX)
    assert response.status_code == 422 and "A reason is required." in response.content.decode()
    response = desk.post(
        bulk_url(aid),
        {
            "decision": "reject",
            "reason": "wrong",
            "q": "subject",
            **previewed(desk, aid, "q=subject&decision=reject"),
        },
    )
    assert response.status_code == 302 and response["Location"] == url(aid) + "?q=subject"
    assert {status_of(i) for i in ids} == {"denied"}
    page = desk.get(response["Location"]).content.decode()
    assert "Rejected 2 batches." in page  # the message, on the desk


# --- query counts ----------------------------------------------------------------------------------------------


def test_claims_and_undo_cost_no_extra_queries_on_the_desk(desk, agent, django_assert_num_queries):
    aid = agent.agent_id
    ids = bursts(aid, 3)
    engine.quarantine_claim(request_id=ids[0], actor="user:ria")
    engine.quarantine_claim(request_id=ids[1], actor="user:rex")
    engine.quarantine_reject(ids[2], actor="user:rex", reason="wrong")
    with django_assert_num_queries(9):
        html = desk.get(url(aid) + "?status=all").content.decode()
    assert "claim-holder" in card(html, ids[0]) and "Claimed by you" in card(html, ids[1])
    # the compact list renders the open (first) card's body only; a closed line still says it may be undone
    assert "data-undo-until" in card(html, ids[2]) and "undo-form" not in card(html, ids[2])
    opened = desk.get(
        url(aid), {"status": "all", "batch": ids[2], "card": "1"}, headers=HTMX
    ).content.decode()
    assert "undo-form" in card(opened, ids[2])


def test_bulk_preview_query_count_does_not_grow_with_batches(desk, agent, django_assert_num_queries):
    aid = agent.agent_id
    bursts(aid, 2)
    # session, user, agent, membership, the matching batches, the pending count; an approval also reads the
    # batches' facts and the believed facts they would supersede (for the high-impact check)
    with django_assert_num_queries(6):
        desk.get(bulk_url(aid) + "?decision=reject", headers=HTMX)
    with django_assert_num_queries(8):
        desk.get(bulk_url(aid) + "?decision=approve", headers=HTMX)
    bursts(aid, 6, origin="channel:more")
    with django_assert_num_queries(6):
        html = desk.get(bulk_url(aid) + "?decision=reject", headers=HTMX).content.decode()
    assert 'data-count="8"' in html
    with django_assert_num_queries(8):
        html = desk.get(bulk_url(aid) + "?decision=approve", headers=HTMX).content.decode()
    assert 'data-count="8"' in html
