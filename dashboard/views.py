"""Dashboard pages. Each view: parse → check permission → call the engine or a selector → render.

No view writes memory rows; reads made on behalf of a person never bump access counts (``touch=False``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django_htmx.http import trigger_client_event

from memory import engine
from memory.models import Mistake, Role
from web.access import AgentAccess, admins_only, agent_access, login_required, reviewers_only, visible_agents
from web.http import HtmxHttpRequest, actor_of, capped_page, refusal, render_page, wants_fragment

from . import selectors, timeline_chart
from .forms import (
    AuditFilterForm,
    KeyPickerForm,
    MemoryFilterForm,
    MistakeFilterForm,
    ReflexionPreviewForm,
    TimelineForm,
    TokenCreateForm,
)

PAGE_SIZE = 25
SEARCH_LIMIT = 100  # the engine's maximum; ranked search pages over at most this many hits
RECENT = 10
AUDIT_PAGE_SIZE = 50
RESTORE_REASONS = (  # why a curator restores a retracted fact (restore_views.RestoreForm)
    ("mistake", "Retracted by mistake"),
    ("confirmed", "Confirmed correct"),
    ("other", "Other"),
)


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
        "can_admin": access.has_role(Role.ADMIN),
        "can_review": access.has_role(Role.REVIEWER),
        "summary": engine.summarize(agent_id=aid),
        "recent": engine.list_recent(agent_id=aid, n=RECENT),
        "keys": selectors.recent_fact_keys(aid, limit=RECENT),
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
    # ranked hits are at most SEARCH_LIMIT; rows are counted only a few pages ahead (100k rows are never all
    # counted for one page)
    number = request.GET.get("page")
    page = Paginator(items, PAGE_SIZE).get_page(number) if ranked else capped_page(items, PAGE_SIZE, number)
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
    return render_page(request, "dashboard/memory_detail.html", memory_context(access, record))


def memory_context(access: AgentAccess, record: engine.MemoryRecord) -> dict[str, Any]:
    """The memory page's context: the row, its status, related rows, its archive, and what a curator may do."""
    now = timezone.now()
    archive = engine.memory_archive(agent_id=access.agent.agent_id, memory_ids=[record.id]).get(record.id)
    status = record.status_at(now)
    has_archive = bool(archive and archive.original is not None)
    # the role is read only when the page has something for curators (the archive, a restore)
    curator = (has_archive or status == "retracted") and access.has_role(Role.CURATOR)
    return {
        "agent": access.agent,
        "m": record,
        "now": now,
        "status": status,
        "related": selectors.related_rows(record),
        "archive": archive,  # its tier, and the original text tiering shortened (SPEC B9): curators read it
        "can_read_archive": has_archive and curator,
        "can_curate": curator,
        "restore_reasons": RESTORE_REASONS,
        "restore_refusal": engine.restore_refusal(record.invalidated_by_event),
    }


