"""projects: the distinct projects the active memories are filed under, with per-project counts
(GET /v1/projects; an MCP tool and `memesh projects`).

An active entity belongs to one project: that of its first `project:<id>` tag (the oldest), or,
when it has none, the name-prefix heuristic — `lesson-<project>-<pattern>` with `<pattern>`
one of LEGACY_LESSON_PATTERNS, the names MeMesh gave lessons before lessons carried project
tags (they arrive in imported bundles; memesh's own lessons are tagged, graph/ops/learn.py),
the project at least two characters long. Entities of no project are not listed.

Per project: `count` (entities), `types` (most common first, ties by name), `source` (`tag`,
`heuristic`, or `mixed` when both assigned some). Projects come most entities first, ties by
name. REST answers with the bare list (the reference); MCP wraps it as `{"projects": [...]}`,
since a tool's result must be a JSON object.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Literal

from pydantic import Field, RootModel

from graph.models import Entity
from graph.ops.kit.fields import Output, StrictInput
from graph.ops.kit.operation import READ_ONLY, CallContext, Operation
from graph.project_tags import PROJECT_TAG_PREFIX

LEGACY_LESSON_PREFIX = "lesson-"
LEGACY_LESSON_PATTERNS = (
    "null-reference", "type-error", "import-missing", "config-error", "test-failure",
    "build-error", "other",
)  # fmt: skip
MIN_PROJECT_CHARS = 2
TAG: Literal["tag"] = "tag"
HEURISTIC: Literal["heuristic"] = "heuristic"
MIXED: Literal["mixed"] = "mixed"


class ProjectsInput(StrictInput):
    pass


class ProjectOutput(Output):
    name: str = Field(description="The project id (as in its `project:<id>` tag).")
    count: int = Field(description="Active entities filed under it.")
    types: list[str] = Field(description="Their types, most common first.")
    source: Literal["tag", "heuristic", "mixed"] = Field(
        description=(
            "How entities were assigned: `tag` (a project: tag), `heuristic` (a legacy "
            "lesson name), or `mixed` (both)."
        )
    )


class ProjectsOutput(RootModel[list[ProjectOutput]]):
    pass


def _source(found: set[str]) -> Literal["tag", "heuristic", "mixed"]:
    if len(found) > 1:
        return MIXED
    return TAG if TAG in found else HEURISTIC


def projects_list() -> ProjectsOutput:
    rows = Entity.objects.project_counts(
        tag_prefix=PROJECT_TAG_PREFIX,
        name_prefix=LEGACY_LESSON_PREFIX,
        name_suffixes=LEGACY_LESSON_PATTERNS,
        min_length=MIN_PROJECT_CHARS,
    )
    types: defaultdict[str, Counter[str]] = defaultdict(Counter)
    sources: defaultdict[str, set[str]] = defaultdict(set)
    for project, type_, source, n in rows:
        types[project][type_] += n
        sources[project].add(source)
    projects = [
        ProjectOutput(
            name=project,
            count=sum(counts.values()),
            types=[t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))],
            source=_source(sources[project]),
        )
        for project, counts in types.items()
    ]
    projects.sort(key=lambda p: (-p.count, p.name))
    return ProjectsOutput(projects)


def render_mcp(result: ProjectsOutput) -> str:
    """A tool's result is a JSON object, never a bare array (api/mcp_server/server.py)."""
    return json.dumps({"projects": result.model_dump(mode="json")}, ensure_ascii=False)


def _projects(data: ProjectsInput, ctx: CallContext) -> ProjectsOutput:
    return projects_list()


PROJECTS = Operation(
    name="projects",
    summary=(
        "The projects the memories are filed under (from `project:` tags, and legacy lesson "
        "names), each with its count of active memories and their types, most memories "
        "first. Use it to find a project's id: its memories carry the tag `project:<id>`."
    ),
    input_model=ProjectsInput,
    output_model=ProjectsOutput,
    handler=_projects,
    hints=READ_ONLY,
    mcp_text=render_mcp,
    examples=[{}],
    method="GET",
)
