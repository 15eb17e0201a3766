"""The timeline's key picker in a real browser (issue 19 item 7): typing searches subject and predicate with one
request per pause (debounced `input` events), a paste searches too, a half-typed name is never "This field is
required", Back restores the box and its list, and at 390 px nothing scrolls sideways."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect, sync_playwright

from memory import engine
from tests.conftest import PASSWORD, make_user
from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def keys(team, agent):
    make_user("bea", team)
    aid = agent.agent_id
    for i in range(30):
        engine.store_temporal(agent_id=aid, content=f"Customer {i} prefers email", subject=f"customer-{i}",
                              predicate="prefers_channel", object="email")  # fmt: skip
    for employer in ("Acme", "Globex", "Initech"):  # the most-changed key: three rows
        engine.store_temporal(agent_id=aid, content=f"Jordan works at {employer}", subject="Jordan",
                              predicate="employer", object=employer)  # fmt: skip
    engine.store_temporal(agent_id=aid, content="acme-web deploys to Workers", subject="acme-web",
                          predicate="deploy_target", object="Cloudflare Workers")  # fmt: skip


def key_texts(page) -> list[str]:
    return page.locator("#keys-table tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.querySelectorAll('td')].slice(0, 2).map(td => td.innerText.trim()).join(' / '))"
    )


@pytest.mark.parametrize("width", [1366, 390])
def test_key_picker_searches_as_you_type(live_server, agent, keys, monkeypatch, width):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    base = live_server.url
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 844})
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            page.on(
                "request",
                lambda r: requests.append(r.url) if "/timeline/" in r.url and r.resource_type in ("xhr", "fetch") else None,
            )  # fmt: skip
            page.goto(base + "/login/")
            page.fill("#id_username", "bea")
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            page.goto(f"{base}/agents/{agent.agent_id}/timeline/")
            results = page.locator("#results")

            # the most-changed key comes first
            assert key_texts(page)[0] == "Jordan / employer"
            expect(page.locator("#keys-count")).to_contain_text("32 keys")

            # typing a name: one request after the pause, the list narrows, no "required" error
            page.locator("#q").press_sequentially("jord", delay=40)
            expect(results).to_have_attribute("data-query", "jord")
            page.wait_for_timeout(500)
            assert len(requests) == 1
            assert key_texts(page) == ["Jordan / employer"]
            assert "This field is required" not in page.content()

            # words match the predicate too; Enter after the as-you-type request asks nothing more
            page.locator("#q").fill("")
            expect(results).to_have_attribute("data-query", "")
            page.locator("#q").press_sequentially("deploy", delay=40)
            expect(results).to_have_attribute("data-query", "deploy")
            assert key_texts(page) == ["acme-web / deploy_target"]
            sent = len(requests)
            page.locator("#q").press("Enter")
            page.wait_for_timeout(600)
            assert len(requests) == sent

            # a paste (an input event, no keys) searches
            page.locator("#q").evaluate(
                "el => { el.value = 'customer-1'; el.dispatchEvent(new InputEvent('input', {bubbles: true,"
                " inputType: 'insertFromPaste'})); }"
            )
            expect(results).to_have_attribute("data-query", "customer-1")
            assert len(key_texts(page)) == 11  # customer-1 and customer-10 … customer-19
            expect(page).to_have_url(re.compile(r"q=customer-1$"))
            if width == 390:
                assert page.evaluate("document.documentElement.scrollWidth") <= width

            # a key opens its timeline; Back brings the search and the box back
            page.locator("#keys-table a", has_text="customer-12").first.click()
            expect(page.locator("h1")).to_contain_text("customer-12")
            page.go_back()
            expect(page.locator("#q")).to_have_value("customer-1")
            expect(results).to_have_attribute("data-query", "customer-1")
            page.go_back()
            expect(page.locator("#q")).to_have_value("deploy")
            assert key_texts(page) == ["acme-web / deploy_target"]
        finally:
            browser.close()
    assert errors == []
