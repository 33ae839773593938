"""briefing's input and output models, and those of the index alone (`memesh briefing
--index`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from graph.ops.briefing.level import Level
from graph.ops.kit.fields import Output, StrictInput
from graph.ops.kit.scope import ScopeOutput, scope_output
from graph.project_tags import MAX_PROJECT_CHARS


def _project_name(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("must not be blank")
    return value


class BriefingInput(StrictInput):
    project: Annotated[
        str | None,
        Field(min_length=1, max_length=MAX_PROJECT_CHARS),
        AfterValidator(lambda v: None if v is None else _project_name(v)),
    ] = Field(
        default=None,
        description=(
            "Project id, as in the `project:<id>` tag (default: the project the caller works "
            "in — the CLI's working directory or the MCP session's bound project)."
        ),
    )
    level: Level | None = Field(
        default=None,
        description=(
            "`minimal`: decisions, lessons, knowledge and recent activity of the project plus "
            "memories with no project; `standard` adds the fresh task state and an index of "
            "durable memories; `full` adds other projects and global memory. Default: the "
            "`briefing` setting (`memesh config set briefing <level>`), else `minimal`."
        ),
    )

    recipient: Annotated[str, Field(min_length=1, max_length=2000)] | None = Field(
        default=None,
        description=(
            "With an exact `project`: also list the messages from other agents that this "
            "recipient (a principal id) has not fetched yet — ids, senders and times; fetch "
            "each with the `message` tool. Without a recipient a briefing shows no messages."
        ),
    )


class BriefingOutput(Output):
    project: str | None = Field(
        description="The project briefed; null when the caller named none and has none."
    )
    text: str = Field(
        description=(
            "The fenced block, preamble included; empty when the project has nothing to show."
        )
    )
    entity_count: int = Field(
        alias="entityCount",
        description="Memory lines rendered into the block (task-state lines excluded).",
    )
    has_task_state: bool = Field(
        alias="hasTaskState",
        description=(
            "True when the block shows the stated task state as current (fresh, and level "
            "`standard` or `full`); a stale-state flag line does not count."
        ),
    )
    level: Level = Field(description="The level rendered.")
    scope: ScopeOutput = Field(
        description=(
            "Which memories the level draws on: the project's and those with no project; "
            "`full` adds other projects' and global ones."
        )
    )


def briefing_scope(project: str | None, level: Level) -> ScopeOutput:
    full = level == "full"
    return scope_output(project=project, all_projects=full, no_project=True, global_=full)


class BriefingIndexOutput(Output):
    project: str = Field(description="The project whose index this is.")
    text: str = Field(
        description="The fenced index, preamble included; empty when the project has no "
        "durable memories."
    )
    entity_count: int = Field(alias="entityCount", description="Memory lines in the index.")
    truncated: bool = Field(
        description="True when the caps cut the window: more durable memories exist than the "
        "index lists (recall finds them)."
    )
