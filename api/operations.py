"""The operations the transports serve, in the order they list them: the graph's
(graph/ops/registry.py) and then the dream app's (the demo tour, proposals/demo.py), which
graph cannot list itself (DESIGN §2: graph never imports proposals). REST routes, the OpenAPI
document, MCP's tools/list and `memesh export-schema` are generated from this one list.
"""

from __future__ import annotations

from graph.ops import registry
from graph.ops.operation import Operation
from proposals import demo

OPERATIONS: dict[str, Operation] = {
    **registry.OPERATIONS,
    **{op.name: op for op in (demo.DEMO_SEED, demo.DEMO_RESET)},
}


def tool_operations() -> list[Operation]:
    """The operations that are agent tools (MCP, `memesh export-schema`), in this order."""
    return [op for op in OPERATIONS.values() if op.tool]
