"""The OpenAPI 3.1 document of the REST API, generated from the operation registry.

Nothing here is a hand-written schema of an operation: request bodies, query parameters and
response payloads are the pydantic models' own JSON Schemas (the same ones REST validates
with), their shared definitions gathered under `components/schemas`. The only hand-written
parts are what no operation defines: the `{success, data}` / `{success: false, errorCode,
error}` envelopes every route answers with (their schemas come from api/envelope.py, beside
the code that builds them), and `GET /v1/health`.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from typing import Any, cast

from django.conf import settings
from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from api import envelope
from api.operations import OPERATIONS
from core.json_limits import MAX_JSON_DEPTH
from graph.ops.kit.operation import Operation
from messaging.errors import ERROR_CODES as AGENT_ERROR_CODES
from proposals.errors import ERROR_CODES as REVIEW_ERROR_CODES

PREFIX = "/v1/"
REF_PREFIX = "#/components/schemas/"

# The reference's stable error codes ("Stable error codes" in the API reference). Adding a code
# is not a breaking change, so a code the server answers with that is missing here is a gap in
# the reference (or the server), not something to paper over in this list.
ERROR_CODES: tuple[str, ...] = (
    "auth.missing-bearer",
    "auth.invalid-token",
    "auth.not-configured",
    "validation.bad-body",
    "validation.bad-param",
    "route.retired",
    "route.not-found",
    "resource.not-found",
    "payload.too-large",
    "operation.failed",
    "llm.not-configured",
    # The trust model (graph/ops/kit/trust/, docs/trust.md): memesh's own, not the reference's.
    "trust.source-required",
    "trust.observe-required",
    # Messages between agents (messaging/errors.py, docs/messages.md): the agent guide's three
    # names as it spells them, and memesh's two.
    *AGENT_ERROR_CODES,
    # The agent-facing review tools (proposals/errors.py, `work_package`, `improvement`).
    *REVIEW_ERROR_CODES,
    "server.internal",
    # Conditions of the database's storage (graph/errors.py's StorageError family).
    "storage.busy",
    "storage.read-only",
    "storage.full",
    "storage.io-error",
    "storage.cannot-open",
    "storage.unavailable",
    # A database memesh did not create (core/errors.py's ForeignDatabase): never written.
    "storage.foreign-database",
)

# status -> description of the error responses every operation route may answer with.
ERROR_RESPONSES: dict[int, str] = {
    400: "The request was rejected: a malformed or invalid body or parameter "
    "(`validation.*`, `validation.bad-recipient` for a principal id; a body nested deeper "
    f"than {MAX_JSON_DEPTH} levels is malformed), or "
    "the operation refused it (`operation.failed`; `trust.source-required`: a hypothesis is "
    "observed without a source; `work_package.no-workspace-root`, "
    "`work_package.ambiguous-workspace-root`: no single workspace root holds the sessions; "
    "`work_package.secret-in-result`: a submitted result holds a secret).",
    401: "Only on a remote-bound listener: the bearer token is missing or wrong.",
    403: "An agent asked to apply, accept or reject a proposal (`review.human-only`): only a "
    "person reviews, at /review/ or with `memesh dream|improvement accept|reject`.",
    404: "No such route (`route.not-found`), or the named entity does not exist "
    "(`resource.not-found`); or no such recipient to deliver to (`recipient_unavailable`).",
    405: "The route does not accept this method.",
    409: "The call would raise a stored memory's trust by another path than `observe` with a "
    "source (`trust.observe-required`); or a message meant for another session "
    "(`intended_for_other_session`); or a work package whose sources changed since it was "
    "prepared (`work_package.stale`) or submitted from another workspace "
    "(`work_package.workspace-mismatch`).",
    413: "The request body exceeds the 1 MB limit (`payload.too-large`); or a message's payload "
    "exceeds 64 KiB (`message.payload-too-large`) or its native envelope 16 KiB "
    "(`native_message_too_large`).",
    500: "Unexpected server-side failure (`server.internal`).",
    503: "The database is busy (`storage.busy`), read-only (`storage.read-only`), cannot be "
    "opened (`storage.cannot-open`), its disk failed (`storage.io-error`) or its server cannot "
    "be reached (`storage.unavailable`), each with a `hint`; or it is not memesh's own "
    "(`storage.foreign-database`: the original MeMesh's or another program's, never "
    "written); or a remote listener has no token configured "
    "(`auth.not-configured`).",
    507: "The disk holding the database is full (`storage.full`, with a `hint`); nothing was "
    "written.",
}

ERROR_ENVELOPE: dict[str, Any] = envelope.failure_schema(list(ERROR_CODES))

HEALTH_DATA: dict[str, Any] = {
    "type": "object",
    "required": ["status", "version", "entities", "vectors", "backend"],
    "properties": {
        "status": {"const": "ok"},
        "version": {"type": "string", "description": "The server's version."},
        "entities": {"type": "integer", "minimum": 0, "description": "Active entities."},
        "vectors": {
            "type": "boolean",
            "description": "Whether the vector index can be searched: the sqlite-vec extension "
            "loaded on SQLite; always on PostgreSQL, where pgvector is required.",
        },
        "backend": {
            "enum": ["sqlite", "postgresql"],
            "description": "The database that answers: SQLite (the embedded default) or "
            "PostgreSQL (a team server, MEMESH_DATABASE_URL).",
        },
    },
}


def rest_operations() -> list[Operation]:
    """The operations served under /v1, in registry order."""
    return [op for op in OPERATIONS.values() if op.rest]


def route_path(operation: Operation) -> str:
    return PREFIX + operation.rest_route


def _ref(name: str) -> dict[str, str]:
    return {"$ref": REF_PREFIX + name}


def _ref_name(ref: dict[str, Any]) -> str:
    return str(ref["$ref"]).removeprefix(REF_PREFIX)


def _model_schemas(
    operations: list[Operation],
) -> tuple[dict[tuple[type[BaseModel], JsonSchemaMode], dict[str, Any]], dict[str, Any]]:
    """Every input and output model's schema, definitions shared under components/schemas.

    pydantic names each definition once across all models (disambiguating equal class names,
    and `-Input`/`-Output` where a model validates differently from how it serializes).
    """
    models: list[tuple[type[BaseModel], JsonSchemaMode]] = []
    for op in operations:
        for key in ((op.input_model, "validation"), (op.output_model, "serialization")):
            if key not in models:
                models.append(key)  # type: ignore[arg-type]
    refs, defs = models_json_schema(models, by_alias=True, ref_template=REF_PREFIX + "{model}")
    components: dict[str, Any] = defs.get("$defs", {})
    for ref in refs.values():
        # An operation model's class name and docstring are for developers (as for the MCP
        # tool schemas): the operation's summary says what a client needs.
        components[_ref_name(ref)].pop("description", None)
    return cast(dict[tuple[type[BaseModel], JsonSchemaMode], dict[str, Any]], refs), components


def _strip_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter that may be null is one that may be omitted: drop the null branch."""
    any_of = schema.get("anyOf")
    if isinstance(any_of, list):
        rest = [s for s in any_of if s != {"type": "null"}]
        if len(rest) != len(any_of) and len(rest) == 1:
            out = {k: v for k, v in schema.items() if k != "anyOf"}
            out.update(rest[0])
            if out.get("default", 0) is None:
                out.pop("default")
            return out
    return schema


