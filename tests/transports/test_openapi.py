"""GET /v1/openapi.json and GET /v1/docs: the OpenAPI document generated from the operation
registry, the HTML page built from it, and schemathesis run against the live app with it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.conf import settings as django_settings
from django.core.handlers.wsgi import WSGIHandler
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from api.rest.openapi import (
    ERROR_CODES,
    extra_documented_routes,
    openapi_document,
    rest_operations,
    route_path,
)
from core.errors import MemeshError
from graph.errors import NameInOtherProject, SourceRequired, StorageError
from graph.ops.registry import OPERATIONS
from messaging.errors import RecipientUnavailable
from proposals.errors import HumanReviewOnly, StalePackage
from tests.helpers import remember
from tests.rest import assert_error, assert_json

pytestmark = pytest.mark.django_db


def _walk(node: Any) -> Iterator[Any]:
    yield node
    if isinstance(node, dict):
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _pointer(doc: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = doc
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


# --- the document -----------------------------------------------------------------------------


def test_openapi_json_is_served(client):
    response = client.get("/v1/openapi.json")

    assert response.status_code == 200
    body = assert_json(response)
    assert body == json.loads(json.dumps(openapi_document()))
    assert body["openapi"].startswith("3.1")


def test_openapi_json_refuses_other_methods_with_the_envelope(client):
    response = client.post("/v1/openapi.json", data="{}", content_type="application/json")

    assert response.status_code == 405
    assert assert_json(response)["success"] is False


def test_every_rest_operation_is_documented_with_its_method():
    doc = openapi_document()
    documented = {(p, m) for p, item in doc["paths"].items() for m in item}

    expected = {(route_path(op), op.method.lower()) for op in rest_operations()}
    assert expected <= documented
    assert documented - expected == {("/v1/health", "get"), *extra_documented_routes()}
    assert not any(route_path(op) in doc["paths"] for op in OPERATIONS.values() if not op.rest)
    operation_ids = [op["operationId"] for item in doc["paths"].values() for op in item.values()]
    assert len(operation_ids) == len(set(operation_ids))


def test_every_ref_resolves_and_every_component_is_used():
    doc = openapi_document()
    refs = {n["$ref"] for n in _walk(doc) if isinstance(n, dict) and "$ref" in n}

    for ref in refs:
        assert isinstance(_pointer(doc, ref), dict), ref
    assert not any(isinstance(n, dict) and "$defs" in n for n in _walk(doc))
    used = {ref.rsplit("/", 1)[1] for ref in refs}
    assert used == set(doc["components"]["schemas"])


def test_bodies_and_parameters_come_from_the_input_models():
    doc = openapi_document()
    for op in rest_operations():
        item = doc["paths"][route_path(op)][op.method.lower()]
        fields = {f.alias or name for name, f in op.input_model.model_fields.items()}
        assert "200" in item["responses"]
        for status in ("400", "404", "405", "413", "500"):
            error = item["responses"][status]["content"]["application/json"]["schema"]
            assert _pointer(doc, error["$ref"])["properties"]["errorCode"]["enum"] == list(
                ERROR_CODES
            )
        if op.method == "GET":
            assert "requestBody" not in item
            assert {p["name"] for p in item["parameters"]} == fields
            assert all(p["in"] == "query" for p in item["parameters"])
        else:
            media = item["requestBody"]["content"]["application/json"]
            schema = _pointer(doc, media["schema"]["$ref"])
            assert set(schema["properties"]) == fields
            assert schema["additionalProperties"] is False
            assert [e["value"] for e in media["examples"].values()] == op.examples


def test_every_storage_condition_is_in_the_document_and_in_docs_api_md_with_its_status():
    doc = openapi_document()
    docs_api = (Path(django_settings.BASE_DIR) / "docs" / "api.md").read_text()
    conditions = StorageError.__subclasses__()
    assert {c.error_code for c in conditions} == {
        "storage.busy",
        "storage.read-only",
        "storage.full",
        "storage.io-error",
        "storage.cannot-open",
        "storage.unavailable",
    }
    for condition in conditions:
        assert condition.error_code in ERROR_CODES
        for op in rest_operations():
            responses = doc["paths"][route_path(op)][op.method.lower()]["responses"]
            assert condition.error_code in responses[str(condition.http_status)]["description"]
        assert f"| `{condition.error_code}` | {condition.http_status} |" in docs_api
    envelope = doc["components"]["schemas"]["ErrorEnvelope"]
    assert "storage" in envelope["properties"]["hint"]["description"]


def _memesh_errors(cls: type[MemeshError]) -> Iterator[type[MemeshError]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _memesh_errors(sub)


# The modules of the errors an operation raises. Not in the document: a remember naming a
# memory of another project is refused over MCP only (docs/mcp.md); REST files it anew.
OPERATION_ERROR_MODULES = ("graph.errors", "proposals.errors", "messaging.errors")
NOT_OVER_REST = {NameInOtherProject}


def test_every_error_an_operation_raises_is_in_the_document_with_its_status():
    doc = openapi_document()
    errors = [
        e
        for e in _memesh_errors(MemeshError)
        if e.__module__ in OPERATION_ERROR_MODULES and e not in NOT_OVER_REST
    ]
    assert {HumanReviewOnly, StalePackage, SourceRequired, RecipientUnavailable} <= set(errors)
    for error in errors:
        assert error.error_code in ERROR_CODES, error
        for op in rest_operations():
            responses = doc["paths"][route_path(op)][op.method.lower()]["responses"]
            assert str(error.http_status) in responses, (error, op.name)


def test_documented_examples_validate_against_the_input_models():
    for op in rest_operations():
        for example in op.examples:
            op.input_model.model_validate(example)


def test_the_document_is_valid_json_schema_2020_12():
    from jsonschema import Draft202012Validator

    doc = openapi_document()
    for name, schema in doc["components"]["schemas"].items():
        # Resolve component refs against the document itself.
        Draft202012Validator.check_schema({**schema, "$defs": {}}), name


# --- the HTML docs ----------------------------------------------------------------------------


def test_docs_page_lists_every_route_with_fields_and_examples(client):
    response = client.get("/v1/docs")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert "<script" not in html
    assert "GET /v1/health" in html.replace("</span> ", " ").replace(
        '<span class="method method-GET">', ""
    )
    for op in rest_operations():
        assert f"{op.method}</span> {route_path(op)}</h2>" in html
        for name in op.input_model.model_fields:
            assert f"<code>{name}</code>" in html
    assert "&quot;auth-decision&quot;" in html  # remember's example body, escaped
    assert "GET /v1/patterns?categories=workflow%2CworkSchedule" in html


def test_docs_page_escapes_what_it_renders(client, monkeypatch):
    from api.rest import docs_views

    evil = "<img src=x onerror=alert(1)>"
    real = docs_views.docs_context

    def context() -> dict[str, Any]:
        ctx = real()
        ctx["routes"][1]["summary"] = evil
        ctx["routes"][1]["fields"][0]["description"] = evil
        ctx["routes"][1]["examples"] = [json.dumps({"name": evil})]
        return ctx

    monkeypatch.setattr(docs_views, "docs_context", context)
    html = client.get("/v1/docs").content.decode()

    assert "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_docs_page_refuses_other_methods(client):
    response = client.post("/v1/docs", data="{}", content_type="application/json")

    assert response.status_code == 405


# --- schemathesis against the running app -----------------------------------------------------

_APP = WSGIHandler()
schema = schemathesis.openapi.from_dict(openapi_document())
schema.app = _APP


@pytest.fixture
def _some_memories() -> None:
    remember("auth-decision", "Chose JWT for authentication", type="decision")
    remember("db-choice", "Use PostgreSQL", tags=["project:myapp"])


@pytest.fixture
def _private_config(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """POST /v1/config writes MEMESH_HOME/config.json and /v1/config/test calls providers: the
    fuzzing gets its own home, and every provider URL points at a closed loopback port."""
    monkeypatch.setattr(django_settings, "MEMESH_HOME", tmp_path)
    for name in ("MEMESH_OPENAI_BASE_URL", "MEMESH_ANTHROPIC_BASE_URL", "OLLAMA_HOST"):
        monkeypatch.setattr(django_settings, name, "http://127.0.0.1:9")
    monkeypatch.setattr(django_settings, "MEMESH_LLM_TIMEOUT_SECONDS", 2.0)


@schema.parametrize()
@settings(
    max_examples=20,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_api_conforms_to_its_openapi_document(
    case: schemathesis.Case,
    keep_test_connection: None,
    _some_memories: None,
    _private_config: None,
) -> None:
    case.call_and_validate(
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ]
    )


def test_errors_match_the_documented_envelope(client):
    # A guard on the shapes the fuzzing cannot reach on its own: 404 and 413.
    import jsonschema

    envelope = openapi_document()["components"]["schemas"]["ErrorEnvelope"]
    missing = client.get("/v1/no-such-route")
    jsonschema.validate(assert_error(missing, 404, "route.not-found"), envelope)
    too_big = client.post(
        "/v1/remember", data="x" * (1024 * 1024 + 1), content_type="application/json"
    )
    jsonschema.validate(assert_error(too_big, 413, "payload.too-large"), envelope)


def test_document_is_cached():
    assert openapi_document() is openapi_document()
