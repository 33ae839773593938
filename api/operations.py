"""The operations the transports serve, in the order they list them: the graph's
(graph/ops/registry.py), then the dream app's (the demo tour, dream/demo.py; the
work_package and improvement tools, dream/work_package/operation.py and dream/improvement.py) and
the agents app's (`message`, messaging/operation.py), which graph cannot list itself (DESIGN §2:
graph never imports proposals or agents). REST routes, the OpenAPI
document, MCP's tools/list and `memesh export-schema` are generated from this one list.
"""

from __future__ import annotations

from dream import demo, improvement
from dream.work_package import operation as work_package
from graph.ops import registry
from graph.ops.kit.operation import Operation
from messaging import operation as agent_messages

OPERATIONS: dict[str, Operation] = {
    **registry.OPERATIONS,
    **{op.name: op for op in (demo.DEMO_SEED, demo.DEMO_RESET)},
    # The agent guide's review tools: they stage proposals for a person (proposals/).
    **{op.name: op for op in (work_package.WORK_PACKAGE, improvement.IMPROVEMENT)},
    agent_messages.MESSAGE.name: agent_messages.MESSAGE,
}


def tool_operations() -> list[Operation]:
    """The operations that are agent tools (MCP, `memesh export-schema`), in this order."""
    return [op for op in OPERATIONS.values() if op.tool]


def agent_tools() -> list[Operation]:
    """The tools an MCP server lists: memesh's (tool_operations), and with the peer switch on
    (graph/ops/peer/switch.py) the peer's `memory_*` and `ping_memory` after them. The peer's
    `memory_list` then stands for memesh's own on MCP (same name; REST /v1/memory_list and
    `memesh memories` keep memesh's shape). `memesh export-schema` stays memesh's list."""
    from graph.ops.peer.switch import peer_api_enabled
    from graph.ops.peer.tools import PEER_OPERATIONS

    tools = tool_operations()
    if not peer_api_enabled():
        return tools
    peer_names = {op.name for op in PEER_OPERATIONS}
    return [*(op for op in tools if op.name not in peer_names), *PEER_OPERATIONS]
