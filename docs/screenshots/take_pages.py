"""Take the README screenshots of the background-track pages on the seeded demo: the review queue
(review.png), the discovery inbox (discoveries.png), the operations page (operations.png) and the insights page
(insights.png).

Usage: .venv/bin/python docs/screenshots/take_pages.py [review] [discoveries] [operations] [insights]
(default: all four)

Like take_graph.py: a throwaway SQLite database in a temporary directory (var/ is never touched), ``manage.py
seed_demo`` (engine writes only, one dream pass included), the dashboard served on 127.0.0.1 in a thread, Debian's
Chromium driven by Playwright with every request to another host aborted, signed in as the demo admin.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from docs.screenshots.take import OUT  # noqa: E402
from docs.screenshots.take_graph import demo_browser  # noqa: E402

AGENT = "support-bot"
PAGES = {
    "review": f"/agents/{AGENT}/review/",
    "discoveries": f"/agents/{AGENT}/discoveries/",
    "operations": f"/agents/{AGENT}/operations/",
    "insights": f"/agents/{AGENT}/insights/",
}


def main(names: list[str]) -> int:
    unknown = [n for n in names if n not in PAGES]
    if unknown:
        print(f"unknown page(s): {', '.join(unknown)}; choose from {', '.join(PAGES)}", file=sys.stderr)
        return 2
    with demo_browser("admin") as (page, base):
        for name in names or list(PAGES):
            response = page.goto(base + PAGES[name])
            if response is None or response.status != 200:
                print(f"{name}: HTTP {response.status if response else '?'}", file=sys.stderr)
                return 1
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(500)  # the evidence graphs and progress polls settle
            path = OUT / f"{name}.png"
            page.screenshot(path=str(path), full_page=False)
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
