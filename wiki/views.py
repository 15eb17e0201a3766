"""Wiki curation pages (SPEC D5, W5): the ``auto/`` browser, a page with its provenance and revisions, and the
curator's edit / promote / remove / restore. Each view: parse → check permission (web/access.py) → call
``wiki.selectors`` / ``wiki.services`` → render. No view writes a row: the services do, and audit each action.

Any member of the agent's team reads; only curators see the action forms, and the POSTs refuse everyone else
(403). A page id of another agent is a 404 exactly like one that does not exist.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import trigger_client_event

from dashboard import selectors as dashboard_selectors
from memory import engine
from memory.models import Role
from web.access import AgentAccess, agent_access, login_required
from web.http import HtmxHttpRequest, actor_of, error_status, render_page, wants_fragment

from . import diff, selectors, services
from .forms import DOC_TYPE_LABELS, EditForm, PreviewForm, ReasonForm, WikiFilterForm
from .models import WikiPage, WikiRevision
from .render import render_markdown

PAGE_SIZE = 25
REVISION_NUMBER = re.compile(r"[0-9]{1,9}")
SEARCH_LIMIT = 100
NOT_FOUND = "No such wiki page."


# --- the browser ----------------------------------------------------------------------------------------


def _matches(page: WikiPage, f: dict[str, Any], now: Any) -> bool:
    """The list filters, applied to a ranked search hit's page."""
    if f["namespace"] and page.namespace != f["namespace"]:
        return False
    if f["doc_type"] and page.doc_type != f["doc_type"]:
        return False
    if f["age_days"] is not None and page.updated < now - timedelta(days=f["age_days"]):
        return False
    removed = page.removed_at is not None
    return {"live": not removed, "removed": removed}.get(f["status"], True)


