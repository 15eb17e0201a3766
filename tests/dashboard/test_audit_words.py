"""The audit log in people's words (issue 19 item 14): "Rejected", not ``quarantine_denied``, every id a link,
and what a decision changed, before and after."""

from __future__ import annotations

import pytest

from memory import engine
from tests.conftest import login, make_burst
from tests.dashboard.test_audit import ids_of, row, url

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("guard_defaults")]


def test_a_decision_reads_in_words_with_its_ids_linked_and_before_after(client, reviewer, agent):
    batch = make_burst(agent.agent_id, "mallory")
    engine.quarantine_approve(
        batch.id, actor="user:rex", reason="verified", memory_ids=batch.payload["ids"][:3]
    )
    html = login(client, reviewer).get(url(agent.agent_id)).content.decode()
    (approved,) = ids_of("quarantine_approved")
    r = row(html, approved)
    assert 'title="quarantine_approved">Approved</span>' in r
    assert '<span class="before">pending</span> → <strong class="after">3 approved, 2 rejected</strong>' in r
    for memory_id in batch.payload["ids"]:
        assert f'href="/agents/{agent.agent_id}/memories/{memory_id}/"' in r
    (held,) = ids_of("knowledge_quarantined")
    assert 'title="knowledge_quarantined">Held for review</span>' in row(html, held)


def test_a_revert_and_a_take_over_say_what_they_changed(client, reviewer, agent):
    batch = make_burst(agent.agent_id, "mallory")
    engine.quarantine_claim(request_id=batch.id, actor="user:ria")
    engine.quarantine_claim(request_id=batch.id, actor="user:ada", take_over=True)
    engine.quarantine_reject(batch.id, actor="user:ada", reason="wrong")
    engine.quarantine_revert(request_id=batch.id, actor="user:rex", reason="mistake")
    html = login(client, reviewer).get(url(agent.agent_id)).content.decode()
    (taken,) = ids_of("quarantine_taken_over")
    assert 'claimed by user:ria</span> → <strong class="after">claimed by user:ada<' in row(html, taken)
    (reverted,) = ids_of("quarantine_reverted")
    r = row(html, reverted)
    assert ">Reverted a decision</span>" in r
    assert '<span class="before">rejected</span> → <strong class="after">approved</strong>' in r


def test_token_ids_link_to_the_tokens_page_only_for_admins(client, reviewer, team_admin, agent):
    token, _ = engine.token_create(
        agent_id=agent.agent_id, scopes=["memory:read"], name="t", actor="user:ada"
    )
    (created,) = ids_of("token_create")
    r = row(login(client, reviewer).get(url(agent.agent_id)).content.decode(), created)
    assert f"token #{token.id}" in r and "/tokens/" not in r
    r = row(login(client, team_admin).get(url(agent.agent_id)).content.decode(), created)
    assert f'/tokens/#token-{token.id}" class="token-link">#{token.id}</a>' in r
