"""The navigation's role checks (``{% load nav %}``): it shows each role what it may use, and nothing that would
only refuse it (UX "Everywhere"). ``visible_agents`` annotates each agent with ``viewer_role``."""

from __future__ import annotations

from typing import Any

from django import template

from memory.models import Role
from memory.models.accounts import ROLE_RANK

register = template.Library()


@register.filter
def may(agent: Any, role: str) -> bool:
    """The signed-in user holds ``role`` (or higher) on ``agent``. An agent loaded without the annotation shows
    the link (the view still checks)."""
    held = getattr(agent, "viewer_role", None)
    if held is None:
        return True
    try:
        return ROLE_RANK[Role(held)] >= ROLE_RANK[Role(role)]
    except ValueError:
        return False