@login_required
@require_safe
def page_list(request: HtmxHttpRequest, agent_id: str) -> HttpResponse:
    """The agent's pages, newest first; with a query, ranked by ``selectors.search`` (SPEC W4), best first."""
    access = agent_access(request.user, agent_id)
    aid = access.agent.agent_id
    form = WikiFilterForm(request.GET)
    form.is_valid()
    f = form.filters()
    now = timezone.now()
    ranked = bool(f["q"])
    if ranked:
        try:
            hits = selectors.search(agent_id=aid, query=f["q"], limit=SEARCH_LIMIT)
        except engine.EngineError as exc:
            form.add_error("q", exc.message)
            hits = []
        items: Any = [h for h in hits if _matches(h.page, f, now)]
    else:
        items = selectors.list_pages(
            agent_id=aid,
            namespace=f["namespace"] or None,
            doc_type=f["doc_type"] or None,
            age_days=f["age_days"],
            status=f["status"],
        )
    page = Paginator(items, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = [(h.page, h.score) for h in page.object_list] if ranked else [(p, None) for p in page.object_list]
    context: dict[str, Any] = {
        "agent": access.agent,
        "form": form,
        "filters": f,
        "ranked": ranked,
        "page": page,
        "rows": rows,
        "now": now,
        # the Restore buttons of removed rows (a live-only list has none: no membership query for it)
        "can_curate": f["status"] != "live" and access.has_role(Role.CURATOR),
    }
    return render_page(request, "wiki/list.html", context, fragment="results")


# --- one page -------------------------------------------------------------------------------------------


def _page_or_404(agent_id: str, page_id: int) -> WikiPage:
    page = WikiPage.objects.filter(agent_id=agent_id, id=page_id).first()
    if page is None:
        raise Http404(NOT_FOUND)
    return page


def page_context(
    access: AgentAccess,
    page: WikiPage,
    *,
    edit_form: EditForm | None = None,
    promote_form: ReasonForm | None = None,
    remove_form: ReasonForm | None = None,
    open_form: str = "",
    note: str = "",
    error: str = "",
    start_from: int | None = None,
    compare: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """Everything the page shows. ``start_from``: a revision number the edit form starts from (e.g. an agent's
    proposed revision of a curated page, to adopt it with changes) instead of the page's current text.
    ``compare``: two revision numbers to diff (any two, picked from the history)."""
    aid = access.agent.agent_id
    revisions = list(WikiRevision.objects.filter(page=page).order_by("-number"))
    latest = revisions[0] if revisions else None
    accepted = next((r for r in revisions if r.accepted), None)
    base = diff.base_of(revisions)
    can_curate = access.has_role(Role.CURATOR)
    live = page.removed_at is None
    edit_from = next((r for r in revisions if r.number == start_from), None)
    if edit_form is None:
        source: WikiPage | WikiRevision = edit_from or page
        edit_form = EditForm(
            initial={
                "title": source.title,
                "summary": source.summary,
                "original_text": source.original_text,
                "tags": ", ".join(source.tags or []),
            }
        )
        if edit_from is not None:
            open_form = "edit"
    return {
        "agent": access.agent,
        "p": page,
        "doc_type_label": DOC_TYPE_LABELS.get(page.doc_type, page.doc_type),
        "revisions": revisions,
        "latest": latest,
        "accepted": accepted,
        "base": base,
        "diff": diff.rows(diff.since_accepted(revisions)),
        **compare_context(revisions, compare),
        "summary_html": render_markdown(page.summary) if page.summary else "",
        "text_html": render_markdown(page.original_text) if page.original_text else "",
        "pointer": dashboard_selectors.memory_record(aid, page.pointer_id) if page.pointer_id else None,
        "can_curate": can_curate and live,
        "can_restore": can_curate and not live,
        "can_promote": can_curate and live and page.namespace == "auto",
        "edit_form": edit_form,
        "edit_from": edit_from,
        "promote_form": promote_form or ReasonForm(prefix="promote"),
        "remove_form": remove_form or ReasonForm(prefix="remove"),
        "open_form": open_form,
        "note": note,
        "error": error,
        "now": timezone.now(),
    }


@login_required
@require_safe
def page_detail(request: HtmxHttpRequest, agent_id: str, page_id: int) -> HttpResponse:
    access = agent_access(request.user, agent_id)
    page = _page_or_404(access.agent.agent_id, page_id)
    start = request.GET.get("from", "")
    # ASCII digits only, at most 9: str.isdigit() accepts "²" (int() refuses it) and int() refuses > 4300 digits
    context = page_context(access, page, start_from=int(start) if REVISION_NUMBER.fullmatch(start) else None)
    return render_page(request, "wiki/page.html", context, fragment="wiki-page")


def compare_context(revisions: list[WikiRevision], compare: tuple[int, int] | None) -> dict[str, Any]:
    """The diff between two revisions picked from the history: the older one first, whichever order they
    were picked in; a number the page does not have is said so, never a 500."""
    by_number = {r.number: r for r in revisions}
    if len(revisions) >= 2:
        default = (revisions[1].number, revisions[0].number)  # the latest against the one before
    else:
        default = None
    pick = compare or default
    context: dict[str, Any] = {"compare_a": None, "compare_b": None, "compare_rows": [], "compare_error": ""}
    if pick is None:
        return context
    a, b = sorted(pick)
    old, new = by_number.get(a), by_number.get(b)
    if old is None or new is None:
        context["compare_error"] = "This page has no such revision."
        return context
    context.update(compare_a=old, compare_b=new, compare_given=compare is not None)
    if a != b:
        context["compare_rows"] = diff.rows(diff.between(old, new))
    return context


def _revision_pair(request: HtmxHttpRequest) -> tuple[int, int] | None:
    a, b = request.GET.get("a", ""), request.GET.get("b", "")
    if REVISION_NUMBER.fullmatch(a) and REVISION_NUMBER.fullmatch(b):
        return int(a), int(b)
    return None


@login_required
@require_safe
def page_diff(request: HtmxHttpRequest, agent_id: str, page_id: int) -> HttpResponse:
    """Any two revisions of a page compared (``?a=1&b=3``): the compare region over HTMX, else the page with it."""
    access = agent_access(request.user, agent_id)
    page = _page_or_404(access.agent.agent_id, page_id)
    pair = _revision_pair(request)
    context = page_context(access, page, compare=pair)
    if pair is None:
        context["compare_error"] = "Pick two revisions to compare."
    return render_page(request, "wiki/page.html", context, fragment="compare")


@login_required
@require_POST
def page_preview(request: HtmxHttpRequest, agent_id: str, page_id: int) -> HttpResponse:
    """The editor's preview: the draft rendered as the page would show it, and its diff against the latest
    revision. Curators only (they alone edit); nothing is written."""
    access, page = _curator_page(request, agent_id, page_id)
    form = PreviewForm(request.POST)
    latest = WikiRevision.objects.filter(page=page).order_by("-number").first()
    context: dict[str, Any] = {"agent": access.agent, "p": page, "preview_form": form, "latest": latest}
    if form.is_valid():
        base = f"r{latest.number} (latest)" if latest else "empty page"
        draft = diff.Draft(
            title=form.cleaned_data["title"],
            summary=form.cleaned_data["summary"],
            original_text=form.cleaned_data["original_text"],
            tags=form.cleaned_data["tags"],
        )
        context.update(
            preview_summary=render_markdown(draft.summary) if draft.summary else "",
            preview_text=render_markdown(draft.original_text) if draft.original_text else "",
            preview_rows=diff.rows(diff.unified(latest, draft, fromfile=base, tofile="your edit")),
        )
    response = render(request, "wiki/page.html#preview", context, status=200 if form.is_valid() else 422)
    add_never_cache_headers(response)
    return response


# --- curator actions ------------------------------------------------------------------------------------


def _form_error(form: Any, exc: engine.EngineError) -> str:
    """An engine error becomes a form error on its field (or the form's), never a 500."""
    form.add_error(exc.field if exc.field in form.fields else None, exc.message)
    return exc.message


def _respond(
    request: HtmxHttpRequest,
    access: AgentAccess,
    page: WikiPage,
    *,
    status: int,
    note: str = "",
    error: str = "",
    **forms: Any,
) -> HttpResponse:
    """HTMX: the page region again (the result inline, plus a toast). A plain POST: a redirect to the page on
    success (the message as a toast), or the whole page with the errors and the same status."""
    aid = access.agent.agent_id
    if not error and not wants_fragment(request):
        messages.success(request, note)
        response = redirect(reverse("wiki:page", args=[aid, page.id]))
    else:
        context = page_context(access, page, note=note, error=error, **forms)
        template = "wiki/page.html#wiki-page" if wants_fragment(request) else "wiki/page.html"
        response = render(request, template, context, status=status)
        if note:
            trigger_client_event(response, "memdesk:toast", {"text": note, "level": "success"})
        patch_vary_headers(response, ("HX-Request",))
    add_never_cache_headers(response)
    return response


def _curator_page(request: HtmxHttpRequest, agent_id: str, page_id: int) -> tuple[AgentAccess, WikiPage]:
    access = agent_access(request.user, agent_id, role=Role.CURATOR)
    return access, _page_or_404(access.agent.agent_id, page_id)


@login_required
@require_POST
def page_edit(request: HtmxHttpRequest, agent_id: str, page_id: int) -> HttpResponse:
    """A curator's revision (title, summary, original text, tags) with a reason: ``services.revise``."""
    access, page = _curator_page(request, agent_id, page_id)
    form = EditForm(request.POST)
    if not form.is_valid():
        return _respond(request, access, page, status=422, error="Check the edit.", edit_form=form,
                        open_form="edit")  # fmt: skip
    data = form.cleaned_data
    try:
        revision = services.revise(
            page=page,
            actor=actor_of(request),
            title=data["title"],
            summary=data["summary"],
            original_text=data["original_text"],
            tags=data["tags"],
            reason=data["reason"],
        )
    except engine.EngineError as exc:
        message = _form_error(form, exc)
        return _respond(request, access, _page_or_404(page.agent_id, page.id),
                        status=error_status(exc), error=message, edit_form=form,
                        open_form="edit")  # fmt: skip
    page = _page_or_404(page.agent_id, page.id)
    note = f"Saved revision {revision.number} of “{page.title}”."
    return _respond(request, access, page, status=200, note=note)


def _reason_action(
    request: HtmxHttpRequest,
    agent_id: str,
    page_id: int,
    *,
    name: str,
    action: Callable[..., WikiPage],
    note: Callable[[WikiPage], str],
) -> HttpResponse:
    """A curator's action that needs only a reason (promote, remove): form, service call, errors, note."""
    access, page = _curator_page(request, agent_id, page_id)
    form = ReasonForm(request.POST, prefix=name)
    forms = {f"{name}_form": form, "open_form": name}
    if not form.is_valid():
        return _respond(request, access, page, status=422, error=f"A reason is required to {name}.", **forms)
    try:
        page = action(page=page, actor=actor_of(request), reason=form.cleaned_data["reason"])
    except engine.EngineError as exc:
        message = _form_error(form, exc)
        return _respond(request, access, _page_or_404(page.agent_id, page.id),
                        status=error_status(exc), error=message, **forms)  # fmt: skip
    return _respond(request, access, page, status=200, note=note(page))


def _promoted(page: WikiPage) -> str:
    pointer = dashboard_selectors.memory_record(page.agent_id, page.pointer_id) if page.pointer_id else None
    follow = f" Its pointer row now has trust {pointer.origin_trust:.3f}." if pointer is not None else ""
    return f"Promoted to {page.path}: trust is now {page.trust:.3f} ({page.source_type}).{follow}"


@login_required
@require_POST
def page_promote(request: HtmxHttpRequest, agent_id: str, page_id: int) -> HttpResponse:
    """Promote an auto page to curated with a required reason: trust 0.800, source_type user_statement, and
    the pointer row's trust follows (``services.promote``)."""
    return _reason_action(request, agent_id, page_id, name="promote", action=services.promote, note=_promoted)


@login_required
@require_POST
def page_remove(request: HtmxHttpRequest, agent_id: str, page_id: int) -> HttpResponse:
    """Remove a page with a required reason: its pointer row expires (``auto_page_removed``); the agent's other
    memories, from the same origin too, are untouched (never an origin purge)."""
    return _reason_action(
        request,
        agent_id,
        page_id,
        name="remove",
        action=services.remove,
        note=lambda page: f"Removed {page.path}: its pointer row expired; no other memory changed.",
    )


@login_required
@require_POST
def page_restore(request: HtmxHttpRequest, agent_id: str, page_id: int) -> HttpResponse:
    """Bring a removed page back as it was (``services.restore``: a new pointer row, audited
    ``wiki_restore``); a page that is not removed is refused in place (409, ``page_not_removed``)."""
    access, page = _curator_page(request, agent_id, page_id)
    try:
        page = services.restore(page=page, actor=actor_of(request))
    except engine.EngineError as exc:
        return _respond(request, access, _page_or_404(page.agent_id, page.id),
                        status=error_status(exc), error=exc.message)  # fmt: skip
    note = f"Restored {page.path}: agents find it again."
    return _respond(request, access, page, status=200, note=note)
