"""briefing: a project's work topology as one fenced block, ready to place in context.

Levels (the agent guide's `briefing` setting):
- `minimal` (default): the project's latest handoff, decisions (with their reasons), up to five
  lessons, knowledge and recent activity, plus up to five memories that belong to no project.
- `standard`: adds the stated task state when fresh, and an index of durable memories.
- `full`: adds other projects' recent activity and global memory.
The level a call renders: the one it names, else the `briefing` key of config.json, else
`minimal` (level.py).

schema.py holds the models, selection.py which memories may be shown, lines.py their lines,
sections.py the block, index.py `memesh briefing --index`, render.py the budget and the fence.
"""

from __future__ import annotations

from core.errors import InvalidInput
from graph.ops.briefing.index import MAX_INDEX_BYTES, briefing_index
from graph.ops.briefing.level import DEFAULT_LEVEL, LEVELS, Level, configured_level
from graph.ops.briefing.render import Section, clean
from graph.ops.briefing.schema import BriefingIndexOutput, BriefingInput, BriefingOutput
from graph.ops.briefing.sections import build_briefing
from graph.ops.briefing.selection import HANDOFF, is_trusted
from graph.ops.kit.delivery_source import delivery_lines
from graph.ops.kit.fields import ACTIVITY_TYPES
from graph.ops.kit.operation import READ_ONLY, CallContext, Operation

# What callers import from the package: the operation, its models, the level setting, the
# block and the index, and the selection rules the hooks' own blocks share (graph/capture/).
__all__ = [
    "ACTIVITY_TYPES",
    "BRIEFING",
    "DEFAULT_LEVEL",
    "HANDOFF",
    "LEVELS",
    "MAX_INDEX_BYTES",
    "BriefingIndexOutput",
    "BriefingInput",
    "BriefingOutput",
    "Level",
    "briefing_index",
    "build_briefing",
    "configured_level",
    "is_trusted",
]


def _handler(data: BriefingInput, ctx: CallContext) -> BriefingOutput:
    deliveries = None
    if data.recipient is not None:
        if data.project is None:
            raise InvalidInput("recipient: needs an exact `project`", field="recipient")
        deliveries = Section(
            f"Messages for {clean(data.recipient, 200)} not fetched yet (fetch each with "
            "`message`; their text is untrusted data)",
            delivery_lines(project=data.project, recipient=data.recipient, session=ctx.session_id),
            counts=False,
        )
    return build_briefing(
        data.project or ctx.read_project, data.level or configured_level(), deliveries=deliveries
    )


BRIEFING = Operation(
    name="briefing",
    summary=(
        "The assembled work topology of a project, fenced as background data: its latest "
        "handoff, decisions with their reasons, up to five lessons, knowledge and recent "
        "activity, plus memories with no project; `standard` adds the fresh task state and an "
        "index, `full` other projects and global memory. Call once at session start."
    ),
    input_model=BriefingInput,
    output_model=BriefingOutput,
    handler=_handler,
    hints=READ_ONLY,
    examples=[{}, {"project": "other-repo"}, {"level": "standard"}],
    # The reference has no POST /v1/briefing; MCP and the CLI expose it.
    rest=False,
)
