"""The discovery inbox (SPEC D4, B5): connections between entities that nobody wrote down, each with its
evidence, for a person to pin, snooze until a date or dismiss. ``/agents/<id>/discoveries/``.

It follows the queue component's habits (review/queue.py): one list filtered on the server with the filters in
the URL, cards swapped one at a time by HTMX with a toast and the navigation badge updated out of band, the
keyboard (static/js/discoveries.js: j/k, p, d, z, g, e, ?), the shared pager. Its actions are not approve and
reject, so it has its own small views: parse → check permission (everyone on the team reads, curators act) →
call the engine (``engine.inbox_act``) → render. Another agent's item id is a 404 like a missing one.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import trigger_client_event

from memory import engine
from memory.models import DiscoveryItem, Role
from web.access import AgentAccess, agent_access, login_required
from web.http import HtmxHttpRequest, actor_of, refusal, render_page, wants_fragment

PAGE_TEMPLATE = "review/discoveries.html"
PAGE_SIZE = 20
SNOOZE_DAYS = 7
KIND_LABELS = {
    "cross_community": "Bridge between communities",
    "indirect_strong": "Close, never together",
    "knowledge_gap": "Likely missing link",
}
STATUS_CHOICES = [
    ("open", "Open"),
    ("pinned", "Pinned"),
    ("snoozed", "Snoozed"),
    ("dismissed", "Dismissed"),
    ("all", "All"),
]
ACTION_NOTES = {
    "pin": "Pinned",
    "unpin": "Unpinned",
    "dismiss": "Dismissed",
    "snooze": "Snoozed",
    "reopen": "Reopened",
}


class InboxFilterForm(forms.Form):
    kind = forms.ChoiceField(required=False, choices=[("", "Every kind"), *KIND_LABELS.items()], label="Kind")
    status = forms.ChoiceField(required=False, choices=STATUS_CHOICES, label="Status")
    item = forms.IntegerField(required=False, min_value=1)

    def filters(self) -> dict[str, Any]:
        data = self.cleaned_data if self.is_bound and hasattr(self, "cleaned_data") else {}
        return {
            "kind": data.get("kind") or "",
            "status": data.get("status") or "open",
            "item": data.get("item"),
        }


class SnoozeForm(forms.Form):
    until = forms.DateField(
        label="Snooze until", error_messages={"required": "Pick the date to snooze until."}
    )

    def until_time(self) -> datetime:
        """The chosen day, at its start in UTC (a day that has begun is in the past)."""
        day: date = self.cleaned_data["until"]
        return datetime.combine(day, time(0, 0), tzinfo=UTC)


def open_items_expr() -> Coalesce:
    """The agent's open items (snoozes that ended included), as a subquery for the navigation badge."""
    counts = (
        DiscoveryItem.objects.filter(engine.inbox_open_q(timezone.now()), agent_id=OuterRef("agent_id"))
        .order_by()
        .values("agent_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(counts, output_field=IntegerField()), Value(0))


def list_url(agent_id: str, **params: Any) -> str:
    from urllib.parse import urlencode

    query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
    return reverse("review:discoveries", args=[agent_id]) + (f"?{query}" if query else "")


def graph_url(agent_id: str, item: engine.InboxRecord) -> str:
    from urllib.parse import urlencode

    query = urlencode({"entity": item.entity_a, "pair": item.entity_b})
    return reverse("dashboard:graph", args=[agent_id]) + f"?{query}"


def card(agent_id: str, item: engine.InboxRecord, *, can_act: bool, now: datetime) -> dict[str, Any]:
    """What a card shows: the item, its kind's words, the evidence as the template reads it."""
    ev = item.evidence
    signals = ev.get("signals", {})
    weights = ev.get("weights", {})
    bars = [
        {
            "name": name,
            "label": label,
            "value": signals.get(name),
            "weight": weights.get(name, 0.0),
            "missing": name in ev.get("missing", []),
        }
        for name, label in (
            ("cooccurrence", "Co-occurrence"),
            ("session_jaccard", "Session overlap"),
            ("adamic_adar", "Shared neighbours (Adamic-Adar)"),
            ("type_affinity", "Type affinity"),
            ("embedding", "Meaning (embeddings)"),
        )
    ]
    neighbours = list(zip(ev.get("neighbours", []), ev.get("neighbour_labels", []), strict=False))
    return {
        "item": item,
        "kind_label": KIND_LABELS.get(item.kind, item.kind),
        "labels": ev.get("labels", [item.entity_a, item.entity_b]),
        "types": ev.get("types", ["", ""]),
        "bars": bars,
        "signals": signals,
        "neighbours": neighbours,
        "communities": ev.get("communities", [None, None]),
        "path": ev.get("path", {"nodes": [], "edges": []}),
        "path_id": f"path-data-{item.id}",
        "graph_url": graph_url(agent_id, item),
        "can_act": can_act,
        "snooze_default": (now + timedelta(days=SNOOZE_DAYS)).date().isoformat(),
        "snooze_min": (now + timedelta(days=1)).date().isoformat(),
    }


def page_context(request: HtmxHttpRequest, access: AgentAccess, *, full: bool) -> dict[str, Any]:
    aid = access.agent.agent_id
    form = InboxFilterForm(request.GET)
    form.is_valid()
    f = form.filters()
    now = timezone.now()
    can_act = access.has_role(Role.CURATOR)
    qs = engine.inbox_query(agent_id=aid, status=f["status"], kind=f["kind"] or None, now=now)
    if f["item"]:
        qs = qs.filter(id=f["item"])
    paged = Paginator(qs, PAGE_SIZE).get_page(request.GET.get("page"))
    cards = [card(aid, engine.InboxRecord.of(i, now), can_act=can_act, now=now) for i in paged.object_list]
    context: dict[str, Any] = {
        "agent": access.agent,
        "form": form,
        "filters": f,
        "page": paged,
        "cards": cards,
        "can_act": can_act,
        "kind_label": KIND_LABELS.get(f["kind"], ""),
        "now": now,
        "open_count": getattr(access.agent, "open_discoveries", 0) or 0,
    }
    if full:
        counts = engine.inbox_counts(agent_id=aid)
        context["counts"] = counts
        context["status_links"] = [(s, label.lower(), counts[s]) for s, label in STATUS_CHOICES[1:4]]
        context["last_run"] = engine.last_discovery_run(agent_id=aid)
        context["role"] = access.role
    return context


@login_required
@require_safe
def discoveries(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """The inbox: items of the filter in the URL, pinned first, then by kind and score. HTMX filter changes and pages
    get the list region only."""
    access = agent_access(request.user, agent_id)
    full = not wants_fragment(request)
    response = render_page(request, PAGE_TEMPLATE, page_context(request, access, full=full), fragment="list")
    add_never_cache_headers(response)
    return response


@login_required
@require_POST
def discovery_act(request: HtmxHttpRequest, agent_id: str, item_id: int, action: str) -> HttpResponse:
    """Pin, unpin, dismiss, snooze (until a date) or reopen one item through ``engine.inbox_act``.

    HTMX gets the card back (acted on, or with the error inline: 422 for a missing or past date, 409 for an
    action its state does not allow) with the open count out of band and a toast; a plain POST is redirected
    to the list showing that item."""
    access = agent_access(request.user, agent_id, role=Role.CURATOR)
    aid = access.agent.agent_id
    if action not in ACTION_NOTES:
        raise Http404("No such action.")
    try:
        item = engine.inbox_get(agent_id=aid, item_id=item_id)
    except engine.NotFound:
        raise Http404("No such discovery.") from None
    status, error, note = 200, "", ""
    until = None
    form = SnoozeForm(request.POST) if action == "snooze" else None
    if form is not None and not form.is_valid():
        status, error = 422, "; ".join(e for errs in form.errors.values() for e in errs)
    else:
        until = form.until_time() if form is not None else None
        try:
            item = engine.inbox_act(
                item_id=item.id, action=action, actor=actor_of(request), until=until, agent_id=aid
            )
        except engine.NotFound:
            raise Http404("No such discovery.") from None
        except engine.EngineError as exc:
            status, error = refusal(exc)
        else:
            labels = item.evidence.get("labels", [item.entity_a, item.entity_b])
            note = f"{ACTION_NOTES[action]}: {labels[0]} · {labels[1]}"
            if action == "snooze" and until is not None:
                note += f" until {until:%Y-%m-%d}"
            note += "."
    if not wants_fragment(request):
        if error:
            messages.error(request, error)
        else:
            messages.success(request, note)
        return redirect(list_url(aid, status="all", item=item.id))
    now = timezone.now()
    context = {
        "agent": access.agent,
        "c": card(aid, item, can_act=True, now=now),
        "note": note,
        "error": error,
        "now": now,
        "open_count": engine.inbox_counts(agent_id=aid)["open"],
        "oob": True,
    }
    response = render(request, "review/_discovery_item.html", context, status=status)
    if note:
        trigger_client_event(response, "memdesk:toast", {"text": note, "level": "success"})
    patch_vary_headers(response, ("HX-Request",))
    add_never_cache_headers(response)
    return response
