"""The graph curation journey in a real browser, with the network cut to this machine.

On the seeded demo, Debian's Chromium signs in as the curator, with every request to a host other than the live
server aborted (so a CDN reference would leave the page without vis-network). The graph draws on its canvas;
the curator focuses on 李老闆, clicks the node on the canvas and reads its facts, then merges "zhixu" (another
name of the same person) into 李老闆 through the side-by-side preview. The graph redraws with zhixu's edges on
李老闆, and the agent's next search for "zhixu" ranks facts about 李老闆 that its text never mentions. Last, a
fact is retracted with a reason from its row.
"""

from __future__ import annotations

import io
import re
from urllib.parse import urlparse

import pytest
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import expect, sync_playwright

from memory import engine
from memory.management import demo_data as d
from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "demo-password-for-tests"
A = d.SUPPORT_BOT
QUERY = "what does zhixu prefer?"
LOCAL = {"127.0.0.1", "localhost"}

CANVAS_PIXELS = """() => {
  const c = document.querySelector('#graph-canvas canvas');
  const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
  return n;
}"""
# The node's point on the page, or null while the canvas is being (re)drawn after a swap: polled with
# wait_for_function, so a redraw in progress is waited for rather than read half-made.
NODE_POINT = """(id) => {
  const net = window.memdeskGraph;
  const el = document.querySelector('#graph-canvas canvas');
  if (!net || !el) return null;
  const pos = net.getPositions([id])[id];
  if (!pos) return null;
  const dom = net.canvasToDOM(pos);
  const box = el.getBoundingClientRect();
  return {x: box.left + dom.x, y: box.top + dom.y};
}"""


@pytest.fixture
def demo(guard_defaults, monkeypatch):
    monkeypatch.setenv("MEMDESK_DEMO_PASSWORD", PASSWORD)
    call_command("seed_demo", stdout=io.StringIO())


def about_li(hits) -> list[str]:  # noqa: ANN001
    """Hits that name 李老闆 as subject or object but never say "zhixu": found through the graph only."""
    return [
        h.id
        for h in hits
        if "李老闆" in (h.subject or "", h.object or "") and "zhixu" not in h.content.lower()
    ]


