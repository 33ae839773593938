"""The tool schemas in the shapes `memesh export-schema` writes: MCP tool definitions as
api/tool_schemas.py builds them, and OpenAI function-calling tools built from the same ones.

OpenAI's strict mode (Structured Outputs) accepts only a subset of JSON Schema, and a tool
sent with `strict: true` and a schema outside it is refused. `strict_allowed` says whether a
schema fits; a tool is marked strict only when it does, and its schema is never rewritten to
make it fit (dropping `minLength` or `default` would tell the model less than REST enforces).

The rule implemented (conservative: the subset documented when strict mode was introduced,
which OpenAI-compatible servers also accept; later additions such as `pattern`, `minimum` or
`maxItems` count as unsupported):

- the root is an object schema (`"type": "object"`), not an `anyOf`;
- every object schema lists all of its properties in `required` and sets
  `additionalProperties: false`; a property the caller may omit cannot be expressed;
- only these keywords appear: type, properties, required, additionalProperties, items, enum,
  const, anyOf, $ref, $defs, definitions, description, title. So no `default`, `minLength`,
  `maxLength`, `pattern`, `format`, `minimum`, `maximum`, `multipleOf`, `minItems`,
  `maxItems`, `allOf`, `oneOf`, `not`, ...;
- `$ref` points into the schema's own `$defs`/`definitions` (or is `#`);
- at most 100 object properties in all and at most 5 levels of object nesting.
"""

from __future__ import annotations

import json
from typing import Any

from api.tool_schemas import tool_definitions

OPENAI_PREFIX = "memesh_"

STRICT_KEYWORDS: frozenset[str] = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "definitions",
        "description",
        "title",
    }
)
STRICT_MAX_PROPERTIES = 100
STRICT_MAX_DEPTH = 5

FORMATS = ("mcp", "openai")
SNAPSHOT_FILES: dict[str, str] = {"mcp": "mcp-tools.json", "openai": "openai-tools.json"}


class _NotStrict(Exception):
    pass


def _check(node: Any, root: dict[str, Any], depth: int, counter: list[int]) -> None:
    if isinstance(node, bool):
        raise _NotStrict("boolean schema")
    if not isinstance(node, dict):
        raise _NotStrict("schema is not an object")
    unknown = set(node) - STRICT_KEYWORDS
    if unknown:
        raise _NotStrict(f"unsupported keyword(s) {sorted(unknown)}")
    ref = node.get("$ref")
    if ref is not None:
        if not isinstance(ref, str) or not (
            ref == "#" or ref.startswith(("#/$defs/", "#/definitions/"))
        ):
            raise _NotStrict(f"$ref {ref!r} outside the schema")
        if ref != "#":
            section, _, name = ref[2:].partition("/")
            defs = root.get(section)
            if not isinstance(defs, dict) or name not in defs:
                raise _NotStrict(f"$ref {ref!r} resolves to nothing")
    types = node.get("type")
    type_list = types if isinstance(types, list) else [types]
    is_object = "object" in type_list or "properties" in node
    if is_object:
        depth += 1
        if depth > STRICT_MAX_DEPTH:
            raise _NotStrict("objects nested too deeply")
        props = node.get("properties", {})
        if not isinstance(props, dict):
            raise _NotStrict("properties is not an object")
        counter[0] += len(props)
        if counter[0] > STRICT_MAX_PROPERTIES:
            raise _NotStrict("too many properties")
        if node.get("additionalProperties") is not False:
            raise _NotStrict("additionalProperties is not false")
        if sorted(node.get("required", [])) != sorted(props):
            raise _NotStrict("not every property is required")
        for child in props.values():
            _check(child, root, depth, counter)
    elif "additionalProperties" in node and node["additionalProperties"] is not False:
        raise _NotStrict("additionalProperties is not false")
    if "items" in node:
        _check(node["items"], root, depth, counter)
    for option in node.get("anyOf", []):
        _check(option, root, depth, counter)


def strict_reason(schema: dict[str, Any]) -> str | None:
    """Why `schema` cannot be sent with OpenAI's `strict: true`, or None when it can."""
    try:
        if not isinstance(schema, dict) or schema.get("type") != "object" or "anyOf" in schema:
            raise _NotStrict("the root is not an object schema")
        counter = [0]
        _check(schema, schema, 0, counter)
        for section in ("$defs", "definitions"):
            defs = schema.get(section, {})
            if not isinstance(defs, dict):
                raise _NotStrict(f"{section} is not an object")
            for definition in defs.values():
                _check(definition, schema, 0, counter)
    except _NotStrict as exc:
        return str(exc)
    return None


def strict_allowed(schema: dict[str, Any]) -> bool:
    """Whether `schema` honestly fits OpenAI's strict mode (the module's rule)."""
    return strict_reason(schema) is None


def openai_tool(mcp_tool: dict[str, Any]) -> dict[str, Any]:
    """One MCP tool definition as an OpenAI function tool, its schema unchanged."""
    parameters = mcp_tool["inputSchema"]
    return {
        "type": "function",
        "function": {
            "name": OPENAI_PREFIX + mcp_tool["name"],
            "description": mcp_tool["description"],
            "parameters": parameters,
            "strict": strict_allowed(parameters),
        },
    }


def openai_tool_definitions() -> list[dict[str, Any]]:
    """Every tool in OpenAI function-calling format, in registry order."""
    return [openai_tool(tool) for tool in tool_definitions()]


def tools_for(fmt: str) -> list[dict[str, Any]]:
    if fmt == "mcp":
        return tool_definitions()
    if fmt == "openai":
        return openai_tool_definitions()
    raise ValueError(f"unknown schema format {fmt!r}; expected one of {', '.join(FORMATS)}")


def render(fmt: str) -> str:
    """The deterministic text of a format: sorted keys, two-space indent, trailing newline."""
    return json.dumps(tools_for(fmt), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
