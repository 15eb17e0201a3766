"""Regressions from the wiki review: query input that used to 500, remote images, the sanitiser layer on its
own, the daily revision cap, the edit form's limits, and the engine's public audit function."""

from __future__ import annotations

import pytest
import time_machine
from django.urls import reverse

from memory import engine
from memory.models import AuditEvent
from tests.conftest import dt, login
from wiki import services
from wiki.forms import EditForm
from wiki.models import WikiRevision
from wiki.render import render_markdown, sanitise

from .conftest import publish

pytestmark = pytest.mark.django_db


# --- ?from= on the page view -------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["²", "١٢", "1" * 5000, "-1", "+2", " 2", "2.0", "1e3"])
def test_a_revision_number_that_is_not_ascii_digits_is_ignored_not_a_500(client, agent, viewer, value):
    page = publish(agent_id=agent.agent_id).page
    publish(agent_id=agent.agent_id, summary="A second edition.")
    login(client, viewer)
    client.raise_request_exception = False
    response = client.get(reverse("wiki:page", args=[agent.agent_id, page.id]), {"from": value})
    assert response.status_code == 200
    assert b"Deploy runbook" in response.content


def test_an_ascii_revision_number_still_starts_the_edit_form_from_it(client, agent, curator):
    page = publish(agent_id=agent.agent_id).page
    publish(agent_id=agent.agent_id, summary="The second edition's summary.")
    login(client, curator)
    url = reverse("wiki:page", args=[agent.agent_id, page.id])
    first = client.get(url, {"from": "1"}).content.decode()
    second = client.get(url, {"from": "2"}).content.decode()
    assert "How we ship a release safely." in first.split('id="wiki-edit"', 1)[1]
    assert "The second edition&#x27;s summary." in second.split('id="wiki-edit"', 1)[1]


# --- images and the sanitiser ----------------------------------------------------------------------------


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


# --- the daily revision cap (W2) -----------------------------------------------------------------------------


def test_republishing_adds_at_most_100_revisions_a_day_then_rate_limited():
    a = "rev-bot"
    with time_machine.travel(dt("2026-03-02T08:00:00Z"), tick=False):
        page = publish(agent_id=a).page
        services.promote(page=page, actor="user:cora", reason="checked")  # proposals count too
        for i in range(2, services.DAILY_PUBLISHED_REVISIONS + 1):
            assert publish(agent_id=a, summary=f"Edition {i}.").outcome == "proposed"
        with pytest.raises(engine.RateLimited) as err:
            publish(agent_id=a, summary="One too many.")
        assert err.value.details["limit"] == 100 and err.value.code == "rate_limited"
        with pytest.raises(engine.RateLimited):
            publish(agent_id=a, title="A new page", slug="a-new-page")  # a new page is a revision too
        # an unchanged republication adds nothing and is still answered
        assert publish(agent_id=a, summary=f"Edition {services.DAILY_PUBLISHED_REVISIONS}.").outcome == (
            "unchanged"
        )
        # a curator's edit is not an agent's revision
        services.revise(page=page, actor="user:cora", summary="Curated again.", reason="tidy")
    assert WikiRevision.objects.filter(page__agent_id=a).count() == 101
    with time_machine.travel(dt("2026-03-03T00:00:01Z"), tick=False):
        assert publish(agent_id=a, summary="A new day.").outcome == "proposed"


def test_the_revision_cap_is_per_agent():
    with time_machine.travel(dt("2026-03-02T08:00:00Z"), tick=False):
        for i in range(services.DAILY_PUBLISHED_REVISIONS):
            publish(agent_id="busy-bot", summary=f"Edition {i}.")
        with pytest.raises(engine.RateLimited):
            publish(agent_id="busy-bot", summary="Over.")
        assert publish(agent_id="quiet-bot").outcome == "created"


# --- the edit form's limits are the services' --------------------------------------------------------------


