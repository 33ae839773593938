"""REST error mapping: the one place where exceptions become `{success:false, ...}` envelopes."""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import DisallowedHost
from django.db import OperationalError
from django.http import JsonResponse
from rest_framework import exceptions as drf
from rest_framework.response import Response

from graph.errors import MemeshError

logger = logging.getLogger(__name__)


def envelope(error_code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"success": False, "errorCode": error_code, "error": message, **extra}


def _drf_error(exc: drf.APIException) -> tuple[int, dict[str, Any]]:
    if isinstance(exc, drf.ParseError):
        return 400, envelope("validation.bad-body", f"Request body is not valid JSON: {exc.detail}")
    if isinstance(exc, drf.MethodNotAllowed):
        return 405, envelope("route.method-not-allowed", str(exc.detail))
    return exc.status_code, envelope("server.internal", str(exc.detail))


def drf_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    if isinstance(exc, MemeshError):
        extra = {"field": exc.field} if exc.field else {}
        return Response(envelope(exc.error_code, exc.message, **extra), status=exc.http_status)
    if isinstance(exc, drf.APIException):
        status, body = _drf_error(exc)
        return Response(body, status=status)
    if isinstance(exc, OperationalError) and "locked" in str(exc):
        logger.warning("database busy: %s", exc)
        return Response(
            envelope("server.internal", "The database is busy; retry shortly"), status=503
        )
    logger.exception("unexpected error in %s", context.get("view"))
    return Response(envelope("server.internal", "Internal server error"), status=500)


def route_not_found(request: Any, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(
        envelope(
            "route.not-found", f"No route for {request.method} {request.path}", code="NOT_FOUND"
        ),
        status=404,
    )


def server_error(request: Any) -> JsonResponse:
    return JsonResponse(envelope("server.internal", "Internal server error"), status=500)


def bad_request(request: Any, exception: Exception | None = None) -> JsonResponse:
    if isinstance(exception, DisallowedHost):
        # Loopback servers check the Host header so a web page cannot reach them through
        # DNS rebinding; MEMESH_ALLOWED_HOSTS adds names.
        return JsonResponse(
            envelope("request.bad-host", "Host header not allowed (see MEMESH_ALLOWED_HOSTS)"),
            status=400,
        )
    return JsonResponse(envelope("validation.bad-body", "Bad request"), status=400)
