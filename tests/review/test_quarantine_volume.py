"""The desk at volume (issue 19 item 1–2): one line per batch (origin, subject, facts, would-supersede count,
TTL) opening a detail pane, sorting in the URL (expiry, size, impact, origin), per-fact decisions inside a
batch, and approvals that need no reason unless they would supersede current facts."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from memory import engine
from memory.models import ApprovalRequest, AuditEvent, FactWrite, Memory
from tests.conftest import login, make_burst
from tests.review.test_quarantine import HTMX, SPAM, approve_url, card, card_ids, status_of, url
from tests.review.test_quarantine import world as world  # a batch about alice that supersedes Lisbon

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("guard_defaults")]


@pytest.fixture
def desk(client, reviewer):
    return login(client, reviewer)


def line(html: str, request_id: int) -> str:
    match = re.search(r'<header class="queue-head queue-line".*?</header>', card(html, request_id), re.S)
    assert match, f"no line for batch {request_id}"
    return match.group(0)


def facts(n: int, subject: str) -> list[tuple[str, str, str]]:
    return [(f"claim_{k}", f"v{k}", f"{subject} claim {k}") for k in range(n)]


# --- the compact list --------------------------------------------------------------------------------------


def test_each_batch_is_one_line_and_only_the_first_opens_its_detail(desk, agent, world):
    other = make_burst(agent.agent_id, "bob", origin="channel:other", facts=facts(7, "bob"))
    html = desk.get(url(agent.agent_id)).content.decode()
    first = line(html, world["batch"].id)
    assert ">alice<" in first and f">{SPAM}<" in first and "5 facts" in first
    assert 'data-supersede="1"' in first and "supersedes 1" in first and 'role="timer"' in first
    second = line(html, other.id)
    assert "7 facts" in second and "supersedes none" in second
    # the line links to the batch alone (the pane without JavaScript); only the first card starts open
    assert f'href="{url(agent.agent_id)}?status=all&amp;batch={other.id}"' in second
    assert re.search(rf'<article id="batch-{world["batch"].id}" class="card queue-card is-open', html)
    assert re.search(rf'<article id="batch-{other.id}" class="card queue-card (?!is-open)', html)
    assert 'id="desk" class="compact"' in html


@pytest.mark.parametrize(
    ("sort", "expected"),
    [("expiry", ["old", "mid", "new"]), ("size", ["new", "mid", "old"]), ("origin", ["mid", "new", "old"])],
)
def test_sorting_lives_in_the_url(desk, agent, sort, expected):
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    made = {
        "old": make_burst(agent.agent_id, "old", origin="channel:z", start=now - timedelta(hours=9)),
        "mid": make_burst(
            agent.agent_id, "mid", origin="channel:a", facts=facts(6, "mid"), start=now - timedelta(hours=5)
        ),
        "new": make_burst(agent.agent_id, "new", origin="channel:m", facts=facts(8, "new")),
    }
    html = desk.get(url(agent.agent_id) + f"?sort={sort}").content.decode()
    assert card_ids(html) == [made[k].id for k in expected]
    assert f'<option value="{sort}" selected>' in html


def test_sorting_by_impact_puts_what_supersedes_most_first(desk, agent, world):
    big = make_burst(agent.agent_id, "bob", origin="channel:other", facts=facts(9, "bob"))
    html = desk.get(url(agent.agent_id) + "?sort=impact").content.decode()
    assert card_ids(html) == [world["batch"].id, big.id]  # supersedes 1 beats 9 new facts
    assert card_ids(desk.get(url(agent.agent_id) + "?sort=size").content.decode()) == [
        big.id,
        world["batch"].id,
    ]
    # an unknown sort falls back to expiry order without an error
    assert desk.get(url(agent.agent_id) + "?sort=%3Cx%3E").status_code == 200


def test_query_count_stays_constant_when_sorting_by_impact(desk, agent, world, django_assert_num_queries):
    make_burst(agent.agent_id, "bob", origin="channel:other")
    with django_assert_num_queries(10):
        desk.get(url(agent.agent_id) + "?sort=impact")
    for i in range(4):
        make_burst(agent.agent_id, f"carol-{i}", origin=f"channel:c{i}")
    with django_assert_num_queries(10):
        response = desk.get(url(agent.agent_id) + "?sort=impact")
    assert len(card_ids(response.content.decode())) == 6


# --- per-fact decisions ------------------------------------------------------------------------------------


def test_each_fact_has_a_box_tied_to_the_approve_form(desk, agent, world):
    c = card(desk.get(url(agent.agent_id)).content.decode(), world["batch"].id)
    boxes = re.findall(
        r'<input type="checkbox" class="fact-pick" name="facts" value="([^"]+)" form="([^"]+)" checked', c
    )
    assert sorted(v for v, _ in boxes) == sorted(world["ids"])
    assert {f for _, f in boxes} == {f"approve-form-{world['batch'].id}"}
    assert f'id="approve-form-{world["batch"].id}"' in c and 'name="per_fact" value="1"' in c


def test_approving_some_facts_releases_those_and_rejects_the_rest(desk, agent, world):
    batch, rows = world["batch"], world["rows"]
    keep = [rows["manager"], rows["salary"], rows["password_hint"], rows["works_at"]]
    response = desk.post(
        approve_url(agent.agent_id, batch.id),
        {"per_fact": "1", "facts": keep, "reason": "verified"},
        headers=HTMX,
    )
    assert response.status_code == 200
    assert "Approved 4 of 5 facts about “alice”: released to the agent; the other 1 rejected." in (
        response.content.decode()
    )
    assert status_of(batch.id) == "approved"
    states = dict(FactWrite.objects.filter(memory_id__in=world["ids"]).values_list("memory_id", "state"))
    assert states[rows["lives_in"]] == "retracted" and {states[i] for i in keep} == {"believed"}
    # Lisbon is still what the agent believes: the superseding fact was the one left out
    now = engine.get_at(agent_id=agent.agent_id, subject="alice", predicate="lives_in", at=timezone.now())
    assert now is not None and now.object == "Lisbon"
    (event,) = AuditEvent.objects.filter(action="quarantine_approved")
    assert event.details["rejected_ids"] == [rows["lives_in"]]


def test_leaving_every_box_empty_is_refused_and_nothing_is_written(desk, agent, world):
    batch = world["batch"]
    response = desk.post(
        approve_url(agent.agent_id, batch.id), {"per_fact": "1", "reason": "verified"}, headers=HTMX
    )
    assert response.status_code == 422
    assert "approve at least one fact of the batch, or reject the whole batch" in response.content.decode()
    assert status_of(batch.id) == "pending"
    assert (
        not AuditEvent.objects.filter(action__startswith="quarantine_")
        .exclude(action="knowledge_quarantined")
        .exists()
    )


def test_a_fact_of_another_batch_is_refused(desk, agent, world):
    other = make_burst(agent.agent_id, "bob", origin="channel:other")
    response = desk.post(
        approve_url(agent.agent_id, world["batch"].id),
        {"per_fact": "1", "facts": [other.payload["ids"][0]], "reason": "verified"},
        headers=HTMX,
    )
    assert response.status_code == 422 and "not in this batch" in response.content.decode()
    assert status_of(world["batch"].id) == "pending" and status_of(other.id) == "pending"


# --- one key per decision: no reason unless it supersedes -----------------------------------------------


def test_an_approval_that_supersedes_nothing_needs_no_reason(desk, agent):
    batch = make_burst(agent.agent_id, "bob", origin="channel:other")
    c = card(desk.get(url(agent.agent_id)).content.decode(), batch.id)
    assert (
        "(optional: it supersedes nothing)" in c
        and f'id="approve-form-{batch.id}" data-swap-errors data-quick' in c
    )
    response = desk.post(approve_url(agent.agent_id, batch.id), {}, headers=HTMX)
    assert response.status_code == 200
    batch.refresh_from_db()
    assert batch.status == "approved" and batch.decision_reason == "verified"


def test_an_approval_that_supersedes_needs_a_reason_unless_that_fact_is_left_out(desk, agent, world):
    batch, rows = world["batch"], world["rows"]
    c = card(desk.get(url(agent.agent_id)).content.decode(), batch.id)
    assert "data-quick" not in c and '<select name="reason" id="approve-reason-' in c
    response = desk.post(
        approve_url(agent.agent_id, batch.id), {"per_fact": "1", "facts": world["ids"]}, headers=HTMX
    )
    assert response.status_code == 422 and status_of(batch.id) == "pending"
    without = [i for i in world["ids"] if i != rows["lives_in"]]
    response = desk.post(
        approve_url(agent.agent_id, batch.id), {"per_fact": "1", "facts": without}, headers=HTMX
    )
    assert response.status_code == 200
    assert ApprovalRequest.objects.get(id=batch.id).decision_reason == "verified"
    assert Memory.objects.get(id=rows["lives_in"]).invalidated_by_event == "quarantine_reject"


# --- a filter that hides pending batches; claims held by someone else (item 4) ----------------------------


def test_an_empty_filtered_desk_says_what_the_filter_hides(desk, agent, world):
    html = desk.get(url(agent.agent_id) + "?q=nobody").content.decode()
    assert "Nothing in quarantine" not in html and "No batch matches these filters." in html
    assert "1 pending batch outside this filter: the filter hides it." in html
    assert f'<a href="{url(agent.agent_id)}" id="desk-clear-filter">' in html
    # the fragment a bulk decision refreshes says the same
    fragment = desk.get(url(agent.agent_id) + "?expiring=1", headers=HTMX).content.decode()
    assert "1 pending batch outside this filter" in fragment
    # with nothing pending anywhere, no such line
    engine.quarantine_reject(world["batch"].id, actor="user:cora", reason="wrong")
    html = desk.get(url(agent.agent_id) + "?q=nobody").content.decode()
    assert "outside this filter" not in html


def claim_as(user_actor: str, batch: ApprovalRequest) -> None:
    engine.quarantine_claim(request_id=batch.id, actor=user_actor)


def test_a_batch_held_by_someone_else_has_truly_disabled_buttons(desk, agent, world):
    claim_as("user:ria", world["batch"])
    c = card(desk.get(url(agent.agent_id)).content.decode(), world["batch"].id)
    assert "decide-form" not in c and "<form" not in c  # nothing that submits
    assert c.count(" disabled aria-describedby") == 2
    assert re.search(r"Held by <span class=\"mono\">user:ria</span> until \d\d:\d\d:\d\d UTC", c)
    assert "takeover-form" not in c  # reviewers cannot take over


def test_an_admin_takes_a_claim_over_and_it_is_audited(client, team, agent, world):
    from memory.models import Role
    from tests.conftest import make_user

    claim_as("user:ria", world["batch"])
    login(client, make_user("ada", team, Role.ADMIN))
    aid, batch = agent.agent_id, world["batch"]
    c = card(client.get(url(agent.agent_id)).content.decode(), batch.id)
    assert "takeover-form" in c and "Take over from user:ria" in c
    claim = f"/agents/{aid}/quarantine/{batch.id}/claim/"
    response = client.post(claim, {"take_over": "1"}, headers=HTMX)
    assert response.status_code == 200
    assert "Took batch #" in response["HX-Trigger"] and "over from user:ria" in response["HX-Trigger"]
    batch.refresh_from_db()
    assert batch.claimed_by == "user:ada"
    (event,) = AuditEvent.objects.filter(action="quarantine_taken_over")
    assert event.actor == "user:ada" and event.details["taken_from"] == "user:ria"
    # now the admin's, the decision goes through
    assert client.post(approve_url(aid, batch.id), {"reason": "verified"}, headers=HTMX).status_code == 200


def test_a_reviewer_cannot_take_over(desk, agent, world):
    claim_as("user:ria", world["batch"])
    claim = f"/agents/{agent.agent_id}/quarantine/{world['batch'].id}/claim/"
    assert desk.post(claim, {"take_over": "1"}, headers=HTMX).status_code == 403
    world["batch"].refresh_from_db()
    assert world["batch"].claimed_by == "user:ria"
    assert not AuditEvent.objects.filter(action="quarantine_taken_over").exists()


# --- who wrote it (item 5) -----------------------------------------------------------------------------------


def token_burst(agent, *, name: str = "crm sync") -> tuple[ApprovalRequest, int]:
    token, _ = engine.token_create(
        agent_id=agent.agent_id, scopes=["memory:write"], external=True, name=name, actor="user:ada"
    )
    batch = make_burst(agent.agent_id, "dora", origin=f"mcp_external:token-{token.id}")
    return batch, token.id


def test_a_token_origin_names_its_token_and_links_it_for_admins(client, team, agent):
    from memory.models import Role
    from tests.conftest import make_user

    batch, token_id = token_burst(agent)
    login(client, make_user("ada", team, Role.ADMIN))
    c = card(client.get(url(agent.agent_id)).content.decode(), batch.id)
    assert f'href="/agents/{agent.agent_id}/tokens/#token-{token_id}" class="token-link">“crm sync”</a>' in c
    assert (
        "(external)" in c
        and 'class="mono token-owner">user:ada<' in c
        and "last used <span class='muted'>never" in c
    )


def test_a_reviewer_sees_the_token_without_a_link_it_could_not_open(desk, agent):
    batch, _ = token_burst(agent, name="<b>bot</b>")
    c = card(desk.get(url(agent.agent_id)).content.decode(), batch.id)
    assert 'class="token-name">“&lt;b&gt;bot&lt;/b&gt;”<' in c and "token-link" not in c
    assert "/tokens/" not in c


def test_another_agents_token_is_never_shown(desk, agent, other_agent):
    other, _ = engine.token_create(
        agent_id=other_agent.agent_id, scopes=["memory:write"], name="theirs", actor="user:x"
    )
    batch = make_burst(agent.agent_id, "dora", origin=f"mcp_external:token-{other.id}")
    c = card(desk.get(url(agent.agent_id)).content.decode(), batch.id)
    assert "theirs" not in c and "(no such token any more)" in c


@pytest.mark.parametrize(
    ("reason", "words"),
    [
        (
            "burst: 6 facts about 'alice' from channel:spam within 3600 s (limit 5)",
            "6 facts about “alice” from channel:spam in 1 hour; the limit is 5, so a person decides.",
        ),
        (
            "burst: 9 plain memories from origin class mcp_external within 600 s (limit 8)",
            "9 plain memories from origin class mcp_external in 10 minutes; the limit is 8",
        ),
        (
            "low_trust_override: a write at trust 0.3 would supersede m_1 (user_direct, trust 1); the margin is 0.5",
            "A source trusted 0.3 would replace what user_direct (trusted 1) said",
        ),
        ("guard_unavailable", "could not count this write"),
        ("something new", "something new"),
    ],
)
def test_the_guard_reason_reads_as_a_sentence(reason, words):
    from review.templatetags.queue import guard_words

    assert words in guard_words(reason)


def test_query_count_stays_constant_with_token_origins(desk, agent, django_assert_num_queries):
    token_burst(agent)
    with django_assert_num_queries(11):  # the page's 9, plus the tokens and their creators
        desk.get(url(agent.agent_id))
    for i in range(3):
        token, _ = engine.token_create(
            agent_id=agent.agent_id, scopes=["memory:write"], name=f"t{i}", actor="user:ada"
        )
        make_burst(agent.agent_id, f"e{i}", origin=f"agent_derived:token-{token.id}")
    with django_assert_num_queries(11):
        response = desk.get(url(agent.agent_id))
    assert len(card_ids(response.content.decode())) == 4


# --- revert after the undo window (item 3) -----------------------------------------------------------------


def test_a_decided_batch_offers_a_revert_after_its_undo_and_it_is_a_new_decision(desk, agent, world):
    import time_machine

    batch = world["batch"]
    engine.quarantine_approve(batch.id, actor="user:cora", reason="verified")
    with time_machine.travel(timezone.now() + timezone.timedelta(seconds=engine.UNDO_SECS + 5), tick=False):
        c = card(desk.get(url(agent.agent_id) + f"?status=all&batch={batch.id}").content.decode(), batch.id)
        assert "revert-form" in c and "an approval&#x27;s facts are retracted" in c
        revert = f"/agents/{agent.agent_id}/quarantine/{batch.id}/revert/"
        assert desk.post(revert, {"reason": ""}, headers=HTMX).status_code == 422
        response = desk.post(revert, {"reason": "poisoning", "note": "bot farm"}, headers=HTMX)
    assert response.status_code == 200
    assert "Reverted batch #" in response.content.decode()
    batch.refresh_from_db()
    assert (batch.status, batch.decided_by, batch.decision_reason) == (
        "denied",
        "user:rex",
        "revert: poisoning: bot farm",
    )
    now = engine.get_at(agent_id=agent.agent_id, subject="alice", predicate="lives_in", at=timezone.now())
    assert now is not None and now.object == "Lisbon"
    assert AuditEvent.objects.filter(action="quarantine_reverted", actor="user:rex").count() == 1


def test_a_viewer_cannot_revert(client, viewer, agent, world):
    engine.quarantine_reject(world["batch"].id, actor="user:cora", reason="wrong")
    login(client, viewer)
    revert = f"/agents/{agent.agent_id}/quarantine/{world['batch'].id}/revert/"
    assert client.post(revert, {"reason": "mistake"}, headers=HTMX).status_code == 403
    assert status_of(world["batch"].id) == "denied"
