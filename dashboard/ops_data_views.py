"""The operations page's data section (SPEC D8, M5; admins only): origin purge with a preview of what it retracts
and restores, erasure (final: a preview of the counts, then a typed confirmation) and reassignment to another
agent the admin also administers. Each is one POST view with two steps (``preview``, ``confirm``), CSRF-checked;
a wrong confirmation is a 422 with the stable code ``confirmation_mismatch``; engine refusals keep their codes.
An HTMX request gets the section back (``#data-ops``) and a toast; a plain POST gets the whole page.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.template.loader import render_to_string
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django.views.decorators.http import require_POST
from django_htmx.http import trigger_client_event

from memory import engine
from memory.models import Role
from web.access import AgentAccess, agent_access, login_required
from web.http import HtmxHttpRequest, actor_of, refusal, wants_fragment

from . import ops_selectors
from .forms import CONFIRM_MISMATCH, EraseForm, PurgeForm, ReassignForm
from .ops_views import PREVIEW_ROWS, data_context, page_response

SECTION = "dashboard/_ops_data.html"


def _respond(
    request: HtmxHttpRequest, access: AgentAccess, status: int, toast: str = "", **extra: Any
) -> HttpResponse:
    context = data_context(access, request.user, **extra)
    if wants_fragment(request):
        response = HttpResponse(render_to_string(SECTION, context, request=request), status=status)
        patch_vary_headers(response, ("HX-Request",))
        if toast:
            trigger_client_event(response, "memdesk:toast", {"text": toast, "level": "success"})
    else:
        response = page_response(request, access, context, status=status)
    add_never_cache_headers(response)
    return response


def _mismatch(form: Any) -> bool:
    return any(e.code == CONFIRM_MISMATCH for e in form.errors.as_data().get("confirm", []))


@login_required
@require_POST
def operations_purge(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """Retract everything one origin wrote (SPEC P2), after a preview of what it retracts and restores."""
    access = agent_access(request.user, agent_id, role=Role.ADMIN)
    aid = access.agent.agent_id
    form = PurgeForm(request.POST)
    if not form.is_valid():
        return _respond(
            request,
            access,
            422,
            purge_form=form,
            purge_code=CONFIRM_MISMATCH if _mismatch(form) else "invalid_argument",
        )
    origin, since = form.cleaned_data["origin"], form.cleaned_data.get("since")
    try:
        if form.confirming:
            done = engine.invalidate_by_origin(
                agent_id=aid, origin=origin, since=since, actor=actor_of(request)
            )
            text = (
                f"Purged {origin}: {done.retracted} retracted, {done.restored} restored, "
                f"{done.trust_crushed} with trust crushed."
            )
            return _respond(request, access, 200, toast=text, purge_done=text)
        preview = engine.purge_preview(agent_id=aid, origin=origin, since=since, limit=PREVIEW_ROWS)
    except engine.EngineError as exc:
        status, _ = refusal(exc, form)
        return _respond(request, access, status, purge_form=form, purge_code=exc.code)
    confirm = PurgeForm(initial={"origin": origin, "since": since, "step": "confirm"})
    rows = [
        (change, mid, preview.rows.get(mid))
        for change, ids in (
            ("retracted", preview.retracted),
            ("restored", preview.restored),
            ("trust crushed", preview.trust_crushed),
        )
        for mid in ids[:PREVIEW_ROWS]
    ]
    return _respond(request, access, 200, purge_form=confirm, purge_preview=preview, purge_rows=rows)


@login_required
@require_POST
def operations_erase(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """Erase a subject's and/or an origin's rows for good (SPEC M5), after a preview of the counts."""
    access = agent_access(request.user, agent_id, role=Role.ADMIN)
    aid = access.agent.agent_id
    form = EraseForm(request.POST)
    if not form.is_valid():
        return _respond(
            request,
            access,
            422,
            erase_form=form,
            erase_code=CONFIRM_MISMATCH if _mismatch(form) else "invalid_argument",
        )
    subject = form.cleaned_data.get("subject") or None
    origin = form.cleaned_data.get("origin") or None
    try:
        if form.confirming:
            done = engine.erase(
                agent_id=aid,
                subject=subject,
                origin=origin,
                reason=form.cleaned_data["reason"],
                actor=actor_of(request),
            )
            text = f"Erased {done.rows} row{'s' if done.rows != 1 else ''} and everything that quoted them."
            return _respond(request, access, 200, toast=text, erase_done=text, erase_result=done)
        preview = engine.erase_preview(agent_id=aid, subject=subject, origin=origin)
    except engine.EngineError as exc:
        status, _ = refusal(exc, form)
        return _respond(request, access, status, erase_form=form, erase_code=exc.code)
    confirm = EraseForm(
        initial={
            "subject": subject or "",
            "origin": origin or "",
            "reason": form.cleaned_data["reason"],
            "step": "confirm",
        }
    )
    return _respond(
        request, access, 200, erase_form=confirm, erase_preview=preview, erase_expected=form.expected()
    )


@login_required
@require_POST
def operations_reassign(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """Move rows (all, or one subject's) with their history to another agent this admin administers."""
    access = agent_access(request.user, agent_id, role=Role.ADMIN)
    aid = access.agent.agent_id
    form = ReassignForm(request.POST)
    if not form.is_valid():
        return _respond(
            request,
            access,
            422,
            reassign_form=form,
            reassign_code=CONFIRM_MISMATCH if _mismatch(form) else "invalid_argument",
        )
    subject, target = form.cleaned_data.get("subject") or "", form.cleaned_data["to_agent"]
    allowed = {a.agent_id for a in ops_selectors.admin_targets(request.user, aid)}
    if target not in allowed:  # another team's agent reads exactly like one that does not exist
        form.add_error("to_agent", "No such agent.")
        return _respond(request, access, 404, reassign_form=form, reassign_code="not_found")
    try:
        if form.confirming:
            done = engine.reassign(
                from_agent=aid, to_agent=target, subject=subject or None, actor=actor_of(request)
            )
            text = f"Moved {done.rows} row{'s' if done.rows != 1 else ''} ({done.keys} keys) to {target}."
            return _respond(request, access, 200, toast=text, reassign_done=text)
    except engine.EngineError as exc:
        status, _ = refusal(exc, form)
        return _respond(request, access, status, reassign_form=form, reassign_code=exc.code)
    preview = ops_selectors.reassign_preview(aid, subject, target)
    confirm = ReassignForm(initial={"subject": subject, "to_agent": target, "step": "confirm"})
    return _respond(request, access, 200, reassign_form=confirm, reassign_preview=preview)
