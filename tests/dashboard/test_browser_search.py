"""The memory search box in a real browser (issue 19 item 8): a predicate finds its fact, matches are highlighted,
paste (an `input` event, no keyup) searches, Enter costs at most one request, and Back restores the box."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect, sync_playwright

from memory import engine
from tests.conftest import PASSWORD, make_user
from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def search_data(team, agent):
    make_user("bea", team)
    aid = agent.agent_id
    engine.store_temporal(agent_id=aid, content="acme-web runs on Cloudflare Workers", subject="acme-web",
                          predicate="deploy_target", object="Cloudflare Workers")  # fmt: skip
    engine.store(agent_id=aid, content="Lunch is at noon on Fridays")
    engine.store(agent_id=aid, content="The invoice run happens on the first of the month")


def test_search_box_predicates_highlight_paste_enter_and_back(live_server, agent, search_data, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    base = live_server.url
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            page.on(
                "request",
                lambda r: (
                    requests.append(r.url)
                    if "/memories/" in r.url and r.resource_type in ("xhr", "fetch")
                    else None
                ),
            )
            page.goto(base + "/login/")
            page.fill("#id_username", "bea")
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            page.goto(f"{base}/agents/{agent.agent_id}/memories/")
            results = page.locator("#results")

            # typing a predicate's word finds the fact; the match is highlighted
            page.locator("#q").press_sequentially("deploy", delay=30)
            expect(results).to_have_attribute("data-query", "deploy")
            expect(results.locator("tbody tr")).to_have_count(1)
            expect(results.locator("mark").first).to_have_text(re.compile("deploy", re.I))
            sent = len(requests)

            # Enter after the as-you-type request: nothing new to ask
            page.locator("#q").press("Enter")
            page.wait_for_timeout(600)
            assert len(requests) == sent

            # typing then Enter at once: exactly one request
            page.locator("#q").press_sequentially(" target", delay=10)
            page.locator("#q").press("Enter")
            expect(results).to_have_attribute("data-query", "deploy target")
            page.wait_for_timeout(800)
            assert len(requests) == sent + 1

            # a paste (no key events) searches too
            page.locator("#q").fill("")
            page.wait_for_timeout(500)
            page.locator("#q").evaluate(
                "el => { el.value = 'invoice'; el.dispatchEvent(new InputEvent('input', {bubbles: true,"
                " inputType: 'insertFromPaste'})); }"
            )
            expect(results).to_have_attribute("data-query", "invoice")
            expect(results).to_contain_text("invoice run")

            # Back restores the previous search and its box
            page.go_back()
            expect(page).to_have_url(re.compile(r"q=(&|$)"))
            expect(page.locator("#q")).to_have_value("")
            page.go_back()
            expect(page).to_have_url(re.compile(r"q=deploy(%20|\+)target"))
            expect(page.locator("#q")).to_have_value("deploy target")
            expect(results).to_have_attribute("data-query", "deploy target")
        finally:
            browser.close()
    assert errors == []
