"""The queues' pages, one set of views for every queue kind (review/urls.py passes the kind), and the review
queue's decision log. Each view: parse → check permission (on an agent of the user's team: the kind's
``read_role`` to look, its ``role`` to act) → call the queue component (review/queue.py), which changes things
through the kind's engine calls → render.

No view writes memory rows; another agent's item id is a 404 exactly like a missing one.
"""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpResponse
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from web.access import agent_access, login_required, reviewers_only
from web.http import HtmxHttpRequest, render_page

from . import queue, review_selectors
from .forms import ReviewLogForm
from .queue import QueueKind
from .review_queue import QUEUE

LOG_PAGE_SIZE = 50


@login_required
@require_safe
def queue_page(request: HtmxHttpRequest, agent_id: str, kind: QueueKind) -> HttpResponse:
    """The queue's items as decision cards, pending ones first; decided ones read-only under a filter."""
    access = agent_access(request.user, agent_id)
    if not access.has_role(kind.read_role):
        return reviewers_only(request, access, kind.title)
    return queue.page(request, kind, access)


@login_required
@require_POST
def queue_decide(
    request: HtmxHttpRequest, agent_id: str, item_id: int, kind: QueueKind, decision: str
) -> HttpResponse:
    """Approve or reject one item, with a required reason (``queue.decide``)."""
    access = agent_access(request.user, agent_id, role=kind.role)
    return queue.decide(request, kind, access, queue.item_or_404(kind, access, item_id), decision)


@login_required
@require_POST
def queue_edit(request: HtmxHttpRequest, agent_id: str, item_id: int, kind: QueueKind) -> HttpResponse:
    """Approve an edited version of one item (``queue.edit``)."""
    access = agent_access(request.user, agent_id, role=kind.role)
    return queue.edit(request, kind, access, queue.item_or_404(kind, access, item_id))


@login_required
@require_POST
def queue_revert(request: HtmxHttpRequest, agent_id: str, item_id: int, kind: QueueKind) -> HttpResponse:
    """Take a decision back by a new one, with a required reason (``queue.revert``)."""
    access = agent_access(request.user, agent_id, role=kind.role)
    return queue.revert(request, kind, access, queue.item_or_404(kind, access, item_id))


@login_required
@require_POST
def queue_claim(
    request: HtmxHttpRequest, agent_id: str, item_id: int, kind: QueueKind, action: str
) -> HttpResponse:
    """Claim a pending item while working on it, or release one's claim (``queue.claim``)."""
    access = agent_access(request.user, agent_id, role=kind.role)
    return queue.claim(request, kind, access, queue.item_or_404(kind, access, item_id), action)


@login_required
@require_POST
def queue_undo(request: HtmxHttpRequest, agent_id: str, item_id: int, kind: QueueKind) -> HttpResponse:
    """Undo one's own decision inside the short window (``queue.undo``)."""
    access = agent_access(request.user, agent_id, role=kind.role)
    return queue.undo(request, kind, access, queue.item_or_404(kind, access, item_id))


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def queue_bulk(request: HtmxHttpRequest, agent_id: str, kind: QueueKind) -> HttpResponse:
    """Preview (GET) or make (POST) a decision over every pending item matching the filter (``queue.bulk``)."""
    access = agent_access(request.user, agent_id)
    if not access.has_role(kind.role):
        return reviewers_only(request, access, kind.title)
    return queue.bulk(request, kind, access)


@login_required
@require_safe
def review_log(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """The review queue's decision log, append-only and newest first: every proposal, decision, claim, undo,
    revert and reminder; one item's with ``?item=``, those about one memory with ``?memory=``. Whoever may read
    the queue may read its log."""
    access = agent_access(request.user, agent_id)
    if not access.has_role(QUEUE.read_role):
        return reviewers_only(request, access, "decision log")
    aid = access.agent.agent_id
    form = ReviewLogForm(request.GET)
    valid = form.is_valid()
    item_id = form.cleaned_data.get("item") if valid else None
    memory_id = (form.cleaned_data.get("memory") or "") if valid else ""
    events = review_selectors.decision_log(aid, item_id=item_id, memory_id=memory_id)
    context = {
        "agent": access.agent,
        "queue": QUEUE,
        "item_id": item_id,
        "memory_id": memory_id,
        "item": review_selectors.review_item(aid, item_id) if item_id else None,
        "page": Paginator(events, LOG_PAGE_SIZE).get_page(request.GET.get("page")),
    }
    return render_page(request, "review/review_log.html", context, fragment="log")
