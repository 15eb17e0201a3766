"""Issue 13's journey end to end: a real server, a real browser, a real MCP client, one database.

An admin switches the agent's dream mode to apply on the operations page and runs a dream pass, watching its card
reach "done" with a report per phase. A reviewer then opens the review queue from the navigation: the pair the
judge could not decide alone (two current homes of one person under aliased names) is approved with an edit (the
verdict chosen and the value corrected), and a lint finding is rejected. Over MCP the agent's ``memory_get_at``
and ``memory_search`` show the approved, corrected value at once.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS
from tests.mcp.harness import HttpHarness
from tests.mcp.harness import provision as provision_db

pytestmark = pytest.mark.browser


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.setenv("MEMDESK_TASK_BACKEND", "sync")  # "run now" runs the pass inside its request
    db_path = tmp_path / "dream.sqlite3"
    info = provision_db(db_path, module="tests.review.dream_journey_provision")
    harness = HttpHarness(db_path, info["tokens"])
    try:
        yield harness, info
    finally:
        harness.close()


def sign_in(page, base: str, username: str, password: str) -> None:
    page.goto(base + "/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    expect(page.locator("#toasts")).to_contain_text(f"Signed in as {username}.")


def get_at(harness: HttpHarness, subject: str, predicate: str) -> dict | None:
    now = datetime.now(UTC).isoformat()
    return harness.ok("reader", "memory_get_at", {"subject": subject, "predicate": predicate, "at": now})[
        "record"
    ]


def test_admin_runs_a_dream_pass_a_reviewer_decides_and_the_agent_reads_the_result(server):
    harness, info = server
    agent, password = info["agent"], info["password"]
    # before the pass: two current homes of one person, under two names of one entity
    assert get_at(harness, "carl", "lives_in")["object"] == "Paris"
    assert get_at(harness, "carl m.", "lives_in")["object"] == "London"
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            admin = browser.new_page(viewport={"width": 1366, "height": 900})
            admin.set_default_timeout(20_000)
            admin.on("pageerror", lambda exc: errors.append(str(exc)))
            sign_in(admin, harness.base, info["admin"], password)
            admin.goto(harness.base + f"/agents/{agent}/operations/")
            expect(admin.locator("h1")).to_have_text("Operations")
            admin.select_option("#id_mode", "apply")
            admin.click("#mode-form button[type=submit]")
            expect(admin.locator("#dream-mode")).to_have_attribute("data-mode", "apply")
            admin.click("#run-now")
            card = admin.locator("#dream-run")
            expect(card).to_have_attribute("data-status", "done")
            expect(admin.locator("#phase-consolidate")).to_contain_text("applied")

            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.set_default_timeout(20_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            sign_in(page, harness.base, info["reviewer"], password)
            page.goto(harness.base + f"/agents/{agent}/")
            page.click("#nav-review")
            expect(page.locator("h1")).to_have_text("Review queue")

            # the unsure pair: approve with an edit (SUPERSEDE, and the value corrected)
            unsure = page.locator("#desk .queue-card", has_text="carl m.").first
            expect(unsure).to_have_attribute("data-status", "pending")
            unsure.click()
            page.keyboard.press("e")
            form = unsure.locator("details.decide-edit")
            expect(form).to_have_attribute("open", "")
            form.locator("select[name=verdict]").select_option("SUPERSEDE")
            form.locator("input[name=object]").fill("London, UK")
            form.locator("input[name=content]").fill("Carl lives in London, UK")
            form.locator("select[name=reason]").focus()
            page.keyboard.press("1")
            expect(unsure).to_have_attribute("data-status", "approved")

            # a lint finding the reviewer disagrees with: reject with a reason
            finding = page.locator("#desk .queue-card", has_text="birthday").first
            expect(finding).to_have_attribute("data-status", "pending")
            finding.click()
            page.keyboard.press("r")
            expect(finding.locator("details.decide-reject select[name=reason]")).to_be_focused()
            page.keyboard.press("2")
            expect(finding).to_have_attribute("data-status", "rejected")
        finally:
            browser.close()
    assert errors == []

    # what the agent reads now, over MCP
    corrected = get_at(harness, "carl m.", "lives_in")
    assert corrected["object"] == "London, UK" and corrected["origin"] == "operator:review"
    assert get_at(harness, "carl", "lives_in") is None  # superseded by the other name's value
    hits = harness.ok("reader", "memory_search", {"query": "Carl London", "limit": 10})
    assert corrected["id"] in {r["id"] for r in hits["results"]}
    assert (
        get_at(harness, "bob", "birthday")["object"] == "2099-01-01"
    )  # the rejected finding changed nothing
