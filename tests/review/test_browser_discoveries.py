"""The discovery inbox journey end to end: one database, a real server, a real browser, a real MCP client.

One uvicorn child serves ``config.asgi`` (the dashboard and ``/mcp``) on a SQLite file provisioned with the
office world and one discovery run (tests/review/discovery_provision.py), every request to another host
aborted. Debian's Chromium signs in as a curator, follows the navigation badge to the inbox, reads the first
item's explanation and draws its evidence path, pins it with the keyboard, dismisses one and snoozes one, then
follows "open in graph": the graph page focuses on the pair. The agent then pulls ``memory_discoveries`` over
the SDK's streamable HTTP client and gets the pinned and open items only.
"""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import urlparse

import pytest
from django.utils import timezone
from playwright.sync_api import expect, sync_playwright

from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS
from tests.mcp.harness import HttpHarness
from tests.mcp.harness import provision as provision_db

pytestmark = pytest.mark.browser
LOCAL = {"127.0.0.1", "localhost"}


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    db_path = tmp_path / "inbox.sqlite3"
    info = provision_db(db_path, module="tests.review.discovery_provision")
    harness = HttpHarness(db_path, info["tokens"])
    try:
        yield harness, info
    finally:
        harness.close()


def test_curator_works_the_inbox_and_the_agent_pulls_what_is_left(server):
    harness, info = server
    agent = info["agent"]
    items = info["items"]
    aiko = items["aiko tanaka|osaka office"]
    errors: list[str] = []
    blocked: list[str] = []

    def local_only(route) -> None:  # noqa: ANN001
        if urlparse(route.request.url).hostname in LOCAL:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1366, "height": 900})
            context.route("**/*", local_only)
            page = context.new_page()
            page.set_default_timeout(20_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)

            page.goto(harness.base + "/login/")
            page.fill("#id_username", info["username"])
            page.fill("#id_password", info["password"])
            page.click("button[type=submit]")
            expect(page.locator("#toasts")).to_contain_text(f"Signed in as {info['username']}.")
            page.goto(harness.base + f"/agents/{agent}/")
            badge = page.locator("#discovery-count")
            expect(badge).to_have_attribute("data-count", str(len(items)))
            page.click("#nav-discoveries")
            expect(page.locator("h1")).to_have_text("Discovery inbox")
            cards = page.locator("#inbox .discovery-card")
            expect(cards).to_have_count(min(len(items), 20))  # one page

            # The first item (the best bridge) reads as a sentence; its evidence path draws on a canvas
            first = cards.nth(0)
            expect(first).to_have_attribute("id", f"discovery-{aiko}")
            expect(first.locator(".explanation")).to_contain_text(
                "Aiko Tanaka and Osaka office share 4 neighbours and appear together in 4 sessions, but no fact links them"
            )
            expect(first.locator(".neighbours li")).to_have_count(4)
            # the keys are bound by deferred scripts, which run just before DOMContentLoaded: a key pressed while
            # the parsed page is already visible but they have not run yet would be lost (seen on a loaded machine)
            page.wait_for_load_state("domcontentloaded")
            page.keyboard.press("j")
            expect(first).to_have_class(re.compile(r"is-selected"))
            page.keyboard.press("e")
            canvas = page.locator(f"#path-canvas-{aiko}")
            expect(canvas).to_have_attribute("data-rendered", "true")
            expect(canvas.locator("canvas")).to_be_visible()

            # p pins it (the card comes back pinned, the badge drops by one, a toast says so)
            page.keyboard.press("p")
            expect(page.locator(f"#discovery-{aiko}")).to_have_attribute("data-status", "pinned")
            expect(page.locator("#toasts")).to_contain_text("Pinned: Aiko Tanaka")
            expect(badge).to_have_attribute("data-count", str(len(items) - 1))

            # the next open item is selected: d dismisses it
            second = page.locator("#inbox .discovery-card.is-selected")
            dismissed = int(second.get_attribute("data-item"))
            assert dismissed != aiko
            page.keyboard.press("d")
            expect(page.locator(f"#discovery-{dismissed}")).to_have_attribute("data-status", "dismissed")

            # z puts the focus on the next open item's date; a date next week, then Enter, snoozes it
            snoozed_card = page.locator("#inbox .discovery-card.is-selected")
            snoozed = int(snoozed_card.get_attribute("data-item"))
            page.keyboard.press("z")
            field = page.locator(f"#snooze-{snoozed}")
            expect(field).to_be_focused()
            field.fill((timezone.now() + timedelta(days=7)).date().isoformat())
            field.press("Enter")
            expect(page.locator(f"#discovery-{snoozed}")).to_have_attribute("data-status", "snoozed")
            expect(badge).to_have_attribute("data-count", str(len(items) - 3))

            # open in graph: the graph page with both neighbourhoods and the discovered pair
            page.locator(f"#discovery-{aiko} a.open-in-graph").click()
            expect(page.locator("h1")).to_have_text("Graph")
            expect(page.locator("#graph")).to_have_attribute("data-entity", "aiko tanaka")
            expect(page.locator("#graph")).to_have_attribute("data-pair", "osaka office")
            expect(page.locator("#graph-pair")).to_contain_text("Discovered pair")
            expect(page.locator("#graph-canvas")).to_have_attribute("data-rendered", "true")
            assert page.evaluate("window.memdeskGraph.body.data.edges.get('discovered-pair').dashes") is True
        finally:
            browser.close()
    assert errors == [] and blocked == []

    # the agent pulls the pinned and open items only (pinned first), with evidence ids
    reply = harness.ok("r", "memory_discoveries", {})
    got = [d["id"] for d in reply["discoveries"]]
    assert got[0] == aiko and reply["discoveries"][0]["status"] == "pinned"
    assert dismissed not in got and snoozed not in got
    assert set(got) == set(items.values()) - {dismissed, snoozed}
    assert all(d["status"] in ("open", "pinned") for d in reply["discoveries"])
    evidence = reply["discoveries"][0]["evidence"]
    assert evidence["sessions"] == ["s0", "s1", "s2", "s3"] and len(evidence["memory_ids"]) >= 4
    only = harness.ok("r", "memory_discoveries", {"kind": "knowledge_gap", "limit": 2})
    assert only["total"] <= 2 and {d["kind"] for d in only["discoveries"]} <= {"knowledge_gap"}
    # discoveries never reach search results
    hits = harness.ok("r", "memory_search", {"query": "Aiko Tanaka Osaka office", "limit": 50})["results"]
    assert all(not str(h["id"]).startswith("d") and "discover" not in h["content"] for h in hits)
