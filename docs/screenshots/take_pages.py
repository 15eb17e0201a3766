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

import io
import os
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlparse
from wsgiref.simple_server import make_server

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from docs.screenshots.take import CHROMIUM, LAUNCH_ARGS, OUT, _Quiet, _Server  # noqa: E402

PASSWORD = "demo-password-123"
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
    tmp = tempfile.mkdtemp(prefix="memdesk-shots-")
    os.environ["MEMDESK_VAR_DIR"] = tmp
    os.environ["MEMDESK_CONFIG"] = str(Path(tmp) / "absent.toml")
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
        page.fill("#id_username", "admin")
        page.fill("#id_password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(base + "/")
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
        browser.close()
    server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
