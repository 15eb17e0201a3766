"""The operations page in a real browser (Playwright driving Debian's Chromium).

Admin: agent → Operations → a dry run (the run card swapped by HTMX, its report per phase, a toast) → switch the
mode to apply (audited) → watch a running run: its card polls every 2 s and stops at the 286 the finished run
answers, the runs table refreshed beside it → run now in apply mode. A reviewer reads the page without the
buttons. No page raises a JS error.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect, sync_playwright

from memory import engine
from memory.models import AuditEvent
from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS
from tests.dashboard.test_browser_tokens_mistakes import sign_in
from tests.memory.dream import world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_admin_runs_and_watches_the_dream_loop(
    live_server, agent, team_admin, reviewer, settings, monkeypatch
):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    monkeypatch.setenv("MEMDESK_CONFIG", "/nonexistent/memdesk.toml")
    settings.TASK_BACKEND = "sync"  # "run now" executes the run inside its request
    aid = agent.agent_id
    world.build(aid)
    base = live_server.url
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            sign_in(page, base, team_admin.username)

            page.goto(base + f"/agents/{aid}/")
            page.click("#operations-link")
            expect(page.locator("h1")).to_have_text("Operations")
            expect(page.locator("#dream-gate [data-gate]")).to_have_text("open")
            expect(page.locator("#dream-run")).to_contain_text("No dream run yet.")

            # a dry run: the card is swapped in place with the report of every phase
            page.click("#dry-run")
            card = page.locator("#dream-run")
            expect(card).to_have_attribute("data-status", "done")
            expect(card).to_contain_text("dry run")
            expect(page.locator("#phase-consolidate")).to_contain_text("dry 5")
            expect(page.locator("#toasts")).to_contain_text("started (dry run)")

            # switch the mode to apply
            page.select_option("#id_mode", "apply")
            page.click("#mode-form button[type=submit]")
            expect(page.locator("#dream-mode")).to_have_attribute("data-mode", "apply")
            expect(page.locator("#run-now")).to_have_text("Run now (apply)")
            assert AuditEvent.objects.filter(action="dream_mode_set", actor="user:ada").count() == 1

            # a run in progress: its card polls until the run is over
            running = engine.dream_start(agent_id=aid, force=True, actor="user:bea")
            engine.dream_claim(run_id=running.id, first_phase="orient")
            engine.dream_progress(run_id=running.id, phase="consolidate", done=3, total=8)
            status_url = f"/agents/{aid}/operations/runs/{running.id}/"
            page.goto(base + f"/agents/{aid}/operations/")
            expect(card).to_have_attribute("data-status", "running")
            expect(page.locator("#dream-progress")).to_have_attribute("value", "3")
            with page.expect_response(lambda r: status_url in r.url and r.status == 200):
                pass  # one poll answered "still running"; the next comes 2 s later
            engine.dream_progress(run_id=running.id, done=7)
            engine.dream_finish(run_id=running.id)
            with page.expect_response(lambda r: status_url in r.url and r.status == 286):
                pass
            expect(card).to_have_attribute("data-status", "done")
            expect(page.locator(f'#dream-runs a[href$="?run={running.id}"]')).to_be_visible()
            assert card.get_attribute("hx-trigger") is None  # polling stopped

            # run now, in apply mode: applied and queued items in the report
            page.click("#run-now")
            expect(page.locator("#toasts")).to_contain_text("started (apply)")
            expect(card).to_have_attribute("data-status", "done")
            expect(page.locator("#phase-consolidate")).to_contain_text("applied")
            expect(page.locator("#phase-prune")).to_contain_text("ended 2")

            # a reviewer reads the page; no buttons
            other = browser.new_page(viewport={"width": 390, "height": 844})
            other.on("pageerror", lambda exc: errors.append(str(exc)))
            sign_in(other, base, reviewer.username)
            other.goto(base + f"/agents/{aid}/operations/")
            expect(other.locator("#dream-report")).to_be_visible()
            expect(other.locator("#run-now")).to_have_count(0)
            assert other.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        finally:
            browser.close()
    assert errors == []
