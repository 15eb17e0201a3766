"""The queues' pages. Each view: parse → check permission (reviewers of the agent's team) → call the queue
component (review/queue.py), which calls the engine through the queue's kind → render.

No view writes memory rows; another agent's item id is a 404 exactly like a missing one.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from web.access import agent_access, login_required, reviewers_only
from web.http import HtmxHttpRequest

from . import queue
from .quarantine import DESK

# --- quarantine desk (SPEC D3, P8) ------------------------------------------------------------------------------


@login_required
@require_safe
def quarantine(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """Pending batches, soonest expiry first, as decision cards; decided ones read-only under a filter."""
    access = agent_access(request.user, agent_id)
    if not access.has_role(DESK.role):
        return reviewers_only(request, access, DESK.title)
    return queue.page(request, DESK, access)


@login_required
@require_POST
def quarantine_decide(
    request: HtmxHttpRequest, agent_id: str, request_id: int, decision: str
) -> HttpResponse:
    """Approve or reject one batch, with a required reason (``queue.decide``)."""
    access = agent_access(request.user, agent_id, role=DESK.role)
    return queue.decide(request, DESK, access, queue.item_or_404(DESK, access, request_id), decision)


@login_required
@require_POST
def quarantine_claim(request: HtmxHttpRequest, agent_id: str, request_id: int, action: str) -> HttpResponse:
    """Claim a pending batch while working on it, or release one's claim (``queue.claim``)."""
    access = agent_access(request.user, agent_id, role=DESK.role)
    return queue.claim(request, DESK, access, queue.item_or_404(DESK, access, request_id), action)


@login_required
@require_POST
def quarantine_undo(request: HtmxHttpRequest, agent_id: str, request_id: int) -> HttpResponse:
    """Undo one's own decision inside the short window (``queue.undo``)."""
    access = agent_access(request.user, agent_id, role=DESK.role)
    return queue.undo(request, DESK, access, queue.item_or_404(DESK, access, request_id))


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def quarantine_bulk(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """Preview (GET) or make (POST) a decision over every pending batch matching the filter (``queue.bulk``)."""
    access = agent_access(request.user, agent_id)
    if not access.has_role(DESK.role):
        return reviewers_only(request, access, DESK.title)
    return queue.bulk(request, DESK, access)
