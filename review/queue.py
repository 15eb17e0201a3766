"""The queue component (UX "Every queue"): one list filtered in the URL, decision cards, claims that expire,
a short undo after each decision, bulk decisions over "every item matching this filter", the keyboard map
(static/js/queue.js) and the decision log.

A queue kind plugs in by subclassing ``QueueKind`` (how it lists, finds and shows its items, and decides,
claims, releases, undoes and bulk-decides them through the engine), writing its parts template (the evidence
card and the page's filters) and adding ``queue_paths(base, kind)`` to review/urls.py. A kind may also let
reviewers edit an item before approving it (``edit_form``) and revert a decision after its undo window
(``revertable``). ``review/quarantine.py`` is the first kind, ``review/review_queue.py`` the second. The
function views in review/views.py serve every kind: they check access, then call ``page``, ``decide``,
``edit``, ``claim``, ``undo``, ``revert`` or ``bulk`` here.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import get_script_prefix, reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django_htmx.http import trigger_client_event

from memory import engine
from memory.models import Role
from web.access import AgentAccess
from web.http import HtmxHttpRequest, actor_of, refusal, render_page, wants_fragment

from .forms import BULK_CONFIRM_OVER, BulkDecisionForm, DecisionForm, ids_value

PENDING = "pending"
DECISIONS = ("approve", "reject")
BULK_SAMPLE = 5
PAGE_TEMPLATE = "review/queue.html"
BULK_TEMPLATE = "review/queue_bulk.html"


# --- what a card knows ----------------------------------------------------------------------------------------


@dataclass
class QueueCard:
    """A decision card: one item (with ``id``, ``status``, ``claimed_by``, ``claimed_until``, ``decided_by``,
    ``undo_until`` and, if it has a time limit, ``expires_at``) as the person looking sees it at ``now``. What
    it says about the item is worked out once (a page reads each of these many times)."""

    item: Any
    now: datetime
    actor: str = ""  # the person looking: their own claim and their own undo show differently
    # set by a decision view: the outcome, or the error and the form to show again
    note: str = ""
    error: str = ""
    decision: str = ""
    form: Any = None

    warn_before_secs: ClassVar[int] = 2 * 3600  # a pending item this close to its time limit is flagged
    status_labels: ClassVar[dict[str, str]] = {}

    @property
    def id(self) -> int:
        return self.item.id

    @functools.cached_property
    def pending(self) -> bool:
        return self.item.status == PENDING

    @functools.cached_property
    def status_label(self) -> str:
        return self.status_labels.get(self.item.status, self.item.status)

    @functools.cached_property
    def claimed(self) -> bool:
        """A live claim (claims expire by themselves: the time is compared, nothing releases them)."""
        i = self.item
        return bool(
            self.pending and i.claimed_by and i.claimed_until is not None and i.claimed_until > self.now
        )

    @functools.cached_property
    def claimed_by_me(self) -> bool:
        return self.claimed and self.item.claimed_by == self.actor

    @functools.cached_property
    def held_by_other(self) -> bool:
        return self.claimed and self.item.claimed_by != self.actor

    @functools.cached_property
    def claim_seconds_left(self) -> int:
        until = self.item.claimed_until
        return max(0, int((until - self.now).total_seconds())) if self.claimed and until else 0

    @functools.cached_property
    def undoable(self) -> bool:
        """Decided by the person looking, inside the undo window."""
        i = self.item
        return bool(
            not self.pending
            and self.actor
            and i.decided_by == self.actor
            and i.undo_until is not None
            and i.undo_until > self.now
        )

    @functools.cached_property
    def due(self) -> datetime | None:
        return getattr(self.item, "expires_at", None)

    @functools.cached_property
    def seconds_left(self) -> int:
        due = self.due
        return max(0, int((due - self.now).total_seconds())) if due is not None else 0

    @functools.cached_property
    def expired(self) -> bool:
        """Pending, but its time limit has run out (the system decides it; people can no longer)."""
        return self.pending and self.due is not None and self.due <= self.now

    @functools.cached_property
    def warn(self) -> bool:
        return self.pending and self.due is not None and 0 < self.seconds_left < self.warn_before_secs

    @functools.cached_property
    def overdue(self) -> bool:
        """Pending past its time limit, still decidable (a kind whose time limit only reminds says so)."""
        return False

    @functools.cached_property
    def stale(self) -> bool:
        """Not decidable any more because what it is about changed (a kind that knows sets this)."""
        return False

    @functools.cached_property
    def decidable(self) -> bool:
        return self.pending and not self.expired and not self.stale

    @functools.cached_property
    def editable(self) -> bool:
        """May be edited, then approved (a kind with an ``edit_form`` says which of its items)."""
        return False

    @functools.cached_property
    def revertable(self) -> bool:
        """A decision that may be taken back by a new one (a kind with ``revertable`` says which)."""
        return False

    @functools.cached_property
    def reason_optional(self) -> bool:
        """Approving it needs no reason (a kind whose ``default_reason`` gives one says which items)."""
        return False


def held_by_other(item: Any, *, actor: str, now: datetime) -> bool:
    """``item`` is under another person's live claim."""
    until = item.claimed_until
    return bool(item.claimed_by and item.claimed_by != actor and until is not None and until > now)


