"""The graph as a self-contained interactive HTML file (SPEC D6 "download as HTML"), drawn by pyvis.

pyvis writes vis-network and its styles into the page itself (``cdn_resources="in_line"``); the page template
it ships also links Bootstrap from a CDN, which is cut out here, so the file opens offline and asks no other
host for anything. Node and edge data reach the page as JSON that pyvis escapes (``tojson``: ``<``, ``>`` and
``&`` become ``\\u003c``…), and vis-network draws labels and hover titles as text, so stored markup stays text.
"""

from __future__ import annotations

import html
import re
from typing import Any

REMOTE = re.compile(
    r"""<link\b[^>]*\bhref=["']https?://[^>]*>|<script\b[^>]*\bsrc=["']https?://[^>]*>\s*</script>"""
    r"""|<!--\s*<link\b.*?-->|//# sourceMappingURL=[^\s<]+""",
    re.IGNORECASE | re.DOTALL,
)
HEIGHT = "860px"


def pyvis_html(network: dict[str, Any], *, title: str) -> str:
    """``network`` (``graph_views.network_data``: the current view's nodes and edges, with their colours) as
    one HTML document with every resource inline."""
    from pyvis.network import Network

    net = Network(height=HEIGHT, width="100%", directed=True, cdn_resources="in_line", heading="")
    for n in network["nodes"]:
        node: dict[str, Any] = {"label": n["label"], "title": _text(n["title"]), "value": n["value"]}
        if "color" in n:
            node["color"] = n["color"]
        net.add_node(n["id"], **node)
    for e in network["edges"]:
        net.add_edge(
            e["from"],
            e["to"],
            label=e["label"],
            title=_text(e["title"]),
            color=e["color"],
            dashes=bool(e["dashes"]),
            width=2 if e.get("quarantined") or e.get("discovered") else 1 + 2 * float(e["trust"]),
        )
    net.set_options(
        '{"physics": {"solver": "forceAtlas2Based", "stabilization": {"iterations": 200}},'
        ' "edges": {"arrows": {"to": {"enabled": true, "scaleFactor": 0.5}}, "font": {"size": 11}},'
        ' "nodes": {"shape": "dot", "scaling": {"min": 8, "max": 42}}}'
    )
    page = REMOTE.sub("", net.generate_html())
    head = f"<title>{html.escape(title)}</title>\n"
    return page.replace("<head>", "<head>\n" + head, 1)


def _text(value: str) -> str:
    """A hover title: pyvis switches its tooltips to HTML when a title holds "href"; never let it."""
    return value.replace("href", "hre\u200bf")
