"""GET /v1/openapi.json (the generated OpenAPI document) and GET /v1/docs (the same, as HTML).

Both are plain DRF views so a wrong method gets the usual 405 envelope.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from rest_framework.request import Request
from rest_framework.views import APIView

from api.rest.openapi import REF_PREFIX, openapi_document

# JSON Schema keywords shown as a field's limits, with how to say them.
_LIMITS: tuple[tuple[str, str], ...] = (
    ("minLength", "min length {}"),
    ("maxLength", "max length {}"),
    ("minimum", "≥ {}"),
    ("maximum", "≤ {}"),
    ("exclusiveMinimum", "> {}"),
    ("exclusiveMaximum", "< {}"),
    ("minItems", "min items {}"),
    ("maxItems", "max items {}"),
    ("pattern", "pattern {}"),
)


def _resolve(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = components[str(schema["$ref"]).removeprefix(REF_PREFIX)]
    return schema


def _branches(schema: dict[str, Any], components: dict[str, Any]) -> list[dict[str, Any]]:
    schema = _resolve(schema, components)
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(alternatives, list):
        return [b for alt in alternatives for b in _branches(alt, components)]
    return [schema]


def type_label(schema: dict[str, Any], components: dict[str, Any]) -> str:
    """A short human label: `string`, `array of string`, `"a" | "b"`, `integer | null`."""
    labels: list[str] = []
    for branch in _branches(schema, components):
        if "enum" in branch:
            label = " | ".join(json.dumps(v) for v in branch["enum"])
        elif "const" in branch:
            label = json.dumps(branch["const"])
        elif branch.get("type") == "array":
            label = "array of " + type_label(branch.get("items", {}), components)
        elif isinstance(branch.get("type"), list):
            label = " | ".join(branch["type"])
        else:
            label = str(branch.get("type", "any"))
        if label not in labels:
            labels.append(label)
    return " | ".join(labels)


def limits_label(schema: dict[str, Any], components: dict[str, Any]) -> str:
    parts: list[str] = []
    for branch in [_resolve(schema, components), *_branches(schema, components)]:
        for key, template in _LIMITS:
            if key in branch:
                text = template.format(branch[key])
                if text not in parts:
                    parts.append(text)
        items = branch.get("items")
        if branch.get("type") == "array" and isinstance(items, dict):
            for key, template in _LIMITS:
                if key in _resolve(items, components):
                    parts.append("each " + template.format(_resolve(items, components)[key]))
    if "default" in schema:
        parts.append("default " + json.dumps(schema["default"]))
    return ", ".join(parts)


def _fields(model_schema: dict[str, Any], components: dict[str, Any]) -> list[dict[str, Any]]:
    required = set(model_schema.get("required", []))
    return [
        {
            "name": name,
            "type": type_label(prop, components),
            "required": name in required,
            "description": prop.get("description", ""),
            "limits": limits_label(prop, components),
        }
        for name, prop in model_schema.get("properties", {}).items()
    ]


def _query_string(example: dict[str, Any]) -> str:
    pairs = {k: ",".join(map(str, v)) if isinstance(v, list) else v for k, v in example.items()}
    return "?" + urlencode(pairs) if pairs else ""


def docs_context() -> dict[str, Any]:
    doc = openapi_document()
    components: dict[str, Any] = doc["components"]["schemas"]
    routes: list[dict[str, Any]] = []
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            route: dict[str, Any] = {
                "method": method.upper(),
                "path": path,
                "summary": operation.get("description") or operation.get("summary", ""),
                "fields": [],
                "examples": [],
                "location": "query" if method == "get" else "body",
            }
            body = operation.get("requestBody")
            if body:
                media = body["content"]["application/json"]
                route["fields"] = _fields(_resolve(media["schema"], components), components)
                route["examples"] = [
                    json.dumps(ex["value"], indent=2, ensure_ascii=False)
                    for ex in media.get("examples", {}).values()
                ]
            elif operation.get("parameters"):
                params = operation["parameters"]
                route["fields"] = _fields(
                    {
                        "properties": {
                            p["name"]: {**p["schema"], "description": p.get("description", "")}
                            for p in params
                        },
                        "required": [p["name"] for p in params if p.get("required")],
                    },
                    components,
                )
                examples: dict[str, dict[str, Any]] = {}
                for p in params:
                    for key, ex in p.get("examples", {}).items():
                        examples.setdefault(key, {})[p["name"]] = ex["value"]
                route["examples"] = [
                    f"{method.upper()} {path}{_query_string(ex)}" for ex in examples.values()
                ] or [f"{method.upper()} {path}"]
            routes.append(route)
    return {"title": doc["info"]["title"], "version": doc["info"]["version"], "routes": routes}


class OpenAPIView(APIView):
    def get(self, request: Request) -> HttpResponse:
        return JsonResponse(openapi_document())


class DocsView(APIView):
    def get(self, request: Request) -> HttpResponse:
        return render(request._request, "api/docs.html", docs_context())
