"""The wiki journey end to end (issue 6, "Done when"): a real MCP client, a real server, a real browser.

One uvicorn child serves ``config.asgi`` (the dashboard and ``/mcp``) on a temporary SQLite file. The agent
publishes an SOP over MCP (``wiki_publish_auto``, the official client), plus an equally relevant reference page
and a charter; the SOP is under ``auto/`` at trust 0.300 with one pointer row. Debian's Chromium signs in as a
curator, filters the browser to SOPs, opens the page, reads the diff, edits the text, then promotes it with a
reason (HTMX swaps, no reload). ``wiki_search`` (an admin token of the same agent: SPEC A3 leaves the tool to
admin) now ranks the SOP above the equally relevant reference page. The curator removes the reference page; the agent's other channel memories are untouched.

Provisioning runs in a child process: ``python -m tests.wiki.test_browser_wiki`` (the ``__main__`` block).
"""

from __future__ import annotations

import json
import os
import re
import sys

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.mcp.harness import HttpHarness
from tests.mcp.harness import provision as provision_db

# as in tests/dashboard/test_browser_journey.py (not imported: that module loads Django models, and this one
# must import before django.setup() when it runs as the provisioning child)
CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

pytestmark = pytest.mark.browser
AGENT = "wiki-bot"
CURATOR = "cora"
PASSWORD = "correct-horse-battery"
XSS = "<script>window.__xss=1</script>"
QUERY = "refund escalation"
TITLE = "Refund escalation"
SUMMARY = "How to escalate a refund request that is over the limit."
TEXT = (
    "## Steps\n\n"
    "1. Check the purchase date: refunds are possible within **30 days**.\n"
    "2. Over $500, ask the team lead on duty to approve.\n"
    f"3. Never paste customer markup into the console: {XSS}\n"
)


