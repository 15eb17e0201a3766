"""The first dashboard journey in a real browser (Playwright driving Debian's Chromium).

Sign in → agent → search as you type (HTMX swap, URL updated) → memory detail → its timeline, where the
superseded and the current row both show. Stored markup renders as text, and no page raises a JS error.

The browser is started per test with ``sync_playwright()`` rather than pytest-playwright's session-scoped
fixtures: Playwright's sync API keeps an asyncio loop running in the main thread while it is alive, which would
make Django refuse ORM calls (SynchronousOnlyOperation) in every test that runs after this one in the session.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect, sync_playwright

from memory import engine
from tests.conftest import PASSWORD, make_user
from tests.dashboard.conftest import make_memories

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
XSS = "<script>window.__xss=1</script>"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def journey_data(team, agent, history):
    make_user("bea", team)
    make_memories(agent.agent_id, 15)
    engine.store(agent_id=agent.agent_id, content=XSS, origin="channel:web")
    return history


def test_member_journey_search_detail_timeline(live_server, agent, journey_data, monkeypatch):
    # Playwright's sync API runs an event loop in this thread; the ORM is not used while it runs.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    base = live_server.url
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)

            # Signing in
            page.goto(base + "/")
            expect(page).to_have_url(re.compile(r"/login/\?next=/$"))
            page.fill("#id_username", "bea")
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            expect(page.locator("#toasts")).to_contain_text("Signed in as bea.")

            # Home → agent
            page.click(f'a[href="/agents/{agent.agent_id}/"] >> nth=0')
            expect(page.locator("h1")).to_have_text(agent.display_name)
            expect(page.locator('[data-count="current"]')).not_to_have_text("0")

            # Agent → search; typing updates the results in place and the URL keeps the query
            page.click("text=Search memories")
            expect(page.locator("#memory-table")).to_be_visible()
            page.evaluate("window.__sameDocument = true")
            page.locator("#q").press_sequentially("Berlin", delay=40)
            results = page.locator("#results")
            expect(results).to_have_attribute("data-query", "Berlin")
            expect(results.locator("tbody tr")).to_have_count(1)
            expect(results).to_contain_text("Alice moved to Berlin")
            expect(page).to_have_url(re.compile(r"/memories/\?q=Berlin"))
            assert page.evaluate("window.__sameDocument") is True  # swapped by HTMX, not reloaded

            # Stored markup is text, even when it arrives through an HTMX swap
            page.locator("#q").fill("")
            page.locator("#q").press_sequentially("xss", delay=40)
            expect(results).to_have_attribute("data-query", "xss")
            expect(results.locator("tbody tr")).to_have_count(1)
            expect(results.locator(".memory-link")).to_have_text(XSS)
            assert page.evaluate("typeof window.__xss") == "undefined"

            # A filter change swaps the results too: all rows, history included and marked
            page.locator("#q").fill("")
            page.select_option("#status", "all")
            expect(results).to_have_attribute("data-status", "all")
            expect(page).to_have_url(re.compile(r"status=all"))
            page.locator("#q").press_sequentially("Alice", delay=40)
            expect(results).to_have_attribute("data-query", "Alice")
            expect(results.locator(f"#mem-{journey_data['lisbon']} .badge")).to_have_text("superseded")
            expect(results.locator(f"#mem-{journey_data['poison']}")).to_have_class(
                re.compile("row-retracted")
            )
            expect(results.locator(f"#mem-{journey_data['poison']} .badge")).to_have_text("retracted")
            assert page.evaluate("window.__sameDocument") is True

            # Back to Berlin, open the memory
            page.select_option("#status", "current")
            expect(results).to_have_attribute("data-status", "current")
            page.locator("#q").fill("")
            page.locator("#q").press_sequentially("Berlin", delay=40)
            expect(results).to_have_attribute("data-query", "Berlin")
            page.click("#results .memory-link")
            expect(page).to_have_url(re.compile(rf"/memories/{journey_data['berlin']}/$"))
            expect(page.locator("#memory-content")).to_have_text("Alice moved to Berlin")
            expect(page.locator("h1 .badge")).to_have_text("current")

            # Detail → timeline of its key: the superseded row and the current row
            page.click("#timeline-link")
            expect(page).to_have_url(re.compile(r"/timeline/\?subject=alice&predicate=lives_in$"))
            lisbon = page.locator(f"#row-{journey_data['lisbon']}")
            berlin = page.locator(f"#row-{journey_data['berlin']}")
            expect(lisbon).to_have_attribute("data-status", "superseded")
            expect(lisbon).to_contain_text("Superseded by")
            expect(berlin).to_have_attribute("data-status", "current")
            expect(berlin).to_contain_text("Berlin")
            expect(page.locator(f"#row-{journey_data['poison']}")).to_have_attribute(
                "data-status", "retracted"
            )

            # As of: what was true in 2021 (HTMX swaps the answer)
            page.fill("#at", "2021-01-01T00:00")
            page.click("#asof-form button[type=submit]")
            expect(page.locator("#asof .answer-value strong")).to_have_text("Lisbon")
            expect(page).to_have_url(re.compile(r"at=2021-01-01T00(%3A|:)00"))

            # The page that lists the markup memory directly (no HTMX) keeps it inert too
            page.goto(base + f"/agents/{agent.agent_id}/")
            expect(page.locator("#recent-memories")).to_contain_text(XSS)
            assert page.evaluate("typeof window.__xss") == "undefined"
        finally:
            browser.close()
    assert errors == []
