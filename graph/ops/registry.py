"""Every operation memesh exposes, in the order transports list them: MCP's tools/list, the
REST routes, the OpenAPI document, `memesh export-schema`.

Transports are generated from `OPERATIONS` and differ only in how they read input, stamp
`source_host`, and render errors.
"""

from __future__ import annotations

from graph.ops import (
    briefing,
    bundle,
    feedback,
    forget,
    learn,
    memory_list,
    observe,
    patterns,
    pin,
    ping,
    recall,
    remember,
    supersede,
    task_state,
    why,
)
from graph.ops.operation import Operation

OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        remember.REMEMBER,
        recall.RECALL,
        feedback.FEEDBACK,
        forget.FORGET,
        learn.LEARN,
        task_state.TASK_STATE,
        briefing.BRIEFING,
        bundle.EXPORT,
        bundle.IMPORT,
        patterns.USER_PATTERNS,
        pin.PIN,
        pin.UNPIN,
        why.WHY,
        observe.OBSERVE,
        supersede.SUPERSEDE,
        memory_list.MEMORY_LIST,
        ping.PING,
    )
}


def tool_operations() -> list[Operation]:
    """The operations that are agent tools (MCP, `memesh export-schema`), in registry order."""
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
