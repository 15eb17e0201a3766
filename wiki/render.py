"""Markdown to safe HTML for wiki pages.

Two layers: markdown-it-py with raw HTML disabled (``<tag>`` in the source is shown as text, and its link
validator refuses ``javascript:``/``vbscript:``/``file:``/``data:`` URLs), then nh3 (the Ammonia sanitiser)
with an allow-list of tags and attributes and http/https/mailto links only, so no ``<script>``, no ``on*``
attribute and no script URL can reach a curator's browser whatever the parser does.

Images are rendered as links (``![chart](https://…/c.png)`` → a link "Image: chart"), and nh3 drops any
``<img>``: an agent-written page must not make the curator's browser fetch a URL (a tracking pixel, a GET to
an internal address) just by being opened; the curator follows the link if they want the picture.
"""

from __future__ import annotations

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
    ["table", "strikethrough"]
)

ALLOWED_TAGS = {
    "a",
    "blockquote",
    "br",
    "code",
    "del",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "li",
    "ol",
    "p",
    "pre",
    "s",
    "strong",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "code": {"class"},
    "td": {"style"},
    "th": {"style"},
    "ol": {"start"},
}
URL_SCHEMES = {"http", "https", "mailto"}


def _image_as_link(self, tokens, idx, options, env):  # type: ignore[no-untyped-def]
    """markdown-it render rule: an image becomes a link to it (nothing is fetched on page load)."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env).strip()
    label = f"Image: {alt}" if alt else "Image"
    return f'<a href="{escapeHtml(src)}">{escapeHtml(label)}</a>'


_md.add_render_rule("image", _image_as_link)


def sanitise(html: str) -> str:
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        filter_style_properties={"text-align"},
        strip_comments=True,
    )


def render_markdown(text: str | None) -> SafeString:
    """Markdown → sanitised HTML, safe to put into a template unescaped."""
    return mark_safe(sanitise(_md.render(text or "")))  # noqa: S308 - sanitised just above
