"""Tool definitions generated from the operation registry: one schema per operation feeds the
MCP server (api/mcp_server/server.py), `memesh export-schema` and REST validation alike. Each
operation carries its own facts (hints, whether it is a tool); this module only formats them.
"""

from __future__ import annotations

from typing import Any

from api.operations import tool_operations
from graph.ops.kit.operation import Operation


def input_schema(operation: Operation) -> dict[str, Any]:
    """The JSON Schema of an operation's input (pydantic's, as REST validates it)."""
    schema = operation.input_model.model_json_schema(by_alias=True)
    # The model's class name and docstring are for developers; the tool's description says
    # what a client needs.
    schema.pop("title", None)
    schema.pop("description", None)
    return schema


def tool_definition(operation: Operation) -> dict[str, Any]:
    hints = operation.hints
    return {
        "name": operation.name,
        "description": operation.summary,
        "inputSchema": input_schema(operation),
        "annotations": {
            "readOnlyHint": hints.read_only,
            "destructiveHint": hints.destructive,
            "idempotentHint": hints.idempotent,
            "openWorldHint": False,
        },
    }


def tool_definitions(operations: list[Operation] | None = None) -> list[dict[str, Any]]:
    """Every agent-facing operation (or these) as an MCP tool definition, in registry order."""
    return [tool_definition(op) for op in (tool_operations() if operations is None else operations)]
