"""/api/v1/memories…: the peer's REST routes (the trusted-memory service's reference), each
running the same Operation as its `memory_*` MCP tool (graph/ops/peer/tools.py).

Off unless the switch is on (graph/ops/peer/switch.py): then every route answers 404
`route.not-found`, as a route that does not exist. Success is the peer's own JSON, as its MCP
tool returns it (no `{success, data}` envelope); a failure is memesh's failure envelope with
its stable errorCode. The path's `{id}` is the tool's `id` argument; a body that names another
id is refused.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from rest_framework.request import Request
from rest_framework.views import APIView

from api.rest.errors import route_not_found
from api.rest.views import HTTP_CONTEXT
from core.errors import InvalidInput, InvalidParameter
from graph.ops.peer.switch import peer_api_enabled
from graph.ops.peer.tools import peer_operation

_TRUE = ("1", "true", "yes")
_FALSE = ("0", "false", "no", "")


def _answer(tool: str, payload: object) -> HttpResponse:
    return HttpResponse(
        peer_operation(tool).call(payload, HTTP_CONTEXT).model_dump_json(by_alias=True),
        content_type="application/json",
    )


def _query(request: Request) -> dict[str, Any]:
    """GET /api/v1/memories' parameters typed as the tool takes them (the peer sends
    `?namespace=&status=`: an empty value means not given)."""
    payload: dict[str, Any] = {}
    for key, raw in request.query_params.items():
        value = raw.strip()
        if key == "limit" and value:
            try:
                payload[key] = int(value)
            except ValueError:
                raise InvalidParameter(
                    f"limit must be an integer (got {raw!r})", field=key
                ) from None
        elif key == "include_expired":
            if value.lower() not in _TRUE + _FALSE:
                raise InvalidParameter(f"{key} must be true or false (got {raw!r})", field=key)
            payload[key] = value.lower() in _TRUE
        elif value:
            payload[key] = value
    return payload


class _PeerView(APIView):
    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not peer_api_enabled():
            return route_not_found(request)
        return super().dispatch(request, *args, **kwargs)


class MemoriesView(_PeerView):
    def get(self, request: Request) -> HttpResponse:
        try:
            return _answer("memory_list", _query(request))
        except InvalidInput as exc:
            raise InvalidParameter(exc.message, field=exc.field) from None

    def post(self, request: Request) -> HttpResponse:
        return _answer("memory_remember", request.data)


class RecallView(_PeerView):
    def post(self, request: Request) -> HttpResponse:
        return _answer("memory_recall", request.data)


class ConsolidateView(_PeerView):
    def post(self, request: Request) -> HttpResponse:
        return _answer("memory_consolidate", request.data)


class MemoryActionView(_PeerView):
    """POST /api/v1/memories/{id}/supersede | forget | observe."""

    tool: str = ""

    def post(self, request: Request, memory_id: int) -> HttpResponse:
        body = request.data
        if not isinstance(body, dict):
            raise InvalidInput("Request body must be a JSON object")
        if "id" in body and body["id"] != memory_id:
            raise InvalidInput(f"id: the path names memory {memory_id}", field="id")
        return _answer(self.tool, {**body, "id": memory_id})
