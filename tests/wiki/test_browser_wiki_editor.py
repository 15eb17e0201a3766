"""The wiki editor and its diffs in a real browser (issue 19 item 15): the editor spans the page beside a live
preview that follows typing (and a paste), saving shows only the changed words against the page as first
published, and two revisions picked in the history are compared in place (Back restores the earlier pair).
At 390 px nothing scrolls sideways."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect, sync_playwright

from memory.models import Role
from tests.conftest import PASSWORD, make_user
from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS
from wiki import services

from .test_views import SOP_TEXT, fresh, publish

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def wiki_page(team, agent):
    make_user("cora", team, role=Role.CURATOR)
    page = publish(agent.agent_id, "Refunds over 500 dollars", slug="refund-over-500", tags=["billing"])
    services.revise(
        page=fresh(page), actor="user:cora", summary="Refunds above $500 need a lead.", reason="tidy"
    )
    return fresh(page)


@pytest.mark.parametrize("width", [1366, 390])
def test_editor_preview_diff_and_compare(live_server, agent, wiki_page, monkeypatch, width):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    base = live_server.url
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            page.goto(base + "/login/")
            page.fill("#id_username", "cora")
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            page.goto(f"{base}/agents/{agent.agent_id}/wiki/{wiki_page.id}/")

            # two revisions: the history compares them in place, r1 → r2 by default
            expect(page.locator("#wiki-compare-title")).to_have_text("Revision 1 → revision 2")

            # the editor: full width of the content, the preview beside (or below) it, following what is typed
            page.locator("#wiki-edit summary").click()
            expect(page.locator("#wiki-preview-text")).to_contain_text("30 days")  # rendered on opening
            editor = page.locator("#wiki-editor").bounding_box()
            main = page.locator("main").bounding_box()
            assert editor["width"] >= 0.9 * main["width"] - 40
            text = page.locator("#id_original_text")
            text.fill(SOP_TEXT.replace("30 days", "60 days"))
            expect(page.locator("#wiki-preview-text strong")).to_have_text("60 days")
            expect(page.locator("#wiki-preview-diff .diff-add .diff-word")).to_have_text(["60"])
            # a paste (an input event without keys) updates it too
            text.evaluate(
                "el => { el.value = el.value.replace('60 days', '90 days'); el.dispatchEvent(new InputEvent('input',"
                " {bubbles: true, inputType: 'insertFromPaste'})); }"
            )
            expect(page.locator("#wiki-preview-text strong")).to_have_text("90 days")

            # save: the diff since accepted shows the changed words against the page as first published
            page.fill("#id_reason", "the window is 90 days now")
            page.locator("#wiki-edit-form button[type=submit]").click()
            expect(page.locator("#toasts")).to_contain_text("Saved revision 3")
            expect(page.locator("#wiki-diff-base")).to_contain_text(
                "against revision 1, the page as first published"
            )
            expect(page.locator("#wiki-diff .diff-add .diff-word").last).to_have_text("90")
            expect(page.locator("#wiki-diff .diff-del .diff-word").last).to_have_text("30")
            expect(page.locator("#wiki-diff .diff-line.diff-add")).to_have_count(2)

            # compare any two: r1 and r3, picked in the history
            page.locator("#cmp-a-1").check()
            page.locator("#cmp-b-3").check()
            page.locator("#wiki-compare-button").click()
            expect(page.locator("#wiki-compare-title")).to_have_text("Revision 1 → revision 3")
            expect(page).to_have_url(re.compile(r"/diff/\?(a=1&b=3|b=3&a=1)$"))
            expect(page.locator("#wiki-compare-diff .diff-del .diff-word")).to_contain_text(["30"])
            page.locator("#cmp-a-2").check()
            page.locator("#wiki-compare-button").click()
            expect(page.locator("#wiki-compare-title")).to_have_text("Revision 2 → revision 3")
            page.go_back()
            expect(page.locator("#wiki-compare-title")).to_have_text("Revision 1 → revision 3")
            if width == 390:
                assert page.evaluate("document.documentElement.scrollWidth") <= width
        finally:
            browser.close()
    assert errors == []
