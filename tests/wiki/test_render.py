"""Wiki markdown renders to safe HTML: no raw HTML, script, event handler or script URL passes through."""

from __future__ import annotations

import pytest

from wiki.render import render_markdown, sanitise

ATTACKS = [
    "<script>alert('x')</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="https://example.com" onclick="alert(1)">click</a>',
    "<iframe src='https://evil.example'></iframe>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](  javascript:alert(1))",
    "![img](javascript:alert(1))",
    "[click](vbscript:msgbox(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    '<div style="background:url(javascript:alert(1))">x</div>',
    "<svg onload=alert(1)>",
    "[ref]\n\n[ref]: javascript:alert(1)",
    "<scr<script>ipt>alert(1)</script>",
]


@pytest.mark.parametrize("source", ATTACKS)
def test_no_script_handler_or_script_url_gets_through(source):
    html = str(render_markdown(f"Intro\n\n{source}\n"))
    lowered = html.lower()
    assert "<script" not in lowered
    assert "<iframe" not in lowered and "<svg" not in lowered and "<div" not in lowered
    assert 'href="javascript' not in lowered and 'src="javascript' not in lowered
    assert 'href="vbscript' not in lowered
    assert 'href="data:' not in lowered
    for tag_start in lowered.split("<")[1:]:
        tag = tag_start.split(">", 1)[0]
        assert " on" not in tag, tag  # no on* attribute on any real tag


def test_raw_html_is_shown_as_text():
    html = str(render_markdown("Before <b>bold</b> <span class='x'>after</span>"))
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "<b>" not in html and "<span" not in html


def test_markdown_still_renders():
    html = str(
        render_markdown(
            "# Deploy\n\n1. **Announce** in `#ops`\n2. See [the guide](https://example.com/guide)\n\n"
            "| step | owner |\n| --- | --- |\n| canary | ops |\n\n```\nrm -rf /tmp/x\n```\n"
        )
    )
    assert "<h1>Deploy</h1>" in html and "<strong>Announce</strong>" in html and "<code>#ops</code>" in html
    assert '<a href="https://example.com/guide" rel="noopener noreferrer nofollow">the guide</a>' in html
    assert (
        "<table>" in html and "<td>canary</td>" in html and "<pre><code>rm -rf /tmp/x\n</code></pre>" in html
    )
    assert render_markdown("") == "" and render_markdown(None) == ""


def test_the_result_is_marked_safe_for_templates():
    from django.template import Context, Template

    out = Template("{{ html }}").render(Context({"html": render_markdown("*hi* <i>x</i>")}))
    assert "<em>hi</em>" in out and "&lt;i&gt;x&lt;/i&gt;" in out


# --- images and the sanitiser on its own ------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "![pixel](https://tracker.example/p.gif?u=cora)",
        "![internal](http://10.0.0.5/admin/reboot)",
        '![t](https://tracker.example/p.gif "title")',
        "![ref][px]\n\n[px]: https://tracker.example/p.gif",
        "![](//tracker.example/p.gif)",
    ],
)
def test_an_image_is_a_link_and_nothing_is_fetched_on_page_load(source):
    html = str(render_markdown(f"Intro\n\n{source}\n"))
    assert "<img" not in html.lower() and "src=" not in html.lower()
    assert "<a href=" in html and ">Image" in html


def test_an_image_link_keeps_its_text_and_address():
    html = str(render_markdown("![Release chart](https://example.com/chart.png)"))
    assert (
        '<a href="https://example.com/chart.png" rel="noopener noreferrer nofollow">Image: Release chart</a>'
        in html
    )


@pytest.mark.parametrize(
    ("raw", "gone"),
    [
        ("<p>ok</p><script>alert(1)</script>", "<script"),
        ('<img src="x" onerror="alert(1)">', "onerror"),
        ('<img src="https://tracker.example/p.gif">', "<img"),
        ('<a href="javascript:alert(1)">x</a>', "javascript:"),
        ('<a href="JaVaScRiPt:alert(1)">x</a>', "javascript:"),
        ('<a href="data:text/html,hi">x</a>', "data:"),
        ('<p style="background:url(https://tracker.example/p.gif)">x</p>', "style="),
        ('<table><tr><td style="color:red;background:url(x)">x</td></tr></table>', "background"),
        ('<a href="https://example.com" onclick="alert(1)">x</a>', "onclick"),
        ("<iframe src='https://evil.example'></iframe>", "<iframe"),
        ("<svg><script>alert(1)</script></svg>", "<svg"),
        ("<div>x</div><!-- secret -->", "<!--"),
    ],
)
def test_the_sanitiser_alone_removes_what_the_parser_might_let_through(raw, gone):
    """The second layer on raw HTML (as if markdown-it let it through): whatever is not allow-listed goes."""
    assert gone not in sanitise(raw).lower()


def test_the_sanitiser_keeps_allowed_markup_and_forces_rel():
    out = sanitise(
        '<p><a href="https://example.com/a">a</a> <strong>b</strong></p><table><tbody><tr><td style="text-align: right">c</td></tr></tbody></table>'
    )
    assert '<a href="https://example.com/a" rel="noopener noreferrer nofollow">a</a>' in out
    assert "<strong>b</strong>" in out and 'style="text-align:right"' in out
