"""Tool definitions generated from the operation registry: one schema per operation feeds the
MCP server (api/mcp_server.py), `memesh export-schema` and REST validation alike.

Annotations follow MCP's hints and say what the tool really does: read-only tools change
nothing a user stored (recall's access counts are bookkeeping, not content); destructive ones
can remove or overwrite what was stored; idempotent ones give the same state when repeated.
"""

from __future__ import annotations

from typing import Any

from graph.operation import Operation
from graph.operations import OPERATIONS

# name -> (readOnlyHint, destructiveHint, idempotentHint)
ANNOTATIONS: dict[str, tuple[bool, bool, bool]] = {
    "remember": (False, False, False),  # appends; `replace` keeps history, nothing is lost
    "recall": (True, False, True),
    "forget": (False, True, True),  # archives, or removes an observation
    "learn": (False, False, False),
    "task_state": (False, True, True),  # "" clears a field
    "briefing": (True, False, True),
    "export": (True, False, True),
    "import": (False, True, False),  # overwrite replaces observations and tags
    "user_patterns": (True, False, True),
    "pin": (False, False, True),
    "unpin": (False, False, True),
}

# Operations that are not agent tools: `why` is the graph half of a CLI command and a REST
# route in the reference, which lists no such tool.
NOT_TOOLS: frozenset[str] = frozenset({"why"})


def input_schema(operation: Operation) -> dict[str, Any]:
    """The JSON Schema of an operation's input (pydantic's, as REST validates it)."""
    schema = operation.input_model.model_json_schema(by_alias=True)
    # The model's class name and docstring are for developers; the tool's description says
    # what a client needs.
    schema.pop("title", None)
    schema.pop("description", None)
    return schema


def tool_definition(operation: Operation) -> dict[str, Any]:
    read_only, destructive, idempotent = ANNOTATIONS[operation.name]
    return {
        "name": operation.name,
        "description": operation.summary,
        "inputSchema": input_schema(operation),
        "annotations": {
            "readOnlyHint": read_only,
            "destructiveHint": destructive,
            "idempotentHint": idempotent,
            "openWorldHint": False,
        },
    }


def tool_operations() -> list[Operation]:
    return [op for name, op in OPERATIONS.items() if name not in NOT_TOOLS]


def tool_definitions() -> list[dict[str, Any]]:
    """Every agent-facing operation as an MCP tool definition, in registry order."""
    return [tool_definition(op) for op in tool_operations()]
