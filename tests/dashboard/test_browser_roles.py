"""A browser journey per role (issue 19 "Done when"): viewer, reviewer, curator, admin and another team's admin
walk the dashboard in Chromium at 1440×900 and at 390×844, each on a private copy of the seeded demo
(``roles_server``: ``seed_demo`` plus four held batches, one from an external MCP token).

Every step saves a screenshot under ``var/test-artifacts/<role>/<width>/`` (gitignored; the path is printed):
- everyone: the agents list, the agent home (count tiles are links), the navigation for the role (behind Menu
  on a phone), search that finds a predicate and highlights it, the timeline chart (one rectangle per row,
  keyboard focus, the as-of crosshair), a memory with its provenance, no sideways scrolling;
- viewer: the desk and the audit log are refused in words, with no links to them;
- reviewer: the desk's compact list sorted by impact, a per-fact decision (approve four of five), a keyboard
  rejection with a number key, the decision in the audit log in words;
- curator: the review queue and its decision log, a wiki page with its diff, a held batch linking its token,
  undoing a merge from the audit log, restoring a removed wiki page and a retracted fact;
- admin: the token behind an origin, the operations page's guard settings and an origin purge preview;
- outsider (Northwind's admin): nothing of Acme's agent: the same 404 as an agent that does not exist, no link,
  no search hit.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from tests.dashboard.test_browser_a11y import WIDTHS, sign_in
from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "var" / "test-artifacts"
WRITTEN: set[str] = set()  # the roles whose screenshots this session wrote (conftest prints where)
STAFF_LINKS = ("#nav-quarantine", "#nav-audit", "#nav-operations")


class Journey:
    """One role's walk at one width: a page, where its screenshots go, and the shared checks."""

    def __init__(self, page: Page, base: str, info: dict[str, Any], role: str, width_name: str):
        self.page, self.base, self.info, self.role = page, base, info, role
        self.phone = width_name == "phone"
        self.dir = ARTIFACTS / role / width_name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.step = 0
        self.agent = f"{base}/agents/{info['agent']}"

    def shot(self, name: str) -> None:
        self.step += 1
        self.page.screenshot(path=str(self.dir / f"{self.step:02d}-{name}.png"), full_page=True)
        width = self.page.evaluate("document.documentElement.scrollWidth")
        assert width <= self.page.viewport_size["width"], (name, width, self.wider_than_viewport())

    def wider_than_viewport(self) -> list[str]:
        """The elements that stick out to the right (what makes a page scroll sideways)."""
        return self.page.evaluate(
            """(w) => [...document.querySelectorAll('body *')]
                 .filter(e => e.getBoundingClientRect().right > w + 1)
                 .slice(0, 8).map(e => `${e.tagName}#${e.id}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)""",
            self.page.viewport_size["width"],
        )

    def open_nav(self) -> None:
        if self.phone:
            toggle = self.page.locator("[data-nav-toggle]")
            expect(self.page.locator("#nav-links")).to_be_hidden()
            toggle.click()
            expect(toggle).to_have_attribute("aria-expanded", "true")

    # --- what every member of Acme walks through -------------------------------------------------------

    def member_basics(self) -> None:
        page, info = self.page, self.info
        page.goto(self.base + "/")
        expect(page.locator("#agents-table")).to_contain_text("Support bot")
        self.shot("agents")
        page.goto(self.agent + "/")
        expect(page.locator("h1")).to_have_text("Support bot")
        tiles = page.locator("#agent-counts a")
        assert tiles.count() >= 3  # count tiles are links
        self.open_nav()
        for link in ("#nav-graph", "#nav-insights", "#nav-wiki", "#nav-review", "#nav-mistakes"):
            expect(page.locator(link)).to_be_visible()
        staff = self.role != "viewer"
        for link in STAFF_LINKS:
            expect(page.locator(link)).to_have_count(1 if staff else 0)
        expect(page.locator("#nav-tokens")).to_have_count(1 if self.role == "admin" else 0)
        self.shot("agent-home-nav")

        # search finds a predicate (as you type) and marks the match
        page.goto(self.agent + "/memories/")
        page.locator("#q").press_sequentially("deploy", delay=25)
        results = page.locator("#results")
        expect(results).to_have_attribute("data-query", "deploy")
        expect(results.locator("mark").first).to_be_visible()
        expect(results.locator("tbody tr").first).to_be_visible()
        self.shot("search-deploy")

        # the timeline chart: a rectangle per row, keyboard focus, the as-of question as a crosshair
        page.goto(
            self.agent + "/timeline/?subject=Jordan%20Lee&predicate=marital_status&at=2026-01-01T00:00:00Z"
        )
        chart = page.locator("#timeline-chart")
        expect(chart).to_be_visible()
        boxes = chart.locator(".tl-box")
        assert boxes.count() >= 2
        boxes.first.focus()
        expect(boxes.first).to_be_focused()
        expect(page.locator("#timeline-crosshair")).to_have_count(1)
        self.shot("timeline-chart")

        # a memory, its provenance
        page.goto(f"{self.agent}/memories/{info['memory']}/")
        expect(page.locator("#memory-provenance")).to_be_visible()
        self.shot("memory")

    # --- per role --------------------------------------------------------------------------------------

    def viewer(self) -> None:
        page = self.page
        for path, words in (("/quarantine/", "reviewers only"), ("/audit/", "reviewers only")):
            response = page.goto(self.agent + path)
            assert response is not None and response.status == 403
            expect(page.locator("h1")).to_contain_text(words)
        self.shot("refused-in-words")
        page.goto(self.agent + "/review/")
        expect(page.locator("h1")).to_be_visible()
        expect(page.locator("#desk .queue-card form[method=post]")).to_have_count(0)  # reads, never decides
        self.shot("review-read-only")

    def reviewer(self) -> None:
        page, batches = self.page, self.info["batches"]
        page.goto(self.agent + "/quarantine/?sort=impact")
        cards = page.locator("#desk .queue-card")
        expect(cards.first).to_have_attribute("id", f"batch-{batches['supersedes']}")  # most impact first
        self.shot("desk-by-impact")

        # per-fact decision: approve four of five (one batch per width)
        batch = batches["spam"] if not self.phone else batches["fresh"]
        card = page.locator(f"#batch-{batch}")
        card.locator(
            ".queue-line"
        ).click()  # opens it (under its line on a phone, beside the list on a laptop)
        expect(card).to_have_class(re.compile(r"\bis-open\b"))
        if not self.phone:
            picks = card.locator("input.fact-pick")
            expect(picks).to_have_count(5)
            picks.nth(4).uncheck()
            card.locator("details.decide-approve summary").click()
            card.locator("details.decide-approve button[type=submit]").click()
            expect(page.locator("body")).to_contain_text("Approved 4 of 5 facts")
            self.shot("approved-four-of-five")
        else:  # by keyboard: r, then 1 (the first reason)
            page.keyboard.press("r")
            expect(card.locator("details.decide-reject")).to_have_attribute("open", "")
            page.keyboard.press("1")
            expect(page.locator("body")).to_contain_text("Rejected: 5 facts about “Kai Moreau”")
            self.shot("rejected-by-keyboard")

        page.goto(self.agent + "/audit/")
        first = page.locator("#audit-table .action-badge").first  # newest first, in words
        expect(first).to_have_text(re.compile("^Approved" if not self.phone else "^Rejected"))
        self.shot("audit-in-words")

    def curator(self) -> None:
        page, info = self.page, self.info
        page.goto(self.agent + "/review/")
        expect(page.locator("#desk .queue-card").first).to_be_visible()
        self.shot("review-queue")
        page.goto(self.agent + "/review/log/")
        expect(page.locator("h1")).to_be_visible()
        self.shot("decision-log")
        page.goto(f"{self.agent}/wiki/{info['wiki_page']}/")
        expect(page.locator("#wiki-diff-card")).to_be_visible()  # the diff since the last accepted revision
        expect(page.locator("#wiki-diff-base")).to_contain_text("revision")  # says what it compares
        expect(page.locator("#wiki-diff, #wiki-diff-empty")).to_have_count(0 if info["wiki_single"] else 1)
        self.shot("wiki-page")
        page.goto(f"{self.agent}/quarantine/?batch={info['batches']['token']}")
        card = page.locator(f"#batch-{info['batches']['token']}")
        expect(card.locator(".batch-origin-detail")).to_contain_text("help-widget")
        self.shot("batch-token-origin")
        self.take_back()

    def take_back(self) -> None:
        """Undo a merge from its audit log row, and restore a removed wiki page from the Removed list (one of
        each per width, issue 19 item 3)."""
        page, info = self.page, self.info
        merge = info["merges"][1 if self.phone else 0]
        page.goto(self.agent + "/audit/?action=alias_add")
        row = page.locator(f"#audit-{merge}")
        row.locator(f"#merge-undo-button-{merge}").click()
        expect(row.locator(".merge-undo-done")).to_contain_text("Undid the merge of")
        expect(row.locator(".merge-undo-button")).to_have_count(0)
        self.shot("merge-undone")
        page.goto(self.agent + "/audit/?action=merge_undone")
        expect(page.locator("#audit-table .action-badge").first).to_have_text("Merge undone")
        removed = info["removed_pages"][1 if self.phone else 0]
        page.goto(self.agent + "/wiki/?status=removed")
        page.locator(f"#wiki-restore-{removed} button").click()
        expect(page).to_have_url(re.compile(rf"/wiki/{removed}/$"))
        expect(page.locator("#wiki-page")).to_have_attribute("data-removed", "no")
        expect(page.locator("body")).to_contain_text("agents find it again")
        self.shot("wiki-restored")

        # a merge made on the graph page is undone from its Merged panel, in place (HTMX)
        page.goto(self.agent + "/graph/merge/preview/?canonical=%E6%9D%8E%E8%80%81%E9%97%86&alias=boss+li")
        acknowledge = page.locator("#merge-acknowledge")
        if acknowledge.count():
            acknowledge.check()
        page.locator("#merge-confirm-button").click()
        panel = page.locator("#merge-panel")
        expect(panel.locator("#merge-done")).to_contain_text("Merged “boss li”")
        panel.locator(".merge-undo-button").click()
        expect(panel.locator(".merge-undo-done")).to_contain_text("“boss li” is its own name again")
        self.shot("merge-undone-in-panel")

        # a fact a curator retracted is restored from its page, with a reason
        fact = info["retracted"][1 if self.phone else 0]
        page.goto(f"{self.agent}/memories/{fact}/")
        restore = page.locator("#memory-restore")
        restore.locator("select[name=reason]").select_option("mistake")
        restore.locator("button[type=submit]").click()
        expect(page.locator("body")).to_contain_text("Restored: ")
        expect(page.locator("#memory-restore")).to_have_count(0)
        self.shot("fact-restored")
        page.goto(self.agent + "/audit/?action=curator_restore")
        expect(page.locator("#audit-table .action-badge").first).to_have_text("Restored a fact")

    def admin(self) -> None:
        page, info = self.page, self.info
        page.goto(f"{self.agent}/quarantine/?batch={info['batches']['token']}")
        card = page.locator(f"#batch-{info['batches']['token']}")
        card.locator("a.token-link").click()
        expect(page).to_have_url(re.compile(rf"/tokens/#token-{info['token']}$"))
        expect(page.locator(f"#token-{info['token']}")).to_contain_text("help-widget")
        self.shot("token-of-origin")
        page.goto(self.agent + "/operations/")
        expect(page.locator("#guard-state")).to_be_visible()
        origin = "channel:telegram-991"
        page.locator("#purge-origin").fill(origin)
        page.locator("#purge-preview-submit").click()
        expect(page.locator("#purge-preview")).to_be_visible()
        expect(page.locator("#purge-confirm-help")).to_contain_text(origin)
        self.shot("purge-preview")

    def outsider(self) -> None:
        page, info = self.page, self.info
        page.goto(self.base + "/")
        table = page.locator("#agents-table")
        expect(table).to_contain_text("Research bot")
        expect(table).not_to_contain_text("Support bot")
        expect(page.locator(f'a[href*="/agents/{info["agent"]}/"]')).to_have_count(0)
        self.shot("agents-own-team-only")
        hidden = page.goto(self.agent + "/quarantine/")
        hidden_main = page.locator("main").inner_html()
        missing = page.goto(self.base + "/agents/no-such-agent/quarantine/")
        assert hidden is not None and missing is not None
        assert hidden.status == missing.status == 404
        assert hidden_main == page.locator("main").inner_html()
        assert "Support bot" not in hidden_main
        self.shot("other-team-is-404")
        page.goto(f"{self.base}/agents/{info['other_agent']}/memories/?q=Jordan")
        expect(page.locator("#results")).to_have_attribute("data-query", "Jordan")
        expect(page.locator("#results")).not_to_contain_text("Jordan Lee")
        self.open_nav()
        expect(page.locator("#nav-tokens")).to_be_visible()  # an admin, of its own team
        self.shot("own-agent-search")


@pytest.mark.parametrize("role", ["viewer", "reviewer", "curator", "admin", "outsider"])
def test_journey_per_role_at_both_widths(roles_server, role):
    harness, info = roles_server
    shutil.rmtree(ARTIFACTS / role, ignore_errors=True)  # this run's screenshots only
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            for width_name, (width, height) in WIDTHS.items():
                phone = width_name == "phone"
                page = browser.new_page(
                    viewport={"width": width, "height": height}, is_mobile=phone, has_touch=phone
                )
                page.set_default_timeout(15_000)
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
                refused = re.compile(r"Failed to load resource: .* status of 40[34]")  # the refusals we open
                sign_in(page, harness.base, info["users"][role], info["password"])
                journey = Journey(page, harness.base, info, role, width_name)
                if role != "outsider":
                    journey.member_basics()
                getattr(journey, role)()
                page.close()
        finally:
            browser.close()
    WRITTEN.add(role)
    print(f"screenshots: {ARTIFACTS / role}")
    assert [e for e in errors if not refused.match(e)] == []
    assert len(list((ARTIFACTS / role).glob("*/*.png"))) >= 4
