"""Restoring a fact a curator retracted (issue 19 item 3; ``engine.restore_fact``): from the graph page's fact
panel, where a retracted fact says "Retracted: no longer believed", and from the memory's page.

Curators and admins only; another team's (or agent's) fact is a 404 like an unknown one. HTMX swaps the fact in
place (the graph panel) or reloads the memory's page; without JavaScript a plain POST redirects back.
A refusal (not retracted, retracted by a purge or a reject) comes back as 409 with the engine's message."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect, trigger_client_event

from memory import engine
from memory.models import Role
from web.access import agent_access, login_required
from web.http import HtmxHttpRequest, wants_fragment

from .graph_views import RETRACT_REASONS, RetractForm, _respond, graph_url, reasoned_fact_action
from .views import RESTORE_REASONS, memory_context

PLACES = ("graph", "memory")


class RestoreForm(RetractForm):
    reason = forms.ChoiceField(
        choices=RESTORE_REASONS, label="Reason", error_messages={"required": "Pick a reason: it is required."}
    )


@login_required
@require_POST
def fact_restore(request: HtmxHttpRequest, agent_id: str, memory_id: str) -> HttpResponse:
    """Restore one retracted fact with a required reason (audited ``curator_restore``; the key re-derived, the
    graph generation bumped). ``from`` says which page asked: ``graph`` (the fact panel) or ``memory``."""
    access = agent_access(request.user, agent_id, role=Role.CURATOR)
    aid = access.agent.agent_id
    place = request.POST.get("from") if request.POST.get("from") in PLACES else "memory"
    form = RestoreForm(request.POST)
    record, status, error, note = reasoned_fact_action(
        request, form, engine.restore_fact, aid, memory_id, "Restored"
    )
    memory_url = reverse("dashboard:memory", args=[aid, record.id])
    if note and not (place == "graph" and wants_fragment(request)):
        messages.success(request, note)
        if wants_fragment(request):
            return _respond(request, HttpResponseClientRedirect(memory_url))
        return _respond(
            request, redirect(graph_url(aid, node=record.subject or "") if place == "graph" else memory_url)
        )
    now = timezone.now()
    context: dict[str, Any] = {
        "agent": access.agent,
        "m": record,
        "now": now,
        "status": record.status_at(now),
        "restore_refusal": engine.restore_refusal(record.invalidated_by_event),
        "can_curate": True,
        "retract_reasons": RETRACT_REASONS,
        "restore_reasons": RESTORE_REASONS,
        "restore_form": form if error else None,
        "restore_error": error,
        "note": note,
    }
    if wants_fragment(request):
        template = "dashboard/_graph_fact.html" if place == "graph" else "dashboard/_memory_restore.html"
        response = render(request, template, context, status=status)
        if note:
            trigger_client_event(response, "memdesk:toast", {"text": note, "level": "success"})
            trigger_client_event(response, "memdesk:graph-changed", {"memory_id": record.id})
        return _respond(request, response)
    context.update(memory_context(access, record))
    context.update(restore_form=form, restore_error=error)
    return _respond(request, render(request, "dashboard/memory_detail.html", context, status=status))