@dataclass(frozen=True)
class BulkSelection:
    """What a bulk decision over a filter would act on: the ids it would decide, the items held by others and
    the high-impact ones (both left out and reported, as (id, holder) and (id, impact)), and a sample."""

    ids: list[int]
    held: list[tuple[int, str]]
    high: list[tuple[int, int]]
    sample: list[Any]


@dataclass(frozen=True)
class Outcome:
    """One item of a bulk decision: its new status (``label`` as people read it), or ``skipped`` with the
    engine's error ``code`` (and the claim's ``holder`` when another reviewer held it)."""

    item_id: int
    outcome: str
    label: str
    code: str = ""
    holder: str = ""


# --- the adapter ----------------------------------------------------------------------------------------------


class QueueKind(ABC):
    """One kind of queue. Class attributes name it and its words; the methods read through selectors and change
    through the engine (keyword-only, with ``actor``), raising ``EngineError`` on refusal."""

    do_not_call_in_templates = True  # templates read its attributes (``queue.noun``), never call it

    # what it is called: URL names review:<name> and review:<name>_approve|_reject|_claim|_release|_undo|_bulk;
    # "quarantine desk" (the heading and the reviewers-only page); "Quarantine" (the browser tab)
    name: ClassVar[str]
    title: ClassVar[str]
    short_title: ClassVar[str]
    noun: ClassVar[str]
    nouns: ClassVar[str]
    dom: ClassVar[str]  # an item's element id is "<dom>-<id>"
    # its template of partials (intro, filters, summary, empty, head, evidence, expired, filter_summary, sample,
    # high, impact) and its navigation badge, swapped out of band after each decision; the badge shows the
    # agent's annotation ``nav_count`` (registered with ``web.access.register_nav_count``)
    parts: ClassVar[str]
    count_template: ClassVar[str]
    nav_count: ClassVar[str]
    # a GET form with ``filters()`` (status "pending" lists the queue); the filter that shows one item (with
    # status "all"); the filters a bulk decision carries (it always acts on pending items)
    filter_form: ClassVar[type[forms.Form]]
    item_filter: ClassVar[str]
    bulk_keys: ClassVar[tuple[str, ...]]
    card_class: ClassVar[type[QueueCard]] = QueueCard  # what ``cards`` returns
    role: ClassVar[str] = Role.REVIEWER  # who decides
    read_role: ClassVar[str] = Role.REVIEWER  # who may look (a viewer sees the cards without their forms)
    # edit then approve (URL review:<name>_edit): the form, bound with (reasons, data); its ``edited()`` is what
    # ``approve_edited`` gets. Revert (review:<name>_revert): a decided item taken back by a new decision
    edit_form: ClassVar[type[forms.Form] | None] = None
    revertable: ClassVar[bool] = False
    # per-part decisions: an approval may name the parts of an item it approves (the POST's ``facts``, with
    # ``per_fact`` set by the form that shows the boxes); the others are rejected (``approve_parts``)
    per_fact: ClassVar[bool] = False
    # an admin may take over another reviewer's live claim (``take_over``; the claim view checks the role)
    can_take_over: ClassVar[bool] = False
    # the list renders only its open item's body, queue.js loads another's when it is opened (``card=1``): for
    # a kind whose cards are heavy (the desk's fact tables), so a page of them stays fast
    lazy_bodies: ClassVar[bool] = False
    expiry_decides: ClassVar[bool] = True  # False: past its time limit an item only shows as overdue
    page_size: ClassVar[int] = 20
    claim_secs: ClassVar[int]
    undo_secs: ClassVar[int]
    bulk_max: ClassVar[int]
    bulk_confirm_over: ClassVar[int] = BULK_CONFIRM_OVER
    # words: the order of pending items ("soonest expiry first"); what happens when an item's time runs out
    # ("Rejected automatically") and what its countdown then reads; what a bulk decision does to each item;
    # the items a bulk approval leaves for one-by-one review
    order_text: ClassVar[str] = ""
    expiry_outcome: ClassVar[str] = ""
    expired_text: ClassVar[str] = "expired"
    approve_effect: ClassVar[str] = "approved"
    reject_effect: ClassVar[str] = "rejected"
    high_impact_text: ClassVar[str] = "of high impact"
    log_text: ClassVar[str] = "Audit log"  # the link to ``log_url``
    revert_text: ClassVar[str] = (  # what a revert does, beside its form
        "Restores what this decision changed (refused if the memories were written since) and records a new "
        "decision: it reads as rejected by you."
    )

    # reads ---------------------------------------------------------------------------------------------------

    @abstractmethod
    def items(self, agent_id: str, filters: dict[str, Any], *, now: datetime) -> Sequence[Any]:
        """The items matching ``filters``, in the order the page lists them (a lazy QuerySet: it is paged)."""

    @abstractmethod
    def item(self, agent_id: str, item_id: int) -> Any | None:
        """One item of this agent; another agent's id is simply not found (None)."""

    @abstractmethod
    def cards(self, agent_id: str, items: Iterable[Any], *, now: datetime, actor: str) -> list[QueueCard]:
        """Cards for ``items``, with their evidence loaded in a fixed number of queries."""

    @abstractmethod
    def pending_count(self, agent_id: str) -> int: ...

    @abstractmethod
    def bulk_items(self, agent_id: str, filters: dict[str, Any], *, now: datetime) -> list[Any]:
        """The pending items matching ``filters`` that may still be decided, in the page's order."""

    def high_impact(
        self, agent_id: str, items: list[Any], *, decision: str, now: datetime
    ) -> list[tuple[int, int]]:
        """(id, impact) of the items a bulk ``decision`` leaves for one-by-one review."""
        return []

    def page_context(self, agent_id: str) -> dict[str, Any]:
        """What the full page adds (filter options, settings shown in the intro)."""
        return {}

    @abstractmethod
    def reasons(self, decision: str) -> list[tuple[str, str]]:
        """The reasons a person picks from for ``decision`` (value, label)."""

    @abstractmethod
    def log_url(self, agent_id: str, item_id: int | None = None) -> str:
        """The decision log: the agent's, or one item's."""

    # changes, through the engine -------------------------------------------------------------------------------

    @abstractmethod
    def decide(self, item: Any, *, decision: str, actor: str, reason: str) -> Any: ...

    def approve_parts(self, item: Any, *, actor: str, reason: str, parts: list[str]) -> Any:
        """Approve the named parts of ``item`` and reject the rest, as one decision (kinds with ``per_fact``)."""
        raise Http404(f"A {self.noun} is decided whole.")

    def default_reason(self, item: Any, decision: str, parts: list[str] | None = None) -> str:
        """The reason a ``decision`` takes when the reviewer picks none ("": a reason is required)."""
        return ""

    def approve_edited(self, item: Any, *, actor: str, reason: str, edited: dict[str, Any]) -> Any:
        """Approve an edited version of ``item`` (kinds with an ``edit_form``)."""
        raise Http404(f"A {self.noun} cannot be edited.")

    def revert(self, item: Any, *, actor: str, reason: str) -> Any:
        """Take a decision back by a new one (kinds with ``revertable``)."""
        raise Http404(f"A {self.noun} cannot be reverted.")

    @abstractmethod
    def claim(self, item: Any, *, actor: str) -> Any: ...

    @abstractmethod
    def release(self, item: Any, *, actor: str) -> Any: ...

    def take_over(self, item: Any, *, actor: str) -> Any:
        """Claim ``item`` from whoever holds it (kinds with ``can_take_over``; admins only)."""
        raise Http404(f"A {self.noun} cannot be taken over.")

    @abstractmethod
    def undo(self, item: Any, *, actor: str) -> Any: ...

    @abstractmethod
    def bulk(self, agent_id: str, ids: list[int], *, decision: str, actor: str, reason: str) -> list[Outcome]:
        """Decide each of ``ids`` in its own transaction with its own audit entry; refusals are skipped."""

    # words -------------------------------------------------------------------------------------------------------

    @abstractmethod
    def decided_note(self, item: Any, decision: str, parts: list[str] | None = None) -> str: ...

    @abstractmethod
    def undone_note(self, item: Any) -> str: ...

    def claimed_note(self, item: Any, action: str) -> str:
        if action == "claim":
            return (
                f"Claimed {self.noun} #{item.id} for {self.claim_secs // 60} minutes: other reviewers see it "
                "is yours."
            )
        return f"Released {self.noun} #{item.id}: any reviewer may decide it."

    def edited_note(self, item: Any) -> str:
        return f"Approved {self.noun} #{item.id} with your edit."

    def reverted_note(self, item: Any) -> str:
        return f"Reverted {self.noun} #{item.id}: a new decision, on record."

    def undo_text(self, item: Any, decision: str) -> str:
        return f"Undo the {'approval' if decision == 'approve' else 'rejection'} of #{item.id}"

    def counted(self, n: int) -> str:
        return f"{n} {self.noun if n == 1 else self.nouns}"

    def bulk_note(self, decision: str, outcomes: list[Outcome], *, held: int, high: int = 0) -> str:
        done = sum(1 for o in outcomes if o.outcome != "skipped")
        held += sum(1 for o in outcomes if o.code == "claimed_by_other")
        other = sum(1 for o in outcomes if o.outcome == "skipped" and o.code != "claimed_by_other")
        verb = "Approved" if decision == "approve" else "Rejected"
        note = f"{verb} {self.counted(done)}."
        if held:
            note += f" {held} held by another reviewer left alone."
        if high:
            note += f" {high} {self.high_impact_text} left for one-by-one review."
        if other:
            note += f" {other} skipped (decided or expired meanwhile)."
        return note

    # urls --------------------------------------------------------------------------------------------------------

    @property
    def editable(self) -> bool:
        """Its items may be edited, then approved (templates cannot test ``edit_form``: it is callable)."""
        return self.edit_form is not None

    @property
    def warn_secs(self) -> int:
        """How close to its time limit a pending item is flagged (the card's threshold, for the script)."""
        return self.card_class.warn_before_secs

    def url(self, action: str, agent_id: str, item_id: int | None = None) -> str:
        """``list``, ``bulk``, ``log``, ``item`` (the list showing that item alone) or an item's ``approve``,
        ``reject``, ``edit``, ``claim``, ``release``, ``undo`` or ``revert``."""
        if action == "log":
            return self.log_url(agent_id, item_id)
        if action == "item":
            return self.url("list", agent_id) + "?" + urlencode({"status": "all", self.item_filter: item_id})
        name = f"review:{self.name}" if action == "list" else f"review:{self.name}_{action}"
        if item_id is None:
            return reverse(name, args=[agent_id])
        prefix, suffix = _item_url(name, agent_id, get_script_prefix())
        return f"{prefix}/{int(item_id)}/{suffix}"


