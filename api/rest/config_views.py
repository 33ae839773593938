"""DRF views of /v1/config, /v1/config/test and /v1/telemetry: each calls one service of
core/config_sections.py, dream/capabilities.py or dream/telemetry.py and wraps the result in
the envelope.

`openapi_paths()` documents these routes for api/rest/openapi.py (they are not operations: the
reference keeps configuration off the MCP tool list).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import envelope
from core import config_sections
from dream import capabilities, telemetry
from dream.llm.probe import ConfigTestInput, ConfigTestOutput
from dream.tasks import config_saved
from graph.config_sections import update_model
from proposals.schemas import documented


class ConfigView(APIView):
    def get(self, request: Request) -> Response:
        return Response(envelope.ok(capabilities.config_get()))

    def post(self, request: Request) -> Response:
        return Response(envelope.ok(config_saved(config_sections.config_change(request.data))))


class ConfigTestView(APIView):
    def post(self, request: Request) -> Response:
        return Response(envelope.ok(capabilities.config_test(request.data)))


class TelemetryView(APIView):
    def get(self, request: Request) -> Response:
        window = telemetry.parse_window(request.query_params.get("window"))
        return Response(envelope.ok(telemetry.telemetry_summary(window_days=window)))


# --- the OpenAPI description of these routes ----------------------------------------------------


RefFor = Callable[[type[BaseModel], Literal["validation", "serialization"]], dict[str, Any]]


ConfigGetOutput = documented(capabilities.ConfigView, "ConfigGetOutput")
TelemetryOutput = documented(telemetry.TelemetrySummary, "TelemetryOutput")


# The update as the apps' config sections declare it (core/config_sections.py).
CONFIG_UPDATE = update_model()

OPENAPI_MODELS: list[tuple[type[BaseModel], Literal["validation", "serialization"]]] = [
    (ConfigGetOutput, "serialization"),
    (CONFIG_UPDATE, "validation"),
    (ConfigTestInput, "validation"),
    (ConfigTestOutput, "serialization"),
    (TelemetryOutput, "serialization"),
]

MASKED_CONFIG: dict[str, Any] = {
    "type": "object",
    "description": "The stored configuration after the update, every key masked as ***; "
    "with `reindexTaskId` when the embedder changed (a background reindex was queued: "
    "GET /v1/tasks/<id>).",
}


def openapi_paths(ref: RefFor, errors: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI path items of these routes; `ref(model, mode)` names a model's component
    (OPENAPI_MODELS lists them) and `errors` are the shared error responses."""

    def ok(schema: dict[str, Any]) -> dict[str, Any]:
        return {
            "200": {
                "description": "Success",
                "content": {"application/json": {"schema": envelope.ok_schema(schema)}},
            },
            **errors,
        }

    def body(model: type[BaseModel], examples: list[dict[str, Any]]) -> dict[str, Any]:
        media = {
            "schema": ref(model, "validation"),
            "examples": {f"example-{i}": {"value": e} for i, e in enumerate(examples, start=1)},
        }
        return {"required": False, "content": {"application/json": media}}

    return {
        "/v1/config": {
            "get": {
                "operationId": "configGet",
                "summary": "Current config (every key masked) and detected capabilities",
                "responses": ok(ref(ConfigGetOutput, "serialization")),
            },
            "post": {
                "operationId": "configUpdate",
                "summary": "Save a partial config update; fields sent as null are removed",
                "requestBody": body(
                    CONFIG_UPDATE,
                    [{"language": "zh-TW"}, {"llm": {"provider": "ollama", "model": "llama3.2"}}],
                ),
                "responses": ok(MASKED_CONFIG),
            },
        },
        "/v1/config/test": {
            "post": {
                "operationId": "configTest",
                "summary": "Probe a provider's model list; a failed probe is data (valid: false)",
                "requestBody": body(ConfigTestInput, [{"provider": "ollama"}]),
                "responses": ok(ref(ConfigTestOutput, "serialization")),
            }
        },
        "/v1/telemetry": {
            "get": {
                "operationId": "telemetry",
                "summary": "Per-flow LLM telemetry scorecard for the last window days",
                "parameters": [
                    {
                        "name": "window",
                        "in": "query",
                        "required": False,
                        "description": "Look-back window in days (1–365, default 30).",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 365},
                    }
                ],
                "responses": ok(ref(TelemetryOutput, "serialization")),
            }
        },
    }
