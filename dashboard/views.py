"""Dashboard pages. Each view: parse → check permission → call the engine or a selector → render.

No view writes memory rows; reads made on behalf of a person never bump access counts (``touch=False``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django_htmx.http import trigger_client_event
from django_htmx.middleware import HtmxDetails

from memory import engine
from memory.config import guard_settings
from memory.models import Mistake, Role

from . import selectors
from .access import AgentAccess, agent_access, login_required, visible_agents
from .forms import (
    BULK_CONFIRM_OVER,
    AuditFilterForm,
    BulkDecisionForm,
    DecisionForm,
    MemoryFilterForm,
    MistakeFilterForm,
    QuarantineFilterForm,
    ReflexionPreviewForm,
    TimelineForm,
    TokenCreateForm,
    batch_ids_value,
    decision_choices,
)

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
        "can_admin": access.has_role(Role.ADMIN),
        "can_review": access.has_role(Role.REVIEWER),
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


# --- tokens (SPEC A2, D8): admins of the agent's team only -------------------------------------------------


def actor_of(request: HtmxHttpRequest) -> str:
    """The audit actor for a person's action."""
    return f"user:{request.user.get_username()}"


def admins_only(request: HtmxHttpRequest, access: AgentAccess) -> HttpResponse:
    """A member who is not an admin: say so (403), and name who to ask."""
    context = {
        "agent": access.agent,
        "role": access.role,
        "admins": selectors.team_admins(access.agent.team_id),
    }
    response = render(request, "dashboard/tokens_admins_only.html", context, status=403)
    patch_vary_headers(response, ("HX-Request",))
    return response


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
            form.add_error(exc.field if exc.field in form.fields else None, exc.message)
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


# --- quarantine desk (SPEC D3, P8): reviewers of the agent's team ------------------------------------------

BATCH_PAGE_SIZE = 20
EXPIRING_CHOICES = (1, 2, 6, 12, 24)
AUDIT_PAGE_SIZE = 50
ERROR_STATUS = {
    "already_decided": 409,
    "claimed_by_other": 409,
    "not_decided": 409,
    "undo_expired": 409,
    "undo_conflict": 409,
    "undo_not_yours": 409,
    "invalid_argument": 422,
    "not_found": 404,
}


def reviewers_only(request: HtmxHttpRequest, access: AgentAccess, page: str) -> HttpResponse:
    """A viewer: say so (403), and name who can review."""
    context = {
        "agent": access.agent,
        "role": access.role,
        "page_name": page,
        "reviewers": selectors.team_reviewers(access.agent.team_id),
    }
    response = render(request, "dashboard/reviewers_only.html", context, status=403)
    patch_vary_headers(response, ("HX-Request",))
    return response


def one_batch_filters(batch_id: int) -> dict[str, Any]:
    return {**QuarantineFilterForm().filters(), "status": "all", "batch": batch_id}


def quarantine_context(
    request: HtmxHttpRequest,
    access: AgentAccess,
    *,
    full: bool,
    filters: dict[str, Any] | None = None,
    cards: list[selectors.BatchCard] | None = None,
) -> dict[str, Any]:
    aid = access.agent.agent_id
    form = QuarantineFilterForm(request.GET)
    form.is_valid()
    f = filters or form.filters()
    now = timezone.now()
    page = None
    if cards is None:
        requests = selectors.approval_requests(
            aid,
            status=f["status"],
            origin=f["origin"],
            batch=f["batch"],
            origin_class=f["origin_class"],
            q=f["q"],
            expiring_hours=f["expiring"],
            now=now,
        )
        page = Paginator(requests, BATCH_PAGE_SIZE).get_page(request.GET.get("page"))
        cards = selectors.batch_cards(aid, page.object_list, now=now, actor=actor_of(request))
    context: dict[str, Any] = {
        "agent": access.agent,
        "form": form,
        "filters": f,
        "page": page,
        "cards": cards,
        "now": now,
        "approve_choices": decision_choices("approve"),
        "reject_choices": decision_choices("reject"),
        "claim_minutes": engine.CLAIM_SECS // 60,
        "undo_secs": engine.UNDO_SECS,
        "bulk_query": bulk_query(f),
        "desk_self": reverse("dashboard:quarantine", args=[aid])
        + (f"?{request.GET.urlencode()}" if request.method == "GET" and request.GET else ""),
    }
    if full:
        origins = selectors.approval_origins(aid)
        context["origins"] = origins
        context["origin_classes"] = selectors.origin_classes(origins)
        context["guard"] = guard_settings()
        context["bulk_over"] = BULK_CONFIRM_OVER
        context["expiring_choices"] = EXPIRING_CHOICES
    return context


