"""DRF views of the dream workflow (/v1/dream/*, /v1/tasks/<id>): read input, call one
proposals service or selector, wrap the result. Their OpenAPI paths are documented here too
(`openapi_paths`), from the pydantic models in proposals/schemas.py."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import envelope
from dream import dreamer
from dream.tasks import KIND_RUN, task_run_enqueue
from proposals import decisions, schemas, selectors
from proposals.models import ReviewChannel


def _ok(data: Any) -> Response:
    return Response(envelope.ok(data))


def _origin(request: Request) -> str:
    return str(request.META.get("REMOTE_ADDR", ""))


class ProposalListView(APIView):
    def get(self, request: Request) -> Response:
        status = request.query_params.get("status", "pending").strip().lower()
        return _ok(selectors.proposal_list(status))


class ProposalDetailView(APIView):
    def get(self, request: Request, proposal_id: int) -> Response:
        return _ok(selectors.proposal_detail(proposal_id))


class ProposalAcceptView(APIView):
    def post(self, request: Request, proposal_id: int) -> Response:
        return _ok(
            decisions.proposal_accept(
                proposal_id, channel=ReviewChannel.API, origin=_origin(request)
            )
        )


class ProposalRejectView(APIView):
    def post(self, request: Request, proposal_id: int) -> Response:
        data = schemas.parse(schemas.RejectInput, request.data)
        return _ok(
            decisions.proposal_reject(
                proposal_id, reason=data.reason, channel=ReviewChannel.API, origin=_origin(request)
            )
        )


class DreamRunView(APIView):
    def post(self, request: Request) -> Response:
        data: schemas.DreamRunInput = schemas.parse(schemas.DreamRunInput, request.data)
        params: dict[str, Any] = {
            "project": data.project,
            "window_days": data.windowDays,
            "max_llm_calls": data.maxLlmCalls,
            "validate": data.validate_,
            "dry_run": data.dryRun,
        }
        if data.async_:
            queued = task_run_enqueue(kind=KIND_RUN, params=params)
            return _ok({"taskId": queued.task_id})
        return _ok(dreamer.dream_run(**params))


class TaskRunView(APIView):
    def get(self, request: Request, task_id: uuid.UUID) -> Response:
        return _ok(selectors.task_run_detail(task_id))


# --- OpenAPI ---------------------------------------------------------------------------------

_ID_PARAM = {
    "name": "proposal_id",
    "in": "path",
    "required": True,
    "description": "The proposal's id.",
    "schema": {"type": "integer", "minimum": 1},
}


OPENAPI_MODELS: list[tuple[type[BaseModel], Literal["validation", "serialization"]]] = [
    (schemas.DreamRunInput, "validation"),
    (schemas.RejectInput, "validation"),
    (schemas.DreamRunOutput, "serialization"),
    (schemas.DreamTaskQueued, "serialization"),
    (schemas.ProposalListItem, "serialization"),
    (schemas.ProposalDetail, "serialization"),
    (schemas.AcceptOutput, "serialization"),
    (schemas.RejectOutput, "serialization"),
    (schemas.TaskRunOutput, "serialization"),
]


def openapi_paths(
    ref: Callable[[type[BaseModel], Literal["validation", "serialization"]], dict[str, Any]],
    error_responses: dict[str, Any],
) -> dict[str, Any]:
    """The OpenAPI path items of these routes; `ref(model, mode)` names a model's component
    (OPENAPI_MODELS lists them) and `error_responses` are the shared error responses."""

    def ok(data: dict[str, Any]) -> dict[str, Any]:
        schema = envelope.ok_schema(data)
        return {"description": "Success", "content": {"application/json": {"schema": schema}}}

    def item(
        op_id: str,
        summary: str,
        success: dict[str, Any],
        errors: tuple[str, ...],
        **extra: Any,
    ) -> dict[str, Any]:
        return {
            "operationId": op_id,
            "summary": summary,
            "responses": {"200": ok(success), **{s: error_responses[s] for s in errors}},
            **extra,
        }

    def body(model: type[BaseModel]) -> dict[str, Any]:
        return {
            "required": False,
            "content": {"application/json": {"schema": ref(model, "validation")}},
        }

    def out(model: type[BaseModel]) -> dict[str, Any]:
        return ref(model, "serialization")

    common = ("400", "404", "405", "413", "500", "503")
    paths = {
        "/v1/dream/proposals": {
            "get": item(
                "dreamProposalList",
                "List dream proposals (default: pending)",
                {"type": "array", "items": out(schemas.ProposalListItem)},
                common,
                parameters=[
                    {
                        "name": "status",
                        "in": "query",
                        "required": False,
                        "schema": {
                            "type": "string",
                            "enum": list(selectors.STATUS_FILTERS),
                            "default": "pending",
                        },
                    }
                ],
            )
        },
        "/v1/dream/proposals/{proposal_id}": {
            "get": item(
                "dreamProposalDetail",
                "A proposal in full",
                out(schemas.ProposalDetail),
                common,
                parameters=[_ID_PARAM],
            )
        },
        "/v1/dream/proposals/{proposal_id}/accept": {
            "post": item(
                "dreamProposalAccept",
                "Apply a pending proposal",
                out(schemas.AcceptOutput),
                common,
                parameters=[_ID_PARAM],
            )
        },
        "/v1/dream/proposals/{proposal_id}/reject": {
            "post": item(
                "dreamProposalReject",
                "Reject a pending proposal (its sources are untouched)",
                out(schemas.RejectOutput),
                common,
                parameters=[_ID_PARAM],
                requestBody=body(schemas.RejectInput),
            )
        },
        "/v1/dream/run": {
            "post": item(
                "dreamRun",
                "Run a dream pass (synchronously, or queued with async)",
                {"oneOf": [out(schemas.DreamRunOutput), out(schemas.DreamTaskQueued)]},
                common,
                requestBody=body(schemas.DreamRunInput),
            )
        },
        "/v1/tasks/{task_id}": {
            "get": item(
                "taskRunDetail",
                "Report on a queued task",
                out(schemas.TaskRunOutput),
                common,
                parameters=[
                    {
                        "name": "task_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "format": "uuid"},
                    }
                ],
            )
        },
    }
    return paths
