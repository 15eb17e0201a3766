"""Dashboard pages. Each view: parse → check permission → call the engine or a selector → render.

No view writes memory rows; reads made on behalf of a person never bump access counts (``touch=False``).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django_htmx.middleware import HtmxDetails

from memory import engine

from . import selectors
from .access import agent_access, login_required, visible_agents
from .forms import MemoryFilterForm, TimelineForm

PAGE_SIZE = 25
SEARCH_LIMIT = 100  # the engine's maximum; ranked search pages over at most this many hits
RECENT = 10


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
    user: AbstractBaseUser | AnonymousUser  # type: ignore[assignment]


def wants_fragment(request: HtmxHttpRequest) -> bool:
    """A partial for HTMX swaps; the whole page for normal, boosted and history-restore requests."""
    return bool(request.htmx) and not request.htmx.boosted and not request.htmx.history_restore_request


def render_page(
    request: HtmxHttpRequest, template: str, context: dict[str, Any], *, fragment: str | None = None
) -> HttpResponse:
    name = f"{template}#{fragment}" if fragment and wants_fragment(request) else template
    response = render(request, name, context)
    patch_vary_headers(response, ("HX-Request",))
    return response


@login_required
def home(request: HtmxHttpRequest) -> HttpResponse:
    summaries = selectors.agents_with_counts(visible_agents(request.user))
    return render_page(request, "dashboard/home.html", {"summaries": summaries})


@login_required
def agent_home(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    access = agent_access(request.user, agent_id)
    aid = access.agent.agent_id
    context = {
        "agent": access.agent,
        "summary": engine.summarize(agent_id=aid),
        "recent": engine.list_recent(agent_id=aid, n=RECENT),
        "keys": selectors.fact_keys(aid, limit=RECENT),
    }
    return render_page(request, "dashboard/agent.html", context)


@login_required
def memory_list(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    access = agent_access(request.user, agent_id)
    aid = access.agent.agent_id
    form = MemoryFilterForm(request.GET)
    form.is_valid()
    f = form.filters()
    ranked = bool(f["q"]) and f["status"] == "current"
    if ranked:
        try:
            hits = engine.search(
                agent_id=aid, query=f["q"], limit=SEARCH_LIMIT, layer=f["layer"] or None, touch=False
            )
        except engine.EngineError as exc:
            form.add_error("q", exc.message)
            hits = []
        items: Any = selectors.filter_hits_by_origin(hits, origin=f["origin"], origin_cls=f["origin_class"])
    else:
        items = selectors.memory_rows(
            aid,
            status=f["status"],
            query=f["q"],
            layer=f["layer"],
            origin=f["origin"],
            origin_cls=f["origin_class"],
        )
    page = Paginator(items, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = list(page.object_list) if ranked else selectors.records(page.object_list)
    context: dict[str, Any] = {
        "agent": access.agent,
        "form": form,
        "filters": f,
        "ranked": ranked,
        "page": page,
        "rows": rows,
        "now": timezone.now(),
    }
    if not wants_fragment(request):
        origins = selectors.agent_origins(aid)
        context["origins"] = origins
        context["origin_classes"] = selectors.origin_classes(origins)
    return render_page(request, "dashboard/memory_list.html", context, fragment="results")


@login_required
def memory_detail(request: HtmxHttpRequest, agent_id: str, memory_id: str) -> HttpResponse:
    access = agent_access(request.user, agent_id)
    record = selectors.memory_record(access.agent.agent_id, memory_id)
    if record is None:
        raise Http404("No such memory.")
    now = timezone.now()
    context = {
        "agent": access.agent,
        "m": record,
        "now": now,
        "status": record.status_at(now),
        "related": selectors.related_rows(record),
    }
    return render_page(request, "dashboard/memory_detail.html", context)


@login_required
def timeline(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    access = agent_access(request.user, agent_id)
    aid = access.agent.agent_id
    now = timezone.now()
    if not request.GET.get("subject") and not request.GET.get("predicate"):
        # No key chosen yet: offer the agent's keys.
        context = {"agent": access.agent, "keys": selectors.fact_keys(aid), "form": TimelineForm()}
        return render_page(request, "dashboard/timeline_keys.html", context)
    form = TimelineForm(request.GET)
    if not form.is_valid() and ("subject" in form.errors or "predicate" in form.errors):
        context = {"agent": access.agent, "keys": selectors.fact_keys(aid), "form": form}
        return render_page(request, "dashboard/timeline_keys.html", context)
    subject, predicate = form.cleaned_data["subject"], form.cleaned_data["predicate"]
    at = form.cleaned_data.get("at") or now
    as_of = form.cleaned_data.get("as_of")
    answer = None
    if not form.errors:
        answer = engine.get_at(agent_id=aid, subject=subject, predicate=predicate, at=at, as_of=as_of)
    context = {
        "agent": access.agent,
        "form": form,
        "subject": subject,
        "predicate": predicate,
        "at": at,
        "as_of": as_of,
        "at_given": bool(form.cleaned_data.get("at")),
        "answer": answer,
        "now": now,
    }
    if not wants_fragment(request):
        context["rows"] = selectors.timeline(aid, subject, predicate, at=now)
    return render_page(request, "dashboard/timeline.html", context, fragment="asof")
