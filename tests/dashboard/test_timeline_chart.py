"""The timeline chart (SPEC D7): server-rendered SVG, world time across and record time down, one rectangle per
row (two for a row a later write closed), keyboard-focusable boxes with a text label, the as-of crosshair; an
out-of-order pair looks different from an in-order chain. ``engine.recorded_at`` sets the record time."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from memory import engine
from tests.conftest import dt, login

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


def _fact(agent_id: str, subject: str, obj: str, valid_from, learned, **kw) -> str:
    with engine.recorded_at(learned):
        return engine.store_temporal(
            agent_id=agent_id, content=f"{subject} is {obj}", subject=subject, predicate="status", object=obj,
            valid_from=valid_from, origin="user_direct", **kw,
        ).id  # fmt: skip


def _boxes(html: str) -> dict[str, list[tuple[str, float, float, float, float]]]:
    """row id -> [(kind, x, y, w, h)] of the chart's rectangles."""
    out: dict[str, list[tuple[str, float, float, float, float]]] = {}
    pattern = (
        r'<a href="#row-([^"]+)" class="tl-box[^"]*" data-row="[^"]+" data-kind="(\w+)" aria-label="[^"]+">\s*'
        r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"'
    )
    for mid, kind, x, y, w, h in re.findall(pattern, html):
        out.setdefault(mid, []).append((kind, float(x), float(y), float(w), float(h)))
    return out


def _page(client, agent_id: str, subject: str, query: str = "", **headers) -> str:
    url = reverse("dashboard:timeline", args=[agent_id]) + f"?subject={subject}&predicate=status{query}"
    response = client.get(url, headers=headers)
    assert response.status_code == 200
    return response.content.decode()


def test_in_order_chain_and_out_of_order_pair_look_different(client, viewer, agent):
    aid = agent.agent_id
    # in order: single, then married, each learned a day after it became true
    single = _fact(aid, "sam", "single", dt("2020-01-01"), dt("2020-01-02"))
    married = _fact(aid, "sam", "married", dt("2021-01-01"), dt("2021-01-02"))
    # out of order: the divorce is learned first, the earlier marriage a month later
    divorced = _fact(aid, "jo", "divorced", dt("2021-01-01"), dt("2021-01-02"))
    wed = _fact(aid, "jo", "married", dt("2020-01-01"), dt("2021-02-01"))
    login(client, viewer)

    chain = _boxes(_page(client, aid, "sam"))
    # the first value was believed open-ended (dashed, to the right edge) until the second was learned, then
    # with its end; the second starts where the first's end is, lower down (learned later)
    assert [k for k, *_ in chain[single]] == ["first", "believed"]
    first, closed = chain[single]
    assert first[2] < closed[2] and first[1] + first[3] > closed[1] + closed[3]
    assert chain[married][0][0] == "believed" and abs(chain[married][0][1] - (closed[1] + closed[3])) < 1

    pair = _boxes(_page(client, aid, "jo"))
    # the marriage arrived already closed: one box, left of the divorce yet learned after it (lower down)
    assert [k for k, *_ in pair[wed]] == ["believed"] and [k for k, *_ in pair[divorced]] == ["believed"]
    assert pair[wed][0][1] < pair[divorced][0][1] and pair[wed][0][2] > pair[divorced][0][2]


def test_the_as_of_question_is_a_crosshair_and_the_answer_is_marked(client, viewer, agent):
    aid = agent.agent_id
    single = _fact(aid, "sam", "single", dt("2020-01-01"), dt("2020-01-02"))
    married = _fact(aid, "sam", "married", dt("2021-01-01"), dt("2021-01-02"))
    login(client, viewer)
    html = _page(client, aid, "sam")
    now_cross = re.search(r'id="timeline-crosshair" data-x="([\d.]+)" data-y="([\d.]+)"', html).groups()
    assert f'class="tl-box kind-believed status-current is-answer" data-row="{married}"' in html

    asked = _page(client, aid, "sam", "&at=2020-06-01T00:00:00Z&as_of=2020-06-01T00:00:00Z", **HTMX)
    assert "<html" not in asked  # the as-of form swaps its section, the chart with it
    cross = re.search(r'id="timeline-crosshair" data-x="([\d.]+)" data-y="([\d.]+)"', asked).groups()
    assert float(cross[0]) < float(now_cross[0]) and float(cross[1]) < float(now_cross[1])
    assert re.search(rf'class="tl-box kind-first [^"]*is-answer" data-row="{single}"', asked)


def test_every_box_is_a_focusable_link_with_a_label_and_stored_text_is_escaped(client, viewer, agent):
    aid = agent.agent_id
    mid = _fact(aid, "eve", "<script>alert(1)</script>", dt("2020-01-01"), dt("2020-01-02"))
    login(client, viewer)
    html = _page(client, aid, "eve")
    box = re.search(
        rf'<a href="#row-{mid}" class="tl-box[^"]*" data-row="{mid}" data-kind="believed" aria-label="([^"]+)"',
        html,
    )
    assert box and "&lt;script&gt;" in box.group(1) and "learned 2020-01-02" in box.group(1)
    assert "<script>alert(1)</script>" not in html
    assert '<svg viewBox="0 0 760 320" role="group"' in html and "World time: when it was true" in html


def test_recorded_at_refuses_a_future_time(agent):
    with pytest.raises(engine.EngineError) as err:
        with engine.recorded_at(timezone.now() + timedelta(days=1)):
            pass
    assert err.value.code == "invalid_time"


def test_a_key_without_rows_draws_no_chart(client, viewer, agent):
    login(client, viewer)
    assert 'id="timeline-chart"' not in _page(client, agent.agent_id, "nobody")
