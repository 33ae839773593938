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
