"""The typed HTMX request, page rendering, the audit actor of a person, and engine errors as HTTP statuses."""

from __future__ import annotations

from typing import Any, NamedTuple

from django import forms
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django_htmx.middleware import HtmxDetails

from memory import engine


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
    user: AbstractBaseUser | AnonymousUser  # type: ignore[assignment]


def wants_fragment(request: HtmxHttpRequest) -> bool:
    """A partial for HTMX swaps; the whole page for normal, boosted and history-restore requests."""
    return bool(request.htmx) and not request.htmx.boosted and not request.htmx.history_restore_request


def render_page(
    request: HtmxHttpRequest, template: str, context: dict[str, Any], *, fragment: str | None = None
) -> HttpResponse:
    """``template``, or its partial ``fragment`` for an HTMX swap; varies on ``HX-Request``."""
    name = f"{template}#{fragment}" if fragment and wants_fragment(request) else template
    response = render(request, name, context)
    patch_vary_headers(response, ("HX-Request",))
    return response


COUNT_AHEAD_PAGES = 40


MAX_PAGE = 10**9  # far past any list; keeps the capped count's LIMIT inside a 64-bit integer


def page_number(value: Any) -> int:
    """A ``?page=`` value as a page number: 1 for anything that is not a positive number, at most ``MAX_PAGE``
    (a larger number asks for the last page all the same)."""
    try:
        return min(MAX_PAGE, max(1, int(str(value)[:20])))
    except (TypeError, ValueError):
        return 1


class CappedPaginator(Paginator):
    """A paginator over a QuerySet that counts its rows only up to ``ahead`` pages past the asked one, so a page
    of a list of 100k rows never counts them all (``count`` is then that many and ``capped`` is set: templates
    say "more than"); walking further moves the cap along. A list that ends before the cap is counted exactly.
    """

    def __init__(self, object_list: Any, per_page: int, *, number: Any, ahead: int | None = None) -> None:
        super().__init__(object_list, per_page)
        ahead = max(1, COUNT_AHEAD_PAGES if ahead is None else ahead)  # at least the next page: "Next" works
        self.cap = (page_number(number) + ahead) * per_page
        self.capped = False

    @property
    def count(self) -> int:  # type: ignore[override]
        if "_capped_count" not in self.__dict__:
            if isinstance(self.object_list, QuerySet):
                n = self.object_list[: self.cap + 1].count()
            else:
                n = len(self.object_list)
            self.capped = n > self.cap
            self.__dict__["_capped_count"] = min(n, self.cap)
        return int(self.__dict__["_capped_count"])


def capped_page(items: Any, per_page: int, number: Any) -> Any:
    """The page ``number`` of ``items`` (``get_page``: out-of-range numbers give the last page), counted with a
    ``CappedPaginator``."""
    number = page_number(number)
    return CappedPaginator(items, per_page, number=number).get_page(number)


def actor_of(request: HtmxHttpRequest) -> str:
    """The audit actor for a person's action."""
    return f"user:{request.user.get_username()}"


# The one mapping from an engine error's stable code to the HTTP status a page answers with; any other code
# is a 400. A refusal is shown where it happened (the card, the form), with this status.
ERROR_STATUS = {
    "invalid_argument": 422,
    "content_too_large": 422,
    "too_many_aliases": 422,
    "prompt_injection": 422,
    "forbidden": 403,
    "not_found": 404,
    "rate_limited": 429,
    "invalid_edit": 422,
    "already_decided": 409,
    "stale": 409,
    "claimed_by_other": 409,
    "not_decided": 409,
    "undo_expired": 409,
    "undo_conflict": 409,
    "undo_not_yours": 409,
    "already_retracted": 409,
    "not_retracted": 409,
    "not_restorable": 409,
    "page_removed": 409,
    "already_curated": 409,
    "already_undone": 409,
    "merge_changed": 409,
    "page_not_removed": 409,
    "path_taken": 409,
    "already_running": 409,
    "gate_closed": 409,
    "snooze_in_past": 422,
    "invalid_transition": 409,
}


def error_status(exc: engine.EngineError) -> int:
    return ERROR_STATUS.get(exc.code, 400)


class Refusal(NamedTuple):
    """An engine error as a page shows it: the HTTP status and the message."""

    status: int
    message: str


def refusal(exc: engine.EngineError, form: forms.BaseForm | None = None) -> Refusal:
    """The status and message for ``exc``; with ``form``, the message also goes on the field the error names
    (or on the form itself), so the page shows it in place and never answers 500."""
    if form is not None:
        form.add_error(exc.field if exc.field in form.fields else None, exc.message)
    return Refusal(error_status(exc), exc.message)