@login_required
def timeline(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    access = agent_access(request.user, agent_id)
    aid = access.agent.agent_id
    now = timezone.now()
    form = TimelineForm(request.GET)
    if not request.GET.get("subject", "").strip() or not request.GET.get("predicate", "").strip():
        return key_picker(request, access)
    if not form.is_valid() and ("subject" in form.errors or "predicate" in form.errors):
        return key_picker(request, access)
    subject, predicate = form.cleaned_data["subject"], form.cleaned_data["predicate"]
    at = form.cleaned_data.get("at") or now
    as_of = form.cleaned_data.get("as_of")
    answers: list[engine.MemoryRecord] = []
    if not form.errors:  # every value holding then: one, or several for a multi-valued predicate (SPEC B3)
        answers = engine.get_values_at(agent_id=aid, subject=subject, predicate=predicate, at=at, as_of=as_of)
    context = {
        "agent": access.agent,
        "form": form,
        "subject": subject,
        "predicate": predicate,
        "at": at,
        "as_of": as_of,
        "at_given": bool(form.cleaned_data.get("at")),
        "answer": answers[0] if answers else None,
        "answers": answers,
        "answer_ids": {a.id for a in answers},
        "multi_valued": engine.is_multi_valued(predicate),
        "now": now,
    }
    rows = selectors.timeline(aid, subject, predicate, at=now)
    context["chart"] = timeline_chart.build(
        rows, now=now, at=at, as_of=as_of, answer_ids=context["answer_ids"]
    )
    if not answers and not form.errors:
        context["why_nothing"] = timeline_chart.why_nothing(rows, at=at, as_of=as_of)
    if not wants_fragment(request):
        context["rows"] = rows
    return render_page(request, "dashboard/timeline.html", context, fragment="asof")


KEY_PICKER_LIMIT = 50


def key_picker(request: HtmxHttpRequest, access: AgentAccess) -> HttpResponse:
    """No whole key chosen yet: the agent's keys, most-changed first, searched as you type (issue 19 item 7).

    Half a key (``?subject=Jordan``) or an over-long word is a search of what was given, never a form error."""
    aid = access.agent.agent_id
    given = request.GET.copy()
    if not given.get("q"):
        given["q"] = " ".join(v for v in (given.get("subject", ""), given.get("predicate", "")) if v.strip())
    form = KeyPickerForm(given)
    query = form.query()
    context = {
        "agent": access.agent,
        "form": form,
        "query": query,
        **selectors.key_picker_keys(aid, query=query, limit=KEY_PICKER_LIMIT),
        "limit": KEY_PICKER_LIMIT,
    }
    return render_page(request, "dashboard/timeline_keys.html", context, fragment="results")


# --- tokens (SPEC A2, D8): admins of the agent's team only -------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """List the agent's tokens; POST creates one and shows its secret in this response only.

    The secret is rendered straight into the POST response: never a redirect, a URL, a message cookie or a
    log line. Responses are ``no-store`` so no cache keeps it either.
    """
    access = agent_access(request.user, agent_id)
    if not access.has_role(Role.ADMIN):
        return admins_only(request, access)
    aid = access.agent.agent_id
    form = TokenCreateForm(request.POST if request.method == "POST" else None)
    created, secret, status = None, None, 200
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            created, secret = engine.token_create(
                agent_id=aid,
                scopes=data["scopes"],
                name=data["name"],
                external=data["external"],
                expires_at=data["expires_at"],
                actor=actor_of(request),
            )
        except engine.EngineError as exc:
            refusal(exc, form)  # shown on the form; the page itself answers 200
        else:
            form, status = TokenCreateForm(), 201
    context = {
        "agent": access.agent,
        "form": form,
        "created": created,
        "secret": secret,
        "tokens": engine.token_list(agent_id=aid),
        "now": timezone.now(),
    }
    response = render_page(request, "dashboard/tokens.html", context, fragment="panel")
    response.status_code = status
    add_never_cache_headers(response)
    return response


@login_required
@require_POST
def token_revoke(request: HtmxHttpRequest, agent_id: str, token_id: int) -> HttpResponse:
    """Revoke one token (idempotent). HTMX gets the row back and a toast event; a plain POST a redirect."""
    access = agent_access(request.user, agent_id, role=Role.ADMIN)
    aid = access.agent.agent_id
    started = timezone.now()
    try:
        token = engine.token_revoke(token_id=token_id, actor=actor_of(request), agent_id=aid)
    except engine.NotFound:
        raise Http404("No such token.") from None
    label = f"“{token.name}”" if token.name else f"mdk_{token.prefix}_…"
    already = token.revoked_at is not None and token.revoked_at < started
    text = f"Token {label} was already revoked." if already else f"Token {label} revoked."
    if wants_fragment(request):
        context = {"agent": access.agent, "t": token, "now": timezone.now(), "note": text}
        response = render(request, "dashboard/_token_row.html", context)
        trigger_client_event(response, "memdesk:toast", {"text": text, "level": "success"})
        patch_vary_headers(response, ("HX-Request",))
    else:
        messages.success(request, text)
        response = redirect("dashboard:tokens", aid)
    add_never_cache_headers(response)
    return response


# --- mistake notebook (SPEC X): read-only, any member -----------------------------------------------------


@dataclass(frozen=True)
class ReflexionPreview:
    """What ``engine.reflexion_context`` would put in the prompt for ``message``, and which mistakes."""

    message: str = ""
    block: str = ""
    recalled: list[Mistake] = field(default_factory=list)


def reflexion_preview(agent_id: str, form: ReflexionPreviewForm) -> ReflexionPreview | None:
    """None until a message is given (or when it is invalid: the form then carries the error)."""
    if not form.is_valid() or not form.cleaned_data["message"]:
        return None
    message = form.cleaned_data["message"]
    try:
        recalled = engine.recall(agent_id=agent_id, message=message)
        block = engine.reflexion_context(agent_id=agent_id, message=message)
    except engine.EngineError as exc:
        form.add_error("message", exc.message)
        return None
    return ReflexionPreview(message, block, recalled)


def mistakes_context(request: HtmxHttpRequest, access: AgentAccess, *, full: bool) -> dict[str, Any]:
    aid = access.agent.agent_id
    form = MistakeFilterForm(request.GET)
    form.is_valid()
    f = form.filters()
    rows = selectors.mistake_rows(aid, category=f["category"], resolved=f["resolved"])
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    context: dict[str, Any] = {"agent": access.agent, "form": form, "filters": f, "page": page}
    if full:
        now = timezone.now()
        preview_form = ReflexionPreviewForm(request.GET)
        context.update(
            counts=selectors.mistake_counts(aid),
            rules=selectors.rule_memories(aid, at=now),
            now=now,
            preview_form=preview_form,
            preview=reflexion_preview(aid, preview_form),
        )
    return context


@login_required
@require_safe
def mistakes(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    access = agent_access(request.user, agent_id)
    context = mistakes_context(request, access, full=not wants_fragment(request))
    return render_page(request, "dashboard/mistakes.html", context, fragment="results")


@login_required
@require_safe
def mistakes_preview(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """The prompt block for a message (GET, reads only). Without HTMX: the notebook page, which shows it too."""
    access = agent_access(request.user, agent_id)
    if not wants_fragment(request):
        query = request.GET.urlencode()
        return redirect(
            reverse("dashboard:mistakes", args=[access.agent.agent_id]) + (f"?{query}" if query else "")
        )
    form = ReflexionPreviewForm(request.GET)
    context = {
        "agent": access.agent,
        "preview_form": form,
        "preview": reflexion_preview(access.agent.agent_id, form),
    }
    return render_page(request, "dashboard/mistakes.html", context, fragment="preview")


# --- audit log (SPEC D8): reviewers of the agent's team ----------------------------------------------------


@login_required
@require_safe
def audit_log(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """Every audit event of the agent, newest first, filtered in the query string."""
    access = agent_access(request.user, agent_id)
    if not access.has_role(Role.REVIEWER):
        return reviewers_only(request, access, "audit log")
    aid = access.agent.agent_id
    form = AuditFilterForm(request.GET)
    form.is_valid()
    f = form.filters()
    events = selectors.audit_events(aid, **f)
    page = Paginator(events, AUDIT_PAGE_SIZE).get_page(request.GET.get("page"))
    merges = [ev.id for ev in page.object_list if ev.action == "alias_add"]
    context: dict[str, Any] = {
        "agent": access.agent,
        "form": form,
        "filters": f,
        "page": page,
        # an "Undo merge" button on each merge row for curators (issue 19 item 3)
        "can_curate": access.has_role(Role.CURATOR),
        "undone_merges": engine.undone_merges(aid, merges) if merges else set(),
        "next": request.get_full_path(),
    }
    if not wants_fragment(request):
        context["actions"] = selectors.audit_actions(aid)
    return render_page(request, "dashboard/audit.html", context, fragment="results")
