"""Every operation of the graph, in the order transports list them: MCP's tools/list, the
REST routes, the OpenAPI document, `memesh export-schema`. api/operations.py serves these and
the dream app's (which graph cannot import).

Transports are generated from that list and differ only in how they read input, stamp
`source_host`, and render errors.
"""

from __future__ import annotations

from graph.ops import (
    analytics,
    briefing,
    bundle,
    feedback,
    forget,
    graph_view,
    learn,
    memory_list,
    observe,
    pin,
    ping,
    projects,
    recall,
    remember,
    stats,
    supersede,
    task_state,
    why,
)
from graph.ops import (
    user_patterns as patterns,
)
from graph.ops.analytics import planning as analytics_pm
from graph.ops.kit.operation import Operation

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
        stats.STATS,
        projects.PROJECTS,
        # The dashboard's data routes (REST only).
        graph_view.GRAPH,
        graph_view.GRAPH_EVIDENCE,
        analytics.ANALYTICS,
        analytics_pm.ANALYTICS_PM,
    )
}


def tool_operations() -> list[Operation]:
    """The operations that are agent tools (MCP, `memesh export-schema`), in registry order."""
    return [op for op in OPERATIONS.values() if op.tool]
