"""The graph curation page (SPEC D6): the agent's entity graph, a node's facts, merging surface forms of one
entity (alias), retracting a fact.

Each view: parse → check permission → call the engine → render. Reads are open to every member of the agent's
team; the three changes (merge, retract) need the curator role and go through the engine (audited, graph
generation bumped). Entities travel in the query string (they may hold slashes, CJK, markup); stored text is only
ever rendered escaped: in templates, and to the canvas through ``json_script`` (vis-network draws labels as text).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.text import slugify
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import trigger_client_event

from memory import engine
from memory.models import Role
from web.access import AgentAccess, agent_access, login_required
from web.http import HtmxHttpRequest, actor_of, refusal, render_page, wants_fragment

from . import graph_export, selectors
from .views import RESTORE_REASONS

# An entity's name (a node id) can be longer than the text it was stored as (NFKC makes up to 18 characters of
# one): the entity fields take what the engine looks up (its MAX_TRIPLE_PART × NFKC_MAX_EXPANSION; a test pins
# the two equal); a predicate and the merge form's names take what a row stores.
MAX_TEXT_CHARS = 512
MAX_ENTITY_CHARS = MAX_TEXT_CHARS * 18
LIMIT_CHOICES = (100, 300, 1000)
DEFAULT_LIMIT = 300
# A graph of more entities than this opens on a neighbourhood (issue 19 item 16): the asked entity's, else the
# hub's (highest PageRank); "the whole graph" (?whole=1) is one click away.
LARGE_GRAPH_NODES = 150
FACTS_LIMIT = 50
# Edge colours by origin trust; the legend on the page names the same bands.
TRUST_BANDS = (
    (0.8, "high", "#1f7a3d"),
    (0.5, "medium", "#2456c7"),
    (0.0, "low", "#b3261e"),
)
QUARANTINED_COLOR = "#c77700"
DISCOVERED_COLOR = "#7b3fb5"
# Node fills by community (the legend says so); nodes outside a named community keep the default blue.
COMMUNITY_COLORS = ("#8fb0ff", "#9fd8b0", "#f4b6c2", "#d6c4f2", "#ffd59a", "#a8dde6", "#e3d3a8", "#c9ccd4")
RETRACT_REASONS = (
    ("wrong", "Wrong"),
    ("outdated", "Outdated"),
    ("duplicate", "Duplicate"),
    ("poisoning", "Poisoning"),
    ("out_of_scope", "Out of scope"),
    ("other", "Other (say why)"),
)
MAX_NOTE_CHARS = 1900


# --- forms (query strings and POST bodies) ---------------------------------------------------------------


class GraphFilterForm(forms.Form):
    entity = forms.CharField(required=False, max_length=MAX_ENTITY_CHARS, strip=True, label="Entity")
    depth = forms.TypedChoiceField(
        required=False, choices=[(1, "1 hop"), (2, "2 hops")], coerce=int, empty_value=1, label="Depth"
    )
    predicate = forms.CharField(required=False, max_length=MAX_TEXT_CHARS, strip=True, label="Predicate")
    min_trust = forms.FloatField(required=False, min_value=0.0, max_value=1.0, label="Minimum trust")
    limit = forms.TypedChoiceField(
        required=False,
        choices=[(n, f"{n} edges") for n in LIMIT_CHOICES],
        coerce=int,
        empty_value=DEFAULT_LIMIT,
        label="Show at most",
    )
    community = forms.CharField(required=False, max_length=MAX_ENTITY_CHARS, strip=True, label="Community")
    node = forms.CharField(required=False, max_length=MAX_ENTITY_CHARS, strip=True)
    # "open in graph" from the discovery inbox: the entity's and this one's neighbourhoods, the pair marked
    pair = forms.CharField(required=False, max_length=MAX_ENTITY_CHARS, strip=True)
    whole = forms.BooleanField(required=False)  # the whole graph even when it is large

    def filters(self) -> dict[str, Any]:
        """Cleaned filters; invalid fields fall back to their defaults (the errors are shown beside them)."""
        data = self.cleaned_data if self.is_bound else {}
        return {
            "entity": data.get("entity") or "",
            "depth": data.get("depth") or 1,
            "predicate": data.get("predicate") or "",
            "min_trust": data.get("min_trust") or 0.0,
            "limit": data.get("limit") or DEFAULT_LIMIT,
            "community": data.get("community") or "",
            "node": data.get("node") or "",
            "pair": data.get("pair") or "",
            "whole": bool(data.get("whole")),
        }


class EntityForm(forms.Form):
    name = forms.CharField(max_length=MAX_ENTITY_CHARS, strip=True, label="Entity")


class MergeForm(forms.Form):
    canonical = forms.CharField(
        max_length=MAX_TEXT_CHARS,
        strip=True,
        label="Keep (canonical name)",
        error_messages={"required": "Name the entity to keep."},
    )
    alias = forms.CharField(
        max_length=MAX_TEXT_CHARS,
        strip=True,
        label="Merge in (another name for it)",
        error_messages={"required": "Name the surface form to merge in."},
    )
    acknowledge = forms.BooleanField(required=False, label="I have read the conflicts above")


class RetractForm(forms.Form):
    reason = forms.ChoiceField(
        choices=RETRACT_REASONS, label="Reason", error_messages={"required": "Pick a reason: it is required."}
    )
    note = forms.CharField(required=False, max_length=MAX_NOTE_CHARS, strip=True, label="Note")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("reason") == "other" and not data.get("note"):
            self.add_error("note", "Say why: the reason “other” needs a note.")
        return data

    def reason_text(self) -> str:
        code, note = self.cleaned_data["reason"], self.cleaned_data.get("note") or ""
        return f"{code}: {note}" if note else code


# --- helpers ----------------------------------------------------------------------------------------------


def trust_band(trust: float) -> tuple[str, str]:
    for floor, name, color in TRUST_BANDS:
        if trust >= floor:
            return name, color
    return TRUST_BANDS[-1][1], TRUST_BANDS[-1][2]


def network_data(
    nodes: list[dict[str, Any]],
    edges: list[dict[str, Any]],
    communities: list[selectors.GraphCommunity],
    pair: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """What static/js/graph.js hands to vis-network: nodes sized by degree and coloured by community, edges
    coloured by trust, quarantined edges dashed, and for a discovered ``pair`` a dotted edge between them that
    is no fact. Plain data only (rendered with ``json_script``, so markup stays text)."""
    group = {name: c.number for c in communities for name in c.members}
    out_nodes = []
    for n in nodes:
        node = {
            "id": n["id"],
            "label": n["label"],
            "value": n["degree"],
            "title": f"{n['label']} · {n['degree']} fact{'s' if n['degree'] != 1 else ''}",
        }
        k = group.get(n["id"])
        if k is not None:
            node["color"] = {"background": community_color(k), "border": "#5d6675"}
            node["community"] = k
        out_nodes.append(node)
    out_edges = []
    for e in edges:
        trust = float(e["origin_trust"])
        band, color = trust_band(trust)
        quarantined = bool(e["quarantined"])
        label = f"⚠ {e['predicate']}" if quarantined else e["predicate"]
        state = "quarantined, held for review" if quarantined else f"{band} trust"
        out_edges.append(
            {
                "id": e["memory_id"],
                "from": e["subject"],
                "to": e["object"],
                "label": label,
                "title": f"{e['subject']} —{e['predicate']}→ {e['object']} · trust {trust:.2f} · {state}",
                "color": QUARANTINED_COLOR if quarantined else color,
                "dashes": quarantined,
                "quarantined": quarantined,
                "trust": round(trust, 3),
            }
        )
    if pair is not None:
        out_edges.append(
            {
                "id": "discovered-pair",
                "from": pair[0],
                "to": pair[1],
                "label": "discovered",
                "title": f"{pair[0]} · {pair[1]}: a connection discovery found; no fact links them",
                "color": DISCOVERED_COLOR,
                "dashes": True,
                "quarantined": False,
                "trust": 0.0,
                "discovered": True,
            }
        )
    return {"nodes": out_nodes, "edges": out_edges}


def community_color(number: int) -> str:
    return COMMUNITY_COLORS[number % len(COMMUNITY_COLORS)]


def in_community(
    view: Any, community: selectors.GraphCommunity
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The view's edges with both ends in ``community``, and their nodes with degrees recounted."""
    members = community.members
    edges = [e for e in view.edges if e["subject"] in members and e["object"] in members]
    degree: dict[str, int] = {}
    for e in edges:
        for name in (e["subject"], e["object"]):
            degree[name] = degree.get(name, 0) + 1
    labels = getattr(view, "labels", {}) or {}
    nodes = [
        {"id": n, "label": labels.get(n, n), "kind": "entity", "degree": d}
        for n, d in sorted(degree.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return nodes, edges


def graph_url(agent_id: str, **params: Any) -> str:
    query = urlencode({k: v for k, v in params.items() if v not in (None, "", 0, 0.0)})
    return reverse("dashboard:graph", args=[agent_id]) + (f"?{query}" if query else "")


def entity_context(access: AgentAccess, name: str) -> dict[str, Any]:
    """A node's panel: its canonical name, other names, and current facts (quarantined ones flagged)."""
    aid = access.agent.agent_id
    canonical = engine.resolve_entity(agent_id=aid, name=name)
    error = ""
    try:
        facts = engine.entity_facts(
            agent_id=aid, entity=canonical, limit=FACTS_LIMIT, include_quarantined=True
        )
    except engine.EngineError as exc:  # never a 500 from a name: say why inline
        facts, error = [], f"This entity’s facts cannot be listed: {exc.message}."
    aliases = [a.alias for a in engine.alias_list(agent_id=aid) if a.canonical == canonical]
    return {
        "entity": canonical,
        "asked": name,
        "entity_error": error,
        "facts": facts,
        "facts_capped": len(facts) >= FACTS_LIMIT,
        "aliases": aliases,
        "retract_reasons": RETRACT_REASONS,
        "restore_reasons": RESTORE_REASONS,
        "merge_form": MergeForm(initial={"canonical": canonical}),
    }


def _respond(request: HtmxHttpRequest, response: HttpResponse) -> HttpResponse:
    patch_vary_headers(response, ("HX-Request",))
    add_never_cache_headers(response)
    return response


# --- the page ---------------------------------------------------------------------------------------------


def pair_view(first: engine.GraphView, second: engine.GraphView) -> engine.GraphView:
    """Two neighbourhoods as one view: the edges of both (each once), the two focus entities first."""
    seen: set[str] = set()
    edges = []
    for e in [*first.edges, *second.edges]:
        if e["memory_id"] not in seen:
            seen.add(e["memory_id"])
            edges.append(e)
    nodes = pair_nodes(edges, [first.entity or "", second.entity or ""], {**second.labels, **first.labels})
    total = first.total_edges + second.total_edges - (len(first.edges) + len(second.edges) - len(edges))
    return engine.GraphView(
        nodes=nodes,
        edges=edges,
        predicates=sorted(set(first.predicates) | set(second.predicates)),
        total_edges=total,
        shown_edges=len(edges),
        truncated=first.truncated or second.truncated,
        entity=first.entity,
        labels={**second.labels, **first.labels},
    )


def pair_nodes(edges: list[dict[str, Any]], focus: list[str], labels: dict[str, str]) -> list[dict[str, Any]]:
    """The nodes of ``edges`` by degree, then name; the ``focus`` entities even without an edge. ``labels``:
    the entities' surface forms (``GraphView.labels``)."""
    degree: dict[str, int] = {}
    for e in edges:
        for n in (e["subject"], e["object"]):
            degree[n] = degree.get(n, 0) + 1
    for f in focus:
        if f:
            degree.setdefault(f, 0)
    return [
        {"id": n, "label": labels.get(n, n), "kind": "entity", "degree": d}
        for n, d in sorted(degree.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def graph_data(agent_id: str, f: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str | None, str]]]:
    """The graph of filters ``f`` (``GraphFilterForm.filters()``): the view, its nodes and edges (cut to a
    community when one is chosen), the communities drawn, and the network for the canvas; and the errors
    to show beside the filters, as (field, message). Shared by the page, its download and the command."""
    errors: list[tuple[str | None, str]] = []
    view = None
    pair = None
    query = {
        "agent_id": agent_id,
        "depth": f["depth"],
        "predicate": f["predicate"] or None,
        "min_trust": f["min_trust"],
        "limit": f["limit"],
    }
    # a large graph opens on its hub's neighbourhood, unless the whole graph or a community was asked for
    opening = not (f["entity"] or f["whole"] or f["community"] or f["pair"])
    try:
        view = engine.graph_view(
            entity=f["entity"] or None, focus_over=LARGE_GRAPH_NODES if opening else None, **query
        )
        if f["pair"] and view.entity:
            other = engine.graph_view(entity=f["pair"], **query)
            if other.entity and other.entity != view.entity and other.total_edges:
                pair = (view.entity, other.entity)
                view = pair_view(view, other)
    except engine.EngineError as exc:
        errors.append((exc.field, exc.message))
    focus = (view.entity or "") if view else ""
    labels = view.labels if view else {}
    nodes, edges = (view.nodes, view.edges) if view else ([], [])
    communities = selectors.graph_communities(agent_id, [n["id"] for n in nodes])
    community = None
    if f["community"]:
        community = next((c for c in communities if c.key == f["community"]), None)
        if community is None:
            errors.append(
                ("community", "No such community in this view: the graph has changed, pick one again.")
            )
        else:
            nodes, edges = in_community(view, community)
    return {
        "filters": f,
        "view": view,
        "nodes": nodes,
        "edges": edges,
        "focus": focus,
        "focus_label": labels.get(focus, focus),
        "auto_focus": bool(view and view.auto_focus),
        "large_graph": LARGE_GRAPH_NODES,
        "pair": pair,
        "communities": communities,
        "community": community,
        "network": network_data(nodes, edges, communities, pair if community is None else None),
        "quarantined_shown": sum(1 for e in edges if e["quarantined"]),
    }, errors


def graph_page_context(request: HtmxHttpRequest, access: AgentAccess) -> dict[str, Any]:
    """The graph of the query string's filters, drawn by static/js/graph.js."""
    form = GraphFilterForm(request.GET)
    form.is_valid()
    data, errors = graph_data(access.agent.agent_id, form.filters())
    for name, message in errors:
        form.add_error(name if name in form.fields else None, message)
    return {
        "agent": access.agent,
        "form": form,
        **data,
        "can_curate": access.has_role(Role.CURATOR),
        "agent_role": access.role,
        "trust_bands": TRUST_BANDS,
        "quarantined_color": QUARANTINED_COLOR,
        "discovered_color": DISCOVERED_COLOR,
        "last_run": engine.last_discovery_run(agent_id=access.agent.agent_id),
        "now": timezone.now(),
    }


@login_required
@require_safe
def graph(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """The agent's graph with the filters of the query string; HTMX filter changes get the graph panel only.
    ``?node=<entity>`` opens that entity's panel (the no-JavaScript path of a click on a node)."""
    access = agent_access(request.user, agent_id)
    context = graph_page_context(request, access)
    context["oob"] = wants_fragment(request)  # the community choices follow the swapped graph
    node = context["filters"]["node"]
    if not wants_fragment(request) and node:
        context.update(entity_context(access, node), panel="entity")
    return render_page(request, "dashboard/graph.html", context, fragment="graph")


@login_required
@require_safe
def graph_download(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """The current view (the same filters as the page) as a self-contained interactive HTML file."""
    access = agent_access(request.user, agent_id)
    aid = access.agent.agent_id
    form = GraphFilterForm(request.GET)
    form.is_valid()
    data, _ = graph_data(aid, form.filters())
    page = graph_export.pyvis_html(data["network"], title=f"{access.agent} · graph · memdesk")
    response = HttpResponse(page, content_type="text/html; charset=utf-8")
    stamp = timezone.now().strftime("%Y%m%d-%H%M")
    response["Content-Disposition"] = f'attachment; filename="memdesk-graph-{slugify(aid)}-{stamp}.html"'
    add_never_cache_headers(response)
    return response


@login_required
@require_safe
def graph_entity(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """One node's facts (the panel beside the canvas). Without HTMX: the page, with the panel open."""
    access = agent_access(request.user, agent_id)
    form = EntityForm(request.GET)
    if not form.is_valid():
        raise Http404("No such entity.")
    name = form.cleaned_data["name"]
    if not wants_fragment(request):
        return redirect(graph_url(access.agent.agent_id, entity=name, node=name))
    context = {
        "agent": access.agent,
        "can_curate": access.has_role(Role.CURATOR),
        "now": timezone.now(),
        **entity_context(access, name),
    }
    return _respond(request, render(request, "dashboard/_graph_entity.html", context))


# --- merge two surface forms (alias) ----------------------------------------------------------------------


def merge_context(access: AgentAccess, form: MergeForm) -> dict[str, Any]:
    """The side-by-side preview of ``form``'s merge, or the form with its errors."""
    context: dict[str, Any] = {
        "agent": access.agent,
        "merge_form": form,
        "preview": None,
        "blocked": False,
        "now": timezone.now(),
    }
    if not form.is_valid():
        return context
    data = form.cleaned_data
    try:
        preview = engine.alias_preview(
            agent_id=access.agent.agent_id, canonical=data["canonical"], alias=data["alias"]
        )
    except engine.EngineError as exc:
        refusal(exc, form)
        return context
    # a self-alias can never be saved: the preview says why and offers no confirm button
    blocked = (
        preview.alias == preview.canonical or engine.normalize_entity(data["canonical"]) == preview.alias
    )
    context.update(preview=preview, blocked=blocked)
    return context


@login_required
@require_safe
def graph_merge_preview(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """What merging ``alias`` into ``canonical`` would move, and the conflicts, before anything is saved."""
    access = agent_access(request.user, agent_id, role=Role.CURATOR)
    context = merge_context(access, MergeForm(request.GET))
    status = 200 if context["preview"] is not None else 422
    if not wants_fragment(request):
        context.update(graph_page_context(request, access), panel="merge")
        response = render(request, "dashboard/graph.html", context, status=status)
    else:
        response = render(request, "dashboard/_graph_merge.html", context, status=status)
    return _respond(request, response)


@login_required
@require_POST
def graph_merge(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """Save the merge through ``engine.alias_add``. Conflicts must have been seen: with conflicts and no
    acknowledgement the preview comes back (409) and nothing is saved."""
    access = agent_access(request.user, agent_id, role=Role.CURATOR)
    aid = access.agent.agent_id
    form = MergeForm(request.POST)
    context = merge_context(access, form)
    preview = context["preview"]
    status, note = 422, ""
    if preview is not None:
        if context["blocked"]:
            status = 422
            form.add_error("alias", "An entity cannot be merged into itself.")
        elif preview.conflicts and not form.cleaned_data["acknowledge"]:
            status = 409
            form.add_error("acknowledge", "Read the conflicts above and tick the box to merge anyway.")
        else:
            data = form.cleaned_data
            try:
                result = engine.alias_add(
                    agent_id=aid, canonical=data["canonical"], alias=data["alias"], actor=actor_of(request)
                )
            except engine.EngineError as exc:
                status = refusal(exc, form).status
            else:
                status = 200
                moved = len(preview.facts_moving)
                note = (
                    f"Merged “{result.alias}” into “{result.canonical}”: "
                    f"{moved} fact{'s now count' if moved != 1 else ' now counts'} for “{result.canonical}”."
                )
                context.update(
                    done=result,
                    note=note,
                    next=graph_url(aid, entity=result.canonical, node=result.canonical),
                )
    if wants_fragment(request):
        response = render(request, "dashboard/_graph_merge.html", context, status=status)
        if note:
            trigger_client_event(response, "memdesk:toast", {"text": note, "level": "success"})
            trigger_client_event(response, "memdesk:graph-changed", {"entity": context["done"].canonical})
    elif note:
        messages.success(request, note)
        canonical = context["done"].canonical
        response = redirect(graph_url(aid, entity=canonical, node=canonical))
    else:
        context.update(graph_page_context(request, access), panel="merge")
        response = render(request, "dashboard/graph.html", context, status=status)
    return _respond(request, response)


# --- retract one fact -------------------------------------------------------------------------------------


@login_required
@require_POST
def graph_retract(request: HtmxHttpRequest, agent_id: str, memory_id: str) -> HttpResponse:
    """Retract one current fact with a required reason (``engine.retract_fact``: audited, the key's timeline
    re-derived, the graph generation bumped). Another agent's id is a 404 like an unknown one."""
    access = agent_access(request.user, agent_id, role=Role.CURATOR)
    aid = access.agent.agent_id
    form = RetractForm(request.POST)
    record, status, error, note = reasoned_fact_action(
        request, form, engine.retract_fact, aid, memory_id, "Retracted"
    )
    if wants_fragment(request):
        context = {
            "agent": access.agent,
            "m": record,
            "now": timezone.now(),
            "can_curate": True,
            "retract_reasons": RETRACT_REASONS,
            "restore_reasons": RESTORE_REASONS,
            "retract_form": form if error else None,
            "error": error,
            "note": note,
        }
        response = render(request, "dashboard/_graph_fact.html", context, status=status)
        if note:
            trigger_client_event(response, "memdesk:toast", {"text": note, "level": "success"})
            trigger_client_event(response, "memdesk:graph-changed", {"memory_id": record.id})
    elif note:
        messages.success(request, note)
        response = redirect(graph_url(aid, node=record.subject or ""))
    else:
        context = graph_page_context(request, access)
        context.update(entity_context(access, record.subject or ""), panel="entity")
        # the fact may not be listed (already retracted, or the panel could not list facts): say it above them
        listed = any(m.id == record.id for m in context["facts"])
        context.update(retract_error=error, retract_id=record.id, retract_form=form, retract_record=record)
        context.update(retract_unlisted=not listed)
        response = render(request, "dashboard/graph.html", context, status=status)
    return _respond(request, response)


def _fact_or_404(agent_id: str, memory_id: str) -> engine.MemoryRecord:
    record = selectors.memory_record(agent_id, memory_id)
    if record is None or record.subject is None:
        raise Http404("No such memory.")
    return record


def reasoned_fact_action(
    request: HtmxHttpRequest,
    form: RetractForm,
    action: Callable[..., engine.MemoryRecord],
    agent_id: str,
    memory_id: str,
    done: str,
) -> tuple[engine.MemoryRecord, int, str, str]:
    """A curator's retract or restore of one fact with a required reason: (the fact as it is now, status, error,
    note). An invalid form is 422; the engine's refusal keeps its status and message; an unknown id (or another
    agent's) is a 404."""
    status, error, note = 200, "", ""
    record = None
    if not form.is_valid():
        status, error = 422, "A reason is required." if "reason" in form.errors else "Check the reason."
    else:
        try:
            record = action(
                agent_id=agent_id, memory_id=memory_id, reason=form.reason_text(), actor=actor_of(request)
            )
        except engine.NotFound:
            raise Http404("No such memory.") from None
        except engine.EngineError as exc:
            status, error = refusal(exc)
        else:
            note = f"{done}: “{record.content}” ({form.reason_text()})."
    return (record or _fact_or_404(agent_id, memory_id)), status, error, note


# --- undo a merge (issue 19 item 3) -----------------------------------------------------------------------


def _undo_note(result: engine.MergeUndoResult) -> str:
    note = f"Undid the merge of “{result.alias}” into “{result.canonical}”: “{result.alias}” is its own name again."
    if result.restored_aliases:
        names = ", ".join(f"“{n}”" for n in result.restored_aliases[:5])
        more = f" and {len(result.restored_aliases) - 5} more" if len(result.restored_aliases) > 5 else ""
        note += f" {names}{more} point{'s' if len(result.restored_aliases) == 1 else ''} at “{result.alias}” again."
    return note


def _next_url(request: HtmxHttpRequest, fallback: str) -> str:
    target = request.POST.get("next", "")
    if target.startswith("/") and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return fallback


@login_required
@require_POST
def graph_merge_undo(request: HtmxHttpRequest, agent_id: str, event_id: int) -> HttpResponse:
    """Undo a merge after the fact (``engine.alias_undo``: the alias removed, the names it flattened pointed
    back, links derived again; audited ``merge_undone``). Curators of the agent's team; another agent's merge
    is a 404 like a missing one; an undone merge or one later merges depend on is refused in place (409)."""
    access = agent_access(request.user, agent_id, role=Role.CURATOR)
    aid = access.agent.agent_id
    status, note, error = 200, "", ""
    result = None
    try:
        result = engine.alias_undo(agent_id=aid, event_id=event_id, actor=actor_of(request))
    except engine.NotFound:
        raise Http404("No such merge.") from None
    except engine.EngineError as exc:
        status, error = refusal(exc)
    else:
        note = _undo_note(result)
    context = {
        "agent": access.agent,
        "event_id": event_id,
        "undone": result is not None,
        "note": note,
        "error": error,
        "can_curate": True,
        "next": _next_url(request, graph_url(aid)),
    }
    if wants_fragment(request):
        response = render(request, "dashboard/merge_undo.html#undo", context, status=status)
        if result is not None:
            trigger_client_event(response, "memdesk:toast", {"text": note, "level": "success"})
            trigger_client_event(response, "memdesk:graph-changed", {"entity": result.alias})
    elif result is not None:
        messages.success(request, note)
        response = redirect(context["next"])
    else:
        response = render(request, "dashboard/merge_undo.html", context, status=status)
    return _respond(request, response)
