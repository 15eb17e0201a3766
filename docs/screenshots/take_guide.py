"""Take the user guide's screenshots (docs/guide/img/*.png), signed in as each demo role.

Usage: .venv/bin/python docs/screenshots/take_guide.py [name ...]   (default: every shot; names: see SHOTS)

Like take_pages.py: a throwaway SQLite database in a temporary directory (var/ is never touched), ``manage.py
seed_demo`` (engine writes only), two more bursts the burst guard holds (``take.seed_quarantine``), the dashboard
served on 127.0.0.1 in a thread, Debian's Chromium driven by Playwright with every request to another host
aborted. Each role signs in in its own browser context; the desktop shots are 1360×900, the phone ones 390×844.
Every image the guide shows is written by this script; run it again after a change to a page it shows.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from docs.screenshots.take_graph import PASSWORD, demo_browser  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "guide" / "img"
AGENT = "/agents/support-bot"
DESKTOP = {"width": 1360, "height": 900}
PHONE = {"width": 390, "height": 844}


def shot_agent_home(page: Any, base: str) -> None:
    page.goto(base + AGENT + "/")


def shot_search(page: Any, base: str) -> None:
    page.goto(base + AGENT + "/memories/")
    page.locator("#q").press_sequentially("deploy", delay=30)
    page.locator("#results[data-query=deploy]").wait_for()


def shot_timeline(page: Any, base: str) -> None:
    page.goto(base + AGENT + "/timeline/?subject=Jordan%20Lee&predicate=marital_status")
    page.locator("#timeline-chart .tl-box").first.focus()


def shot_desk(page: Any, base: str) -> None:
    page.goto(base + AGENT + "/quarantine/")
    page.locator("#desk .queue-card.is-open").first.wait_for()


def shot_desk_reject(page: Any, base: str) -> None:
    shot_desk(page, base)
    page.locator("body").press("r")
    page.locator("#desk .queue-card.is-open details.decide-reject[open]").wait_for()


def shot_review(page: Any, base: str) -> None:
    page.goto(base + AGENT + "/review/")


def shot_wiki(page: Any, base: str) -> None:
    page.goto(base + AGENT + "/wiki/1/")


def shot_memory(page: Any, base: str) -> None:
    page.goto(base + AGENT + "/memories/?q=Jordan")
    page.locator("#results .memory-link").first.click()
    page.locator("#memory-provenance").wait_for()


def shot_operations(page: Any, base: str) -> None:
    page.goto(base + AGENT + "/operations/")
    page.locator("#purge-origin").fill("channel:telegram-991")
    page.locator("#purge-preview-submit").click()
    page.locator("#purge-preview").wait_for()
    page.locator("#purge").scroll_into_view_if_needed()


def shot_tokens(page: Any, base: str) -> None:
    page.goto(base + AGENT + "/tokens/")


# name -> (demo user, viewport, how to get there)
SHOTS: dict[str, tuple[str, dict[str, int], Callable[[Any, str], None]]] = {
    "viewer-agent-home": ("viewer", DESKTOP, shot_agent_home),
    "viewer-search": ("viewer", DESKTOP, shot_search),
    "viewer-timeline": ("viewer", DESKTOP, shot_timeline),
    "viewer-phone-timeline": ("viewer", PHONE, shot_timeline),
    "reviewer-desk": ("reviewer", DESKTOP, shot_desk),
    "reviewer-desk-reject": ("reviewer", DESKTOP, shot_desk_reject),
    "reviewer-phone-desk": ("reviewer", PHONE, shot_desk),
    "reviewer-review": ("reviewer", DESKTOP, shot_review),
    "curator-memory": ("curator", DESKTOP, shot_memory),
    "curator-wiki": ("curator", DESKTOP, shot_wiki),
    "admin-operations": ("admin", DESKTOP, shot_operations),
    "admin-tokens": ("admin", DESKTOP, shot_tokens),
}


def main(names: list[str]) -> int:
    unknown = [n for n in names if n not in SHOTS]
    if unknown:
        print(f"unknown shot(s): {', '.join(unknown)}; choose from {', '.join(SHOTS)}", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    with demo_browser("admin") as (first, base):
        from docs.screenshots.take import seed_quarantine

        seed_quarantine("support-bot")
        browser = first.context.browser
        pages: dict[tuple[str, int], Any] = {}
        for name in names or list(SHOTS):
            user, viewport, go = SHOTS[name]
            key = (user, viewport["width"])
            if key not in pages:
                context = browser.new_context(viewport=viewport, device_scale_factor=1)
                context.route(
                    "**/*",
                    lambda route: (
                        route.continue_()
                        if urlparse(route.request.url).hostname == "127.0.0.1"
                        else route.abort()
                    ),
                )
                page = context.new_page()
                page.goto(base + "/login/")
                page.fill("#id_username", user)
                page.fill("#id_password", PASSWORD)
                page.click("button[type=submit]")
                page.wait_for_url(base + "/")
                pages[key] = page
            page = pages[key]
            go(page, base)
            page.wait_for_load_state("networkidle")
            path = OUT / f"{name}.png"
            page.screenshot(path=str(path), full_page=viewport is PHONE)
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
