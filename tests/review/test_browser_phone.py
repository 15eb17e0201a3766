"""The curator's pages on a phone (issue 19 item 12): at 390 px nothing scrolls sideways, the navigation
collapses behind a Menu button, tables become cards, and the desk is usable (a batch opens and is decided).

One uvicorn child serves a SQLite file with six held batches (``desk_volume_provision``); Chromium at 390×844
signs in as an admin and opens each page: ``document.documentElement.scrollWidth`` must stay within 390.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS
from tests.mcp.harness import HttpHarness
from tests.mcp.harness import provision as provision_db
from tests.review.test_browser_desk_volume import sign_in

pytestmark = pytest.mark.browser
WIDTH = 390


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.setenv("DESK_BATCHES", "6")
    db_path = tmp_path / "phone.sqlite3"
    info = provision_db(db_path, module="tests.review.desk_volume_provision")
    harness = HttpHarness(db_path, info["tokens"])
    try:
        yield harness, info
    finally:
        harness.close()


def test_every_page_fits_a_phone_and_the_desk_works_there(server, tmp_path):
    harness, info = server
    agent = info["agent"]
    pages = {
        "agents": "/",
        "agent": f"/agents/{agent}/",
        "quarantine": f"/agents/{agent}/quarantine/",
        "quarantine-decided": f"/agents/{agent}/quarantine/?status=all",
        "review": f"/agents/{agent}/review/",
        "discoveries": f"/agents/{agent}/discoveries/",
        "audit": f"/agents/{agent}/audit/",
        "tokens": f"/agents/{agent}/tokens/",
    }
    errors: list[str] = []
    widths: dict[str, int] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": 844}, is_mobile=True, has_touch=True)
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            sign_in(page, harness, info["admin"], info["password"])

            # the desk: decide one batch by touch, then look at every page
            page.goto(harness.base + pages["quarantine"])
            links = page.locator("#nav-links")
            expect(links).to_be_hidden()  # collapsed behind the Menu button
            page.locator("[data-nav-toggle]").click()
            expect(links).to_be_visible()
            expect(page.locator("[data-nav-toggle]")).to_have_attribute("aria-expanded", "true")
            expect(page.locator("#nav-tokens")).to_be_visible()  # an admin's link
            page.locator("[data-nav-toggle]").click()
            expect(links).to_be_hidden()
            first = page.locator("#desk .queue-card").first
            expect(first).to_have_class(re.compile(r"\bis-open\b"))
            expect(first.locator(".batch-facts thead")).to_be_hidden()  # the facts table is a list of cards
            expect(first.locator(".fact-row").first).to_be_visible()
            first.locator("details.decide-reject summary").click()
            first.locator("details.decide-reject select[name=reason]").select_option("wrong")
            first.locator("details.decide-reject button[type=submit]").click()
            expect(first).to_have_attribute("data-status", "denied")
            second = page.locator("#desk .queue-card").nth(1)
            second.locator(".queue-line").click()
            expect(second).to_have_class(re.compile(r"\bis-open\b"))

            for name, path in pages.items():
                page.goto(harness.base + path)
                expect(page.locator("h1")).to_be_visible()
                widths[name] = page.evaluate("document.documentElement.scrollWidth")
                page.screenshot(path=str(tmp_path / f"phone-{name}.png"), full_page=True)
        finally:
            browser.close()
    assert errors == []
    assert {name: w for name, w in widths.items() if w > WIDTH} == {}, widths
