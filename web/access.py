"""Who may see which agent (SPEC D1), and the pages that say a role is too low. Every view goes through these.

Rules:
- a user sees the agents of the teams they belong to;
- a site superuser also sees unassigned agents (``team`` NULL);
- any agent id the user cannot see is a 404, byte for byte the same as an id that does not exist;
- roles (viewer < reviewer < curator < admin) are checked with ``Membership.has_role``; a superuser passes
  every role check on the agents they can see.

Navigation badges (e.g. the quarantine desk's pending count) are annotations on the agent this module loads:
an app registers one with ``register_nav_count`` when it starts, so the counts cost no query of their own and
this module imports no app.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import Expression, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render, resolve_url
from django.utils.cache import patch_vary_headers
from django_htmx.http import HttpResponseClientRedirect

from memory.models import Agent, Membership, Role

from .http import HtmxHttpRequest

NOT_FOUND_MESSAGE = "No such agent."
REVIEW_ROLES = (Role.REVIEWER, Role.CURATOR, Role.ADMIN)

_nav_counts: dict[str, Callable[[], Expression]] = {}


def register_nav_count(name: str, expression: Callable[[], Expression]) -> None:
    """Annotate every agent ``visible_agents`` loads with ``name``: ``expression()`` is a subquery on the
    outer agent (``OuterRef("agent_id")``) that the navigation shows as a badge. Registering a name again
    replaces it (apps register once, in ``AppConfig.ready``)."""
    _nav_counts[name] = expression


def visible_agents(user: Any) -> QuerySet[Agent]:
    """Agents ``user`` may see, with their team and the registered navigation counts (e.g.
    ``pending_batches``) loaded: one query when evaluated."""
    if user is None or not user.is_authenticated or not user.is_active:
        return Agent.objects.none()
    visible = Q(team_id__in=Membership.objects.filter(user=user).values("team_id"))
    if user.is_superuser:
        visible |= Q(team__isnull=True)
    counts = {name: expression() for name, expression in _nav_counts.items()}
    # the user's role on each agent, for the navigation (it shows each role what it may use): no query of its own
    mine = Membership.objects.filter(user=user, team_id=OuterRef("team_id")).values("role")[:1]
    role: Expression = Value(Role.ADMIN.value) if user.is_superuser else Coalesce(Subquery(mine), Value(""))
    return (
        Agent.objects.filter(visible)
        .select_related("team")
        .annotate(viewer_role=role, **counts)
        .order_by("agent_id")
    )


class AgentAccess:
    """An agent the user may see, and the user's standing on it."""

    def __init__(self, user: Any, agent: Agent) -> None:
        self.user = user
        self.agent = agent

    @functools.cached_property
    def membership(self) -> Membership | None:
        if self.agent.team_id is None:
            return None
        return Membership.objects.filter(user=self.user, team_id=self.agent.team_id).first()

    def has_role(self, role: str) -> bool:
        if self.user.is_superuser:
            return True
        membership = self.membership
        return membership is not None and membership.has_role(role)

    @property
    def role(self) -> str | None:
        if self.membership is not None:
            return self.membership.role
        return Role.ADMIN if self.user.is_superuser else None


def agent_access(user: Any, agent_id: str, role: str = Role.VIEWER) -> AgentAccess:
    """The agent ``agent_id`` if ``user`` may see it, else 404; ``PermissionDenied`` if the role is too low.

    Seeing an agent already implies the viewer role (membership of its team, or superuser), so a viewer check
    costs one query; higher roles cost one more (the membership).
    """
    agent = visible_agents(user).filter(agent_id=agent_id).first()
    if agent is None:
        raise Http404(NOT_FOUND_MESSAGE)
    access = AgentAccess(user, agent)
    if role != Role.VIEWER and not access.has_role(role):
        raise PermissionDenied
    return access


def login_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Like Django's, but an HTMX request gets an ``HX-Redirect`` to the login page instead of a fragment."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated:
            return view(request, *args, **kwargs)
        htmx = getattr(request, "htmx", None)
        if htmx:
            # current_url_abs_path is None unless the page is on this site, so no open redirect
            back = htmx.current_url_abs_path or request.get_full_path()
            return HttpResponseClientRedirect(redirect_to_login(back).url)
        return redirect_to_login(request.get_full_path(), resolve_url(settings.LOGIN_URL))

    return wrapper


# --- role gates: a real page (403) that says who to ask -----------------------------------------------------


def team_members(team_id: int | None, roles: Iterable[str]) -> list[str]:
    """Usernames of a team's members holding one of ``roles``, one query."""
    if team_id is None:
        return []
    return list(
        Membership.objects.filter(team_id=team_id, role__in=list(roles))
        .order_by("user__username")
        .values_list("user__username", flat=True)
    )


def _refused(request: HtmxHttpRequest, template: str, context: dict[str, Any]) -> HttpResponse:
    response = render(request, template, context, status=403)
    patch_vary_headers(response, ("HX-Request",))
    return response


def reviewers_only(request: HtmxHttpRequest, access: AgentAccess, page: str) -> HttpResponse:
    """A viewer: say so (403), and name who can review."""
    context = {
        "agent": access.agent,
        "role": access.role,
        "page_name": page,
        "reviewers": team_members(access.agent.team_id, REVIEW_ROLES),
    }
    return _refused(request, "web/reviewers_only.html", context)


def admins_only(request: HtmxHttpRequest, access: AgentAccess) -> HttpResponse:
    """A member who is not an admin: say so (403), and name who to ask."""
    context = {
        "agent": access.agent,
        "role": access.role,
        "admins": team_members(access.agent.team_id, (Role.ADMIN,)),
    }
    return _refused(request, "web/admins_only.html", context)
