"""Which memories a read sees: the project scope of recall, briefing, user_patterns, export and
the memory tool (the agent guide's "Memory hygiene"; docs/recall.md, "Project scope").

A read is bound to one project, the first of:
1. its `project` field;
2. its `tag` filter, when that is a `project:<id>` tag — the read then sees only that
   project's memories, the tag being an exact filter;
3. the caller's bound project (CallContext.read_project): the MCP session's, the CLI's
   working directory's. Plain REST binds none (one server serves many repositories), so a
   REST read that names no project, as before, sees every project.
A bound read sees the project's memories, those with no project (no `project:` tag at all)
and global ones (namespace `global`), whoever filed them; `cross_project: true` lifts the
project scope. Every scoped read says which in its `scope` field (`ScopeOutput`).

The SQL of the scope is graph.storage.project_scope's; this module decides when it applies.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet
from pydantic import Field

from graph.models import Entity, Tag
from graph.ops.kit.fields import Output
from graph.ops.kit.operation import CallContext
from graph.project_tags import is_project_tag, project_of
from graph.storage.project_scope import project_scope_condition


class ScopeOutput(Output):
    """Which memories a read could see. `namespace` and `tag` filters apply within it."""

    project: str | None = Field(
        description=(
            "The project the read was bound to: the call's `project`, its `project:<id>` "
            "`tag`, or the caller's (the MCP session's, the CLI's working directory's); null "
            "when none was (a REST call naming no project)."
        )
    )
    all_projects: bool = Field(
        description=(
            "Every project's memories were in scope: `cross_project: true`, or no project "
            "bound. False: only `project`'s, plus those `no_project` and `global` say."
        )
    )
    no_project: bool = Field(
        description="Memories filed under no project (no `project:` tag) were in scope."
    )
    global_: bool = Field(
        alias="global",
        description="Global memories (namespace `global`), whichever project filed them, were "
        "in scope.",
    )


@dataclass(frozen=True, slots=True)
class ReadScope:
    """The project scope of one read."""

    project: str | None  # the project the read is bound to; None: none is
    all_projects: bool  # every project's memories are in scope
    only_project: bool = False  # bound by a `project:` tag filter: only that project's

    @property
    def storage_project(self) -> str | None:
        """The project whose scope the storage queries keep (graph.storage.project_scope);
        None when they keep every project (all projects, or a tag filter that is stricter)."""
        if self.all_projects or self.only_project:
            return None
        return self.project

    def apply(self, queryset: QuerySet[Entity]) -> QuerySet[Entity]:
        """`queryset` restricted to this scope."""
        project = self.storage_project
        return queryset if project is None else queryset.filter(project_scope_condition(project))

    def output(self) -> ScopeOutput:
        wide = not self.only_project
        return scope_output(
            project=self.project, all_projects=self.all_projects, no_project=wide, global_=wide
        )


def scope_output(
    *, project: str | None, all_projects: bool, no_project: bool, global_: bool
) -> ScopeOutput:
    """A ScopeOutput (its `global` field is a Python keyword, hence the alias)."""
    return ScopeOutput.model_validate(
        {
            "project": project,
            "all_projects": all_projects,
            "no_project": no_project,
            "global": global_,
        }
    )


# The scope of a read that no transport binds (a direct call of a selector): every project.
UNBOUND = ReadScope(None, all_projects=True)


def read_scope(
    *, project: str | None, tag: str | None, cross_project: bool, ctx: CallContext
) -> ReadScope:
    """The scope of a read with these inputs from this caller (the module docstring's rules)."""
    tagged = project_of(tag) if tag is not None and is_project_tag(tag) else None
    bound = project or tagged or ctx.read_project
    if cross_project or bound is None:
        return ReadScope(bound, all_projects=True)
    return ReadScope(bound, all_projects=False, only_project=project is None and bool(tagged))


def entity_projects(entity_id: int) -> set[str]:
    """The projects a stored memory is filed under (its `project:` tags)."""
    # Filtered here, not by `name__startswith`: SQLite's LIKE would also match `Project:x`,
    # which is_project_tag (and so every other reader) does not count as a project tag.
    names = Tag.objects.filter(entity_id=entity_id).values_list("name", flat=True)
    return {project_of(name) for name in names if is_project_tag(name)}
