"""Issue 19 item 16 on the graph page: a large graph opens on a neighbourhood (the asked entity's, else the hub's
by PageRank) with controls to widen; labels are the stored surface forms; the drawing tools are there."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from django.urls import reverse

from memory import engine
from memory.engine.graph.curation import hub
from tests.conftest import login

pytestmark = pytest.mark.django_db


def url(agent_id: str, query: str = "") -> str:
    return reverse("dashboard:graph", args=[agent_id]) + query


def network(html: str) -> dict:
    return json.loads(
        re.search(r'<script id="graph-data" type="application/json">(.*?)</script>', html, re.S)[1]
    )


@pytest.fixture
def large(agent):
    """162 entities: Acme Corp with 100 employees, and a chain of 61 towns."""
    a = agent.agent_id
    for i in range(100):
        engine.store_temporal(agent_id=a, content=f"Employee {i} works at Acme", subject=f"Employee {i}",
                              predicate="works_at", object="Acme Corp")  # fmt: skip
    for i in range(60):
        engine.store_temporal(agent_id=a, content=f"Town {i} is near town {i + 1}", subject=f"Town {i}",
                              predicate="near", object=f"Town {i + 1}")  # fmt: skip


@pytest.fixture
def member(client, viewer):
    return login(client, viewer)


def test_a_large_graph_opens_on_its_hubs_neighbourhood(member, agent, large):
    html = member.get(url(agent.agent_id)).content.decode()
    assert 'id="graph-auto-focus"' in html and '<strong id="graph-entities-total">162</strong>' in html
    assert "neighbourhood of <strong>Acme Corp</strong>" in html
    data = network(html)
    assert len(data["nodes"]) == 101 and not any(n["id"].startswith("town") for n in data["nodes"])
    assert 'data-entity="acme corp"' in html  # the focus is drawn marked
    assert 'id="graph-widen"' in html and 'id="graph-whole"' in html


def test_widening_two_hops_and_the_whole_graph(member, agent, large):
    two = member.get(url(agent.agent_id, "?depth=2")).content.decode()
    assert 'id="graph-auto-focus"' in two and 'id="graph-widen"' not in two  # two hops is as wide as it gets
    whole = member.get(url(agent.agent_id, "?whole=1&limit=1000")).content.decode()
    assert 'id="graph-auto-focus"' not in whole
    assert len(network(whole)["nodes"]) == 162


def test_an_asked_entity_or_a_small_graph_is_never_refocused(member, agent, large):
    html = member.get(url(agent.agent_id, "?entity=town+7")).content.decode()
    assert 'id="graph-auto-focus"' not in html
    assert {n["label"] for n in network(html)["nodes"]} == {"Town 6", "Town 7", "Town 8"}


def test_a_small_graph_is_drawn_whole(member, agent):
    engine.store_temporal(agent_id=agent.agent_id, content="x", subject="Ada Lovelace", predicate="worked_with",
                          object="Charles Babbage")  # fmt: skip
    html = member.get(url(agent.agent_id)).content.decode()
    assert 'id="graph-auto-focus"' not in html and len(network(html)["nodes"]) == 2


def test_labels_are_the_stored_surface_forms_ids_the_keys(member, agent):
    a = agent.agent_id
    engine.store_temporal(agent_id=a, content="x", subject="Ada Lovelace", predicate="worked_with",
                          object="Charles Babbage")  # fmt: skip
    engine.store_temporal(
        agent_id=a, content="y", subject="ada lovelace", predicate="born_in", object="London"
    )
    engine.store_temporal(agent_id=a, content="z", subject="Ada Lovelace", predicate="wrote", object="Notes")
    html = member.get(url(a)).content.decode()
    nodes = {n["id"]: n["label"] for n in network(html)["nodes"]}
    assert nodes["ada lovelace"] == "Ada Lovelace"  # the spelling its facts use most
    assert nodes["charles babbage"] == "Charles Babbage" and nodes["london"] == "London"
    table = re.search(r'<table class="table compact" id="graph-nodes">.*?</table>', html, re.S)[0]
    assert ">Ada Lovelace</a>" in table and 'data-node="ada lovelace"' in table


def test_a_merged_name_shows_the_kept_entitys_spelling(member, agent):
    a = agent.agent_id
    engine.store_temporal(agent_id=a, content="x", subject="Robert Smith", predicate="likes", object="Tea")
    for i in range(3):  # the alias is written more often, but it is not the kept name
        engine.store_temporal(agent_id=a, content=f"b{i}", subject="BOB", predicate=f"p{i}", object=f"O{i}")
    engine.alias_add(agent_id=a, canonical="Robert Smith", alias="bob", actor="user:cora")
    nodes = {n["id"]: n["label"] for n in network(member.get(url(a)).content.decode())["nodes"]}
    assert nodes["robert smith"] == "Robert Smith" and "bob" not in nodes


def test_the_drawing_has_zoom_and_fit_controls(member, agent):
    engine.store_temporal(agent_id=agent.agent_id, content="x", subject="A", predicate="p", object="B")
    html = member.get(url(agent.agent_id)).content.decode()
    for tool in ("zoom-in", "zoom-out", "fit"):
        assert f'data-graph-tool="{tool}"' in html
    assert f'data-agent="{agent.agent_id}"' in html  # positions are kept per agent


def test_pagerank_hub_is_the_centre_of_a_star():
    # a star of 5 leaves around 0, and a chain 6-7-8 beside it: 0 wins
    s = np.array([1, 2, 3, 4, 5, 6, 7], dtype=np.int64)
    o = np.array([0, 0, 0, 0, 0, 7, 8], dtype=np.int64)
    assert hub(s, o, 9) == 0


def test_the_html_export_command_still_writes_the_whole_graph(agent, large, tmp_path):
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("graph_export_html", str(tmp_path / "g.html"), agent=agent.agent_id, limit=1000, stdout=out)
    assert "(162 entities, 160 edges" in out.getvalue()
