"""The review queue journey end to end: a real server, a real browser, a real MCP client, one database.

One uvicorn child serves ``config.asgi`` (the dashboard and ``/mcp``) on a temporary SQLite file provisioned
with two conflicts as the dream loop proposes them (tests/review/review_provision.py). Debian's Chromium signs
in as a reviewer, opens the queue from the navigation badge, reads the evidence (a text diff, the time axis, an
HTML payload shown as text), edits the first conflict with the keyboard (an invalid edit is refused inline,
then the corrected one is approved with a number key), rejects the second with ``r`` and a number key, and
finds both decisions in the decision log; the badge follows without a reload. Finally, over MCP, the agent's
``memory_get_at`` and ``memory_search`` show the approved, corrected value and the rejected pair unchanged.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS
from tests.mcp.harness import HttpHarness
from tests.mcp.harness import provision as provision_db
from tests.review.review_provision import XSS

pytestmark = pytest.mark.browser
NOW = "2030-01-01T00:00:00Z"

# every visible control has a label, and no id is used twice (the page's own accessibility check)
A11Y_CHECK = """() => {
  const problems = [];
  const ids = {};
  for (const el of document.querySelectorAll("[id]")) {
    if (ids[el.id]) problems.push("duplicate id " + el.id);
    ids[el.id] = true;
  }
  for (const el of document.querySelectorAll("input, select, textarea")) {
    if (el.type === "hidden" || el.closest("[hidden]") || !el.offsetParent) continue;
    const labelled = (el.id && document.querySelector('label[for="' + el.id + '"]')) ||
      el.getAttribute("aria-label") || el.closest("label");
    if (!labelled) problems.push("unlabelled " + (el.name || el.id || el.tagName));
  }
  return problems;
}"""


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    db_path = tmp_path / "review.sqlite3"
    info = provision_db(db_path, module="tests.review.review_provision")
    harness = HttpHarness(db_path, info["tokens"])
    try:
        yield harness, info
    finally:
        harness.close()


def get_at(harness: HttpHarness, subject: str, predicate: str) -> dict | None:
    reply = harness.ok("reader", "memory_get_at", {"subject": subject, "predicate": predicate, "at": NOW})
    return reply["record"]


def test_reviewer_edits_one_conflict_rejects_another_and_the_agent_reads_the_result(server):
    harness, info = server
    agent = info["agent"]
    edit_id, reject_id = info["edit"]["item"], info["reject"]["item"]
    assert get_at(harness, "acme-web", "deploy_target")["object"] == "fly.io"

    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            # Chromium logs every 4xx response as a console error; the refused edit below is expected
            page.on(
                "console",
                lambda msg: (
                    errors.append(msg.text)
                    if msg.type == "error" and "status of 422" not in msg.text
                    else None
                ),
            )
            page.goto(harness.base + "/login/")
            page.fill("#id_username", info["username"])
            page.fill("#id_password", info["password"])
            page.click("button[type=submit]")
            expect(page.locator("#toasts")).to_contain_text(f"Signed in as {info['username']}.")
            page.goto(harness.base + f"/agents/{agent}/")
            badge = page.locator("#review-count")
            expect(badge).to_have_attribute("data-count", "2")

            # The queue, lowest confidence first, with the evidence of each conflict
            page.click("#nav-review")
            expect(page.locator("h1")).to_have_text("Review queue")
            cards = page.locator("#desk .queue-card")
            expect(cards).to_have_count(2)
            expect(cards.nth(0)).to_have_attribute("id", f"item-{edit_id}")
            edit_card, reject_card = page.locator(f"#item-{edit_id}"), page.locator(f"#item-{reject_id}")
            expect(edit_card.locator(".side-old .side-text del")).to_have_text("fly.io")
            expect(edit_card.locator(".side-new .side-text ins")).to_have_text("cloudflare workers (CF)")
            expect(edit_card.locator("svg.axis-svg .axis-bar")).to_have_count(2)
            expect(edit_card.locator("[role=timer]")).to_have_text(re.compile(r"^6 d 23 h left$"))
            expect(reject_card.locator(".side-new .side-text")).to_contain_text(XSS)  # text, never markup
            assert page.evaluate("typeof window.__xss") == "undefined"
            assert page.evaluate(A11Y_CHECK) == []
            page.evaluate("window.__sameDocument = true")

            # ? lists the edit key; j selects the first card; e opens the edit form at the verdict
            page.keyboard.press("?")
            expect(page.locator("#keys-help")).to_contain_text("Edit, then approve")
            page.keyboard.press("Escape")
            page.keyboard.press("j")
            expect(edit_card).to_have_class(re.compile(r"\bis-selected\b"))
            page.keyboard.press("e")
            form = edit_card.locator("details.decide-edit")
            expect(form).to_have_attribute("open", "")
            expect(form.locator("select[name=verdict]")).to_be_focused()
            form.locator("select[name=verdict]").select_option("SUPERSEDE")
            form.locator("input[name=object]").fill("Cloudflare Workers")

            # an invalid edit (a value without its sentence): refused inline, nothing written
            form.locator("select[name=reason]").focus()
            page.keyboard.press("1")  # the first reason, "corrected", and submit
            expect(edit_card.locator(".field-error")).to_contain_text(
                "Write the corrected fact as a sentence"
            )
            expect(edit_card).to_have_attribute("data-status", "pending")
            form = edit_card.locator("details.decide-edit")
            expect(form.locator("input[name=object]")).to_have_value("Cloudflare Workers")
            expect(form.locator("input[name=content]")).to_be_focused()
            assert get_at(harness, "acme-web", "deploy_target")["object"] == "fly.io"

            # the corrected edit goes through
            page.keyboard.type("acme-web deploys to Cloudflare Workers")
            page.keyboard.press("Enter")
            expect(edit_card).to_have_attribute("data-status", "approved")
            expect(edit_card.locator(".decision-edit")).to_contain_text("SUPERSEDE")
            expect(page.locator("#toasts")).to_contain_text("with your edit: SUPERSEDE applied")
            expect(badge).to_have_attribute("data-count", "1")

            # the next pending card is selected by itself: r, then 2 picks "Not related" and rejects
            expect(reject_card).to_have_class(re.compile(r"\bis-selected\b"))
            page.keyboard.press("r")
            expect(reject_card.locator("details.decide-reject select[name=reason]")).to_be_focused()
            page.keyboard.press("2")
            expect(reject_card).to_have_attribute("data-status", "rejected")
            expect(reject_card.locator(".decision-reason")).to_have_text("not_related")
            expect(badge).to_have_attribute("data-count", "0")
            expect(page.locator("#desk-pending-count")).to_have_text("0")
            expect(page.locator("#toasts .toast-undo")).to_contain_text(
                f"Undo the rejection of item #{reject_id}"
            )
            assert page.evaluate("window.__sameDocument") is True  # swapped by HTMX, never reloaded

            # decided items stay on record under a filter kept in the URL
            page.select_option("#q-status", "decided")
            expect(page).to_have_url(re.compile(r"status=decided"))
            expect(page.locator("#desk .queue-card")).to_have_count(2)

            # the decision log of the edited item: who, what, why
            page.locator(f"#item-{edit_id} .decision-log-link").click()
            expect(page.locator("h1")).to_have_text(f"Decision log of item #{edit_id}")
            approved = page.locator("#review-log-table tr[data-action=review_approved]")
            expect(approved).to_have_count(1)
            expect(approved).to_contain_text("user:rex")
            expect(approved.locator(".log-reason")).to_have_text("corrected")
            assert page.evaluate("typeof window.__xss") == "undefined"
        finally:
            browser.close()
    assert errors == []

    # What the agent reads now, over MCP: the corrected value replaces the old one; the rejected pair is as it was
    corrected = get_at(harness, "acme-web", "deploy_target_v2")
    assert corrected["object"] == "Cloudflare Workers" and corrected["origin"] == "operator:review"
    assert get_at(harness, "acme-web", "deploy_target") is None
    hits = harness.ok("reader", "memory_search", {"query": "acme-web Cloudflare Workers", "limit": 10})
    assert corrected["id"] in {r["id"] for r in hits["results"]}
    assert get_at(harness, "ana", "lives_in")["object"] == "Paris"
    assert get_at(harness, "ana", "resides_in")["object"] == "Lyon"


@pytest.fixture
def busy_server(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    db_path = tmp_path / "review.sqlite3"
    info = provision_db(db_path, module="tests.review.review_provision_many")
    harness = HttpHarness(db_path, info["tokens"])
    try:
        yield harness, info
    finally:
        harness.close()


def test_a_reviewer_clears_more_than_a_page_with_the_keyboard_alone(busy_server):
    """Fourteen pending items, ten to a page: twelve low-confidence facts are confirmed with ``a`` then ``1``;
    when the page runs out of pending items the list reloads by itself and the next one is selected."""
    harness, info = busy_server
    agent = info["agent"]
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            page.goto(harness.base + "/login/")
            page.fill("#id_username", info["username"])
            page.fill("#id_password", info["password"])
            page.click("button[type=submit]")
            page.goto(harness.base + f"/agents/{agent}/review/")
            badge = page.locator("#review-count")
            expect(badge).to_have_attribute("data-count", "14")
            expect(page.locator("#desk .queue-card")).to_have_count(10)
            page.keyboard.press("j")
            for k, item_id in enumerate(info["doubtful"]):
                card = page.locator(f"#item-{item_id}")
                expect(card).to_have_class(re.compile(r"\bis-selected\b"))
                page.keyboard.press("a")
                expect(card.locator("details.decide-approve select[name=reason]")).to_be_focused()
                page.keyboard.press("1")
                expect(badge).to_have_attribute("data-count", str(13 - k))
                if k == 9:  # the page's last pending item: the list reloads with the next ones
                    expect(card).to_have_count(0)
                    expect(page.locator("#desk .queue-card")).to_have_count(4)
                else:
                    expect(card).to_have_attribute("data-status", "approved")
            # the list moved on to the conflicts, and selected the first one
            edit_card = page.locator(f"#item-{info['edit']['item']}")
            expect(edit_card).to_have_class(re.compile(r"\bis-selected\b"))
            expect(page.locator("#desk .queue-card[data-status=pending]")).to_have_count(2)
        finally:
            browser.close()
    assert errors == []
    statuses = harness.query("SELECT status, count(*) AS n FROM review_items GROUP BY status ORDER BY status")
    assert [(r["status"], r["n"]) for r in statuses] == [("approved", 12), ("pending", 2)]
