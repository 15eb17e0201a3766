"""Accessibility in a real browser (issue 19 item 17): axe-core (vendored in tests/vendor/axe-core/, injected by
this test only, never served by the app) runs on every page, for each role that may open it, at 1440×900 and at
390×844, plus the states a page opens into (the phone menu, a decision form, the keyboard help, search results);
no serious or critical violation is allowed. The skip link is the first stop of the keyboard and lands in main.

One uvicorn child serves a copy of the seeded demo (``roles_server``); Chromium signs in as each demo user.
Identical markup is scanned once: a page whose ``main`` a lower role already got byte for byte (CSRF tokens
aside) at the same width is not scanned again, and the navigation bar is scanned once per role and width.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS

pytestmark = pytest.mark.browser

AXE_PATH = Path(__file__).resolve().parents[1] / "vendor" / "axe-core" / "axe.min.js"
AXE_VERSION = "4.14.1"
AXE_SHA256 = "KTSJmUUM3yhJqOcLeRL8LahahJ2jnA0NU5T1HUqe2Vw="  # the package's sri-history.json for this version
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
BLOCKING = ("serious", "critical")
WIDTHS = {"desktop": (1440, 900), "phone": (390, 844)}
ROLES = ("viewer", "reviewer", "curator", "admin")
RANK = {role: n for n, role in enumerate(ROLES)}


def pages(info: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(name, path, lowest role that may open it) for every page of the dashboard."""
    a = f"/agents/{info['agent']}"
    return [
        ("agents", "/", "viewer"),
        ("agent", f"{a}/", "viewer"),
        ("memories", f"{a}/memories/?status=all", "viewer"),
        ("search", f"{a}/memories/?q=deploy", "viewer"),
        ("memory", f"{a}/memories/{info['memory']}/", "viewer"),
        ("memory-retracted", f"{a}/memories/{info['retracted'][0]}/", "viewer"),  # a curator gets Restore
        ("timelines", f"{a}/timeline/", "viewer"),
        ("timeline", f"{a}/timeline/?subject=Jordan%20Lee&predicate=marital_status", "viewer"),
        ("graph", f"{a}/graph/", "viewer"),
        ("insights", f"{a}/insights/", "viewer"),
        ("wiki", f"{a}/wiki/", "viewer"),
        ("wiki-page", f"{a}/wiki/{info['wiki_page']}/", "viewer"),
        ("wiki-removed", f"{a}/wiki/?status=removed", "viewer"),  # a curator gets Restore buttons
        ("wiki-removed-page", f"{a}/wiki/{info['removed_pages'][0]}/", "viewer"),
        ("review", f"{a}/review/", "viewer"),
        ("review-log", f"{a}/review/log/", "viewer"),
        ("discoveries", f"{a}/discoveries/", "viewer"),
        ("mistakes", f"{a}/mistakes/", "viewer"),
        ("quarantine", f"{a}/quarantine/", "reviewer"),
        ("quarantine-decided", f"{a}/quarantine/?status=all", "reviewer"),
        ("audit", f"{a}/audit/", "reviewer"),
        ("operations", f"{a}/operations/", "reviewer"),
        ("tokens", f"{a}/tokens/", "admin"),
        ("refused", f"{a}/tokens/", "-"),  # the page a role below admin gets (403)
        ("missing", "/agents/no-such-agent/", "-"),  # 404
    ]


@functools.cache
def axe_source() -> str:
    data = AXE_PATH.read_bytes()
    assert base64.b64encode(hashlib.sha256(data).digest()).decode() == AXE_SHA256, (
        "tests/vendor/axe-core changed"
    )
    return data.decode("utf-8")


