"""GET /v1/entities and /v1/entities/<name>: the graph's entities, serialised as recall does.

The listing is newest first (last write first, as recall's recent listing) and paginates with
`limit` and `offset`; `total` counts every entity the filters match, so a client knows when it
has read them all.
"""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import envelope
from graph.errors import InvalidParameter, NotFound
from graph.models import Entity, Status
from graph.schemas import DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT, MAX_TYPE
from graph.selectors import entity_outputs

STATUS_ALL = "all"
STATUSES = (Status.ACTIVE.value, Status.ARCHIVED.value, STATUS_ALL)


def entity_json(entity_ids: list[int]) -> list[dict[str, Any]]:
    """The entities as recall's EntityOutput (without `match`: a listing is not a search)."""
    outputs = entity_outputs(Entity.objects.documents(entity_ids))
    return [e.model_dump(mode="json", by_alias=True) for e in outputs]


def _int_param(params: Any, name: str, default: int, low: int, high: int | None) -> int:
    raw = params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise InvalidParameter(f"{name} must be an integer (got {raw!r})", field=name) from None
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise InvalidParameter(f"{name} must be {bound} (got {value})", field=name)
    return value


class EntityListView(APIView):
    def get(self, request: Request) -> Response:
        params = request.query_params
        limit = _int_param(params, "limit", DEFAULT_RECALL_LIMIT, 1, MAX_RECALL_LIMIT)
        offset = _int_param(params, "offset", 0, 0, None)
        status = params.get("status", Status.ACTIVE.value).strip().lower()
        if status not in STATUSES:
            raise InvalidParameter(
                f"status must be one of {', '.join(STATUSES)} (got {status!r})", field="status"
            )
        qs = Entity.objects.all()
        if status != STATUS_ALL:
            qs = qs.filter(status=status)
        if "type" in params:
            type_ = params["type"].strip()
            if not type_ or len(type_) > MAX_TYPE:
                raise InvalidParameter(
                    f"type must be a non-blank entity type of at most {MAX_TYPE} characters",
                    field="type",
                )
            qs = qs.filter(type=type_)
        total = qs.count()
        ids = list(
            qs.order_by("-updated_at", "-id").values_list("id", flat=True)[offset : offset + limit]
        )
        return Response(
            envelope.ok(
                {
                    "entities": entity_json(ids),
                    "total": total,
                    "limit": limit,
                    "offset": offset,
                    "truncated": offset + len(ids) < total,
                }
            )
        )


class EntityDetailView(APIView):
    def get(self, request: Request, name: str) -> Response:
        entity_id = Entity.objects.id_for_name(name)
        if entity_id is None:
            raise NotFound(f'No entity named "{name}"', field="name")
        [entity] = entity_json([entity_id])
        return Response(envelope.ok(entity))
