"""The quarantine journey end to end: a real MCP client, a real server, a real browser, one database.

One uvicorn child serves ``config.asgi`` (the dashboard and ``/mcp``) on a temporary SQLite file (the MCP test
harness). An external MCP token sends two bursts of six facts about two subjects: both are quarantined and
``memory_search`` finds none of them. Debian's Chromium then signs in as a reviewer, opens the desk from the
navigation badge, claims one batch with the keyboard (a second reviewer sees the claim, with disabled buttons), rejects
it (its facts include an HTML/JS payload, which shows as text), undoes the reject with ``u`` and rejects it
again; a second tab approves the other batch with the mouse, undoes it from the toast (the agent stops seeing
it over MCP) and approves it again; the badge follows by out-of-band swaps. Finally ``memory_search`` over MCP
returns the approved facts and not the rejected ones.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS
from tests.mcp.harness import HttpHarness
from tests.mcp.harness import provision as provision_db

pytestmark = pytest.mark.browser
XSS = "<script>window.__xss=1</script>"
REJECTED = "zanzibar"  # a word only the batch to reject uses
APPROVED = "quokka"  # a word only the batch to approve uses


@pytest.fixture
def server(tmp_path, monkeypatch):
    """uvicorn on a provisioned SQLite file, with the burst guard at its defaults (5 per subject per hour)."""
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    db_path = tmp_path / "desk.sqlite3"
    info = provision_db(db_path, module="tests.review.quarantine_provision")
    harness = HttpHarness(db_path, info["tokens"])
    try:
        yield harness, info
    finally:
        harness.close()


def send_burst(harness: HttpHarness, subject: str, word: str, *, payload: str | None = None) -> list[str]:
    """Six facts about ``subject`` over MCP; the fifth trips the guard and the whole batch is held."""
    ids, outcomes = [], []
    for k in range(6):
        content = payload if (payload and k == 2) else f"{subject} fact {k}: the {word} detail number {k}"
        reply = harness.ok(
            "ext",
            "memory_store_fact",
            {"content": content, "subject": subject, "predicate": f"detail_{k}", "object": f"{word}-{k}"},
        )
        ids.append(reply["id"])
        outcomes.append(reply["outcome"])
    assert outcomes == ["stored"] * 4 + ["quarantined"] * 2
    return ids


def search(harness: HttpHarness, query: str) -> set[str]:
    reply = harness.ok("ext", "memory_search", {"query": query, "limit": 50})
    return {r["id"] for r in reply["results"]}


def batch_of(harness: HttpHarness, subject: str) -> int:
    rows = harness.query("SELECT id FROM approvals WHERE subject = ? AND status = 'pending'", subject)
    assert len(rows) == 1, subject
    return int(rows[0]["id"])


def test_reviewer_rejects_and_approves_and_the_agent_sees_the_outcome(server):
    harness, info = server
    agent = info["agent"]
    rejected_ids = send_burst(harness, "acme-pricing", REJECTED, payload=XSS)
    approved_ids = send_burst(harness, "globex-office", APPROVED)
    # quarantined: invisible to the agent
    assert search(harness, REJECTED) == set() and search(harness, APPROVED) == set()
    to_reject, to_approve = batch_of(harness, "acme-pricing"), batch_of(harness, "globex-office")

    errors: list[str] = []
    dialogs: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1366, "height": 900})  # two tabs, one session
            page = context.new_page()
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            # Chromium logs every 4xx response as a console error; the refused decision below is expected
            page.on(
                "console",
                lambda msg: (
                    errors.append(msg.text)
                    if msg.type == "error" and "status of 409" not in msg.text
                    else None
                ),
            )

            def dismiss(dialog) -> None:  # noqa: ANN001
                dialogs.append(dialog.message)
                dialog.dismiss()

            page.on("dialog", dismiss)

            # Sign in, open the agent: the navigation badge counts the pending batches
            page.goto(harness.base + "/login/")
            page.fill("#id_username", info["username"])
            page.fill("#id_password", info["password"])
            page.click("button[type=submit]")
            expect(page.locator("#toasts")).to_contain_text(f"Signed in as {info['username']}.")
            page.goto(harness.base + f"/agents/{agent}/")
            badge = page.locator("#quarantine-count")
            expect(badge).to_have_attribute("data-count", "2")
            expect(badge).to_contain_text("(2)")

            # The desk: two decision cards, soonest expiry first, with a live countdown
            page.click("#nav-quarantine")
            expect(page.locator("h1")).to_have_text("Quarantine desk")
            cards = page.locator("#desk .queue-card")
            expect(cards).to_have_count(2)
            expect(cards.nth(0)).to_have_attribute("id", f"batch-{to_reject}")
            reject_card = page.locator(f"#batch-{to_reject}")
            approve_card = page.locator(f"#batch-{to_approve}")
            expect(reject_card.locator("[role=timer]")).to_have_text(re.compile(r"^2[34] h \d\d min left$"))
            expect(reject_card.locator(".fact-row")).to_have_count(6)
            # the guard's reason in words, and the token behind the origin (name, created, last used)
            expect(reject_card.locator(".guard-reason")).to_contain_text(
                re.compile(
                    r"\d facts about “acme-pricing” from mcp_external:token-\d+ in 1 hour; the limit is 5"
                )
            )
            expect(reject_card.locator(".token-name")).to_have_text("“ext”")
            expect(reject_card.locator(".batch-origin-detail")).to_contain_text("last used")
            # the HTML/JS payload is text: shown verbatim, never run
            expect(reject_card.locator(".fact-content", has_text=XSS)).to_have_count(1)
            assert page.evaluate("typeof window.__xss") == "undefined"
            page.evaluate("window.__sameDocument = true")

            # Keyboard: ? shows the help, j selects the first card, s skips to the next, k goes back
            page.keyboard.press("?")
            expect(page.locator("#keys-help")).to_be_visible()
            page.keyboard.press("Escape")
            expect(page.locator("#keys-help")).to_be_hidden()
            page.keyboard.press("j")
            expect(reject_card).to_have_class(re.compile(r"\bis-selected\b"))
            page.keyboard.press("s")
            expect(approve_card).to_have_class(re.compile(r"\bis-selected\b"))
            page.keyboard.press("k")
            expect(reject_card).to_have_class(re.compile(r"\bis-selected\b"))

            # c claims the selected batch: the holder and the time left show on the card
            page.keyboard.press("c")
            expect(reject_card.locator(".claim-badge")).to_contain_text("Claimed by you")
            expect(reject_card.locator(".claim-left")).to_have_text(re.compile(r"^(9|10) min \d\d s left$"))

            # A second reviewer sees who holds it, and their reject is refused while the claim lasts
            ria = browser.new_context(viewport={"width": 1366, "height": 900})
            second = ria.new_page()
            second.set_default_timeout(15_000)
            second.on("pageerror", lambda exc: errors.append(str(exc)))
            second.goto(harness.base + "/login/")
            second.fill("#id_username", info["second_username"])
            second.fill("#id_password", info["password"])
            second.click("button[type=submit]")
            second.goto(harness.base + f"/agents/{agent}/quarantine/")
            held = second.locator(f"#batch-{to_reject}")
            expect(held.locator(".claim-holder")).to_have_text(f"user:{info['username']}")
            expect(held.locator(".claim-note")).to_contain_text("a decision by anyone else is refused")
            # its buttons are disabled for real (nothing to submit), with the holder and until when
            expect(held.locator(".decide-disabled button[disabled]")).to_have_count(2)
            expect(held.locator("form.decide-form")).to_have_count(0)
            expect(held.locator(".decide-disabled")).to_contain_text(f"Held by user:{info['username']} until")
            expect(held.locator(".takeover-form")).to_have_count(0)  # only an admin may take over
            second.keyboard.press("r")  # the keyboard says who holds it instead of opening a form
            expect(second.locator("#toasts")).to_contain_text(f"Claimed by user:{info['username']}")
            expect(held).to_have_attribute("data-status", "pending")
            ria.close()

            # r opens the reason picker; the reject goes through (the claim is the reviewer's own)
            page.keyboard.press("r")
            expect(reject_card.locator("details.decide-reject")).to_have_attribute("open", "")
            expect(reject_card.locator("details.decide-reject select[name=reason]")).to_be_focused()
            reject_card.locator("details.decide-reject select[name=reason]").select_option("wrong")
            reject_card.locator("details.decide-reject input[name=note]").press("Enter")
            expect(reject_card).to_have_attribute("data-status", "denied")
            expect(badge).to_have_attribute("data-count", "1")
            undo_toast = page.locator("#toasts .toast-undo")
            expect(undo_toast).to_contain_text(f"Undo the rejection of #{to_reject}")
            expect(undo_toast.locator(".undo-left")).to_have_text(re.compile(r"^\((2\d|30) s\)$"))

            # u undoes it: pending again, held by its reviewer, counted in the badge again
            page.keyboard.press("u")
            expect(reject_card).to_have_attribute("data-status", "pending")
            expect(reject_card.locator(".claim-badge")).to_contain_text("Claimed by you")
            expect(undo_toast).to_have_count(0)
            expect(badge).to_have_attribute("data-count", "2")
            expect(page.locator("#toasts")).to_contain_text(
                f"are held again (batch #{to_reject}, claimed by you)"
            )
            assert search(harness, REJECTED) == set()

            # ...and decided again, for the right reason
            expect(reject_card).to_have_class(re.compile(r"\bis-selected\b"))
            page.keyboard.press("r")
            expect(reject_card.locator("details.decide-reject select[name=reason]")).to_be_focused()
            reject_card.locator("details.decide-reject select[name=reason]").select_option("poisoning")
            reject_card.locator("details.decide-reject input[name=note]").fill("bot farm pushing prices")
            reject_card.locator("details.decide-reject input[name=note]").press("Enter")
            expect(reject_card).to_have_attribute("data-status", "denied")
            expect(reject_card.locator(".queue-outcome")).to_contain_text("Rejected: 6 facts")
            expect(reject_card.locator(".decision-reason")).to_have_text("poisoning: bot farm pushing prices")
            expect(badge).to_have_attribute("data-count", "1")  # out-of-band swap
            expect(page.locator("#desk-pending-count")).to_have_text("1")
            expect(page.locator("#toasts")).to_contain_text(
                "Rejected: 6 facts about “acme-pricing” retracted."
            )
            toasts = page.locator("#toasts .toast:visible")  # older ones have faded out by themselves
            while toasts.count():  # dismissed (they sit over the cards' corner)
                toasts.first.locator(".toast-close").click()
            expect(toasts).to_have_count(0)
            expect(reject_card.locator(".fact-content", has_text=XSS)).to_have_count(1)  # still text

            # The next pending card is selected by itself. Meanwhile a second tab approves it with the mouse,
            # undoes that from the toast (the agent stops seeing the facts), and approves it again
            expect(approve_card).to_have_class(re.compile(r"\bis-selected\b"))
            other = context.new_page()
            other.on("pageerror", lambda exc: errors.append(str(exc)))
            other.goto(harness.base + f"/agents/{agent}/quarantine/")
            other_card = other.locator(f"#batch-{to_approve}")
            other_card.locator("details.decide-approve summary").click()
            other_card.locator("details.decide-approve select[name=reason]").select_option(
                "legitimate_update"
            )
            other_card.locator("details.decide-approve button[type=submit]").click()
            expect(other_card).to_have_attribute("data-status", "approved")
            assert set(approved_ids) <= search(harness, APPROVED)
            other.locator("#toasts .toast-undo .toast-undo-button").click()
            expect(other_card).to_have_attribute("data-status", "pending")
            expect(other.locator("#quarantine-count")).to_have_attribute("data-count", "1")
            assert search(harness, APPROVED) == set()
            other_card.locator("details.decide-approve summary").click()
            other_card.locator("details.decide-approve select[name=reason]").select_option("verified")
            other_card.locator("details.decide-approve button[type=submit]").click()
            expect(other_card).to_have_attribute("data-status", "approved")
            expect(other_card.locator(".decision-reason")).to_have_text("verified")
            expect(other.locator("#quarantine-count")).to_have_attribute("data-count", "0")
            other.close()

            # ...so the first tab's late reject is refused in place (409), the card now shows the approval
            page.keyboard.press("r")
            late = approve_card.locator("details.decide-reject")
            expect(late).to_have_attribute("open", "")
            late.locator("select[name=reason]").select_option("duplicate")
            late.locator("button[type=submit]").click()
            expect(approve_card.locator(".queue-error")).to_contain_text(
                "already decided (approved by user:rex)"
            )
            expect(approve_card).to_have_attribute("data-status", "approved")
            expect(approve_card.locator(".decision-reason")).to_have_text("verified")
            expect(badge).to_have_attribute("data-count", "0")
            expect(page.locator("#desk-pending-count")).to_have_text("0")
            assert page.evaluate("window.__sameDocument") is True  # swapped by HTMX, never reloaded

            # Decided batches stay on record under the "decided" filter
            page.select_option("#q-status", "decided")
            expect(page.locator("#desk")).to_have_attribute("data-status", "decided")
            expect(page).to_have_url(re.compile(r"status=decided"))
            expect(page.locator("#desk .queue-card")).to_have_count(2)

            # The payload is text on the memory page too, and on the audit log
            reject_card = page.locator(f"#batch-{to_reject}")
            reject_card.locator(".queue-line").click()  # the compact list opens one batch at a time
            expect(reject_card).to_have_class(re.compile(r"\bis-open\b"))
            reject_card.locator(".fact-content", has_text=XSS).click()
            expect(page.locator("#memory-content")).to_have_text(XSS)
            page.goto(harness.base + f"/agents/{agent}/audit/?action=quarantine_denied")
            expect(page.locator("#audit-table tbody tr")).to_have_count(2)  # the undone one stays on record
            expect(page.locator("#audit-table")).to_contain_text("poisoning: bot farm pushing prices")
            page.goto(harness.base + f"/agents/{agent}/audit/?action=quarantine_undo")
            expect(page.locator("#audit-table tbody tr")).to_have_count(2)  # one undo per batch
            assert page.evaluate("typeof window.__xss") == "undefined"
        finally:
            browser.close()
    assert errors == [] and dialogs == []

    # What the agent reads now, over MCP: the approved facts, never the rejected ones
    assert set(approved_ids) <= search(harness, APPROVED)
    assert search(harness, REJECTED) == set()
    fetched = harness.ok("ext", "memory_fetch_batch", {"ids": rejected_ids + approved_ids})
    assert {m["id"] for m in fetched["memories"]} == set(approved_ids)


def sign_in(page, harness: HttpHarness, username: str, password: str) -> None:  # noqa: ANN001
    page.goto(harness.base + "/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    expect(page.locator("#toasts")).to_contain_text(f"Signed in as {username}.")


def test_bulk_reject_over_a_filter_leaves_another_reviewers_claim_alone(server):
    """Three bursts about "bulk-…" subjects and one other. A second reviewer claims one of the three; the
    first filters the desk by subject (the filter goes into the URL), opens "Reject all matching…", sees the
    count, the sample and the claimed batch left out, and confirms: the desk and the badge follow, the agent
    sees none of the rejected facts, and the claimed batch still waits."""
    harness, info = server
    agent = info["agent"]
    for subject, word in (("bulk-a", "ardvark"), ("bulk-b", "bison"), ("bulk-c", "caracal")):
        send_burst(harness, subject, word)
    send_burst(harness, "keep-me", "kiwi")
    a, b, c, keep = (batch_of(harness, s) for s in ("bulk-a", "bulk-b", "bulk-c", "keep-me"))
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            ria = browser.new_context(viewport={"width": 1366, "height": 900})
            second = ria.new_page()
            second.set_default_timeout(15_000)
            second.on("pageerror", lambda exc: errors.append(str(exc)))
            sign_in(second, harness, info["second_username"], info["password"])
            second.goto(harness.base + f"/agents/{agent}/quarantine/")
            second.locator(f"#batch-{b} .queue-line").click()  # opens it in the compact list
            second.locator(f"#batch-{b} .claim-form button").click()
            expect(second.locator(f"#batch-{b} .claim-badge")).to_contain_text("Claimed by you")
            ria.close()

            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            sign_in(page, harness, info["username"], info["password"])
            page.goto(harness.base + f"/agents/{agent}/quarantine/")
            expect(page.locator("#desk .queue-card")).to_have_count(4)
            page.fill("#q-subject", "bulk")
            page.press("#q-subject", "Enter")
            expect(page).to_have_url(re.compile(r"q=bulk"))
            expect(page.locator("#desk .queue-card")).to_have_count(3)
            expect(page.locator(f"#batch-{b} .claim-holder")).to_have_text(f"user:{info['second_username']}")

            page.click("#bulk-reject")
            panel = page.locator("#bulk-panel .bulk-panel")
            expect(panel.locator(".bulk-n")).to_have_text("2")
            expect(panel.locator(".bulk-sample li")).to_have_count(2)
            expect(panel.locator(".bulk-held")).to_contain_text(f"#{b} by user:{info['second_username']}")
            expect(panel.locator("input[name=confirm]")).to_have_count(0)  # 2 is under the threshold
            panel.locator("select[name=reason]").select_option("poisoning")
            panel.locator("input[name=note]").fill("one bot, three subjects")
            panel.locator("button[type=submit]").click()
            expect(panel.locator(".bulk-outcome")).to_have_text(
                "Rejected 2 batches. 1 held by another reviewer left alone."
            )
            # the desk reloads itself (same filter) and the badge counts down by out-of-band swap
            expect(page.locator("#desk .queue-card")).to_have_count(1)
            expect(page.locator(f"#batch-{b}")).to_have_attribute("data-status", "pending")
            expect(page.locator("#quarantine-count")).to_have_attribute("data-count", "2")
            page.locator("[data-close-bulk]").first.click()
            expect(page.locator("#bulk-panel .bulk-panel")).to_have_count(0)
            page.goto(harness.base + f"/agents/{agent}/audit/?action=quarantine_denied")
            expect(page.locator("#audit-table tbody tr")).to_have_count(2)  # one entry per batch
        finally:
            browser.close()
    assert errors == []
    assert search(harness, "ardvark") == set() and search(harness, "caracal") == set()
    statuses = {int(r["id"]): r["status"] for r in harness.query("SELECT id, status FROM approvals")}
    assert statuses == {a: "denied", b: "pending", c: "denied", keep: "pending"}
