"""REST's error handlers: DRF's exception handler and Django's 400/404/500 views answer with
the envelope of api/envelope.py, which decides what each exception means."""

from __future__ import annotations

from typing import Any

from django.http import JsonResponse
from rest_framework.response import Response

from api.envelope import INTERNAL, failure_for, known_failure
from core.errors import Failure


def failure_response(failure: Failure) -> Response:
    """A DRF view's answer for `failure`."""
    return Response(failure.body(), status=failure.status)


def failure_json_response(failure: Failure) -> JsonResponse:
    """A plain Django view's (or middleware's) answer for `failure`."""
    return JsonResponse(failure.body(), status=failure.status)


def drf_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    return failure_response(failure_for(exc, where=str(context.get("view"))))


def route_not_found(request: Any, exception: Exception | None = None) -> JsonResponse:
    return failure_json_response(
        Failure(
            404,
            "route.not-found",
            f"No route for {request.method} {request.path}",
            extra={"code": "NOT_FOUND"},
        )
    )


def server_error(request: Any) -> JsonResponse:
    return failure_json_response(INTERNAL)


def bad_request(request: Any, exception: Exception | None = None) -> JsonResponse:
    failure = known_failure(exception) if exception is not None else None  # a bad Host header
    return failure_json_response(failure or Failure(400, "validation.bad-body", "Bad request"))
