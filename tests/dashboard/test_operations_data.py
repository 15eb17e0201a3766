"""The operations page's data section (SPEC D8, M5): origin purge with a preview, erasure with a typed
confirmation, reassignment to another agent the admin administers. Admins only; CSRF; stable codes."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from memory import engine
from memory.models import Agent, AuditEvent, Memory
from tests.conftest import dt, login, make_user

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


def _url(name: str, agent_id: str) -> str:
    return reverse(f"dashboard:operations_{name}", args=[agent_id])


@pytest.fixture
def poisoned(agent):
    aid = agent.agent_id
    clean = engine.store_temporal(
        agent_id=aid,
        content="Erin works at Acme",
        subject="erin",
        predicate="works_at",
        object="Acme",
        valid_from=dt("2020-01-01"),
        origin="user_direct",
    ).id
    poison = engine.store_temporal(
        agent_id=aid,
        content="Erin works at EvilCorp",
        subject="erin",
        predicate="works_at",
        object="EvilCorp",
        valid_from=timezone.now() - timedelta(days=1),
        origin="channel:x",
    ).id
    return {"clean": clean, "poison": poison}


def test_admin_sees_the_section_and_a_reviewer_does_not(client, team_admin, reviewer, agent):
    page = reverse("dashboard:operations", args=[agent.agent_id])
    login(client, team_admin)
    html = client.get(page).content.decode()
    assert 'id="data-ops"' in html and 'id="purge-form"' in html and 'id="erase-form"' in html
    login(client, reviewer)
    html = client.get(page).content.decode()
    assert 'id="data-ops"' not in html


def test_purge_preview_then_confirm(client, team_admin, agent, poisoned):
    login(client, team_admin)
    preview = client.post(
        _url("purge", agent.agent_id), {"origin": "channel:x", "step": "preview"}, headers=HTMX
    )
    html = preview.content.decode()
    assert preview.status_code == 200
    assert (
        f'data-change="retracted"><td>retracted</td><td><a href="/agents/{agent.agent_id}/memories/{poisoned["poison"]}/"'
        in html
    )
    assert 'data-change="restored"' in html and poisoned["clean"] in html and "EvilCorp" in html
    assert not AuditEvent.objects.filter(action="origin_purge").exists()  # a preview changes nothing

    wrong = client.post(
        _url("purge", agent.agent_id),
        {"origin": "channel:x", "step": "confirm", "confirm": "channel"},
        headers=HTMX,
    )
    assert wrong.status_code == 422 and 'data-code="confirmation_mismatch"' in wrong.content.decode()
    assert not AuditEvent.objects.filter(action="origin_purge").exists()

    done = client.post(
        _url("purge", agent.agent_id),
        {"origin": "channel:x", "step": "confirm", "confirm": "channel:x"},
        headers=HTMX,
    )
    assert done.status_code == 200 and "1 retracted, 1 restored" in done.content.decode()
    assert "memdesk:toast" in done["HX-Trigger"]
    now = timezone.now()
    assert (
        engine.get_at(agent_id=agent.agent_id, subject="erin", predicate="works_at", at=now).id
        == poisoned["clean"]
    )


def test_erase_needs_the_typed_confirmation_and_leaves_one_audit_event(client, team_admin, agent, poisoned):
    login(client, team_admin)
    url = _url("erase", agent.agent_id)
    preview = client.post(url, {"subject": "erin", "reason": "request 42", "step": "preview"}, headers=HTMX)
    html = preview.content.decode()
    assert preview.status_code == 200 and "Would delete <strong>2</strong> rows" in html
    assert 'Type <span class="mono">erase erin</span> to confirm' in html
    assert Memory.objects.filter(subject="erin").count() == 2

    wrong = client.post(
        url, {"subject": "erin", "reason": "request 42", "step": "confirm", "confirm": "erin"}, headers=HTMX
    )
    assert wrong.status_code == 422 and 'data-code="confirmation_mismatch"' in wrong.content.decode()
    assert Memory.objects.filter(subject="erin").count() == 2

    done = client.post(
        url,
        {"subject": "erin", "reason": "request 42", "step": "confirm", "confirm": "erase erin"},
        headers=HTMX,
    )
    assert done.status_code == 200 and "Erased 2 rows" in done.content.decode()
    assert not Memory.objects.filter(subject="erin").exists()
    event = AuditEvent.objects.get(action="erase")
    assert event.actor == f"user:{team_admin.username}" and event.details["counts"]["memories"] == 2


def test_erase_without_subject_or_origin_is_a_form_error(client, team_admin, agent):
    login(client, team_admin)
    response = client.post(_url("erase", agent.agent_id), {"reason": "x", "step": "preview"}, headers=HTMX)
    assert response.status_code == 422 and "Give a subject, an origin or both." in response.content.decode()


def test_reassign_to_an_agent_the_admin_administers(client, team_admin, agent, team, other_agent, poisoned):
    target = Agent.objects.create(agent_id="second-bot", team=team)
    login(client, team_admin)
    url = _url("reassign", agent.agent_id)
    page = client.get(reverse("dashboard:operations", args=[agent.agent_id])).content.decode()
    assert 'value="second-bot"' in page and "other-bot" not in page
    preview = client.post(url, {"subject": "erin", "to_agent": "second-bot", "step": "preview"}, headers=HTMX)
    assert "Would move <strong>2</strong> rows (1 key)" in preview.content.decode()
    hidden = client.post(url, {"subject": "erin", "to_agent": "other-bot", "step": "preview"}, headers=HTMX)
    missing = client.post(
        url, {"subject": "erin", "to_agent": "no-such-bot", "step": "preview"}, headers=HTMX
    )
    assert hidden.status_code == missing.status_code == 404

    def same(response, name: str) -> str:
        return re.sub(r'value="[A-Za-z0-9]{64}"', "", response.content.decode().replace(name, "X"))

    assert same(hidden, "other-bot") == same(missing, "no-such-bot")
    done = client.post(
        url,
        {"subject": "erin", "to_agent": "second-bot", "step": "confirm", "confirm": "second-bot"},
        headers=HTMX,
    )
    assert done.status_code == 200 and "Moved 2 rows (1 keys) to second-bot" in done.content.decode()
    assert Memory.objects.filter(subject="erin", agent_id=target.agent_id).count() == 2


@pytest.mark.parametrize("name", ["purge", "erase", "reassign"])
def test_only_admins_of_the_team_may_post(client, name, curator, outsider, agent, poisoned):
    data = {"origin": "channel:x", "subject": "erin", "reason": "r", "to_agent": "x", "step": "preview"}
    login(client, curator)
    assert client.post(_url(name, agent.agent_id), data).status_code == 403
    login(client, outsider)
    assert client.post(_url(name, agent.agent_id), data).status_code == 404
    assert Memory.objects.filter(subject="erin").count() == 2


@pytest.mark.parametrize("name", ["purge", "erase", "reassign"])
def test_posts_need_a_csrf_token(csrf_client, name, team_admin, agent, poisoned):
    login(csrf_client, team_admin)
    data = {
        "origin": "channel:x",
        "subject": "erin",
        "reason": "r",
        "step": "confirm",
        "confirm": "erase erin",
    }
    assert csrf_client.post(_url(name, agent.agent_id), data).status_code == 403
    assert Memory.objects.filter(subject="erin").count() == 2


def test_a_plain_post_gets_the_whole_page(client, team_admin, agent, poisoned):
    login(client, team_admin)
    response = client.post(_url("purge", agent.agent_id), {"origin": "channel:x", "step": "preview"})
    html = response.content.decode()
    assert response.status_code == 200 and "<html" in html and 'id="purge-preview"' in html


def test_superuser_may_move_rows_between_unassigned_agents(client, agent):
    admin = make_user("root", is_superuser=True, is_staff=True)
    Agent.objects.create(agent_id="loose-a")
    Agent.objects.create(agent_id="loose-bot")
    login(client, admin)
    html = client.get(reverse("dashboard:operations", args=["loose-a"])).content.decode()
    assert "support-bot" not in html
    assert 'value="loose-bot"' in html


def test_the_page_says_which_guard_and_injection_settings_are_in_effect(
    client, reviewer, agent, tmp_path, monkeypatch
):
    from memory import config

    toml = tmp_path / "memdesk.toml"
    toml.write_text(
        "[knowledge_guard]\nmax_per_subject = 7\nwindow_secs = 600\n[injection]\nblock_threshold = 0.93\n"
    )
    monkeypatch.setenv("MEMDESK_CONFIG", str(toml))
    config._cache.clear()
    login(client, reviewer)
    html = client.get(reverse("dashboard:operations", args=[agent.agent_id])).content.decode()
    config._cache.clear()
    assert "within 600 s" in html and "the 7th trips it" in html
    assert "blocks at probability 0.93, holds for review at the model" in html
