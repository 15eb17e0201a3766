"""The insights page (SPEC D9): what an agent uses and believes.

``/agents/<id>/insights/`` shows the interest profile for 7, 30 or 90 days (``?days=``, swapped in place by HTMX
and kept in the URL), the daily snapshots with their deltas, the knowledge gaps, the attitudes with their versions
and decayed confidence (and the changes waiting for review), the skills with their levels, and the rows per tier.
Every member of the agent's team may look; nothing here writes. Charts are inline SVG built here and drawn by the
template (no script, labelled for screen readers, the same figures listed as text beside them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_safe

from memory import engine
from web.access import agent_access, login_required
from web.http import HtmxHttpRequest, render_page, wants_fragment

WINDOWS = (7, 30, 90)
DEFAULT_WINDOW = 7
SNAPSHOT_DAYS = 30
CHART_WIDTH = 360
BAR_HEIGHT = 18
BAR_GAP = 6
LABEL_WIDTH = 150
TIER_COLORS = {"hot": "#b3261e", "warm": "#9a5b00", "cold": "#2456c7", "frozen": "#5d6675"}


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    text: str  # the value as shown
    x: float
    y: float
    width: float
    height: float
    color: str = "#2456c7"


def hbars(items: list[tuple[str, float, str]], *, width: int = CHART_WIDTH) -> dict[str, Any]:
    """A horizontal bar chart: one bar per (label, value, shown text), scaled to the largest value."""
    peak = max((v for _, v, _ in items), default=0.0) or 1.0
    room = width - LABEL_WIDTH - 40
    bars = [
        Bar(
            label,
            value,
            text,
            LABEL_WIDTH,
            k * (BAR_HEIGHT + BAR_GAP),
            max(1.0, room * value / peak),
            BAR_HEIGHT,
        )
        for k, (label, value, text) in enumerate(items)
    ]
    return {
        "bars": bars,
        "width": width,
        "height": max(1, len(bars) * (BAR_HEIGHT + BAR_GAP)),
        "label_x": LABEL_WIDTH - 6,
    }


def columns(items: list[tuple[str, float]], *, width: int = CHART_WIDTH, height: int = 120) -> dict[str, Any]:
    """A column chart (oldest left): one column per (label, value)."""
    peak = max((v for _, v in items), default=0.0) or 1.0
    step = width / max(1, len(items))
    plot = height - 20
    bars = [
        Bar(
            label,
            value,
            f"{value:g}",
            k * step + 1,
            plot - plot * value / peak,
            max(1.0, step - 2),
            plot * value / peak,
        )
        for k, (label, value) in enumerate(items)
    ]
    return {"bars": bars, "width": width, "height": height, "base": plot}


def stacked(counts: dict[str, int], *, width: int = CHART_WIDTH) -> dict[str, Any]:
    """One bar split by tier."""
    total = sum(counts.values())
    x, bars = 0.0, []
    for tier, n in counts.items():
        w = width * n / total if total else 0.0
        bars.append(Bar(tier, n, str(n), x, 0, w, 24, TIER_COLORS.get(tier, "#5d6675")))
        x += w
    return {"bars": bars, "width": width, "height": 24, "total": total}


def window(value: Any) -> int:
    try:
        days = int(value)
    except (TypeError, ValueError):
        return DEFAULT_WINDOW
    return days if days in WINDOWS else DEFAULT_WINDOW


def profile_context(agent_id: str, days: int) -> dict[str, Any]:
    prof = engine.profile(agent_id=agent_id, days=days)
    return {
        "days": days,
        "windows": WINDOWS,
        "profile": prof,
        "intent_chart": hbars([(i.label, i.count, str(i.count)) for i in prof.intents]),
        "entity_chart": hbars([(e.entity, e.score, f"{e.score:.2f}") for e in prof.entities]),
    }


@login_required
@require_safe
def insights(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    access = agent_access(request.user, agent_id)
    aid = access.agent.agent_id
    context: dict[str, Any] = {"agent": access.agent, **profile_context(aid, window(request.GET.get("days")))}
    if wants_fragment(request):
        return render_page(request, "dashboard/insights.html", context, fragment="profile")
    now = timezone.now()
    snapshots = engine.interest_snapshots(agent_id=aid, limit=SNAPSHOT_DAYS)
    tiers = engine.tier_counts(agent_id=aid)
    history = engine.attitudes(agent_id=aid, history=True, at=now)
    by_category: dict[str, list[engine.AttitudeRecord]] = {}
    for a in history:
        by_category.setdefault(a.category, []).append(a)
    context.update(
        now=now,
        snapshots=snapshots,
        snapshot_chart=columns(
            [(s.day.isoformat(), s.profile.get("queries", 0)) for s in reversed(snapshots)]
        ),
        gaps=engine.knowledge_gaps(agent_id=aid, status="open"),
        resolved_gaps=engine.knowledge_gaps(agent_id=aid, status="resolved", limit=20),
        attitude_groups=[(versions[0], versions[1:]) for versions in by_category.values()],
        pending_attitudes=engine.review_list(agent_id=aid, kind="attitude"),
        skills=engine.skills(agent_id=aid, at=now),
        skill_levels=engine.SKILL_LEVELS,
        tiers=tiers,
        tier_chart=stacked(tiers),
    )
    return render_page(request, "dashboard/insights.html", context)
