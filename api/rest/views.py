"""DRF views for /v1: each reads JSON, runs one operation, and wraps the result."""

from __future__ import annotations

import logging
import re
from typing import Any, ClassVar, cast

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import envelope
from api.rest.errors import failure_json_response, failure_response
from api.retired import RETIRED
from core import update_check
from core.errors import Failure, InvalidInput, InvalidParameter
from core.redact import redact
from dream import doctor as dream_doctor
from graph import doctor
from graph.models import Entity, Status
from graph.ops.kit.operation import CallContext, Operation
from graph.project import project_id
from hosts import health as host_health

logger = logging.getLogger(__name__)

# The server's own project (its working directory), as the reference's server uses: what
# `learn` files a lesson under when the request names no project. It binds no read: a REST
# read names its `project` (or a `project:` tag) or searches every project.
HTTP_CONTEXT = CallContext(source_host="http", project=project_id(), binds_reads=False)


QUERY_BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


def success_response(data_json: str) -> HttpResponse:
    """The success envelope around an operation's JSON, as it came from pydantic."""
    return HttpResponse(envelope.ok_json(data_json), content_type="application/json")


class OperationView(APIView):
    operation: ClassVar[Operation]

    def post(self, request: Request) -> HttpResponse:
        return success_response(self.operation.run_json(request.data, HTTP_CONTEXT))


_INTEGER = re.compile(r"-?[0-9]+")  # ASCII digits only: int() also takes "1_0" and "٣"


def _query_value(annotation: object, value: str) -> object:
    """A query-string value as the input field of this annotation takes it: a list field's
    comma-separated parts, an integer field's integer and a boolean field's boolean
    (`?cross_project=true`; when the text is one: otherwise the text, for the model to refuse
    by name), any other field's text."""
    if getattr(annotation, "__origin__", None) is list or "list[" in str(annotation):
        return [v.strip() for v in value.split(",") if v.strip()]
    if annotation is bool and value.strip().lower() in QUERY_BOOLEANS:
        return QUERY_BOOLEANS[value.strip().lower()]
    if (annotation is int or annotation == int | None) and _INTEGER.fullmatch(value.strip()):
        return int(value.strip())
    return value


class QueryOperationView(APIView):
    """A read operation served as GET: its input comes from the query string."""

    operation: ClassVar[Operation]

    def get(self, request: Request) -> HttpResponse:
        fields = self.operation.input_model.model_fields
        payload: dict[str, Any] = {
            # An unknown parameter passes through as text: the input model refuses it.
            key: _query_value(fields[key].annotation if key in fields else str, value)
            for key, value in request.query_params.items()
        }
        try:
            data_json = self.operation.run_json(payload, HTTP_CONTEXT)
        except InvalidInput as exc:
            # Query-string input: the reference's code for a bad parameter.
            raise InvalidParameter(exc.message, field=exc.field) from None
        return success_response(data_json)


def operation_view(operation: Operation) -> Any:
    base: type[APIView] = QueryOperationView if operation.method == "GET" else OperationView
    view = cast(
        type[APIView], type(f"{operation.name.title()}View", (base,), {"operation": operation})
    )
    return view.as_view()


def _database_unavailable(exc: Exception) -> Response:
    logger.warning("health: the database cannot be opened: %s", exc)
    return failure_response(Failure(503, "server.internal", "The database cannot be opened"))


class HealthView(APIView):
    def get(self, request: Request) -> Response:
        try:
            connection.ensure_connection()
            entities = Entity.objects.filter(status=Status.ACTIVE).count()
        except (DatabaseError, OSError) as exc:
            # A broken connection must not stay cached for the next request.
            connection.close_if_unusable_or_obsolete()
            return _database_unavailable(exc)
        return Response(
            envelope.ok(
                {
                    "status": "ok",
                    "version": settings.VERSION,
                    "entities": entities,
                    # pgvector is required on PostgreSQL (core/db/postgres/extensions.py).
                    "vectors": connection.vendor == "postgresql"
                    or getattr(connection, "vec_available", False),
                    "backend": connection.vendor,
                }
            )
        )


# --- doctor ------------------------------------------------------------------------------------
# graph.doctor redacts its checks (core/redact.py); `redact` here covers what this view
# adds: the message of a suite that failed to run.


def _flag(request: Request, name: str) -> bool:
    raw = request.query_params.get(name)
    if raw is None:
        return False
    value = raw.strip().lower()
    if value in ("1", "true", "yes"):
        return True
    if value in ("", "0", "false", "no"):
        return False
    raise InvalidParameter(f"{name} must be true or false (got {raw!r})", field=name)


class DoctorView(APIView):
    """The doctor suite. The embedder is probed (a paid call for remote providers) only when
    asked: `?probe=true`."""

    def get(self, request: Request) -> Response:
        probe = _flag(request, "probe")
        try:
            # The server's own user's host files; a project's are the CLI's to check (the
            # server has no caller's directory).
            result = doctor.as_json(
                dream_doctor.run_checks(probe=probe), host_health.integration_checks()
            )
        except Exception as exc:  # the suite itself failed: the reference's 500
            logger.exception("doctor suite failed")
            connection.close_if_unusable_or_obsolete()
            message = redact(f"The doctor suite failed to run: {exc}")
            return failure_response(Failure(500, "server.internal", message))
        result["probed"] = probe
        return Response(envelope.ok(redact(result)))


# --- update status (core/update_check.py) ------------------------------------------------


class UpdateStatusView(APIView):
    def get(self, request: Request) -> Response:
        data = update_check.update_status(cached_only=_flag(request, "cached"))
        return Response(envelope.ok(data))


# --- retired routes (api/retired.py) ----------------------------------------------------------


def retired_view(route: str) -> Any:
    failure = RETIRED[route].rest_failure()

    # API clients send no CSRF token (APIView is exempt by itself; a plain view must say so).
    @csrf_exempt
    def view(request: HttpRequest) -> JsonResponse:
        return failure_json_response(failure)

    return view