@functools.lru_cache(maxsize=512)
def _item_url(name: str, agent_id: str, script_prefix: str) -> tuple[str, str]:
    """An item action's URL around its id, reversed once per agent (a page links each card's actions)."""
    prefix, _, suffix = reverse(name, args=[agent_id, 0]).rpartition("/0/")
    return prefix, suffix


def bulk_params(kind: QueueKind, filters: dict[str, Any]) -> QueryDict:
    """The filters a bulk decision carries, for ``{% querystring %}`` and the hidden fields of its form."""
    params = QueryDict(mutable=True)
    for key in kind.bulk_keys:
        if filters.get(key) not in (None, ""):
            params[key] = filters[key]
    return params


def bulk_selection(
    kind: QueueKind, agent_id: str, filters: dict[str, Any], *, actor: str, now: datetime, decision: str
) -> BulkSelection:
    """What a bulk ``decision`` over "every pending item matching this filter" would act on: the items nobody
    else holds by a live claim and that are not of high impact for this decision."""
    items = kind.bulk_items(agent_id, filters, now=now)
    held = [(i.id, i.claimed_by) for i in items if held_by_other(i, actor=actor, now=now)]
    held_ids = {rid for rid, _ in held}
    free = [i for i in items if i.id not in held_ids]
    high = kind.high_impact(agent_id, free, decision=decision, now=now) if free else []
    high_ids = {rid for rid, _ in high}
    chosen = [i for i in free if i.id not in high_ids]
    return BulkSelection([i.id for i in chosen], held, high, chosen[:BULK_SAMPLE])


