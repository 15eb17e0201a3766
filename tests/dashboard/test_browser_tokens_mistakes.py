"""Tokens and the mistake notebook in a real browser (Playwright driving Debian's Chromium).

Admin: agent → Tokens → create (HTMX swap, secret shown once) → revoke (confirm, row swapped, toast) → the token
no longer authenticates. Member: notebook → filter (HTMX swap, URL updated) → rule link → preview as you type,
where stored markup stays text. No page raises a JS error.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect, sync_playwright

from memory import engine
from tests.conftest import PASSWORD
from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS

XSS = "<script>window.__xss=1</script>"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def notebook(agent):
    aid = agent.agent_id
    for i in range(3):
        engine.record_mistake(
            agent_id=aid,
            category="factual",
            input_summary=f"refund question {i}",
            what_went_wrong=f"quoted the wrong refund window {i}",
            ground_truth="30 days",
        )
    (rule,) = engine.maybe_consolidate(agent_id=aid)
    engine.record_mistake(
        agent_id=aid,
        category="safety",
        input_summary=f"customer pasted {XSS}",
        what_went_wrong=f"echoed {XSS} back",
        session_id="s-9",
    )
    return rule.rule_id


def sign_in(page, base: str, username: str) -> None:
    page.goto(base + "/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("#toasts")).to_contain_text(f"Signed in as {username}.")


def test_tokens_and_mistakes_journey(live_server, agent, team_admin, notebook, monkeypatch):
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
            dialogs: list[str] = []

            def accept(dialog) -> None:  # noqa: ANN001
                dialogs.append(dialog.message)
                dialog.accept()

            page.on("dialog", accept)
            sign_in(page, base, team_admin.username)

            # Agent → Tokens
            page.goto(base + f"/agents/{agent.agent_id}/")
            page.click("#tokens-link")
            expect(page.locator("h1")).to_have_text("Agent tokens")
            page.evaluate("window.__sameDocument = true")

            # A bad submit shows the error in place
            page.fill("#id_name", "browser bot")
            page.click("#token-form button[type=submit]")
            expect(page.locator("#token-form .field-error")).to_contain_text("Pick at least one scope.")
            expect(page.locator("#id_name")).to_have_value("browser bot")

            # Create: the secret shows once, with the warning, swapped in by HTMX
            page.check('input[name=scopes][value="memory:read"]')
            page.check('input[name=scopes][value="memory:write"]')
            page.click("#token-form button[type=submit]")
            expect(page.locator("#new-token")).to_contain_text("will not be shown again")
            secret = page.locator("#token-secret").input_value()
            assert re.fullmatch(r"mdk_[0-9a-f]{8}_[A-Za-z0-9_-]+", secret)
            assert page.evaluate("window.__sameDocument") is True
            page.click("#new-token [data-copy]")
            expect(page.locator("#new-token [data-copy]")).not_to_have_text("Copy")
            principal = engine.authenticate(secret)
            row = page.locator(f"#token-{principal.token_id}")
            expect(row).to_have_attribute("data-state", "active")
            expect(row).to_contain_text("browser bot")

            # Revoke: confirmation, the row is swapped in place, a toast says so
            row.locator("button", has_text="Revoke").click()
            expect(row).to_have_attribute("data-state", "revoked")
            expect(page.locator("#toasts")).to_contain_text("Token “browser bot” revoked.")
            assert dialogs and "browser bot" in dialogs[0]
            assert page.evaluate("window.__sameDocument") is True
            with pytest.raises(engine.Unauthorized):
                engine.authenticate(secret)

            # Reloading never shows the secret again
            page.reload()
            expect(page.locator("#tokens-table")).to_be_visible()
            assert secret not in page.content()

            # Mistake notebook: filter swaps the table and keeps the filter in the URL
            page.goto(base + f"/agents/{agent.agent_id}/")
            page.click("#mistakes-link")
            expect(page.locator("#mistake-table tbody tr")).to_have_count(4)
            page.evaluate("window.__sameDocument = true")
            page.select_option("#resolved", "resolved")
            expect(page.locator("#mistake-results")).to_have_attribute("data-resolved", "resolved")
            expect(page.locator("#mistake-table tbody tr")).to_have_count(3)
            expect(page).to_have_url(re.compile(r"resolved=resolved"))
            page.select_option("#resolved", "open")
            expect(page.locator("#mistake-table tbody tr")).to_have_count(1)
            expect(page.locator("#mistake-table")).to_contain_text(f"echoed {XSS} back")
            assert page.evaluate("window.__sameDocument") is True

            # Preview as you type: the engine's block, stored markup as text
            page.locator("#message").press_sequentially("customer pasted", delay=30)
            expect(page.locator("#preview-block")).to_contain_text("## Past Mistakes to Avoid")
            expect(page.locator("#preview-block")).to_contain_text("script")
            expect(page.locator("#preview-recalled li")).to_have_count(1)
            assert page.evaluate("typeof window.__xss") == "undefined"

            # The rule a consolidated mistake points to
            page.select_option("#resolved", "resolved")
            expect(page.locator("#mistake-table tbody tr")).to_have_count(3)
            page.locator("#mistake-table .rule-link").first.click()
            expect(page).to_have_url(re.compile(rf"/memories/{notebook}/$"))
            expect(page.locator("#memory-content")).to_contain_text("Recurring factual issues")
        finally:
            browser.close()
    assert errors == []
