"""The graph curation page (SPEC D6): permissions, CSRF, partial vs full page, filters, the cap, no external
URL, escaping, the node panel, merging two names of one entity, retracting a fact with a reason."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.urls import reverse

from memory import engine
from memory.models import AuditEvent
from tests.conftest import dt, login
from tests.dashboard.conftest import assert_login_redirect, assert_same_404, quarantine_fact

pytestmark = pytest.mark.django_db
XSS = "<script>alert(1)</script>"
HTMX = {"HTTP_HX_REQUEST": "true"}
STATIC = Path(settings.BASE_DIR) / "static"


def url(agent_id: str, name: str = "graph", *args: str) -> str:
    return reverse(f"dashboard:{name}", args=[agent_id, *args])


def fact(agent_id: str, subject: str, predicate: str, obj: str, *, origin: str = "user_direct", **kw) -> str:
    return engine.store_temporal(
        agent_id=agent_id,
        content=kw.pop("content", f"{subject} {predicate} {obj}"),
        subject=subject,
        predicate=predicate,
        object=obj,
        origin=origin,
        **kw,
    ).id


@pytest.fixture
def people(agent):
    """李老闆 sponsors Lantern, Lantern is led by Dana, Dana reports to Priya; "zhixu" (李老闆's other name)
    prefers LINE; a low-trust channel fact; one quarantined edge."""
    a = agent.agent_id
    return {
        "sponsor": fact(a, "李老闆", "sponsors", "Project Lantern"),
        "lead": fact(a, "Project Lantern", "led_by", "Dana Whitfield", origin="operator"),
        "boss": fact(a, "Dana Whitfield", "reports_to", "Priya Raman", origin="import"),
        "zhixu": fact(a, "zhixu", "prefers_channel", "LINE", content="zhixu prefers LINE for escalations"),
        "rumour": fact(a, "Project Lantern", "uses_tool", "HelpHub", origin="channel:telegram-ops"),
        "held": quarantine_fact(
            a,
            content="Project Lantern is owned by Mallory",
            subject="Project Lantern",
            predicate="owner",
            object="Mallory",
            origin="mcp_external",
        ),
    }


def network(response) -> dict:
    match = re.search(
        r'<script id="graph-data" type="application/json">(.*?)</script>', response.content.decode()
    )
    assert match, "no graph data on the page"
    return json.loads(match.group(1))


# --- who may see and change what -------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, agent):
    a = agent.agent_id
    for target in (url(a), url(a, "graph_entity") + "?name=x", url(a, "graph_merge_preview")):
        assert_login_redirect(client, target)
    response = client.post(url(a, "graph_merge"), {"canonical": "a", "alias": "b"})
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert engine.alias_list(agent_id=a) == []


def test_outsider_gets_the_same_404_as_a_missing_agent(client, outsider, agent, people):
    login(client, outsider)
    a = agent.agent_id
    assert_same_404(client, url(a), url("no-such-agent"))
    assert_same_404(
        client, url(a, "graph_entity") + "?name=dana+whitfield", url("nope", "graph_entity") + "?name=x"
    )
    response = client.post(url(a, "graph_merge"), {"canonical": "李老闆", "alias": "zhixu"})
    assert response.status_code == 404
    response = client.post(url(a, "graph_retract", people["lead"]), {"reason": "wrong"})
    assert response.status_code == 404
    assert engine.alias_list(agent_id=a) == []
    assert engine.get_memory(agent_id=a, memory_id=people["lead"]).invalidated_by_event is None


def test_viewer_can_look_but_not_change(client, viewer, agent, people):
    login(client, viewer)
    a = agent.agent_id
    page = client.get(url(a))
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="graph-readonly"' in html and "<strong>viewer</strong>" in html
    panel = client.get(url(a, "graph_entity") + "?name=Project+Lantern", **HTMX).content.decode()
    assert "project lantern" in panel and 'id="entity-facts"' in panel
    assert "Retract" not in panel and "merge-form" not in panel
    preview = client.get(url(a, "graph_merge_preview") + "?canonical=李老闆&alias=zhixu", **HTMX)
    assert preview.status_code == 403
    assert client.post(url(a, "graph_merge"), {"canonical": "李老闆", "alias": "zhixu"}).status_code == 403
    assert client.post(url(a, "graph_retract", people["lead"]), {"reason": "wrong"}).status_code == 403
    assert engine.alias_list(agent_id=a) == []
    assert engine.get_memory(agent_id=a, memory_id=people["lead"]).invalidated_by_event is None


def test_reviewer_is_not_a_curator(client, reviewer, agent, people):
    login(client, reviewer)
    a = agent.agent_id
    assert client.post(url(a, "graph_merge"), {"canonical": "李老闆", "alias": "zhixu"}).status_code == 403
    assert engine.alias_list(agent_id=a) == []


def test_every_post_needs_the_csrf_token(csrf_client, curator, agent, people):
    login(csrf_client, curator)
    a = agent.agent_id
    merge = {"canonical": "李老闆", "alias": "zhixu"}
    assert csrf_client.post(url(a, "graph_merge"), merge, **HTMX).status_code == 403
    assert csrf_client.post(url(a, "graph_retract", people["lead"]), {"reason": "wrong"}).status_code == 403
    assert engine.alias_list(agent_id=a) == []
    # the page's own forms carry the token, and with it the same POST goes through
    panel = csrf_client.get(url(a, "graph_merge_preview") + "?canonical=李老闆&alias=zhixu", **HTMX)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', panel.content.decode()).group(1)
    response = csrf_client.post(url(a, "graph_merge"), {**merge, "csrfmiddlewaretoken": token}, **HTMX)
    assert response.status_code == 200
    assert [(x.canonical, x.alias) for x in engine.alias_list(agent_id=a)] == [("李老闆", "zhixu")]


def test_the_nav_links_the_graph(client, viewer, agent, people):
    login(client, viewer)
    html = client.get(url(agent.agent_id, "agent")).content.decode()
    assert f'id="nav-graph" href="{url(agent.agent_id)}"' in html
    page = client.get(url(agent.agent_id)).content.decode()
    assert re.search(r'id="nav-graph" href="[^"]+" aria-current="page"', page)


# --- the drawing ------------------------------------------------------------------------------------------


def test_full_page_and_htmx_partial(client, viewer, agent, people):
    login(client, viewer)
    full = client.get(url(agent.agent_id))
    assert full.status_code == 200 and "<html" in full.content.decode()
    assert 'id="graph-filters"' in full.content.decode() and 'id="graph-side"' in full.content.decode()
    assert "HX-Request" in full["Vary"]
    partial = client.get(url(agent.agent_id) + "?predicate=led_by", **HTMX)
    body = partial.content.decode()
    assert partial.status_code == 200 and "<html" not in body and "graph-filters" not in body
    assert (
        body.count('<section id="graph"') == 1
        and 'id="g-community" name="community" hx-swap-oob="true"' in body
    )
    assert [e["label"] for e in network(partial)["edges"]] == ["led_by"]


def test_nodes_sized_by_degree_edges_coloured_by_trust_quarantine_dashed(client, viewer, agent, people):
    login(client, viewer)
    response = client.get(url(agent.agent_id))
    data = network(response)
    nodes = {n["id"]: n for n in data["nodes"]}
    assert nodes["project lantern"]["value"] == 4 and nodes["priya raman"]["value"] == 1
    edges = {e["id"]: e for e in data["edges"]}
    assert edges[people["sponsor"]]["color"] == "#1f7a3d" and not edges[people["sponsor"]]["dashes"]
    assert edges[people["boss"]]["color"] == "#2456c7"  # import: 0.7
    assert edges[people["rumour"]]["color"] == "#b3261e"  # channel: 0.3
    held = edges[people["held"]]
    assert held["dashes"] is True and held["quarantined"] is True and held["label"] == "⚠ owner"
    html = response.content.decode()
    assert 'id="graph-legend"' in html and "quarantined: held for review" in html
    assert "1 quarantined edge (dashed)" in html
    assert re.search(
        r"Showing <strong id=\"graph-shown\">6</strong> of <strong id=\"graph-total\">6</strong>", html
    )


def test_filters_predicate_trust_and_entity_neighbourhood(client, viewer, agent, people):
    login(client, viewer)
    a = agent.agent_id

    def edge_ids(query: str) -> set[str]:
        return {e["id"] for e in network(client.get(url(a) + query, **HTMX))["edges"]}

    assert edge_ids("?predicate=led_by") == {people["lead"]}
    assert edge_ids("?min_trust=0.8") == {people["sponsor"], people["lead"], people["zhixu"]}
    # one hop around Dana: her own edges; two hops: Lantern's too
    assert edge_ids("?entity=Dana+Whitfield") == {people["lead"], people["boss"]}
    assert edge_ids("?entity=dana%20whitfield&depth=2") == {
        people["lead"],
        people["boss"],
        people["sponsor"],
        people["rumour"],
        people["held"],
    }
    assert edge_ids("?entity=Dana+Whitfield&depth=2&min_trust=0.5&predicate=led_by") == {people["lead"]}
    # the form keeps the filters in the URL
    page = client.get(url(a) + "?entity=Dana+Whitfield&predicate=led_by").content.decode()
    assert 'hx-push-url="true"' in page and 'value="Dana Whitfield"' in page
    assert '<option value="led_by" selected>' in page
    assert "Neighbourhood of <strong>Dana Whitfield</strong>" in page  # the stored surface form


def test_unknown_entity_and_bad_filters(client, viewer, agent, people):
    login(client, viewer)
    a = agent.agent_id
    html = client.get(url(a) + "?entity=nobody+at+all").content.decode()
    assert 'id="graph-empty"' in html and "No current fact names “nobody at all”" in html
    bad = client.get(url(a) + "?min_trust=7&depth=9")
    assert bad.status_code == 200
    assert "Ensure this value is less than or equal to 1.0" in bad.content.decode()
    assert len(network(bad)["edges"]) == 6  # invalid filters fall back to the defaults


def test_communities_come_from_discovery_colour_nodes_and_filter_the_view(client, viewer, agent):
    a = agent.agent_id
    for who in ("ana", "ben", "cy", "dee"):
        fact(a, who, "works_on", "Billing")
        fact(a, who, "uses_tool", "Stripe")
    for who in ("eve", "fay", "gus"):
        fact(a, who, "works_on", "Search")
        fact(a, who, "uses_tool", "Elastic")
    fact(a, "Billing", "depends_on", "Search", origin="channel:x")
    login(client, viewer)
    before = client.get(url(a)).content.decode()
    assert "None yet: discovery has not run" in before and "#1 around" not in before
    engine.discover(agent_id=a)
    found = {c.name: c for c in engine.communities(agent_id=a)}
    billing = next(c for c in found.values() if "ana" in c.members)
    search = next(c for c in found.values() if "eve" in c.members)
    assert billing.number != search.number
    page = client.get(url(a))
    html = page.content.decode()
    options = re.findall(r'<option value="(\d+)" >#\d+ around ', html)
    assert sorted(options) == sorted([str(billing.number), str(search.number)])
    assert "From discovery" in html
    colours = {n["id"]: n.get("color") for n in network(page)["nodes"]}
    assert colours["ana"] == colours["stripe"] != colours["eve"] == colours["elastic"]
    assert {n["id"]: n.get("community") for n in network(page)["nodes"]}["eve"] == search.number
    only = client.get(url(a) + f"?community={search.number}", **HTMX)
    data = network(only)
    assert {n["id"] for n in data["nodes"]} == set(search.members)
    assert len(data["edges"]) == 6
    assert re.search(
        r'Showing <strong id="graph-shown">6</strong> of <strong id="graph-total">15</strong>',
        only.content.decode(),
    )
    # the community choices follow the graph through an out-of-band swap
    assert f'<option value="{search.number}" selected>#{search.number} around' in only.content.decode()
    stale = client.get(url(a) + "?community=999")
    assert "No such community in this view" in stale.content.decode()
    assert len(network(stale)["edges"]) == 15


def test_open_in_graph_draws_both_neighbourhoods_and_the_discovered_pair(client, viewer, agent, people):
    login(client, viewer)
    a = agent.agent_id
    response = client.get(url(a) + "?entity=Priya+Raman&pair=李老闆")
    html = response.content.decode()
    data = network(response)
    ids = {e["id"] for e in data["edges"]}
    assert {people["boss"], people["sponsor"]} <= ids
    pair = next(e for e in data["edges"] if e["id"] == "discovered-pair")
    assert (pair["from"], pair["to"]) == ("priya raman", "李老闆") and pair["dashes"] is True
    assert 'data-pair="李老闆"' in html and 'id="graph-pair"' in html
    assert '<input type="hidden" name="pair" value="李老闆">' in html
    # an unknown other end: just the entity's neighbourhood
    lone = network(client.get(url(a) + "?entity=Priya+Raman&pair=nobody"))
    assert all(e["id"] != "discovered-pair" for e in lone["edges"])


def test_a_large_graph_is_capped_with_showing_n_of_m(client, viewer, agent):
    a = agent.agent_id
    for i in range(130):
        fact(a, f"customer-{i}", "uses_tool", "Zendesk")
    fact(a, "Zendesk", "made_by", "Zendesk Inc")
    login(client, viewer)
    response = client.get(url(a) + "?limit=100")
    html = response.content.decode()
    assert len(network(response)["edges"]) == 100
    assert re.search(
        r'Showing <strong id="graph-shown">100</strong> of <strong id="graph-total">131</strong>', html
    )
    assert 'id="graph-capped"' in html
    # focusing on one entity's neighbourhood: its own edge comes first whatever the cap
    focused = client.get(url(a) + "?limit=100&entity=zendesk+inc")
    assert [e["to"] for e in network(focused)["edges"]] == ["zendesk inc"]
    assert 'id="graph-capped"' not in focused.content.decode()


def test_query_count_is_pinned(client, viewer, agent, people, django_assert_num_queries):
    a = agent.agent_id
    for i in range(40):
        fact(a, f"customer-{i}", "uses_tool", "Zendesk")
    login(client, viewer)
    engine.discover(agent_id=a)
    # the first read after a change scans the edges (and finds when they next change with time alone): two
    # queries more; then they come from the view cache, checked against the agent's generation
    with django_assert_num_queries(10):
        assert client.get(url(a)).status_code == 200
    # session, user, agent (+ pending badges), membership (curator?); graph_view: aliases, generation;
    # the communities, the last discovery run
    with django_assert_num_queries(8):
        assert client.get(url(a)).status_code == 200
    with django_assert_num_queries(8):
        assert client.get(url(a) + "?predicate=uses_tool", **HTMX).status_code == 200
    # a focus costs nothing more (the engine resolves it with the aliases it reads anyway)
    with django_assert_num_queries(8):
        assert client.get(url(a) + "?entity=zendesk&depth=2").status_code == 200
    # a discovered pair: a second neighbourhood (aliases, generation)
    with django_assert_num_queries(10):
        assert client.get(url(a) + "?entity=customer-1&pair=customer-2").status_code == 200
    # the node panel: session, user, agent, membership; resolve, aliases, fact scan, rows, alias list
    with django_assert_num_queries(9):
        assert client.get(url(a, "graph_entity") + "?name=zendesk", **HTMX).status_code == 200


# --- no CDN -----------------------------------------------------------------------------------------------


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag in ("script", "img", "iframe") and a.get("src"):
            self.refs.append(a["src"])
        if tag == "link" and a.get("href"):
            self.refs.append(a["href"])


def test_no_external_url_on_the_page(client, curator, agent, people):
    login(client, curator)
    html = client.get(url(agent.agent_id) + "?node=project+lantern").content.decode()
    parser = _Refs()
    parser.feed(html)
    assert "/static/vendor/vis-network/vis-network.min.js" in parser.refs
    assert "/static/js/graph.js" in parser.refs and "/static/css/graph.css" in parser.refs
    external = [r for r in parser.refs if re.match(r"^(https?:)?//", r)]
    assert external == [] and all(r.startswith(("/static/", "data:")) for r in parser.refs)
    assert not re.search(r"(src|href)=[\"']?(https?:)?//", html)
    # the files served are ours: the vendored build (pinned version) and scripts that fetch nothing remote
    vendored = (STATIC / "vendor/vis-network/vis-network.min.js").read_text()
    assert "@version 10.1.5" in vendored[:400]
    assert "10.1.5" in (STATIC / "vendor/vis-network/README.md").read_text()
    for own in ("js/graph.js", "css/graph.css"):
        assert not re.search(r"https?://|//cdn", (STATIC / own).read_text())


def test_the_vendored_files_are_served(client, viewer, agent):
    from django.contrib.staticfiles import finders

    assert finders.find("vendor/vis-network/vis-network.min.js")
    assert finders.find("vendor/vis-network/LICENSE-MIT")


# --- escaping ---------------------------------------------------------------------------------------------


def test_stored_markup_is_text_everywhere(client, curator, agent):
    a = agent.agent_id
    mid = fact(a, XSS, "leads", "Project X", content=f"{XSS} leads Project X")
    login(client, curator)
    for response in (
        client.get(url(a)),
        client.get(url(a) + "?node=" + XSS),
        client.get(url(a, "graph_entity"), {"name": XSS}, **HTMX),
        client.get(url(a, "graph_merge_preview"), {"canonical": "project x", "alias": XSS}, **HTMX),
    ):
        html = response.content.decode()
        assert response.status_code == 200
        assert XSS not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    data = network(client.get(url(a)))
    assert XSS in [n["label"] for n in data["nodes"]]  # the canvas draws it as text
    assert any(e["id"] == mid for e in data["edges"])


# --- a node's facts ---------------------------------------------------------------------------------------


def test_node_panel_lists_current_facts_with_timeline_and_detail_links(client, curator, agent, people):
    a = agent.agent_id
    old = fact(a, "Project Lantern", "status", "planned", valid_from=dt("2024-01-01"))
    new = fact(a, "Project Lantern", "status", "live", valid_from=dt("2024-06-01"))
    login(client, curator)
    response = client.get(url(a, "graph_entity") + "?name=PROJECT  lantern", **HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert 'id="entity-name">project lantern<' in html
    ids = re.findall(r'id="fact-(m_[a-z0-9]+)"', html)
    assert set(ids) == {people["sponsor"], people["lead"], people["rumour"], people["held"], new}
    assert old not in ids  # superseded: not current
    assert f'action="{url(a, "graph_retract", new)}"' in html  # a curator may retract a current fact
    assert f'href="{url(a, "memory", new)}"' in html
    timeline = url(a, "timeline") + "?subject=Project+Lantern&amp;predicate=status"
    assert timeline in html
    assert 'data-status="quarantined"' in html  # flagged, like its dashed edge
    held = html[html.index(f'id="fact-{people["held"]}"') :]
    held = held[: held.index("</li>")]
    assert (
        f'href="{reverse("review:quarantine", args=[a])}"' in held and "Retract" not in held
    )  # decided with its batch


def test_node_panel_without_htmx_is_the_page_with_the_panel_open(client, viewer, agent, people):
    login(client, viewer)
    a = agent.agent_id
    response = client.get(url(a, "graph_entity") + "?name=Dana+Whitfield")
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert 'id="entity-panel" data-entity="dana whitfield"' in page
    assert client.get(url(a, "graph_entity") + "?name=", **HTMX).status_code == 404


# --- merge two names of one entity --------------------------------------------------------------------------


def test_merge_preview_side_by_side_then_confirm(client, curator, agent, people):
    login(client, curator)
    a = agent.agent_id
    generation = engine.graph_generation(agent_id=a)
    preview = client.get(url(a, "graph_merge_preview") + "?canonical=李老闆&alias=Zhixu", **HTMX)
    html = preview.content.decode()
    assert preview.status_code == 200
    moving = html[html.index('id="merge-moving"') : html.index('id="merge-staying"')]
    staying = html[html.index('id="merge-staying"') : html.index('id="merge-confirm"')]
    assert "zhixu prefers LINE for escalations" in moving and "李老闆 sponsors" not in moving
    assert "李老闆 sponsors Project Lantern" in staying
    assert 'id="merge-conflicts"' not in html
    assert engine.alias_list(agent_id=a) == []  # a preview saves nothing
    assert engine.graph_generation(agent_id=a) == generation

    response = client.post(url(a, "graph_merge"), {"canonical": "李老闆", "alias": "Zhixu"}, **HTMX)
    assert response.status_code == 200
    assert 'id="merge-done"' in response.content.decode()
    trigger = json.loads(response["HX-Trigger"])
    assert trigger["memdesk:toast"]["text"] == "Merged “zhixu” into “李老闆”: 1 fact now counts for “李老闆”."
    assert trigger["memdesk:graph-changed"] == {"entity": "李老闆"}
    assert [(x.canonical, x.alias) for x in engine.alias_list(agent_id=a)] == [("李老闆", "zhixu")]
    assert engine.graph_generation(agent_id=a) > generation
    event = AuditEvent.objects.get(agent_id=a, action="alias_add")
    assert event.actor == "user:cora"
    # the graph now draws one node for both names, and the panel of either name is the canonical one
    data = network(client.get(url(a)))
    assert "zhixu" not in {n["id"] for n in data["nodes"]}
    assert {e["from"] for e in data["edges"] if e["id"] == people["zhixu"]} == {"李老闆"}
    panel = client.get(url(a, "graph_entity") + "?name=zhixu", **HTMX).content.decode()
    assert 'id="entity-name">李老闆<' in panel and 'id="entity-resolved"' in panel
    assert f'id="fact-{people["zhixu"]}"' in panel and f'id="fact-{people["sponsor"]}"' in panel


def test_merge_conflicts_are_shown_and_must_be_acknowledged(client, curator, agent, people):
    a = agent.agent_id
    engine.alias_add(agent_id=a, canonical="priya raman", alias="zhixu")
    login(client, curator)
    preview = client.get(url(a, "graph_merge_preview") + "?canonical=李老闆&alias=zhixu", **HTMX)
    html = preview.content.decode()
    assert 'id="merge-conflicts"' in html and "already an alias of &#x27;priya raman&#x27;" in html
    assert 'id="merge-acknowledge"' in html
    refused = client.post(url(a, "graph_merge"), {"canonical": "李老闆", "alias": "zhixu"}, **HTMX)
    assert refused.status_code == 409 and "tick the box" in refused.content.decode()
    assert "HX-Trigger" not in refused
    assert {x.alias: x.canonical for x in engine.alias_list(agent_id=a)} == {"zhixu": "priya raman"}
    ok = client.post(
        url(a, "graph_merge"), {"canonical": "李老闆", "alias": "zhixu", "acknowledge": "on"}, **HTMX
    )
    assert ok.status_code == 200
    assert {x.alias: x.canonical for x in engine.alias_list(agent_id=a)} == {"zhixu": "李老闆"}


def test_self_merge_and_empty_names_are_refused(client, curator, agent, people):
    login(client, curator)
    a = agent.agent_id
    preview = client.get(url(a, "graph_merge_preview") + "?canonical=Zhixu&alias=zhixu", **HTMX)
    assert preview.status_code == 200
    assert (
        'id="merge-blocked"' in preview.content.decode()
        and 'id="merge-confirm"' not in preview.content.decode()
    )
    refused = client.post(
        url(a, "graph_merge"), {"canonical": "zhixu", "alias": " ZHIXU ", "acknowledge": "on"}, **HTMX
    )
    assert refused.status_code == 422
    empty = client.post(url(a, "graph_merge"), {"canonical": "zhixu", "alias": "  "}, **HTMX)
    assert empty.status_code == 422 and "Name the surface form to merge in." in empty.content.decode()
    assert engine.alias_list(agent_id=a) == []


def test_merge_without_htmx_redirects_with_a_message(client, curator, agent, people):
    login(client, curator)
    a = agent.agent_id
    response = client.post(url(a, "graph_merge"), {"canonical": "李老闆", "alias": "boss li"}, follow=True)
    html = response.content.decode()
    assert response.redirect_chain[-1][1] == 302
    assert "Merged “boss li” into “李老闆”" in html and 'id="entity-panel" data-entity="李老闆"' in html


# --- retract a fact ---------------------------------------------------------------------------------------


def test_retract_needs_a_reason_then_restores_the_superseded_value(client, curator, agent, people):
    a = agent.agent_id
    first = fact(a, "Dana Whitfield", "role", "Tier 2 engineer", valid_from=dt("2024-01-01"))
    second = fact(a, "Dana Whitfield", "role", "Team lead", valid_from=dt("2024-06-01"))
    login(client, curator)
    generation = engine.graph_generation(agent_id=a)
    missing = client.post(url(a, "graph_retract", second), {"reason": ""}, **HTMX)
    assert missing.status_code == 422 and "A reason is required." in missing.content.decode()
    other = client.post(url(a, "graph_retract", second), {"reason": "other"}, **HTMX)
    assert other.status_code == 422 and "needs a note" in other.content.decode()
    assert (
        engine.get_at(agent_id=a, subject="Dana Whitfield", predicate="role", at=dt("2025-01-01")).id
        == second
    )

    response = client.post(
        url(a, "graph_retract", second), {"reason": "wrong", "note": "she declined"}, **HTMX
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith(f'<li class="graph-fact fact-retracted" id="fact-{second}"')
    trigger = json.loads(response["HX-Trigger"])
    assert (
        trigger["memdesk:toast"]["text"]
        == "Retracted: “Dana Whitfield role Team lead” (wrong: she declined)."
    )
    assert "memdesk:graph-changed" in trigger
    current = engine.get_at(agent_id=a, subject="Dana Whitfield", predicate="role", at=dt("2025-01-01"))
    assert current.id == first and current.valid_until is None  # the superseded value is back
    event = AuditEvent.objects.get(agent_id=a, action="curator_retract")
    assert (event.memory_id, event.reason, event.actor) == (second, "wrong: she declined", "user:cora")
    assert engine.graph_generation(agent_id=a) > generation
    again = client.post(url(a, "graph_retract", second), {"reason": "wrong"}, **HTMX)
    assert again.status_code == 409


def test_another_agents_fact_is_a_404_like_a_missing_one(client, curator, agent, other_agent):
    theirs = fact(other_agent.agent_id, "Other Co", "uses_tool", "Jira")
    login(client, curator)
    a = agent.agent_id
    hidden = client.post(url(a, "graph_retract", theirs), {"reason": "wrong"}, **HTMX)
    missing = client.post(
        url(a, "graph_retract", "m_00000000000000000000000000"), {"reason": "wrong"}, **HTMX
    )
    assert hidden.status_code == missing.status_code == 404
    assert hidden.content == missing.content
    assert engine.get_memory(agent_id=other_agent.agent_id, memory_id=theirs).invalidated_by_event is None
    # and through the panel: another agent's entity is simply not there
    panel = client.get(url(a, "graph_entity") + "?name=other+co", **HTMX).content.decode()
    assert 'id="entity-no-facts"' in panel


def test_retract_without_htmx_redirects_to_the_panel(client, curator, agent, people):
    login(client, curator)
    a = agent.agent_id
    response = client.post(url(a, "graph_retract", people["rumour"]), {"reason": "poisoning"}, follow=True)
    html = response.content.decode()
    assert "Retracted: “Project Lantern uses_tool HelpHub” (poisoning)." in html
    assert f'id="fact-{people["rumour"]}"' not in html  # no longer current
    refused = client.post(url(a, "graph_retract", people["lead"]), {"reason": ""})
    assert refused.status_code == 422 and "A reason is required." in refused.content.decode()


def test_merge_without_javascript_previews_on_the_page_and_refuses_unacknowledged_conflicts(
    client, curator, agent, people
):
    a = agent.agent_id
    login(client, curator)
    page = client.get(url(a, "graph_merge_preview") + "?canonical=李老闆&alias=zhixu")
    html = page.content.decode()
    assert page.status_code == 200 and "<html" in html
    assert 'id="graph-filters"' in html and 'id="merge-preview"' in html and 'id="merge-confirm"' in html
    engine.alias_add(agent_id=a, canonical="priya raman", alias="zhixu")
    refused = client.post(url(a, "graph_merge"), {"canonical": "李老闆", "alias": "zhixu"})
    assert refused.status_code == 409
    assert "<html" in refused.content.decode() and 'id="merge-conflicts"' in refused.content.decode()
    assert {x.alias: x.canonical for x in engine.alias_list(agent_id=a)} == {"zhixu": "priya raman"}


# --- names NFKC lengthens (U+FDFA is one character typed, 18 once normalised) -------------------------------

LONG = "\ufdfa"


def entity_url(agent_id: str, name: str) -> str:
    return url(agent_id, "graph_entity") + "?" + urlencode({"name": name})


def test_the_entity_fields_take_every_name_the_engine_looks_up():
    from dashboard import graph_views
    from memory.engine import graph as g

    assert graph_views.MAX_ENTITY_CHARS == g.MAX_ENTITY_CHARS
    assert graph_views.EntityForm({"name": "x" * g.MAX_ENTITY_CHARS}).is_valid()
    assert not graph_views.EntityForm({"name": "x" * (g.MAX_ENTITY_CHARS + 1)}).is_valid()


def test_a_name_nfkc_lengthens_opens_its_panel_by_name_and_by_node(client, viewer, agent):
    a = agent.agent_id
    typed = LONG * 28  # 28 characters typed, 504 once normalised (a subject may have 512 once normalised)
    mid = fact(a, typed, "blesses", "the meeting")
    login(client, viewer)
    panel = client.get(entity_url(a, typed), **HTMX)
    assert panel.status_code == 200 and f'id="fact-{mid}"' in panel.content.decode()
    page = client.get(url(a) + "?" + urlencode({"node": typed}))
    assert page.status_code == 200 and f'id="fact-{mid}"' in page.content.decode()
    # a click on the node sends its id, the normalised name: it opens the same panel (HTMX and without)
    node = next(n["id"] for n in network(client.get(url(a)))["nodes"] if n["id"] != "the meeting")
    assert len(node) == 504
    clicked = client.get(entity_url(a, node), **HTMX)
    assert clicked.status_code == 200 and f'id="fact-{mid}"' in clicked.content.decode()
    no_js = client.get(url(a) + "?" + urlencode({"node": node}))
    assert no_js.status_code == 200 and f'id="fact-{mid}"' in no_js.content.decode()
    # the longest name a stored subject can normalise to still opens a panel
    widest = client.get(entity_url(a, engine.normalize_entity(LONG * 512)), **HTMX)
    assert widest.status_code == 200 and 'id="entity-no-facts"' in widest.content.decode()


def test_retracting_a_fact_whose_subject_nfkc_lengthens_without_htmx(client, curator, agent):
    a = agent.agent_id
    mid = fact(a, LONG * 28, "blesses", "the meeting")
    login(client, curator)
    done = client.post(url(a, "graph_retract", mid), {"reason": "wrong"}, follow=True)
    assert done.status_code == 200 and "Retracted: " in done.content.decode()
    assert 'id="entity-panel"' in done.content.decode()  # back on the subject's panel
    again = client.post(url(a, "graph_retract", mid), {"reason": "wrong"})
    assert again.status_code == 409 and 'id="retract-error"' in again.content.decode()
    assert "this fact is already retracted" in again.content.decode()


def test_a_panel_the_engine_refuses_says_why_inline(client, curator, agent):
    """A row from before today's checks (its subject is blank once trimmed: imported or legacy data) cannot be
    looked up by name: the page says so beside the fact instead of failing."""
    from memory.models import Memory

    a = agent.agent_id
    mid = fact(a, "placeholder", "blesses", "the meeting")
    Memory.objects.filter(id=mid).update(subject="   ")
    login(client, curator)
    refused = client.post(url(a, "graph_retract", mid), {"reason": ""})  # the form's error re-opens the panel
    html = refused.content.decode()
    assert refused.status_code == 422 and 'id="retract-error"' in html and "A reason is required." in html
    assert 'id="entity-error"' in html and "must not be empty" in html


def test_a_merge_past_the_alias_cap_is_refused_with_the_reason(client, curator, agent, people):
    from django.utils import timezone

    from memory.engine import graph as g
    from memory.models import EntityAlias

    a, t = agent.agent_id, timezone.now()
    EntityAlias.objects.bulk_create(
        EntityAlias(agent_id=a, canonical="hub", alias=f"name {k}", created_at=t, updated_at=t)
        for k in range(g.MAX_ALIASES)
    )
    login(client, curator)
    response = client.post(url(a, "graph_merge"), {"canonical": "李老闆", "alias": "Zhixu"}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 422 and f"the most allowed is {g.MAX_ALIASES:d}" in html
    assert 'id="merge-done"' not in html
    assert not EntityAlias.objects.filter(agent_id=a, alias="zhixu").exists()
