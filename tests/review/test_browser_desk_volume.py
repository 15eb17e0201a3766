"""The desk at volume in a real browser (issue 19 items 1–2): a reviewer clears 50 held batches with the
keyboard alone, and the keystrokes are counted.

One uvicorn child serves a SQLite file provisioned with 50 batches (``desk_volume_provision``): every fifth
would supersede a fact the user told the agent. Chromium signs in and opens the desk; from then on only
``page.keyboard`` is used. A batch that supersedes nothing is approved with ``a`` alone (no reason is asked);
one that supersedes is approved with ``a`` then ``1`` (the first reason); every seventh is rejected with ``r``
then ``1``. After each decision the next pending batch is selected by itself, across pages. The test counts
every key it presses and checks the outcome in the database: at most two keys per batch.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS
from tests.mcp.harness import HttpHarness
from tests.mcp.harness import provision as provision_db

pytestmark = pytest.mark.browser


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    db_path = tmp_path / "desk.sqlite3"
    info = provision_db(db_path, module="tests.review.desk_volume_provision")
    harness = HttpHarness(db_path, info["tokens"])
    try:
        yield harness, info
    finally:
        harness.close()


def sign_in(page, harness: HttpHarness, username: str, password: str) -> None:  # noqa: ANN001
    page.goto(harness.base + "/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    expect(page.locator("#toasts")).to_contain_text(f"Signed in as {username}.")


def test_a_reviewer_clears_fifty_batches_with_the_keyboard_alone(server):
    harness, info = server
    agent, total = info["agent"], info["batches"]
    errors: list[str] = []
    keys: list[str] = []
    decided: dict[int, str] = {}
    with_reason = 0  # decisions that needed a reason: a rejection, or an approval that supersedes
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            sign_in(page, harness, info["username"], info["password"])
            page.goto(harness.base + f"/agents/{agent}/quarantine/")
            count = page.locator("#desk-pending-count")
            expect(count).to_have_attribute("data-count", str(total))
            # the compact list: one line per batch, only one open; the page is far shorter than 20 open cards
            expect(page.locator("#desk .queue-card")).to_have_count(20)
            expect(page.locator("#desk .queue-card.is-open")).to_have_count(1)
            assert page.evaluate("document.documentElement.scrollHeight") < 2400

            def press(key: str) -> None:
                keys.append(key)
                page.keyboard.press(key)

            for n in range(total):
                if n == 0:
                    current = page.locator("#desk .queue-card").first  # a/r select the first item themselves
                else:
                    current = page.locator("#desk .queue-card.is-selected[data-status=pending]")
                    expect(current).to_have_count(1)
                batch = int(current.get_attribute("data-item") or "0")
                supersedes = current.locator(".line-impact-high").count() == 1
                if n % 7 == 3 or supersedes:
                    with_reason += 1
                if n % 7 == 3:
                    press("r")
                    expect(current.locator("details.decide-reject select[name=reason]")).to_be_focused()
                    press("1")
                    decided[batch] = "denied"
                elif supersedes:
                    press("a")
                    expect(current.locator("details.decide-approve select[name=reason]")).to_be_focused()
                    press("1")
                    decided[batch] = "approved"
                else:
                    press("a")
                    decided[batch] = "approved"
                expect(count).to_have_attribute("data-count", str(total - n - 1))
            expect(page.locator("#quarantine-count")).to_have_attribute("data-count", "0")
        finally:
            browser.close()
    assert errors == []
    assert len(decided) == total
    assert len(keys) <= 2 * total
    rows = harness.query("SELECT id, status, decision_reason, decided_by FROM approvals")
    assert {int(r["id"]): r["status"] for r in rows} == decided
    assert {r["decided_by"] for r in rows} == {f"user:{info['username']}"}
    # approvals that superseded nothing were recorded as verified without a reason being asked
    assert {r["decision_reason"] for r in rows if r["status"] == "approved"} == {"verified"}
    assert {r["decision_reason"] for r in rows if r["status"] == "denied"} == {"wrong"}
    # one key for most batches, two when a reason is needed (a superseding approval or a rejection)
    assert with_reason >= len(info["superseding"])
    assert len(keys) == total + with_reason and re.fullmatch(r"[ar1]+", "".join(keys))
    print(f"keystrokes: {len(keys)} for {total} batches")  # noqa: T201
