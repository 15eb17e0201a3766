"""The operations page (SPEC D8): dream runs with live progress and reports, run now / dry run (admins, POST with
CSRF, already_running shown), the gate, the dream mode (admins, audited), the schedule, the LLM endpoint and
budget, the review policy; reviewers read, viewers are told who can, other teams get a 404."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import time_machine
from django.core.management import call_command
from django.urls import reverse

from memory import engine, tasks
from memory.dream import loop
from memory.models import AuditEvent, DreamRun
from tests.conftest import login
from tests.dashboard.conftest import assert_login_redirect, assert_same_404
from tests.memory.dream import world

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
NOW = world.NOW


@pytest.fixture(autouse=True)
def _inline_jobs(settings, tmp_path, monkeypatch):
    settings.TASK_BACKEND = "sync"  # "run now" executes the run inside the request
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))


@pytest.fixture
def clock():
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


def url(agent_id: str, run_id: int | None = None) -> str:
    return reverse("dashboard:operations", args=[agent_id]) + (f"?run={run_id}" if run_id else "")


def start_url(agent_id: str) -> str:
    return reverse("dashboard:operations_start", args=[agent_id])


def mode_url(agent_id: str) -> str:
    return reverse("dashboard:operations_mode", args=[agent_id])


def run_url(agent_id: str, run_id: int) -> str:
    return reverse("dashboard:operations_run", args=[agent_id, run_id])


def dream(agent_id: str, **kw) -> engine.DreamRunRecord:
    return engine.dream_run(agent_id=agent_id, force=True, actor="user:ada", **kw)


# --- access ----------------------------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, agent):
    assert_login_redirect(client, url(agent.agent_id))
    for target in (start_url(agent.agent_id), mode_url(agent.agent_id)):
        response = client.post(target, {"mode": "apply"})
        assert response.status_code == 302 and response["Location"].startswith("/login/?next=")
    assert not DreamRun.objects.exists()


def test_another_team_gets_the_same_404_as_a_missing_agent(client, outsider, agent, clock):
    run = dream(agent.agent_id)
    login(client, outsider)
    assert_same_404(client, url(agent.agent_id), url("no-such-agent"))
    assert client.get(run_url(agent.agent_id, run.id), headers=HTMX).status_code == 404
    assert client.post(start_url(agent.agent_id)).status_code == 404
    assert client.post(mode_url(agent.agent_id), {"mode": "apply"}).status_code == 404
    assert DreamRun.objects.count() == 1 and engine.dream_state(agent_id=agent.agent_id).mode == "dry_run"


def test_a_viewer_is_told_who_can_read_it(client, viewer, reviewer, agent):
    response = login(client, viewer).get(url(agent.agent_id))
    assert response.status_code == 403
    assert "rex" in response.content.decode() and 'id="dream-controls"' not in response.content.decode()


def test_a_reviewer_reads_but_cannot_act(client, reviewer, agent, clock):
    dream(agent.agent_id)
    login(client, reviewer)
    page = client.get(url(agent.agent_id))
    html = page.content.decode()
    assert page.status_code == 200 and 'id="dream-report"' in html
    assert 'id="run-now"' not in html and 'id="mode-form"' not in html
    assert "Admins of the team start runs" in html
    assert client.post(start_url(agent.agent_id)).status_code == 403
    assert client.post(mode_url(agent.agent_id), {"mode": "apply"}).status_code == 403
    assert DreamRun.objects.count() == 1 and engine.dream_state(agent_id=agent.agent_id).mode == "dry_run"


def test_posts_need_the_csrf_token(csrf_client, team_admin, agent):
    login(csrf_client, team_admin)
    assert csrf_client.post(start_url(agent.agent_id)).status_code == 403
    assert csrf_client.post(mode_url(agent.agent_id), {"mode": "apply"}).status_code == 403
    assert not DreamRun.objects.exists()
    page = csrf_client.get(url(agent.agent_id)).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    response = csrf_client.post(start_url(agent.agent_id), {"csrfmiddlewaretoken": token})
    assert response.status_code == 302 and DreamRun.objects.count() == 1


# --- running -----------------------------------------------------------------------------------------------


def test_run_now_uses_the_mode_and_shows_the_report(client, team_admin, agent, clock):
    world.build(agent.agent_id)
    login(client, team_admin)
    response = client.post(start_url(agent.agent_id))
    run = DreamRun.objects.get()
    assert response.status_code == 302 and response["Location"] == url(agent.agent_id, run.id)
    assert run.dry_run and run.status == "done" and run.actor == "user:ada"
    html = client.get(response["Location"]).content.decode()
    assert f"Dream run #{run.id} started (dry run)." in html
    for phase in loop.PHASES:
        assert f'id="phase-{phase}"' in html
    assert "candidates by rule" in html and "a 1 · b 0 · c 2 · d 1" in html
    assert "no gap finder registered" in html


def test_htmx_run_now_swaps_the_run_card_and_says_so(client, team_admin, agent, clock):
    world.build(agent.agent_id)
    engine.dream_mode_set(agent_id=agent.agent_id, mode="apply", actor="user:ada")
    login(client, team_admin)
    response = client.post(start_url(agent.agent_id), headers=HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and html.lstrip().startswith('<section class="card" id="dream-run"')
    run = DreamRun.objects.get()
    assert not run.dry_run and 'data-status="done"' in html
    assert "started (apply)" in response["HX-Trigger"]
    dry = client.post(start_url(agent.agent_id), {"dry": "on"}, headers=HTMX)
    assert dry.status_code == 200 and DreamRun.objects.latest("id").dry_run


def test_a_start_while_a_run_is_in_progress_shows_already_running(client, team_admin, agent, clock):
    running = engine.dream_start(agent_id=agent.agent_id, force=True, actor="user:bea")
    login(client, team_admin)
    response = client.post(start_url(agent.agent_id), headers=HTMX)
    html = response.content.decode()
    assert response.status_code == 409 and 'id="control-error"' in html
    assert f"run #{running.id} of this agent is in progress" in html
    assert "in progress" in response["HX-Trigger"]
    plain = client.post(start_url(agent.agent_id), follow=True)
    assert "is in progress; wait for it to finish" in plain.content.decode()
    assert DreamRun.objects.count() == 1


def test_a_run_whose_job_cannot_be_queued_is_refused_and_failed(
    client, team_admin, agent, clock, monkeypatch
):
    from memory import tasks

    def broker_down(name, *args):
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks, "enqueue", broker_down)
    response = login(client, team_admin).post(start_url(agent.agent_id), headers=HTMX)
    run = DreamRun.objects.get()
    assert response.status_code == 503
    assert f"Run #{run.id} could not be queued (broker down)" in response.content.decode()
    assert run.status == "failed" and engine.dream_state(agent_id=agent.agent_id).last_dream_at is None


def test_a_running_run_polls_every_two_seconds_until_it_is_done(client, reviewer, agent, clock):
    running = engine.dream_start(agent_id=agent.agent_id, force=True, actor="user:ada")
    engine.dream_claim(run_id=running.id, first_phase="orient")
    engine.dream_progress(run_id=running.id, phase="consolidate", done=3, total=8)
    login(client, reviewer)
    page = client.get(url(agent.agent_id)).content.decode()
    card = re.search(r'<section class="card" id="dream-run".*?>', page, re.S).group(0)
    assert 'hx-trigger="every 2s"' in card and run_url(agent.agent_id, running.id) in card
    assert 'value="3" max="8"' in page and "phase <strong>consolidate</strong>, 3 of 8" in page
    tick = client.get(run_url(agent.agent_id, running.id), headers=HTMX)
    assert tick.status_code == 200 and 'hx-trigger="every 2s"' in tick.content.decode()
    loop.execute(run_id=running.id)  # not queued any more: returns the run as it is
    engine.dream_finish(run_id=running.id)
    final = client.get(run_url(agent.agent_id, running.id), headers=HTMX)
    html = final.content.decode()
    assert final.status_code == 286 and "hx-trigger" not in html.split('id="dream-runs"')[0]
    assert 'data-status="done"' in html and re.search(r'id="dream-runs"[^>]*hx-swap-oob="true"', html)
    plain = client.get(run_url(agent.agent_id, running.id))
    assert plain.status_code == 302 and plain["Location"] == url(agent.agent_id, running.id)


def test_a_failed_phase_is_shown_with_its_error(client, team_admin, agent, clock, monkeypatch):
    def broken(ctx, report):
        raise RuntimeError("no <b>signal</b> today")

    monkeypatch.setitem(loop.PHASE_FUNCS, "signal", broken)
    run = dream(agent.agent_id)
    html = login(client, team_admin).get(url(agent.agent_id, run.id)).content.decode()
    assert "signal failed: RuntimeError: no &lt;b&gt;signal&lt;/b&gt; today" in html


def test_stored_text_in_a_report_is_escaped(client, team_admin, agent, clock):
    engine.dream_mode_set(agent_id=agent.agent_id, mode="apply", actor="user:ada")
    with time_machine.travel(NOW - timedelta(days=1), tick=False):
        world.note("<script>alert(1)</script> deploys go out on Fridays", agent_id=agent.agent_id)
        world.note("<script>alert(1)</script> deploys go out on fridays.", agent_id=agent.agent_id)
    run = dream(agent.agent_id)
    html = login(client, team_admin).get(url(agent.agent_id, run.id)).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert(1)" not in html


def test_another_agents_run_is_a_404(client, team_admin, agent, other_agent, clock):
    other = dream(other_agent.agent_id)
    login(client, team_admin)
    assert client.get(url(agent.agent_id, other.id)).status_code == 404
    assert client.get(run_url(agent.agent_id, other.id), headers=HTMX).status_code == 404


# --- the mode --------------------------------------------------------------------------------------------


def test_an_admin_switches_the_mode_and_it_is_audited(client, team_admin, agent):
    login(client, team_admin)
    response = client.post(mode_url(agent.agent_id), {"mode": "apply"}, headers=HTMX)
    assert response.status_code == 200 and 'data-mode="apply"' in response.content.decode()
    assert engine.dream_state(agent_id=agent.agent_id).mode == "apply"
    event = AuditEvent.objects.get(action="dream_mode_set")
    assert event.actor == "user:ada" and event.agent_id == agent.agent_id
    bad = client.post(mode_url(agent.agent_id), {"mode": "yolo"}, headers=HTMX)
    assert bad.status_code == 422 and "field-error" in bad.content.decode()
    assert engine.dream_state(agent_id=agent.agent_id).mode == "apply"
    plain = client.post(mode_url(agent.agent_id), {"mode": "dry_run"}, follow=True)
    assert "is now dry run" in plain.content.decode()


# --- the rest of the page ---------------------------------------------------------------------------------


def test_the_gate_schedule_llm_and_policy_are_shown(
    client, team_admin, agent, settings, tmp_path, monkeypatch
):
    settings.TASK_BACKEND = "q2"
    login(client, team_admin)
    html = client.get(url(agent.agent_id)).content.decode()
    assert 'data-gate="closed"' in html and "0 session(s) since the last run" in html
    assert html.count("not registered") == len(tasks.SCHEDULES) and 'id="llm-off"' in html
    assert "default 0.8" in html and "below 5" in html and "7 days" in html
    call_command("setup_schedules", stdout=open("/dev/null", "w"))
    config = tmp_path / "memdesk.toml"
    config.write_text('[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "small"\nmax_calls_per_run = 40\n')
    monkeypatch.setenv("MEMDESK_CONFIG", str(config))
    html = client.get(url(agent.agent_id)).content.decode()
    assert "not registered" not in html and 'data-job="dream_gate_check"' in html and "1 h" in html
    assert "http://127.0.0.1:9/v1" in html and "40 calls" in html


def test_the_query_count_does_not_grow_with_the_runs(client, team_admin, agent, django_assert_num_queries):
    login(client, team_admin)
    with time_machine.travel(NOW, tick=False):
        dream(agent.agent_id)
        client.get(url(agent.agent_id))  # warm the session
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as one:
            assert client.get(url(agent.agent_id)).status_code == 200
    for k in range(1, 12):
        with time_machine.travel(NOW + timedelta(minutes=k), tick=False):
            dream(agent.agent_id)
    with (
        time_machine.travel(NOW + timedelta(hours=1), tick=False),
        django_assert_num_queries(len(one.captured_queries)),
    ):
        html = client.get(url(agent.agent_id)).content.decode()
    assert html.count("?run=") == 10


def test_the_navigation_links_the_page(client, reviewer, agent):
    html = login(client, reviewer).get(reverse("dashboard:agent", args=[agent.agent_id])).content.decode()
    assert f'id="nav-operations" href="{url(agent.agent_id)}"' in html and 'id="operations-link"' in html
