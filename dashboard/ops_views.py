"""The operations page (SPEC D8): dream runs with live progress and their reports, "run now" / "dry run", the gate,
the agent's dream mode, the schedule of periodic jobs, the LLM endpoint and a run's budget, the review policy.

Reviewers and above read it; admins start runs and switch the mode (POST, CSRF); a viewer gets the
reviewers-only page; another team's agent is a 404 like a missing one. A running run's card polls its status
every 2 s; the response for a finished run answers 286, which stops the polling.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import trigger_client_event

from memory import engine, tasks
from memory.llm import endpoint_status
from memory.models import Role
from web.access import AgentAccess, agent_access, login_required, reviewers_only
from web.http import HtmxHttpRequest, actor_of, error_status, render_page, wants_fragment

from . import ops_selectors
from .forms import DreamModeForm, DreamStartForm, EraseForm, PurgeForm, ReassignForm

PAGE = "dashboard/operations.html"
PREVIEW_ROWS = 50
RUNS_LISTED = 10
STOP_POLLING = 286  # htmx: stop polling this element


def _reviewer(request: HtmxHttpRequest, agent_id: str) -> tuple[AgentAccess, HttpResponse | None]:
    access = agent_access(request.user, agent_id)
    if not access.has_role(Role.REVIEWER):
        return access, reviewers_only(request, access, "operations page")
    return access, None


def _run_or_404(agent_id: str, run_id: Any) -> engine.DreamRunRecord:
    try:
        return engine.dream_run_get(agent_id=agent_id, run_id=run_id)
    except engine.NotFound:
        raise Http404("No such dream run.") from None


def _controls(
    access: AgentAccess, *, error: str = "", mode_form: DreamModeForm | None = None
) -> dict[str, Any]:
    aid = access.agent.agent_id
    state = engine.dream_state(agent_id=aid)
    return {
        "agent": access.agent,
        "can_admin": access.has_role(Role.ADMIN),
        "state": state,
        "gate": engine.dream_gate(agent_id=aid),
        "mode_form": mode_form or DreamModeForm(initial={"mode": state.mode}),
        "control_error": error,
    }


def _run_context(access: AgentAccess, run: engine.DreamRunRecord | None) -> dict[str, Any]:
    return {"agent": access.agent, "run": run, "phases": engine.DREAM_PHASES}


@login_required
@require_safe
def operations(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    access, refused = _reviewer(request, agent_id)
    if refused is not None:
        return refused
    wanted = request.GET.get("run")
    response = page_response(request, access, {}, run_id=wanted, fragment="run")
    add_never_cache_headers(response)
    return response


def data_context(access: AgentAccess, user: Any, **extra: Any) -> dict[str, Any]:
    """The section's context: its three forms (fresh unless given) and the agents a reassignment may target."""
    aid = access.agent.agent_id
    context: dict[str, Any] = {
        "agent": access.agent,
        "purge_form": PurgeForm(initial={"step": "preview"}),
        "erase_form": EraseForm(initial={"step": "preview"}),
        "reassign_form": ReassignForm(initial={"step": "preview"}),
        "targets": ops_selectors.admin_targets(user, aid),
        "preview_rows": PREVIEW_ROWS,
    }
    context.update(extra)
    return context


def page_response(
    request: HtmxHttpRequest,
    access: AgentAccess,
    extra: dict[str, Any],
    *,
    run_id: Any = None,
    fragment: str | None = None,
    status: int = 200,
) -> HttpResponse:
    """The whole page (or its ``fragment``), with ``extra`` over the defaults; admins also get the data section
    (origin purge, erasure, reassignment)."""
    aid = access.agent.agent_id
    runs = engine.dream_runs(agent_id=aid, limit=RUNS_LISTED)
    run = _run_or_404(aid, run_id) if run_id else (runs[0] if runs else None)
    context: dict[str, Any] = {
        **_controls(access),
        **_run_context(access, run),
        "runs": runs,
        "jobs": ops_selectors.scheduled_jobs(),
        "backend": ops_selectors.task_backend(),
        "llm": endpoint_status(),
        "registry": ops_selectors.registry_status(),
        "policy": engine.policy_in_effect(),
        "ttl_days": engine.TTL_DAYS,
        "review": ops_selectors.review_counts(aid),
        "protection": ops_selectors.protection_settings(),
        "gate_hours": engine.GATE_HOURS,
        "gate_sessions": engine.GATE_SESSIONS,
    }
    if context["can_admin"]:
        context.update(data_context(access, request.user, **extra))
    response = render_page(request, PAGE, context, fragment=fragment)
    response.status_code = status
    return response


