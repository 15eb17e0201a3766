"""The insights journey in a real browser (Playwright driving Debian's Chromium): after a scripted week of an
agent's activity (searches, feedback, an attitude proposal, skill uses, daily snapshots), a team member opens the
agent's insights from the navigation and sees the profile with its chart, switches the window in place, finds the
knowledge gap and the attitude change waiting for review; stored markup stays text; on a phone nothing scrolls
sideways in the page; no JavaScript error."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from playwright.sync_api import expect, sync_playwright

from memory import engine
from tests.conftest import PASSWORD, make_user
from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
XSS = "<script>window.__xss=1</script>"


def scripted_week(agent_id: str) -> dict[str, str]:
    """Seven days of use, each day at its own (frozen) time."""
    start = timezone.now() - timedelta(days=7)
    with time_machine.travel(start - timedelta(days=30), tick=False):
        engine.store_temporal(
            agent_id=agent_id, content="acme-web deploys to Cloudflare Workers", subject="acme-web",
            predicate="deploy_target", object="Cloudflare Workers",
        )  # fmt: skip
        engine.store(agent_id=agent_id, content="Refunds on annual plans are prorated by month.")
    for day in range(7):
        with time_machine.travel(start + timedelta(days=day, hours=10), tick=False):
            engine.agent_search(agent_id=agent_id, query="Where is acme-web deployed?")
            engine.agent_search(agent_id=agent_id, query="refund for annual plans")
            engine.skill_use(agent_id=agent_id, skill="refund policy")
            if day in (4, 5):  # twice the bot says memory did not know
                found = engine.agent_search(agent_id=agent_id, query=f"SLA credits for enterprise {XSS}")
                engine.feedback(agent_id=agent_id, verdict="INCORRECT", query_id=found.query_id)
            if day == 6:
                pending = engine.attitude_propose(
                    agent_id=agent_id,
                    category="workflow",
                    statement="Check the customer's plan before quoting a refund window.",
                    confidence=0.8,
                    evidence=["two wrong quotes this week"],
                )
            engine.profile_snapshot(agent_id=agent_id)  # the daily job, for the day so far
    return {"item": str(pending.item_id)}


def test_the_insights_page_after_a_week(live_server, team, agent, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    make_user("ines", team)
    week = scripted_week(agent.agent_id)
    base = live_server.url
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            page.route(re.compile(r"^(?!http://(localhost|127\.0\.0\.1)).*"), lambda route: route.abort())

            page.goto(base + "/login/")
            page.fill("#id_username", "ines")
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            page.goto(base + f"/agents/{agent.agent_id}/")
            page.click("#nav-insights")
            expect(page.locator("h1")).to_have_text("Insights")
            expect(page.locator("#nav-insights")).to_have_attribute("aria-current", "page")

            # the profile of the week: searches, intents drawn and listed, entities, used memories
            profile = page.locator("#profile")
            expect(profile).to_have_attribute("data-days", "7")
            expect(profile.locator('[data-count="queries"]')).to_have_text("16")
            expect(profile.locator("#intents li").first).to_contain_text("Where is acme-web deployed?")
            expect(profile.locator("#intent-chart rect")).to_have_count(3)
            expect(profile.locator("#intent-chart > title")).to_contain_text("Searches per intent")
            expect(profile.locator("#entities")).to_contain_text("acme-web")
            expect(profile.locator("#used-memories")).to_contain_text("Refunds on annual plans")

            # another window, swapped in place and kept in the URL
            page.evaluate("window.__sameDocument = true")
            page.click("#window-30")
            expect(page.locator("#profile")).to_have_attribute("data-days", "30")
            expect(page).to_have_url(re.compile(r"/insights/\?days=30$"))
            assert page.evaluate("window.__sameDocument") is True

            # the gap, the attitude waiting for review, skills, snapshots
            gap = page.locator("#open-gaps li")
            expect(gap).to_have_count(1)
            expect(gap).to_contain_text(XSS)  # shown as text
            expect(gap).to_contain_text("failed 2×")
            assert page.evaluate("typeof window.__xss") == "undefined"
            waiting = page.locator(f"#pending-attitude-{week['item']}")
            expect(waiting).to_contain_text("Check the customer's plan before quoting a refund window.")
            expect(waiting).to_contain_text("pending")
            expect(page.locator('#skill-table tr[data-skill="refund policy"]')).to_contain_text(
                "change waiting for review"
            )
            expect(page.locator("#snapshot-table tbody tr")).to_have_count(7)
            expect(page.locator("#snapshot-chart rect")).to_have_count(7)
            expect(page.locator("#snapshot-table tbody tr").last).to_contain_text(
                "+ “Where is acme-web deployed?”"
            )
            rows = page.locator("#snapshot-table tbody tr")  # newest day first
            expect(rows.nth(2)).to_contain_text("+ “SLA credits for enterprise")  # day 5: asked first
            expect(rows.nth(0)).to_contain_text("− “SLA credits for enterprise")  # day 7: not asked again

            # every chart is an image with a name; on a phone nothing scrolls sideways
            unnamed = page.evaluate(
                "[...document.querySelectorAll('svg')].filter(s => s.getAttribute('role') !== 'img'"
                " || !s.querySelector(':scope > title')).length"
            )
            assert unnamed == 0
            page.set_viewport_size({"width": 390, "height": 844})
            page.reload()
            expect(page.locator("#profile")).to_be_visible()
            wide = page.evaluate(
                "[...document.querySelectorAll('main *')]"
                ".filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)"
                ".map(e => e.tagName + '#' + e.id + '.' + e.className)"
            )
            assert wide == []
        finally:
            browser.close()
    assert errors == []