# --- the page -------------------------------------------------------------------------------------------------


def is_filtered(kind: QueueKind, filters: dict[str, Any]) -> bool:
    """``filters`` narrow the list beyond its status and order (so an empty list may hide pending items)."""
    defaults = kind.filter_form().filters()  # type: ignore[attr-defined]
    return any(
        value not in (None, "") and value != defaults.get(key)
        for key, value in filters.items()
        if key not in ("status", "sort")
    )


def choices(kind: QueueKind) -> dict[str, list[tuple[str, str]]]:
    """The reasons each of the card's forms offers."""
    out = {"approve_choices": kind.reasons("approve"), "reject_choices": kind.reasons("reject")}
    if kind.edit_form is not None:
        out["edit_choices"] = kind.reasons("edit")
    if kind.revertable:
        out["revert_choices"] = kind.reasons("revert")
    return out


def list_context(
    request: HtmxHttpRequest,
    kind: QueueKind,
    access: AgentAccess,
    *,
    full: bool,
    filters: dict[str, Any] | None = None,
    cards: list[QueueCard] | None = None,
) -> dict[str, Any]:
    aid = access.agent.agent_id
    form = kind.filter_form(request.GET)
    form.is_valid()
    f = filters or form.filters()  # type: ignore[attr-defined]
    now = timezone.now()
    paged = None
    if cards is None:
        paged = Paginator(kind.items(aid, f, now=now), kind.page_size).get_page(request.GET.get("page"))
        cards = kind.cards(aid, paged.object_list, now=now, actor=actor_of(request))
    context: dict[str, Any] = {
        "agent": access.agent,
        "queue": kind,
        "form": form,
        "filters": f,
        "page": paged,
        "cards": cards,
        "now": now,
        "can_decide": access.has_role(kind.role),
        "can_take_over": kind.can_take_over and access.has_role(Role.ADMIN),
        "can_see_tokens": access.has_role(Role.ADMIN),
        "filtered": is_filtered(kind, f),
        "total_pending": getattr(access.agent, kind.nav_count, 0) or 0,
        **choices(kind),
        "claim_minutes": kind.claim_secs // 60,
        "undo_secs": kind.undo_secs,
        "bulk_params": bulk_params(kind, f),
        "self_url": kind.url("list", aid)
        + (f"?{request.GET.urlencode()}" if request.method == "GET" and request.GET else ""),
    }
    if full:
        context.update(kind.page_context(aid))
        context["pending_count"] = getattr(access.agent, kind.nav_count, 0) or 0
        context["bulk_over"] = kind.bulk_confirm_over
    return context