def _form(**kw):
    data = {"title": "T", "summary": "S", "original_text": "O", "tags": "", "reason": "edit"}
    data.update(kw)
    return EditForm(data=data)


def test_the_edit_form_accepts_what_the_services_accept():
    form = _form(title="x" * services.MAX_TITLE, tags=", ".join(f"tag{i}" for i in range(services.MAX_TAGS)))
    assert form.is_valid(), form.errors
    assert len(form.cleaned_data["title"]) == 300 and len(form.cleaned_data["tags"]) == 50


def test_the_edit_form_refuses_what_the_services_refuse():
    assert "title" in _form(title="x" * 301).errors
    assert "tags" in _form(tags=", ".join(f"tag{i}" for i in range(51))).errors
    assert "tags" in _form(tags="x" * 101).errors


def test_a_300_character_title_and_50_tags_go_through_the_curator_form(client, agent, curator):
    page = publish(agent_id=agent.agent_id).page
    login(client, curator)
    tags = [f"t{i}" for i in range(50)]
    response = client.post(
        reverse("wiki:edit", args=[agent.agent_id, page.id]),
        {
            "title": "T" * 300,
            "summary": page.summary,
            "original_text": page.original_text,
            "tags": ", ".join(tags),
            "reason": "long title",
        },
    )
    assert response.status_code in (200, 302)
    page.refresh_from_db()
    assert page.title == "T" * 300 and page.tags == tags


# --- engine.audit_record ----------------------------------------------------------------------------------


def test_audit_record_writes_one_validated_event():
    event_id = engine.audit_record(
        agent_id="bot",
        actor="user:cora",
        action="wiki_promote",
        subject="wiki:auto/sop/x",
        memory_id="m_1",
        reason="checked",
        details={"path": "curated/sop/x", "revision": 2},
    )
    event = AuditEvent.objects.get(pk=event_id)
    assert (event.agent_id, event.actor, event.action, event.subject, event.memory_id, event.reason) == (
        "bot",
        "user:cora",
        "wiki_promote",
        "wiki:auto/sop/x",
        "m_1",
        "checked",
    )
    assert event.details == {"path": "curated/sop/x", "revision": 2}


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"agent_id": ""}, "agent_id"),
        ({"actor": " "}, "actor"),
        ({"action": "Drop Table"}, "action"),
        ({"action": ""}, "action"),
        ({"reason": "x" * 2001}, "reason"),
        ({"details": {"x": object()}}, "details"),
        ({"details": {"x": float("nan")}}, "details"),
        ({"details": {1: "x"}}, "details"),
        ({"details": ["x"]}, "details"),
        ({"details": {"x": "y" * 20_000}}, "details"),
        ({"subject": "s" * 513}, "subject"),
    ],
)
def test_audit_record_refuses_bad_input_and_writes_nothing(kw, field):
    args = {"agent_id": "bot", "actor": "user:cora", "action": "wiki_remove", **kw}
    with pytest.raises(engine.InvalidArgument) as err:
        engine.audit_record(**args)
    assert err.value.field == field
    assert AuditEvent.objects.count() == 0


def test_audit_record_is_keyword_only():
    with pytest.raises(TypeError):
        engine.audit_record("bot", "user:cora", "wiki_remove")  # type: ignore[misc]


def test_the_wiki_audits_through_the_public_function(monkeypatch):
    calls = []
    real = engine.audit_record

    def spy(**kw):
        calls.append(kw["action"])
        return real(**kw)

    monkeypatch.setattr(engine, "audit_record", spy)
    page = publish(agent_id="audit-bot").page
    services.promote(page=page, actor="user:cora", reason="checked")
    services.remove(page=page, actor="user:cora", reason="obsolete")
    assert calls == ["wiki_publish", "wiki_promote", "wiki_remove"]
    assert (
        list(
            AuditEvent.objects.filter(agent_id="audit-bot", action__startswith="wiki_")
            .order_by("id")
            .values_list("action", flat=True)
        )
        == calls
    )
