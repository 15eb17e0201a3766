"""Response headers every page carries (issue 15 item 18): a Content-Security-Policy that admits only the
site's own (vendored) scripts and no inline or evaluated script."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

# Scripts: files served by this site only (htmx, vis-network and the site's own are vendored; no page has an
# inline script or handler). Styles may be inline (style attributes, htmx's indicator style). Nothing may frame
# the site, and forms post back to it alone.
DEFAULT_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)


class ContentSecurityPolicyMiddleware:
    """Adds ``Content-Security-Policy`` (``settings.MEMDESK_CSP``, else ``DEFAULT_POLICY``) to every response
    that has none."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response
        self.policy = getattr(settings, "MEMDESK_CSP", "") or DEFAULT_POLICY

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if self.policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = self.policy
        return response
