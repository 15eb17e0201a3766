"""The graph as a self-contained HTML file (SPEC D6 "download as HTML"): the page's download and
``manage.py graph_export_html`` write the current view with pyvis, every resource inline, stored markup as text;
Chromium opens the file with the network cut and finds the nodes."""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from playwright.sync_api import sync_playwright

from memory import engine
from tests.conftest import login
from tests.dashboard.conftest import assert_login_redirect, assert_same_404
from tests.dashboard.test_browser_journey import CHROMIUM, LAUNCH_ARGS

XSS = "</script><script>window.__xss=1</script>"


class _Refs(HTMLParser):
    """Every URL a tag would load (src, href, srcset), and whether any tag loads a file at all."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):  # noqa: ANN001
        for name, value in attrs:
            if name in ("src", "href", "srcset") and value:
                self.urls.append(f"{tag} {name}={value}")


def fact(agent_id: str, s: str, p: str, o: str) -> str:
    return engine.store_temporal(
        agent_id=agent_id, content=f"{s} {p} {o}", subject=s, predicate=p, object=o, origin="user_direct"
    ).id


@pytest.fixture
def graph(agent):
    a = agent.agent_id
    fact(a, "Dana", "leads", "Lantern")
    fact(a, "Lantern", "uses_tool", "HelpHub")
    fact(a, "Priya", "manages", "Dana")
    fact(a, XSS, "mentions", "Lantern")
    return a


def download(agent_id: str, query: str = "") -> str:
    return reverse("dashboard:graph_download", args=[agent_id]) + query


def self_contained(page: str) -> None:
    refs = _Refs()
    refs.feed(page)
    assert refs.urls == []  # no script, style sheet or image is fetched from anywhere
    assert "sourceMappingURL" not in page
    assert "vis.Network" in page and "new vis.DataSet" in page


@pytest.mark.django_db
def test_the_download_is_the_current_view_self_contained(client, viewer, agent, other_agent, outsider, graph):
    assert_login_redirect(client, download(graph))
    login(client, viewer)
    response = client.get(download(graph))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    assert re.match(
        r'attachment; filename="memdesk-graph-support-bot-\d{8}-\d{4}\.html"', response["Content-Disposition"]
    )
    page = response.content.decode()
    self_contained(page)
    for node in ('"id": "dana"', '"id": "lantern"', '"id": "helphub"', '"id": "priya"'):
        assert node in page
    # stored markup stays text: pyvis writes the data with tojson (<, > escaped)
    assert XSS not in page and "\\u003c/script\\u003e\\u003cscript\\u003e" in page
    # the filters of the page: one predicate only
    only = client.get(download(graph, "?predicate=manages")).content.decode()
    assert '"id": "priya"' in only and '"id": "helphub"' not in only
    page_html = client.get(reverse("dashboard:graph", args=[graph]) + "?predicate=manages").content.decode()
    assert 'id="graph-download" href="/agents/support-bot/graph/download/?predicate=manages"' in page_html
    login(client, outsider)
    assert_same_404(client, download(graph), download("no-such-agent"))


@pytest.mark.django_db
def test_the_command_writes_the_file(tmp_path, graph):
    out = io.StringIO()
    path = tmp_path / "graph.html"
    call_command("graph_export_html", str(path), agent=graph, entity="Lantern", stdout=out)
    page = path.read_text(encoding="utf-8")
    self_contained(page)
    assert '"id": "helphub"' in page and '"id": "priya"' not in page  # Lantern's neighbourhood
    assert "wrote" in out.getvalue() and "edges" in out.getvalue()
    with pytest.raises(CommandError, match="no agent"):
        call_command("graph_export_html", str(path), agent="nobody", stdout=out)
    with pytest.raises(CommandError, match="bad filters"):
        call_command("graph_export_html", str(path), agent=graph, depth=7, stdout=out)


@pytest.mark.browser
@pytest.mark.django_db
def test_chromium_opens_the_file_offline_and_finds_the_nodes(tmp_path, graph, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    path = tmp_path / "graph.html"
    call_command("graph_export_html", str(path), agent=graph, stdout=io.StringIO())
    requested: list[str] = []
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            context = browser.new_context(offline=True)

            def record(route) -> None:  # noqa: ANN001
                if urlparse(route.request.url).scheme != "file":
                    requested.append(route.request.url)
                    route.abort()
                else:
                    route.continue_()

            context.route("**/*", record)
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(Path(path).as_uri())
            page.wait_for_function("typeof network !== 'undefined' && network !== null")
            ids = page.evaluate("network.body.data.nodes.getIds()")
            assert {"dana", "lantern", "helphub", "priya"} <= set(ids)
            assert page.evaluate("window.__xss") is None
            assert page.locator("#mynetwork canvas").count() == 1
        finally:
            browser.close()
    assert requested == [] and errors == []