def test_curator_draws_the_graph_offline_and_merges_two_names(live_server, demo, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs a loop here
    assert about_li(engine.search(agent_id=A, query=QUERY)) == []
    base = live_server.url
    errors: list[str] = []
    blocked: list[str] = []
    served: list[str] = []

    def local_only(route) -> None:  # noqa: ANN001
        host = urlparse(route.request.url).hostname
        if host in LOCAL:
            served.append(route.request.url)
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1366, "height": 900})
            context.route("**/*", local_only)
            page = context.new_page()
            page.set_default_timeout(20_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)

            page.goto(base + "/login/")
            page.fill("#id_username", "curator")
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            expect(page.locator("#toasts")).to_contain_text("Signed in as curator.")

            # The agent's nav leads to the graph; vis-network (served by us) draws it on a canvas
            page.goto(base + f"/agents/{A}/")
            page.click("#nav-graph")
            expect(page.locator("h1")).to_have_text("Graph")
            canvas = page.locator("#graph-canvas")
            expect(canvas).to_have_attribute("data-rendered", "true")
            expect(canvas.locator("canvas")).to_be_visible()
            assert page.evaluate("typeof window.vis.Network") == "function"
            assert page.evaluate(CANVAS_PIXELS) > 2000  # something is drawn, not a blank canvas
            expect(page.locator("#graph-summary")).to_contain_text(re.compile(r"Showing \d+ of \d+ edges"))
            expect(page.locator("#graph-legend")).to_contain_text("quarantined")
            total = int(page.locator("#graph-total").inner_text())
            assert total >= 60

            # Focus on 李老闆 (HTMX swap, filter kept in the URL) and click the node on the canvas
            page.evaluate("window.__sameDocument = true")
            page.fill("#g-entity", "李老闆")
            page.press("#g-entity", "Enter")
            expect(page.locator("#graph")).to_have_attribute("data-entity", "李老闆")
            expect(page).to_have_url(re.compile(r"entity=%E6%9D%8E%E8%80%81%E9%97%86"))
            expect(canvas).to_have_attribute("data-rendered", "true")
            expect(page.locator("#graph-focus")).to_contain_text("Neighbourhood of 李老闆")
            point = page.wait_for_function(NODE_POINT, arg="李老闆", timeout=10_000).json_value()
            page.mouse.click(point["x"], point["y"])
            panel = page.locator("#entity-panel")
            expect(panel).to_have_attribute("data-entity", "李老闆")
            expect(panel.locator("#entity-facts")).to_contain_text("李老闆 sponsors Project Lantern")
            timeline = panel.locator(".graph-fact", has_text="sponsors Project Lantern").locator(
                ".fact-timeline"
            )
            expect(timeline).to_have_attribute(
                "href", re.compile(r"/timeline/\?subject=.+&predicate=sponsors")
            )

            # Merge "zhixu" into 李老闆: the preview puts the facts that move beside those already there
            panel.locator("#merge-alias").fill("zhixu")
            panel.locator("#merge-preview-button").click()
            preview = page.locator("#merge-preview")
            expect(preview.locator("#merge-moving")).to_contain_text("zhixu prefers LINE messages")
            expect(preview.locator("#merge-moving")).to_contain_text("Priya Raman reports to zhixu")
            expect(preview.locator("#merge-staying")).to_contain_text("李老闆 sponsors Project Lantern")
            expect(preview.locator("#merge-conflicts")).to_have_count(0)
            assert engine.alias_list(agent_id=A)[0].alias == "dana"  # nothing saved by the preview
            preview.locator("#merge-confirm-button").click()
            expect(page.locator("#merge-done")).to_contain_text("Merged “zhixu” into “李老闆”: 2 facts")
            expect(page.locator("#toasts")).to_contain_text("Merged “zhixu” into “李老闆”")

            # The graph redraws by itself: zhixu's edges now hang on 李老闆 (LINE, Priya Raman)
            expect(page.locator("#graph-nodes")).to_contain_text("LINE")  # labels keep the stored case
            expect(page.locator("#graph-nodes")).to_contain_text("Priya Raman")
            expect(page.locator("#graph-nodes tr[data-node=zhixu]")).to_have_count(0)
            expect(canvas).to_have_attribute("data-rendered", "true")
            page.locator("#merge-open").click()
            expect(page.locator("#entity-aliases")).to_contain_text("zhixu")

            # Retract the low-trust office fact with a reason: the row says so, the edge leaves the graph
            expect(page.locator("#graph-nodes tr[data-node=台北信義區]")).to_have_count(1)
            office = page.locator(".graph-fact", has_text="台北信義區的辦公室")
            office.locator("details.retract summary").click()
            office.locator("button[type=submit]").click()  # no reason picked: the browser refuses to send
            expect(office).to_have_attribute("data-status", "current")
            office.locator("select[name=reason]").select_option("wrong")
            office.locator("input[name=note]").fill("moved to Neihu")
            office.locator("button[type=submit]").click()
            expect(office).to_have_attribute("data-status", "retracted")
            expect(page.locator("#toasts")).to_contain_text("(wrong: moved to Neihu)")
            expect(page.locator("#graph-nodes tr[data-node=台北信義區]")).to_have_count(0)
            assert page.evaluate("window.__sameDocument") is True  # swapped by HTMX, never reloaded
        finally:
            browser.close()

    assert errors == []
    assert blocked == []  # nothing on the way asked for another host
    assert any("/static/vendor/vis-network/vis-network.min.js" in u for u in served)
    # the agent's next search: naming the alias now ranks facts about 李老闆 that FTS alone misses
    assert [(x.canonical, x.alias) for x in engine.alias_list(agent_id=A)] == [
        ("dana whitfield", "dana"),
        ("wen zhao", "wen"),  # the demo's alias pair for the dream loop
        ("李老闆", "zhixu"),
    ]
    office = engine.get_at(agent_id=A, subject="李老闆", predicate="辦公室", at=timezone.now())
    assert office is None  # retracted, and nothing it had superseded
    hits = engine.search(agent_id=A, query=QUERY)
    found = about_li(hits)
    assert found and all(h.fts_position is None for h in hits if h.id in found)
