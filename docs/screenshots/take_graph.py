"""Take the README screenshot of the graph curation page (graph.png) on the seeded demo.

Usage: .venv/bin/python docs/screenshots/take_graph.py

Like take.py: a throwaway SQLite database in a temporary directory (var/ is never touched), ``manage.py
seed_demo`` (engine writes only), the dashboard served on 127.0.0.1 in a thread, Debian's Chromium driven by
Playwright with every request to another host aborted. The shot: the neighbourhood of 李老闆 two hops deep, the
node clicked, and the side-by-side preview of merging "zhixu" into it (not saved). Chinese labels need a CJK
font on the machine (Debian: ``apt-get install fonts-wqy-microhei``).
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from wsgiref.simple_server import make_server

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from docs.screenshots.take import CHROMIUM, LAUNCH_ARGS, OUT, _Quiet, _Server  # noqa: E402

PASSWORD = "demo-password-123"


@contextmanager
def demo_browser(username: str) -> Iterator[tuple[Any, str]]:
    """A throwaway SQLite database seeded by ``seed_demo``, the dashboard served on 127.0.0.1 in a thread, and a
    Chromium page signed in as the demo user ``username`` (requests to any other host aborted): (page, base URL)."""
    tmp = tempfile.mkdtemp(prefix="memdesk-shots-")
    os.environ["MEMDESK_VAR_DIR"] = tmp
    os.environ["MEMDESK_CONFIG"] = str(Path(tmp) / "absent.toml")  # the burst guard at its defaults
    os.environ["MEMDESK_SQLITE_PATH"] = str(Path(tmp) / "demo.sqlite3")
    os.environ["MEMDESK_DEMO_PASSWORD"] = PASSWORD
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.pop("DATABASE_URL", None)

    import django

    django.setup()
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application

    call_command("migrate", verbosity=0, interactive=False)
    call_command("seed_demo", stdout=io.StringIO())

    server = make_server("127.0.0.1", 0, StaticFilesHandler(get_wsgi_application()), _Server, _Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        context = browser.new_context(viewport={"width": 1360, "height": 900}, device_scale_factor=1)
        context.route(
            "**/*",
            lambda route: (
                route.continue_() if urlparse(route.request.url).hostname == "127.0.0.1" else route.abort()
            ),
        )
        page = context.new_page()
        page.goto(base + "/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(base + "/")
        try:
            yield page, base
        finally:
            browser.close()
            server.shutdown()


def main() -> int:
    from playwright.sync_api import expect

    with demo_browser("curator") as (page, base):
        page.goto(base + "/agents/support-bot/graph/?entity=%E6%9D%8E%E8%80%81%E9%97%86&depth=2")
        expect(page.locator("#graph-canvas")).to_have_attribute("data-rendered", "true")
        point = page.evaluate(
            """(id) => {
                  const net = window.memdeskGraph;
                  const dom = net.canvasToDOM(net.getPositions([id])[id]);
                  const box = document.querySelector('#graph-canvas canvas').getBoundingClientRect();
                  return {x: box.left + dom.x, y: box.top + dom.y};
                }""",
            "李老闆",
        )
        page.mouse.click(point["x"], point["y"])
        expect(page.locator("#entity-panel")).to_have_attribute("data-entity", "李老闆")
        page.locator("#merge-alias").fill("zhixu")
        page.locator("#merge-preview-button").click()
        expect(page.locator("#merge-preview")).to_be_visible()
        box = page.locator("#graph-canvas canvas").bounding_box()
        page.mouse.move(box["x"] + 8, box["y"] + 8)  # off the node: its tooltip hides
        page.wait_for_timeout(300)
        page.screenshot(path=str(OUT / "graph.png"), full_page=True)
    print(f"wrote {OUT / 'graph.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