@login_required
@require_safe
def operations_run(request: HtmxHttpRequest, agent_id: str, run_id: int) -> HttpResponse:
    """One run's card (HTMX polling): 286 once the run has finished, with the runs table swapped out of band."""
    access, refused = _reviewer(request, agent_id)
    if refused is not None:
        return refused
    aid = access.agent.agent_id
    run = _run_or_404(aid, run_id)
    if not wants_fragment(request):
        return redirect(reverse("dashboard:operations", args=[aid]) + f"?run={run.id}")
    html = render_to_string(f"{PAGE}#run", _run_context(access, run), request=request)
    status = 200
    if not run.running:
        status = STOP_POLLING
        runs = engine.dream_runs(agent_id=aid, limit=RUNS_LISTED)
        context = {"agent": access.agent, "runs": runs, "run": run, "oob": True}
        html += render_to_string(f"{PAGE}#runs", context, request=request)
    response = HttpResponse(html, status=status)
    patch_vary_headers(response, ("HX-Request",))
    add_never_cache_headers(response)
    return response


@login_required
@require_POST
def operations_start(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """Start a run now (admins): the agent's mode, or a dry run. Refused ``already_running`` while one runs."""
    access = agent_access(request.user, agent_id, role=Role.ADMIN)
    aid = access.agent.agent_id
    form = DreamStartForm(request.POST)
    dry = bool(form.is_valid() and form.cleaned_data["dry"])
    try:
        run = engine.dream_start(
            agent_id=aid, force=True, dry_run=True if dry else None, actor=actor_of(request)
        )
    except engine.EngineError as exc:
        return _refused(request, access, exc.message, error_status(exc))
    try:
        tasks.start_run(run.id)
    except Exception as exc:  # the job backend is unreachable: the run is failed, the gate clock unchanged
        return _refused(request, access, f"Run #{run.id} could not be queued ({exc}); try again later.", 503)
    run = engine.dream_run_get(agent_id=aid, run_id=run.id)
    text = f"Dream run #{run.id} started ({'dry run' if run.dry_run else 'apply'})."
    if not wants_fragment(request):
        messages.success(request, text)
        return redirect(reverse("dashboard:operations", args=[aid]) + f"?run={run.id}")
    response = render_page(request, PAGE, _run_context(access, run), fragment="run")
    trigger_client_event(response, "memdesk:toast", {"text": text, "level": "success"})
    add_never_cache_headers(response)
    return response


def _refused(request: HtmxHttpRequest, access: AgentAccess, message: str, status: int) -> HttpResponse:
    """The refusal in place (HTMX: the controls with the message, and a toast), or a redirect with a message."""
    if not wants_fragment(request):
        messages.error(request, message)
        return redirect("dashboard:operations", access.agent.agent_id)
    response = render_page(request, PAGE, _controls(access, error=message), fragment="controls")
    response.status_code = status
    trigger_client_event(response, "memdesk:toast", {"text": message, "level": "error"})
    return response


@login_required
@require_POST
def operations_mode(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """Switch the agent's dream mode (admins; audited by the engine)."""
    access = agent_access(request.user, agent_id, role=Role.ADMIN)
    aid = access.agent.agent_id
    form = DreamModeForm(request.POST)
    if not form.is_valid():
        response = render_page(request, PAGE, _controls(access, mode_form=form), fragment="controls")
        response.status_code = 422
        return response
    try:
        state = engine.dream_mode_set(agent_id=aid, mode=form.cleaned_data["mode"], actor=actor_of(request))
    except engine.EngineError as exc:
        return _refused(request, access, exc.message, error_status(exc))
    text = f"Dream mode of {access.agent} is now {state.mode.replace('_', ' ')}."
    if not wants_fragment(request):
        messages.success(request, text)
        return redirect("dashboard:operations", aid)
    response = render_page(request, PAGE, _controls(access), fragment="controls")
    trigger_client_event(response, "memdesk:toast", {"text": text, "level": "success"})
    return response
