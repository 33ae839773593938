"""The memory operations, each defined once: schema in, one service or selector call, schema out.

Transports (REST now; MCP and the CLI later) are generated from `OPERATIONS` and differ only in
how they read input, stamp `source_host`, and render errors.
"""

from __future__ import annotations

from graph import schemas, selectors, services
from graph.operation import CallContext, Operation, describe_validation_error
from graph.ops import briefing, bundle, learn, patterns, pin, task_state, why

__all__ = ["OPERATIONS", "CallContext", "Operation", "describe_validation_error"]


def _remember(data: schemas.RememberInput, ctx: CallContext) -> schemas.RememberOutput:
    # Filing a memory under the caller's project unasked is the agent guide's rule for agent
    # transports; the reference's remember tags nothing by itself.
    return services.entity_remember(
        data=data,
        source_host=ctx.source_host,
        project=ctx.project if ctx.guide_rules else None,
        require_why=ctx.guide_rules,
    )


def _recall(data: schemas.RecallInput, ctx: CallContext) -> schemas.RecallOutput:
    return selectors.entity_recall(data=data)


def _forget(data: schemas.ForgetInput, ctx: CallContext) -> schemas.ForgetOutput:
    return services.entity_forget(data=data)


REMEMBER = Operation(
    name="remember",
    summary=(
        "Store knowledge as an entity with observations, tags and relations. Calling it "
        "again with an existing name appends (observations added, tags deduplicated, the "
        "original type kept)."
    ),
    input_model=schemas.RememberInput,
    output_model=schemas.RememberOutput,
    handler=_remember,
    examples=[
        {
            "name": "auth-decision",
            "type": "decision",
            "observations": [
                "Chose JWT for authentication",
                "Using RS256 algorithm for token signing",
            ],
            "tags": ["project:myapp", "topic:auth"],
            "why": "Stateless tokens let every service verify a request on its own",
        }
    ],
)
RECALL = Operation(
    name="recall",
    summary=(
        "Search stored knowledge: terms are OR-ed and ranked by relevance, then by recency, "
        "use, confidence and impact. Call with no query to list recent memories."
    ),
    input_model=schemas.RecallInput,
    output_model=schemas.RecallOutput,
    handler=_recall,
    examples=[{"query": "authentication"}, {"query": "auth", "tag": "project:myapp"}, {}],
)
FORGET = Operation(
    name="forget",
    summary=(
        "Archive an entity (soft delete; recall hides it unless include_archived), or "
        "remove one observation from it."
    ),
    input_model=schemas.ForgetInput,
    output_model=schemas.ForgetOutput,
    handler=_forget,
    examples=[{"name": "auth-decision"}],
)

OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        REMEMBER,
        RECALL,
        FORGET,
        learn.LEARN,
        task_state.TASK_STATE,
        briefing.OPERATION,
        bundle.EXPORT,
        bundle.IMPORT,
        patterns.USER_PATTERNS,
        *pin.OPERATIONS,
        why.WHY,
    )
}
