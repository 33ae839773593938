"""The 1 MB request body limit, answered with the reference's 413 envelope."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from api.rest.errors import failure_json_response
from core.errors import Failure

_HINT = (
    "Split large exports/imports into smaller batches, or stream them via the CLI "
    "(`memesh export` / `memesh import`) which reads/writes files directly and is not "
    "subject to the per-request 1MB cap."
)


class BodySizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Django reads a body only up to CONTENT_LENGTH, so checking the header bounds it.
        if not request.META.get("CONTENT_LENGTH") and request.headers.get("Transfer-Encoding"):
            # A chunked body has no length to check, and DRF reads a request without one as
            # empty: a recall would silently list recent memories instead of searching, and
            # any size would pass. Refuse it rather than misread it.
            return failure_json_response(
                Failure(
                    411,
                    "request.length-required",
                    "Send the request body with a Content-Length header "
                    "(chunked transfer encoding is not supported)",
                )
            )
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return failure_json_response(
                Failure(400, "validation.bad-body", "Content-Length is not a number")
            )
        if length > settings.MEMESH_MAX_BODY_BYTES:
            return failure_json_response(
                Failure(
                    413,
                    "payload.too-large",
                    "Request body exceeds the 1MB limit",
                    extra={"code": "PAYLOAD_TOO_LARGE", "limit": "1mb", "hint": _HINT},
                )
            )
        return self.get_response(request)


SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


class SecurityHeadersMiddleware:
    """The reference's security headers on every response, errors and 404s included (listed
    first in MIDDLEWARE, so it also covers the body-limit middleware's 411/413)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        for header, value in SECURITY_HEADERS.items():
            response.headers[header] = value
        return response
