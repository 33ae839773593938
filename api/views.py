"""DRF views for /v1: each reads JSON, runs one operation, and wraps the result."""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from django.db import connection
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from graph.models import Entity, Status
from graph.operations import CallContext, Operation

HTTP_CONTEXT = CallContext(source_host="http")


class OperationView(APIView):
    operation: ClassVar[Operation]

    def post(self, request: Request) -> Response:
        data = self.operation.run(request.data, HTTP_CONTEXT)
        return Response({"success": True, "data": data})


def operation_view(operation: Operation) -> Any:
    view: type[OperationView] = type(
        f"{operation.name.title()}View", (OperationView,), {"operation": operation}
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
