"""The graph drawing keeps its layout (issue 19 item 16): positions are kept per entity, so after a retraction,
a merge or a new fact the entities already drawn stay where they were; the zoom and fit buttons work."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect, sync_playwright

from memory import engine
from memory.models import Role
from tests.conftest import PASSWORD, make_user
from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
POSITIONS = "() => window.memdeskGraph.getPositions()"


@pytest.fixture
def graph(team, agent):
    make_user("cora", team, role=Role.CURATOR)
    a = agent.agent_id
    ids = {}
    for subject, predicate, obj in [
        ("Ada Lovelace", "worked_with", "Charles Babbage"),
        ("Ada Lovelace", "born_in", "London"),
        ("Ada Lovelace", "wrote", "Notes"),
        ("Charles Babbage", "designed", "Analytical Engine"),
        ("Charles Babbage", "born_in", "London"),
        ("Countess of Lovelace", "title_of", "Lord Byron's daughter"),
        ("Notes", "describe", "Analytical Engine"),
        ("Mary Somerville", "tutored", "Ada Lovelace"),
    ]:
        ids[(subject, predicate)] = engine.store_temporal(
            agent_id=a,
            content=f"{subject} {predicate} {obj}",
            subject=subject,
            predicate=predicate,
            object=obj,
        ).id
    return ids


def same_places(before: dict, after: dict, names: set[str]) -> list[str]:
    moved = []
    for name in names:
        b, a = before[name], after[name]
        if abs(b["x"] - a["x"]) > 1 or abs(b["y"] - a["y"]) > 1:
            moved.append(f"{name}: {b} -> {a}")
    return moved


def test_layout_is_stable_across_retraction_merge_and_new_facts(live_server, agent, graph, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    base = live_server.url
    a = agent.agent_id
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.set_default_timeout(20_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            page.goto(base + "/login/")
            page.fill("#id_username", "cora")
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            page.goto(f"{base}/agents/{a}/graph/")
            canvas = page.locator("#graph-canvas")
            expect(canvas).to_have_attribute("data-rendered", "true")
            first = page.evaluate(POSITIONS)
            assert len(first) == 8

            # zoom in, out, and fit
            scale = page.evaluate("() => window.memdeskGraph.getScale()")
            page.locator("#graph-zoom-in").click()
            zoomed = page.evaluate("() => window.memdeskGraph.getScale()")
            assert zoomed == pytest.approx(scale * 1.3, rel=0.01)
            page.locator("#graph-zoom-out").click()
            page.locator("#graph-zoom-out").click()
            assert page.evaluate("() => window.memdeskGraph.getScale()") < scale
            page.locator("#graph-fit").click()
            assert page.evaluate("() => window.memdeskGraph.getScale()") == pytest.approx(scale, rel=0.05)

            # a retraction removes an edge and a node: every other entity stays put
            engine.retract_fact(agent_id=a, memory_id=graph[("Countess of Lovelace", "title_of")],
                                reason="wrong", actor="user:cora")  # fmt: skip
            page.reload()
            expect(canvas).to_have_attribute("data-rendered", "true")
            second = page.evaluate(POSITIONS)
            assert "countess of lovelace" not in second and len(second) == 6
            assert same_places(first, second, set(second)) == []

            # a merge: the alias's node goes, the rest stays
            engine.alias_add(agent_id=a, canonical="Notes", alias="Analytical Engine", actor="user:cora")
            page.reload()
            expect(canvas).to_have_attribute("data-rendered", "true")
            third = page.evaluate(POSITIONS)
            assert "analytical engine" not in third
            assert same_places(first, third, set(third)) == []

            # a new fact: the new entity is placed, the known ones do not move
            engine.store_temporal(agent_id=a, content="Ada Lovelace met Michael Faraday", subject="Ada Lovelace",
                                  predicate="met", object="Michael Faraday")  # fmt: skip
            page.reload()
            expect(canvas).to_have_attribute("data-rendered", "true")
            fourth = page.evaluate(POSITIONS)
            assert "michael faraday" in fourth
            assert same_places(first, fourth, set(third)) == []
        finally:
            browser.close()
    assert errors == []