def axe_blocking(page: Page, *, include: str | None = None, exclude: tuple[str, ...] = ()) -> list[str]:
    """Serious and critical axe violations on the page as it is now, one line per rule and element."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source() + "\n;0")  # CDP evaluation: the page's CSP allows it
        assert page.evaluate("axe.version") == AXE_VERSION
    violations = page.evaluate(
        """async ([include, exclude, tags]) => {
             const context = {include: include ? [[include]] : [document], exclude: exclude.map(s => [s])};
             const r = await axe.run(context, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
             return r.violations.map(v => ({id: v.id, impact: v.impact,
                                             nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)}));
           }""",
        [include, list(exclude), AXE_TAGS],
    )
    return [
        f"{v['impact']} {v['id']}: {', '.join(v['nodes'])}" for v in violations if v["impact"] in BLOCKING
    ]


def signature(page: Page) -> str:
    html = page.evaluate("document.querySelector('main') ? document.querySelector('main').outerHTML : ''")
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", html)
    html = re.sub(r'data-server-now="[^"]*"|\b\d+:\d\d:\d\d\b|\b\d+ ?(s|min|h)\b', "", html)  # clocks tick
    return hashlib.sha256(html.encode()).hexdigest()


def sign_in(page: Page, base: str, username: str, password: str) -> None:
    page.goto(base + "/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    expect(page.locator("#toasts")).to_contain_text(f"Signed in as {username}.")


def test_axe_finds_no_serious_violation_on_any_page_for_any_role_at_either_width(roles_server):
    harness, info = roles_server
    base, password = harness.base, info["password"]
    found: dict[str, list[str]] = {}
    scanned: dict[tuple[str, str], str] = {}
    errors: list[str] = []
    counts = {"scans": 0, "same_markup": 0}

    def check(label: str, page: Page, **kw: Any) -> None:
        counts["scans"] += 1
        problems = axe_blocking(page, **kw)
        if problems:
            found[label] = problems

    def at_each_width(page: Page, label: str, key: str | None = None, **kw: Any) -> None:
        """Scan at 1440×900, then resized to 390×844 (media queries re-apply), skipping markup already seen."""
        sig = signature(page) if key else None
        for width_name, (width, height) in WIDTHS.items():
            page.set_viewport_size({"width": width, "height": height})
            if key:
                if scanned.get((width_name, key)) == sig:
                    counts["same_markup"] += 1
                    continue
                scanned[(width_name, key)] = sig
            check(f"{width_name} {label}", page, **kw)
        page.set_viewport_size({"width": WIDTHS["desktop"][0], "height": WIDTHS["desktop"][1]})

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page()
            page.goto(base + "/login/")
            at_each_width(page, "anonymous login")
            page.close()
            for role in ROLES:
                page = browser.new_page(
                    viewport={"width": WIDTHS["desktop"][0], "height": WIDTHS["desktop"][1]}
                )
                page.set_default_timeout(15_000)
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                sign_in(page, base, info["users"][role], password)
                for name, path, lowest in pages(info):
                    if lowest == "-":
                        if (name == "refused") == (role == "admin"):
                            continue  # an admin is not refused the tokens page
                    elif RANK[role] < RANK[lowest]:
                        continue
                    response = page.goto(base + path)
                    assert response is not None
                    expected = {"refused": 403, "missing": 404}.get(name, 200)
                    assert response.status == expected, (role, path, response.status)
                    if name == "agent":  # the navigation bar, once per role and width, with the page
                        at_each_width(page, f"{role} {name}")
                    else:
                        at_each_width(page, f"{role} {name}", key=name, exclude=("header.topbar",))

                a = f"{base}/agents/{info['agent']}"
                # the collapsed navigation of a phone, opened
                page.set_viewport_size({"width": WIDTHS["phone"][0], "height": WIDTHS["phone"][1]})
                page.goto(a + "/")
                page.locator("[data-nav-toggle]").click()
                expect(page.locator("#nav-links")).to_be_visible()
                check(f"phone {role} menu open", page, include="header.topbar")
                page.set_viewport_size({"width": WIDTHS["desktop"][0], "height": WIDTHS["desktop"][1]})
                # search results swapped in by HTMX, with their highlights
                page.goto(a + "/memories/")
                page.locator("#q").press_sequentially("deploy target", delay=20)
                expect(page.locator("#results")).to_have_attribute("data-query", "deploy target")
                at_each_width(page, f"{role} search results", key="search results", include="main")
                if RANK[role] >= RANK["reviewer"]:  # the desk: a decision form and the keyboard help open
                    page.goto(a + "/quarantine/")
                    card = page.locator("#desk .queue-card").first
                    expect(card).to_have_class(re.compile(r"\bis-open\b"))
                    card.locator("details.decide-reject summary").click()
                    expect(card.locator("details.decide-reject select[name=reason]")).to_be_visible()
                    at_each_width(page, f"{role} reject form", key="reject form", include="main")
                    page.keyboard.press("Escape")
                    page.locator("body").press("?")
                    expect(page.locator("#keys-help")).to_be_visible()
                    at_each_width(page, f"{role} keyboard help", key="keyboard help", include="#keys-help")
                page.close()
        finally:
            browser.close()
    print(
        f"axe {AXE_VERSION}: {counts['scans']} scans, {counts['same_markup']} pages skipped as already scanned"
    )
    assert errors == []
    assert found == {}, "\n".join(f"{label}:\n  " + "\n  ".join(p) for label, p in found.items())
    assert counts["scans"] >= 60  # every page was reached (and scanned at least once per width)


def test_the_skip_link_is_the_first_tab_stop_and_lands_in_main(roles_server):
    harness, info = roles_server
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            for width, height in WIDTHS.values():
                page = browser.new_page(viewport={"width": width, "height": height})
                sign_in(page, harness.base, info["users"]["viewer"], info["password"])
                page.goto(f"{harness.base}/agents/{info['agent']}/timeline/")
                skip = page.locator("a.skip-link")
                expect(skip).not_to_be_in_viewport()  # out of sight until focused
                page.keyboard.press("Tab")
                expect(skip).to_be_focused()
                expect(skip).to_be_in_viewport()
                page.keyboard.press("Enter")
                expect(page.locator("main#main")).to_be_focused()
                page.keyboard.press("Tab")  # the next stop is inside main, past the navigation
                assert page.evaluate("document.activeElement.closest('main') !== null")
                page.close()
        finally:
            browser.close()