def _resolve(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = components[_ref_name(schema)]
    return schema


def _query_parameters(
    op: Operation, model_schema: dict[str, Any], components: dict[str, Any]
) -> list[dict[str, Any]]:
    required = set(model_schema.get("required", []))
    params: list[dict[str, Any]] = []
    for name, prop in model_schema.get("properties", {}).items():
        schema = _strip_null(copy.deepcopy(prop))
        description = schema.pop("description", None)
        schema.pop("title", None)
        param: dict[str, Any] = {"name": name, "in": "query", "required": name in required}
        if description:
            param["description"] = description
        if _resolve(schema, components).get("type") == "array":
            # The server splits a list field's value at commas (`?categories=a,b`).
            param["style"] = "form"
            param["explode"] = False
        param["schema"] = schema
        examples = {
            f"example-{i}": {"value": example[name]}
            for i, example in enumerate(op.examples, start=1)
            if name in example
        }
        if examples:
            param["examples"] = examples
        params.append(param)
    return params


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _error_responses() -> dict[str, Any]:
    return {
        str(status): {"description": description, "content": _json(_ref("ErrorEnvelope"))}
        for status, description in ERROR_RESPONSES.items()
    }


def _operation_item(
    op: Operation,
    refs: dict[tuple[type[BaseModel], JsonSchemaMode], dict[str, Any]],
    components: dict[str, Any],
) -> dict[str, Any]:
    input_ref = refs[(op.input_model, "validation")]
    output_ref = refs[(op.output_model, "serialization")]
    item: dict[str, Any] = {
        "operationId": op.name,
        "summary": op.summary.split(". ")[0].rstrip("."),
        "description": op.summary,
        "responses": {
            "200": {"description": "Success", "content": _json(envelope.ok_schema(output_ref))},
            **_error_responses(),
        },
    }
    if op.method == "GET":
        item["parameters"] = _query_parameters(op, _resolve(input_ref, components), components)
    else:
        model_schema = _resolve(input_ref, components)
        media: dict[str, Any] = {"schema": input_ref}
        if op.examples:
            media["examples"] = {
                f"example-{i}": {"value": example} for i, example in enumerate(op.examples, start=1)
            }
        item["requestBody"] = {
            # An absent body reads as `{}`, so it is optional where every field is.
            "required": bool(model_schema.get("required")),
            "content": {"application/json": media},
        }
    return item


def _health_item() -> dict[str, Any]:
    return {
        "operationId": "health",
        "summary": "Health check + version + entity count",
        "responses": {
            "200": {
                "description": "Success",
                "content": _json(envelope.ok_schema(_ref("HealthData"))),
            },
            **{k: v for k, v in _error_responses().items() if k in {"401", "405", "500", "503"}},
        },
    }


def _extra_paths(components: dict[str, Any]) -> dict[str, Any]:
    """Routes that are not operations, documented by their own modules from pydantic models
    (api/rest/config_views.py); their component schemas are merged into `components`."""
    from api.rest import config_views, dream_views

    modules = (config_views, dream_views)
    refs, defs = models_json_schema(
        [m for module in modules for m in module.OPENAPI_MODELS],
        by_alias=True,
        ref_template=REF_PREFIX + "{model}",
    )
    for name, schema in defs.get("$defs", {}).items():
        if name in components and components[name] != schema:
            raise RuntimeError(f"two different OpenAPI component schemas are named {name}")
        components[name] = schema

    def ref(model: type[BaseModel], mode: JsonSchemaMode) -> dict[str, Any]:
        return dict(refs[(model, mode)])

    paths: dict[str, Any] = {}
    for module in modules:
        paths.update(module.openapi_paths(ref, _error_responses()))
    return paths


def extra_documented_routes() -> set[tuple[str, str]]:
    """(path, method) of the documented routes that are not operations (besides health)."""
    return {(path, method) for path, item in _extra_paths({}).items() for method in item}


@functools.cache
def openapi_document() -> dict[str, Any]:
    """The document served at /v1/openapi.json (built once per process; treat as read-only)."""
    operations = rest_operations()
    refs, components = _model_schemas(operations)
    paths: dict[str, Any] = {PREFIX + "health": {"get": _health_item()}}
    for op in operations:
        paths.setdefault(route_path(op), {})[op.method.lower()] = _operation_item(
            op, refs, components
        )
    paths.update(_extra_paths(components))
    components["ErrorEnvelope"] = ERROR_ENVELOPE
    components["HealthData"] = HEALTH_DATA
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "memesh",
            "version": settings.VERSION,
            "description": (
                "Persistent memory for AI coding agents. Every response is "
                "`{success: true, data}` or `{success: false, errorCode, error}`."
            ),
        },
        "paths": paths,
        "components": {"schemas": _used(paths, components)},
    }


def _refs_in(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield _ref_name(node)
        for value in node.values():
            yield from _refs_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs_in(value)


def _used(paths: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """The components the paths reach (a GET operation's input model is inlined as its query
    parameters, so its own schema is not)."""
    seen: set[str] = set()
    todo = list(_refs_in(paths))
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_refs_in(components[name]))
    return {name: components[name] for name in sorted(seen)}