def page(request: HtmxHttpRequest, kind: QueueKind, access: AgentAccess) -> HttpResponse:
    """The queue: pending items first as decision cards, decided ones read-only under a filter. HTMX filter
    changes and the refresh after a bulk decision get the list region only; ``card=1`` with the item filter
    gets that one item's open card (the compact list renders only its open item's body; queue.js loads the
    others' when they are opened)."""
    if wants_fragment(request) and request.GET.get("card"):
        return card_fragment(request, kind, access)
    context = list_context(request, kind, access, full=not wants_fragment(request))
    response = render_page(request, PAGE_TEMPLATE, context, fragment="list")
    add_never_cache_headers(response)
    return response


def card_fragment(request: HtmxHttpRequest, kind: QueueKind, access: AgentAccess) -> HttpResponse:
    """One item's open card (``?<item_filter>=<id>&card=1`` over HTMX), as the list shows its open item."""
    try:
        item_id = int(request.GET.get(kind.item_filter, ""))
    except ValueError:
        raise Http404(f"No such {kind.noun}.") from None
    item = item_or_404(kind, access, item_id)
    aid = access.agent.agent_id
    now = timezone.now()
    (card,) = kind.cards(aid, [item], now=now, actor=actor_of(request))
    context = {
        "agent": access.agent,
        "queue": kind,
        "c": card,
        "now": now,
        "can_decide": access.has_role(kind.role),
        "can_take_over": kind.can_take_over and access.has_role(Role.ADMIN),
        "can_see_tokens": access.has_role(Role.ADMIN),
        **choices(kind),
        "claim_minutes": kind.claim_secs // 60,
        "undo_secs": kind.undo_secs,
        "open": True,
    }
    response = render(request, "review/_queue_card.html", context)
    patch_vary_headers(response, ("HX-Request",))
    add_never_cache_headers(response)
    return response


