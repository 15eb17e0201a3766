"""Tell people what happened when they sign in or out (shown as a toast by base.html)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.dispatch import receiver


@receiver(user_logged_in)
def _signed_in(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    if request is not None and hasattr(request, "_messages"):
        messages.success(request, f"Signed in as {user.get_username()}.")


@receiver(user_logged_out)
def _signed_out(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    if request is not None and hasattr(request, "_messages"):
        messages.info(request, "You are signed out.")
