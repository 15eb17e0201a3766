"""Wiki markdown renders to safe HTML: no raw HTML, script, event handler or script URL passes through."""

from __future__ import annotations

import pytest

from wiki.render import render_markdown

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