def provision() -> dict:
    """A migrated database: a team, a curator who signs in, the agent, its MCP token, and two memories the
    agent learned from a channel (they must survive a page's removal)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from memory import engine
    from memory.models import Agent, Membership, Role, Team

    call_command("migrate", verbosity=0, interactive=False)
    team = Team.objects.create(name="Acme Support", slug="acme")
    user = get_user_model().objects.create_user(CURATOR, password=PASSWORD)
    Membership.objects.create(team=team, user=user, role=Role.CURATOR)
    Agent.objects.create(agent_id=AGENT, display_name="Wiki bot", team=team)
    token, secret = engine.token_create(
        agent_id=AGENT, scopes=["memory:read", "memory:write"], name="agent", actor="user:ada"
    )
    admin, admin_secret = engine.token_create(
        agent_id=AGENT, scopes=["admin"], name="search", actor="user:ada"
    )  # wiki_search needs admin (SPEC A3 does not list it)
    channel = [
        engine.store(agent_id=AGENT, content="The customer asked about a refund for order 1182", origin="channel").id,
        engine.store_temporal(
            agent_id=AGENT, content="Globex is on the Pro plan", subject="globex", predicate="plan", object="Pro",
            origin="channel",
        ).id,
    ]  # fmt: skip
    tokens = {
        "agent": {"id": token.id, "agent": AGENT, "secret": secret},
        "admin": {"id": admin.id, "agent": AGENT, "secret": admin_secret},
    }
    return {"tokens": tokens, "channel": channel}


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMDESK_CONFIG", str(tmp_path / "absent.toml"))
    db_path = tmp_path / "wiki.sqlite3"
    info = provision_db(db_path, module="tests.wiki.test_browser_wiki")
    harness = HttpHarness(db_path, info["tokens"])
    try:
        yield harness, info
    finally:
        harness.close()


def publish(harness: HttpHarness, doc_type: str, slug: str, **kw) -> dict:
    args = {"doc_type": doc_type, "slug": slug, "title": TITLE, "summary": SUMMARY, "original_text": TEXT}
    return harness.ok("agent", "wiki_publish_auto", {**args, **kw})


def page_id(harness: HttpHarness, path: str) -> int:
    namespace, doc_type, slug = path.split("/")
    rows = harness.query("SELECT id FROM wiki_pages WHERE agent_id = ? AND doc_type = ? AND slug = ?",
                         AGENT, doc_type, slug)  # fmt: skip
    assert len(rows) == 1
    return int(rows[0]["id"])


def current_rows(harness: HttpHarness, subject: str) -> list:
    return harness.query(
        "SELECT * FROM memories WHERE agent_id = ? AND subject = ? AND valid_until IS NULL"
        " AND invalidated_at IS NULL AND quarantined = 0",
        AGENT,
        subject,
    )


def test_agent_publishes_curator_promotes_and_removes(server):
    harness, info = server
    base = harness.base

    # The agent publishes an SOP over MCP: auto/, trust 0.300, one pointer row without the text
    sop = publish(harness, "sop", "refund-escalation", tags=["billing"])
    assert (sop["path"], sop["source_type"], sop["outcome"]) == (
        "auto/sop/refund-escalation",
        "raw_dialogue",
        "created",
    )
    assert f"{sop['trust']:.3f}" == "0.300"
    (pointer,) = current_rows(harness, "wiki:auto/sop/refund-escalation")
    assert pointer["id"] == sop["pointer_id"] and pointer["predicate"] == "documented_in"
    assert (pointer["object"], pointer["origin"]) == ("auto/sop/refund-escalation", "channel")
    assert pointer["origin_trust"] == pytest.approx(0.3)
    assert "within **30 days**" not in pointer["content"] and SUMMARY not in pointer["content"]
    # ...an equally relevant reference page (same title, summary and text), and a charter
    ref = publish(harness, "reference", "refund-escalation-notes")
    charter = publish(harness, "charter", "support-team", title="Support team charter",
                      summary="Who we serve.", original_text="Answer every paying customer within a day.")  # fmt: skip
    before = harness.ok("admin", "wiki_search", {"query": QUERY})["results"]
    assert {r["path"] for r in before[:2]} == {sop["path"], ref["path"]}
    assert before[0]["score"] == pytest.approx(before[1]["score"])  # equally relevant, equally trusted
    sop_id, ref_id = page_id(harness, sop["path"]), page_id(harness, ref["path"])

    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)

            page.goto(base + "/login/")
            page.fill("#id_username", CURATOR)
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            expect(page.locator("#toasts")).to_contain_text(f"Signed in as {CURATOR}.")
            page.goto(base + f"/agents/{AGENT}/")
            page.click("#nav-wiki")
            expect(page.locator("h1")).to_have_text("Wiki")
            rows = page.locator("#wiki-table tbody tr")
            expect(rows).to_have_count(3)
            sop_row = page.locator(f"#wiki-row-{sop_id}")
            expect(sop_row.locator(".badge.wiki-auto")).to_have_text("auto")
            expect(sop_row.locator(".wiki-trust")).to_have_text("0.300")

            # Filter to SOPs: an HTMX swap, the filter in the URL
            page.evaluate("window.__sameDocument = true")
            page.select_option("#wiki-doc-type", "sop")
            expect(page).to_have_url(re.compile(r"doc_type=sop"))
            expect(rows).to_have_count(1)
            expect(sop_row).to_be_visible()
            assert page.evaluate("window.__sameDocument") is True

            # The page: auto label, frontmatter, provenance, the diff (nothing accepted yet)
            sop_row.locator(".wiki-link").click()
            expect(page.locator("#wiki-title")).to_have_text(TITLE)
            expect(page.locator("#wiki-auto-banner")).to_contain_text("Auto page.")
            expect(page.locator("#wiki-trust")).to_have_text("0.300")
            expect(page.locator("#wiki-source-type")).to_have_text("raw_dialogue")
            expect(page.locator("#wiki-pointer-link")).to_have_text(sop["pointer_id"])
            expect(page.locator("#wiki-pointer-trust")).to_have_text("0.300")
            expect(page.locator("#wiki-diff-base")).to_contain_text("revision 1 is the only one")
            expect(page.locator("#wiki-diff")).to_have_count(0)  # nothing to compare yet, not "all added"
            # the stored markup is text, never run
            expect(page.locator("#wiki-text")).to_contain_text(XSS)
            assert page.evaluate("typeof window.__xss") == "undefined"
            page.evaluate("window.__sameDocument = true")

            # Edit before promoting
            page.locator("#wiki-edit summary").click()
            text = page.locator("#id_original_text")
            text.fill(text.input_value().replace("30 days", "45 days"))
            page.fill("#id_reason", "the refund window is 45 days since March")
            page.locator("#wiki-edit-form button[type=submit]").click()
            expect(page.locator("#toasts")).to_contain_text("Saved revision 2")
            expect(page.locator("#wiki-revisions tbody tr")).to_have_count(2)
            expect(page.locator("#rev-2 .revision-reason")).to_have_text(
                "the refund window is 45 days since March"
            )
            expect(page.locator("#wiki-text strong")).to_have_text("45 days")
            expect(page.locator("#wiki-diff .diff-add .diff-word")).to_have_text(["45"])
            expect(page.locator("#wiki-diff .diff-del .diff-word")).to_have_text(["30"])

            # Promote: the reason is required (the browser will not send an empty one)
            page.locator("#wiki-promote summary").click()
            page.locator("#wiki-promote-form button[type=submit]").click()
            expect(page.locator("#wiki-page")).to_have_attribute("data-namespace", "auto")
            page.fill("#id_promote-reason", "checked against the billing handbook")
            page.locator("#wiki-promote-form button[type=submit]").click()
            expect(page.locator("#wiki-page")).to_have_attribute("data-namespace", "curated")
            expect(page.locator("#wiki-outcome")).to_contain_text("trust is now 0.800")
            expect(page.locator("#toasts")).to_contain_text("trust is now 0.800")
            expect(page.locator("#toasts")).to_contain_text("pointer row now has trust 0.800")
            expect(page.locator("#wiki-curated-banner")).to_be_visible()
            expect(page.locator("#wiki-path")).to_have_text("curated/sop/refund-escalation")
            expect(page.locator("#wiki-trust")).to_have_text("0.800")
            expect(page.locator("#wiki-source-type")).to_have_text("user_statement")
            expect(page.locator("#wiki-pointer-trust")).to_have_text("0.800")
            expect(page.locator("#rev-2 .wiki-accepted")).to_have_text("accepted")
            expect(page.locator("#wiki-diff-empty")).to_be_visible()
            expect(page.locator("#wiki-promote")).to_have_count(0)
            assert page.evaluate("window.__sameDocument") is True
            page.screenshot(path=str(harness.log_dir / "wiki-promoted.png"), full_page=True)

            # Remove the reference page with a reason
            page.goto(base + f"/agents/{AGENT}/wiki/{ref_id}/")
            page.locator("#wiki-remove summary").click()
            page.fill("#id_remove-reason", "duplicate of the curated SOP")
            page.locator("#wiki-remove-form button[type=submit]").click()
            expect(page.locator("#wiki-removed-banner")).to_contain_text("duplicate of the curated SOP")
            expect(page.locator("#toasts")).to_contain_text("Removed auto/reference/refund-escalation-notes")
            expect(page.locator("#wiki-actions")).to_have_count(0)
            page.goto(base + f"/agents/{AGENT}/wiki/")
            expect(rows).to_have_count(2)
            expect(page.locator(f"#wiki-row-{sop_id} .badge.wiki-curated")).to_have_text("curated")
            page.select_option("#wiki-status", "removed")
            expect(rows).to_have_count(1)
            expect(page.locator(f"#wiki-row-{ref_id}")).to_be_visible()
        finally:
            browser.close()
    assert errors == []

    # The agent's wiki search now ranks the curated SOP first; the removed page is gone
    after = harness.ok("admin", "wiki_search", {"query": QUERY})["results"]
    assert after[0]["path"] == "curated/sop/refund-escalation"
    assert (f"{after[0]['trust']:.3f}", after[0]["source_type"]) == ("0.800", "user_statement")
    assert ref["path"] not in {r["path"] for r in after}
    (pointer,) = current_rows(harness, "wiki:auto/sop/refund-escalation")
    assert (
        pointer["origin_trust"] == pytest.approx(0.8) and pointer["object"] == "curated/sop/refund-escalation"
    )
    # Before the removal the reference page was equally relevant: the promotion alone put the SOP first
    harness_scores = {r["path"]: r["score"] for r in before}
    assert after[0]["score"] > harness_scores[ref["path"]]

    # Removal expired only the reference page's pointer row; the other channel memories are intact
    assert current_rows(harness, "wiki:auto/reference/refund-escalation-notes") == []
    expired = harness.query("SELECT invalidated_by_event FROM memories WHERE id = ?", ref["pointer_id"])
    assert expired[0]["invalidated_by_event"] == "auto_page_removed"
    (charter_pointer,) = current_rows(harness, "wiki:auto/charter/support-team")
    assert charter_pointer["id"] == charter["pointer_id"] and charter_pointer["origin"] == "channel"
    for memory_id in info["channel"]:
        row = harness.row(memory_id)
        assert row["valid_until"] is None and row["invalidated_at"] is None, memory_id
    fetched = harness.ok("agent", "memory_fetch_batch", {"ids": info["channel"]})
    assert {m["id"] for m in fetched["memories"]} == set(info["channel"])


if __name__ == "__main__":
    sys.stdout.write(json.dumps(provision()) + "\n")
