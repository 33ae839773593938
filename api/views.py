"""DRF views for /v1: each reads JSON, runs one operation, and wraps the result."""

from __future__ import annotations

from typing import Any, ClassVar, cast

from django.conf import settings
from django.db import connection
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from graph.models import Entity, Status
from graph.operations import CallContext, Operation
from graph.project import project_id

# The server's own project (its working directory), as the reference's server uses: what
# `learn` files a lesson under when the request names no project.
HTTP_CONTEXT = CallContext(source_host="http", project=project_id())


class OperationView(APIView):
    operation: ClassVar[Operation]

    def post(self, request: Request) -> Response:
        data = self.operation.run(request.data, HTTP_CONTEXT)
        return Response({"success": True, "data": data})


class QueryOperationView(APIView):
    """A read operation served as GET: its input comes from the query string."""

    operation: ClassVar[Operation]

    def get(self, request: Request) -> Response:
        list_fields = {
            name
            for name, field in self.operation.input_model.model_fields.items()
            if getattr(field.annotation, "__origin__", None) is list
            or "list[" in str(field.annotation)
        }
        payload: dict[str, Any] = {}
        for key, value in request.query_params.items():
            if key in list_fields:
                payload[key] = [v.strip() for v in value.split(",") if v.strip()]
            else:
                payload[key] = value
        data = self.operation.run(payload, HTTP_CONTEXT)
        return Response({"success": True, "data": data})


def operation_view(operation: Operation) -> Any:
    base: type[APIView] = QueryOperationView if operation.method == "GET" else OperationView
    view = cast(
        type[APIView], type(f"{operation.name.title()}View", (base,), {"operation": operation})
    )
    return view.as_view()


class HealthView(APIView):
    def get(self, request: Request) -> Response:
        return Response(
            {
                "success": True,
                "data": {
                    "status": "ok",
                    "version": settings.VERSION,
                    "entities": Entity.objects.filter(status=Status.ACTIVE).count(),
                    "vectors": getattr(connection, "vec_available", False),
                },
            }
        )