def item_or_404(kind: QueueKind, access: AgentAccess, item_id: int) -> Any:
    """One item of the agent; any other id is simply not found."""
    item = kind.item(access.agent.agent_id, item_id)
    if item is None:
        raise Http404(f"No such {kind.noun}.")
    return item


def item_reply(
    request: HtmxHttpRequest,
    kind: QueueKind,
    access: AgentAccess,
    item: Any,
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
    (card,) = kind.cards(aid, [item], now=timezone.now(), actor=actor_of(request))
    card.note, card.error = note, error
    if error and form is not None:
        card.decision, card.form = decision, form
    if wants_fragment(request):
        context = {
            "agent": access.agent,
            "queue": kind,
            "c": card,
            "now": card.now,
            "can_decide": True,  # only people who decide reach an action
            "can_take_over": kind.can_take_over and access.has_role(Role.ADMIN),
            "can_see_tokens": access.has_role(Role.ADMIN),
            **choices(kind),
            "pending_count": kind.pending_count(aid),
            "claim_minutes": kind.claim_secs // 60,
        }
        response = render(request, "review/_queue_item.html", context, status=status)
        for name, detail in (events or {}).items():
            trigger_client_event(response, name, detail)
        patch_vary_headers(response, ("HX-Request",))
    elif not error:
        if note:
            messages.success(request, note)
        response = redirect(kind.url("item", aid, item.id))
    else:
        one = {**kind.filter_form().filters(), "status": "all", kind.item_filter: item.id}  # type: ignore[attr-defined]
        context = list_context(request, kind, access, full=True, filters=one, cards=[card])
        response = render(request, PAGE_TEMPLATE, context, status=status)
        patch_vary_headers(response, ("HX-Request",))
    add_never_cache_headers(response)
    return response


def decide(
    request: HtmxHttpRequest, kind: QueueKind, access: AgentAccess, item: Any, decision: str
) -> HttpResponse:
    """Approve or reject one item through the engine, with a required reason.

    HTMX gets the card back (decided, or with the error inline: 422 for a missing reason, 409 when it was
    already decided, its time ran out or another reviewer holds it) plus the pending count by out-of-band swap,
    a toast and the undo offer. A plain POST is redirected to the decided card, or gets the card with the error
    and the same status.
    """
    data = request.POST
    parts = (
        data.getlist("facts") if kind.per_fact and decision == "approve" and data.get("per_fact") else None
    )
    if not data.get("reason") and (default := kind.default_reason(item, decision, parts)):
        data = data.copy()
        data["reason"] = default
    form = DecisionForm(kind.reasons(decision), data)
    status, error, note = 200, "", ""
    events: dict[str, Any] = {}
    item_id = item.id
    if not form.is_valid():
        status, error = 422, "A reason is required." if "reason" in form.errors else "Check the reason."
    else:
        try:
            if parts is not None:
                item = kind.approve_parts(
                    item, actor=actor_of(request), reason=form.reason_text(), parts=parts
                )
            else:
                item = kind.decide(
                    item, decision=decision, actor=actor_of(request), reason=form.reason_text()
                )
        except engine.EngineError as exc:
            status, error = refusal(exc)
            if exc.code == "invalid_argument" and exc.field == "reason":
                form.add_error("note", exc.message)
            elif exc.code == "invalid_argument" and exc.field == "memory_ids":
                status, error = 422, f"Check the facts: {exc.message}."
            item = kind.item(access.agent.agent_id, item_id) or item
        else:
            note = kind.decided_note(item, decision, parts)
            events = undo_events(kind, access, item, note, decision)
    return item_reply(
        request,
        kind,
        access,
        item,
        status=status,
        note=note,
        error=error,
        decision=decision,
        form=form,
        events=events,
    )


def edit(request: HtmxHttpRequest, kind: QueueKind, access: AgentAccess, item: Any) -> HttpResponse:
    """Approve an edited version of one item (kinds with an ``edit_form``). An invalid edit is refused with
    its errors beside the fields (422) and nothing is written; otherwise as ``decide``."""
    if kind.edit_form is None:
        raise Http404(f"A {kind.noun} cannot be edited.")
    form = kind.edit_form(kind.reasons("edit"), request.POST)  # type: ignore[call-arg]
    status, error, note = 200, "", ""
    events: dict[str, Any] = {}
    item_id = item.id
    if not form.is_valid():
        status, error = (
            422,
            "Check the edit: " + " ".join(str(e) for errors in form.errors.values() for e in errors),
        )
    else:
        try:
            item = kind.approve_edited(
                item,
                actor=actor_of(request),
                reason=form.reason_text(),  # type: ignore[attr-defined]
                edited=form.edited(),  # type: ignore[attr-defined]
            )
        except engine.EngineError as exc:
            status, error = refusal(exc)
            if exc.code in ("invalid_edit", "invalid_argument"):
                field = exc.field if exc.field in form.fields else None
                form.add_error(field, exc.message)
            item = kind.item(access.agent.agent_id, item_id) or item
        else:
            note = kind.edited_note(item)
            events = undo_events(kind, access, item, note, "approve")
    return item_reply(
        request,
        kind,
        access,
        item,
        status=status,
        note=note,
        error=error,
        decision="edit",
        form=form,
        events=events,
    )


def revert(request: HtmxHttpRequest, kind: QueueKind, access: AgentAccess, item: Any) -> HttpResponse:
    """Take an applied or approved item back by a new decision, with a required reason (kinds with
    ``revertable``): what it changed is restored and the item reads as rejected by the reverter."""
    if not kind.revertable:
        raise Http404(f"A {kind.noun} cannot be reverted.")
    form = DecisionForm(kind.reasons("revert"), request.POST)
    status, error, note = 200, "", ""
    events: dict[str, Any] = {}
    item_id = item.id
    if not form.is_valid():
        status, error = 422, "A reason is required." if "reason" in form.errors else "Check the reason."
    else:
        try:
            item = kind.revert(item, actor=actor_of(request), reason=form.reason_text())
        except engine.EngineError as exc:
            status, error = refusal(exc)
            item = kind.item(access.agent.agent_id, item_id) or item
        else:
            note = kind.reverted_note(item)
            events["memdesk:toast"] = {"text": note, "level": "success"}
    return item_reply(
        request,
        kind,
        access,
        item,
        status=status,
        note=note,
        error=error,
        decision="revert",
        form=form,
        events=events,
    )


def undo_events(kind: QueueKind, access: AgentAccess, item: Any, note: str, decision: str) -> dict[str, Any]:
    """The toast after a decision and, while its window lasts, the undo offer."""
    events: dict[str, Any] = {"memdesk:toast": {"text": note, "level": "success"}}
    if item.undo_until is not None:
        events["memdesk:undo"] = {
            "card": f"{kind.dom}-{item.id}",
            "url": kind.url("undo", access.agent.agent_id, item.id),
            "until": item.undo_until.isoformat(),
            "text": kind.undo_text(item, decision),
        }
    return events


def claim(
    request: HtmxHttpRequest, kind: QueueKind, access: AgentAccess, item: Any, action: str
) -> HttpResponse:
    """Claim a pending item while working on it (others are refused until the claim ends), or release it."""
    status, error, note = 200, "", ""
    act = kind.claim if action == "claim" else kind.release
    taking = action == "claim" and bool(request.POST.get("take_over"))
    if taking:
        if not kind.can_take_over:
            raise Http404(f"A {kind.noun} cannot be taken over.")
        if not access.has_role(Role.ADMIN):
            raise PermissionDenied
        holder = item.claimed_by if held_by_other(item, actor=actor_of(request), now=timezone.now()) else ""
        act = kind.take_over
    item_id = item.id
    try:
        item = act(item, actor=actor_of(request))
    except engine.EngineError as exc:
        status, error = refusal(exc)
        item = kind.item(access.agent.agent_id, item_id) or item
    else:
        note = kind.claimed_note(item, action)
        if taking and holder:
            note = f"Took {kind.noun} #{item.id} over from {holder}: it is yours for {kind.claim_secs // 60} minutes."
    events = {"memdesk:toast": {"text": note, "level": "info"}} if note else {}
    return item_reply(request, kind, access, item, status=status, note=note, error=error, events=events)


def undo(request: HtmxHttpRequest, kind: QueueKind, access: AgentAccess, item: Any) -> HttpResponse:
    """Undo one's own decision inside the short window: the item is pending again (a new audited decision)."""
    status, error, note = 200, "", ""
    item_id = item.id
    try:
        item = kind.undo(item, actor=actor_of(request))
    except engine.EngineError as exc:
        status, error = refusal(exc)
        item = kind.item(access.agent.agent_id, item_id) or item
    else:
        note = kind.undone_note(item)
    events = {"memdesk:toast": {"text": note, "level": "success"}} if note else {}
    return item_reply(request, kind, access, item, status=status, note=note, error=error, events=events)


# --- bulk decisions over a filter -------------------------------------------------------------------------------


def bulk_context(
    request: HtmxHttpRequest,
    kind: QueueKind,
    access: AgentAccess,
    data: QueryDict,
    decision: str,
    form: BulkDecisionForm | None,
) -> dict[str, Any]:
    filter_form = kind.filter_form(data)
    filter_form.is_valid()
    f = filter_form.filters()  # type: ignore[attr-defined]
    now = timezone.now()
    found = bulk_selection(
        kind, access.agent.agent_id, f, actor=actor_of(request), now=now, decision=decision
    )
    return {
        "agent": access.agent,
        "queue": kind,
        "filters": f,
        "decision": decision,
        "count": len(found.ids),
        "ids": found.ids,
        "ids_value": ids_value(found.ids),
        "held": found.held,
        "high": found.high,
        "sample": found.sample,
        "bulk_max": kind.bulk_max,
        "bulk_over": kind.bulk_confirm_over,
        "choices": kind.reasons(decision),
        "bulk_form": form,
        "now": now,
    }


def bulk(request: HtmxHttpRequest, kind: QueueKind, access: AgentAccess) -> HttpResponse:
    """Approve or reject every pending item matching the queue's filter.

    GET shows the count, a sample and the items held by other reviewers (excluded); its form carries the exact
    ids it would decide. POST decides those items, each through the engine with its own audit entry, only if
    the filter still matches exactly them (409 otherwise: nothing the reviewer did not see is ever decided)
    and, above the threshold, the reviewer typed the count. A POST without a valid decision is a 422.
    """
    aid = access.agent.agent_id
    data = request.POST if request.method == "POST" else request.GET
    given = data.get("decision")
    if request.method == "POST" and given not in DECISIONS:
        return bulk_without_decision(request, kind, access, data)
    decision = given if given in DECISIONS else "reject"
    form = (
        BulkDecisionForm(kind.reasons(decision), request.POST, nouns=kind.nouns)
        if request.method == "POST"
        else None
    )
    context = bulk_context(request, kind, access, data, decision, form)
    status, events = 200, {}
    if form is not None:
        if not form.is_valid():
            status = 422
            context["error"] = "A reason is required." if "reason" in form.errors else "Check the form."
        elif context["count"] > kind.bulk_max:
            status = 422
            context["error"] = f"At most {kind.bulk_max} {kind.nouns} per bulk decision: narrow the filter."
        elif error := form.selection_changed(context["ids"]):
            status = 409
            context["error"] = error
        elif error := form.check_confirm(context["count"]):
            status = 422
            context["error"] = error
        else:
            outcomes = kind.bulk(
                aid,
                context["ids"],  # the same set as the previewed ids (checked above)
                decision=decision,
                actor=actor_of(request),
                reason=form.reason_text(),
            )
            note = kind.bulk_note(decision, outcomes, held=len(context["held"]), high=len(context["high"]))
            context.update(outcomes=outcomes, note=note)
            events = {"memdesk:toast": {"text": note, "level": "success"}, "memdesk:desk-changed": {}}
            if not wants_fragment(request):
                messages.success(request, note)
                query = bulk_params(kind, context["filters"]).urlencode()
                return redirect(kind.url("list", aid) + (f"?{query}" if query else ""))
    context["pending_count"] = kind.pending_count(aid)
    context["bulk_params"] = bulk_params(kind, context["filters"])
    response = render_page(request, BULK_TEMPLATE, context, fragment="panel")
    response.status_code = status
    for name, detail in events.items():
        trigger_client_event(response, name, detail)
    add_never_cache_headers(response)
    return response


def bulk_without_decision(
    request: HtmxHttpRequest, kind: QueueKind, access: AgentAccess, data: QueryDict
) -> HttpResponse:
    """A bulk POST whose ``decision`` is missing or unknown: a 422 that decides nothing and offers both
    previews again (never a silent default)."""
    filter_form = kind.filter_form(data)
    filter_form.is_valid()
    f = filter_form.filters()  # type: ignore[attr-defined]
    context = {
        "agent": access.agent,
        "queue": kind,
        "filters": f,
        "decision": "",
        "bulk_params": bulk_params(kind, f),
        "error": "Choose whether to approve or reject: this bulk decision did not say which, so nothing "
        "was decided.",
    }
    response = render_page(request, BULK_TEMPLATE, context, fragment="panel")
    response.status_code = 422
    add_never_cache_headers(response)
    return response
