"""GET /v1/entities and /v1/entities/<name>: thin views over graph/ops/entity_list.py."""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import envelope
from graph.ops import entity_list


class EntityListView(APIView):
    def get(self, request: Request) -> Response:
        data = entity_list.entity_list_input(request.query_params)
        result = entity_list.entity_list(data=data)
        return Response(envelope.ok(result.model_dump(mode="json", by_alias=True)))


class EntityDetailView(APIView):
    def get(self, request: Request, name: str) -> Response:
        entity = entity_list.entity_get(name=name)
        return Response(envelope.ok(entity.model_dump(mode="json", by_alias=True)))