@login_required
@require_safe
def quarantine(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """Pending batches, soonest expiry first, as decision cards; decided ones read-only under a filter."""
    access = agent_access(request.user, agent_id)
    if not access.has_role(Role.REVIEWER):
        return reviewers_only(request, access, "quarantine desk")
    context = quarantine_context(request, access, full=not wants_fragment(request))
    response = render_page(request, "dashboard/quarantine.html", context, fragment="desk")
    add_never_cache_headers(response)
    return response


def batch_reply(
    request: HtmxHttpRequest,
    access: AgentAccess,
    batch: Any,
    *,
    status: int = 200,
    note: str = "",
    error: str = "",
    decision: str = "",
    form: Any = None,
    events: dict[str, Any] | None = None,
) -> HttpResponse:
    """One card back after an action on it. HTMX: the card plus the pending counts by out-of-band swap, and
    the client events (toast, undo); a plain POST is redirected to the card, or gets the page with the error."""
    aid = access.agent.agent_id
    (card,) = selectors.batch_cards(aid, [batch], now=timezone.now(), actor=actor_of(request))
    card.note, card.error = note, error
    if error and form is not None:
        card.decision, card.form = decision, form
    if wants_fragment(request):
        context = {
            "agent": access.agent,
            "c": card,
            "now": card.now,
            "approve_choices": decision_choices("approve"),
            "reject_choices": decision_choices("reject"),
            "pending_count": selectors.pending_batch_count(aid),
            "claim_minutes": engine.CLAIM_SECS // 60,
        }
        response = render(request, "dashboard/_batch_decided.html", context, status=status)
        for name, detail in (events or {}).items():
            trigger_client_event(response, name, detail)
        patch_vary_headers(response, ("HX-Request",))
    elif not error:
        if note:
            messages.success(request, note)
        response = redirect(reverse("dashboard:quarantine", args=[aid]) + f"?status=all&batch={batch.id}")
    else:
        context = quarantine_context(
            request, access, full=True, filters=one_batch_filters(batch.id), cards=[card]
        )
        response = render(request, "dashboard/quarantine.html", context, status=status)
        patch_vary_headers(response, ("HX-Request",))
    add_never_cache_headers(response)
    return response


def reviewer_batch(request: HtmxHttpRequest, agent_id: str, request_id: int) -> tuple[AgentAccess, Any]:
    """The agent (reviewers and above only) and one of its batches; any other id is simply not found."""
    access = agent_access(request.user, agent_id, role=Role.REVIEWER)
    batch = selectors.approval_request(access.agent.agent_id, request_id)
    if batch is None:
        raise Http404("No such batch.")
    return access, batch


def batch_facts(batch: Any) -> str:
    n = len(batch.payload.get("ids", []))
    return f"{n} fact{'s' if n != 1 else ''} about “{batch.subject}”"


@login_required
@require_POST
def quarantine_decide(
    request: HtmxHttpRequest, agent_id: str, request_id: int, decision: str
) -> HttpResponse:
    """Approve or reject one batch through the engine, with a required reason.

    HTMX gets the card back (decided, or with the error inline: 422 for a missing reason, 409 when the batch
    was already decided, its time ran out or another reviewer holds it) plus the pending count by out-of-band
    swap, a toast and the undo offer. A plain POST is redirected to the decided card, or gets the card with the
    error and the same status.
    """
    access, batch = reviewer_batch(request, agent_id, request_id)
    form = DecisionForm(decision, request.POST)
    status, error, note = 200, "", ""
    events: dict[str, Any] = {}
    if not form.is_valid():
        status, error = 422, "A reason is required." if "reason" in form.errors else "Check the reason."
    else:
        decide = engine.quarantine_approve if decision == "approve" else engine.quarantine_reject
        try:
            batch = decide(request_id=batch.id, actor=actor_of(request), reason=form.reason_text())
        except engine.EngineError as exc:
            status, error = ERROR_STATUS.get(exc.code, 400), exc.message
            if exc.code == "invalid_argument" and exc.field == "reason":
                form.add_error("note", exc.message)
            batch = selectors.approval_request(access.agent.agent_id, request_id) or batch
        else:
            facts = batch_facts(batch)
            note = (
                f"Approved: {facts} released to the agent."
                if decision == "approve"
                else f"Rejected: {facts} retracted."
            )
            events["memdesk:toast"] = {"text": note, "level": "success"}
            if batch.undo_until is not None:
                events["memdesk:undo"] = {
                    "batch": batch.id,
                    "url": reverse("dashboard:quarantine_undo", args=[access.agent.agent_id, batch.id]),
                    "until": batch.undo_until.isoformat(),
                    "text": f"Undo the {'approval' if decision == 'approve' else 'rejection'} of #{batch.id}",
                }
    return batch_reply(
        request,
        access,
        batch,
        status=status,
        note=note,
        error=error,
        decision=decision,
        form=form,
        events=events,
    )


@login_required
@require_POST
def quarantine_claim(request: HtmxHttpRequest, agent_id: str, request_id: int, action: str) -> HttpResponse:
    """Claim a pending batch while working on it (others are refused until the claim ends), or release it."""
    access, batch = reviewer_batch(request, agent_id, request_id)
    status, error, note = 200, "", ""
    act = engine.quarantine_claim if action == "claim" else engine.quarantine_release
    try:
        batch = act(request_id=batch.id, actor=actor_of(request))
    except engine.EngineError as exc:
        status, error = ERROR_STATUS.get(exc.code, 400), exc.message
        batch = selectors.approval_request(access.agent.agent_id, request_id) or batch
    else:
        note = (
            f"Claimed batch #{batch.id} for {engine.CLAIM_SECS // 60} minutes: other reviewers see it is yours."
            if action == "claim"
            else f"Released batch #{batch.id}: any reviewer may decide it."
        )
    events = {"memdesk:toast": {"text": note, "level": "info"}} if note else {}
    return batch_reply(request, access, batch, status=status, note=note, error=error, events=events)


@login_required
@require_POST
def quarantine_undo(request: HtmxHttpRequest, agent_id: str, request_id: int) -> HttpResponse:
    """Undo one's own decision inside the short window: the batch is pending again (a new audited decision)."""
    access, batch = reviewer_batch(request, agent_id, request_id)
    status, error, note = 200, "", ""
    try:
        batch = engine.quarantine_undo(request_id=batch.id, actor=actor_of(request))
    except engine.EngineError as exc:
        status, error = ERROR_STATUS.get(exc.code, 400), exc.message
        batch = selectors.approval_request(access.agent.agent_id, request_id) or batch
    else:
        note = f"Undone: {batch_facts(batch)} are held again (batch #{batch.id}, claimed by you)."
    events = {"memdesk:toast": {"text": note, "level": "success"}} if note else {}
    return batch_reply(request, access, batch, status=status, note=note, error=error, events=events)


def bulk_context(
    request: HtmxHttpRequest, access: AgentAccess, data: Any, decision: str, form: BulkDecisionForm | None
) -> dict[str, Any]:
    filter_form = QuarantineFilterForm(data)
    filter_form.is_valid()
    f = filter_form.filters()
    now = timezone.now()
    found = selectors.bulk_candidates(
        access.agent.agent_id, f, actor=actor_of(request), now=now, decision=decision
    )
    return {
        "agent": access.agent,
        "filters": f,
        "decision": decision,
        "count": len(found["ids"]),
        "ids": found["ids"],
        "ids_value": batch_ids_value(found["ids"]),
        "held": found["held"],
        "high": found["high"],
        "sample": found["sample"],
        "bulk_max": engine.MAX_BULK,
        "bulk_over": BULK_CONFIRM_OVER,
        "choices": decision_choices(decision),
        "bulk_form": form,
        "now": now,
    }


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def quarantine_bulk(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """Approve or reject every pending batch matching the desk's filter.

    GET shows the count, a sample and the batches held by other reviewers (excluded); its form carries the
    exact ids it would decide. POST decides those batches, each through the engine with its own audit entry,
    only if the filter still matches exactly them (409 otherwise: nothing the reviewer did not see is ever
    decided) and, above the threshold, the reviewer typed the count. A POST without a valid decision is a 422.
    """
    access = agent_access(request.user, agent_id)
    if not access.has_role(Role.REVIEWER):
        return reviewers_only(request, access, "quarantine desk")
    aid = access.agent.agent_id
    data = request.POST if request.method == "POST" else request.GET
    given = data.get("decision")
    if request.method == "POST" and given not in ("approve", "reject"):
        return bulk_without_decision(request, access, data)
    decision = given if given in ("approve", "reject") else "reject"
    form = BulkDecisionForm(decision, request.POST) if request.method == "POST" else None
    context = bulk_context(request, access, data, decision, form)
    status, events = 200, {}
    if form is not None:
        if not form.is_valid():
            status = 422
            context["error"] = "A reason is required." if "reason" in form.errors else "Check the form."
        elif context["count"] > engine.MAX_BULK:
            status = 422
            context["error"] = f"At most {engine.MAX_BULK} batches per bulk decision: narrow the filter."
        elif error := form.selection_changed(context["ids"]):
            status = 409
            context["error"] = error
        elif error := form.check_confirm(context["count"]):
            status = 422
            context["error"] = error
        else:
            outcomes = engine.quarantine_bulk(
                agent_id=aid,
                request_ids=context["ids"],  # the same set as the previewed ids (checked above)
                decision=decision,
                actor=actor_of(request),
                reason=form.reason_text(),
            )
            note = bulk_note(decision, outcomes, held=len(context["held"]), high=len(context["high"]))
            context.update(outcomes=outcomes, note=note)
            events = {"memdesk:toast": {"text": note, "level": "success"}, "memdesk:desk-changed": {}}
            if not wants_fragment(request):
                messages.success(request, note)
                query = bulk_query(context["filters"])
                return redirect(reverse("dashboard:quarantine", args=[aid]) + (f"?{query}" if query else ""))
    context["pending_count"] = selectors.pending_batch_count(aid)
    context["query"] = bulk_query(context["filters"])
    response = render_page(request, "dashboard/quarantine_bulk.html", context, fragment="panel")
    response.status_code = status
    for name, detail in events.items():
        trigger_client_event(response, name, detail)
    add_never_cache_headers(response)
    return response


def bulk_without_decision(request: HtmxHttpRequest, access: AgentAccess, data: Any) -> HttpResponse:
    """A bulk POST whose ``decision`` is missing or unknown: a 422 that decides nothing and offers both
    previews again (never a silent default)."""
    filter_form = QuarantineFilterForm(data)
    filter_form.is_valid()
    f = filter_form.filters()
    context = {
        "agent": access.agent,
        "filters": f,
        "decision": "",
        "query": bulk_query(f),
        "error": "Choose whether to approve or reject: this bulk decision did not say which, so nothing "
        "was decided.",
    }
    response = render_page(request, "dashboard/quarantine_bulk.html", context, fragment="panel")
    response.status_code = 422
    add_never_cache_headers(response)
    return response


def bulk_note(decision: str, outcomes: list[engine.BulkOutcome], *, held: int, high: int = 0) -> str:
    done = sum(1 for o in outcomes if o.outcome != "skipped")
    held += sum(1 for o in outcomes if o.code == "claimed_by_other")
    other = sum(1 for o in outcomes if o.outcome == "skipped" and o.code != "claimed_by_other")
    verb = "Approved" if decision == "approve" else "Rejected"
    note = f"{verb} {done} batch{'es' if done != 1 else ''}."
    if held:
        note += f" {held} held by another reviewer left alone."
    if high:
        note += f" {high} that would supersede current facts left for one-by-one review."
    if other:
        note += f" {other} skipped (decided or expired meanwhile)."
    return note


def bulk_query(f: dict[str, Any]) -> str:
    """The desk's filter as a query string (a bulk decision always acts on pending batches)."""
    keep = {
        k: f[k] for k in ("origin_class", "origin", "q", "expiring", "batch") if f.get(k) not in (None, "")
    }
    return urlencode(keep)


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
    context: dict[str, Any] = {"agent": access.agent, "form": form, "filters": f, "page": page}
    if not wants_fragment(request):
        context["actions"] = selectors.audit_actions(aid)
    return render_page(request, "dashboard/audit.html", context, fragment="results")
