"""recall's input and output models."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from graph.ops.kit.entity_view import EntityOutput
from graph.ops.kit.fields import (
    CROSS_PROJECT_HELP,
    DEFAULT_RECALL_LIMIT,
    MAX_QUERY_CHARS,
    MAX_RECALL_LIMIT,
    SESSION_ID_HELP,
    NamespaceName,
    Output,
    ProjectId,
    SessionId,
    StrictInput,
    TagName,
)
from graph.ops.kit.scope import ScopeOutput
from graph.ops.kit.trust.fields import INCLUDE_EXPIRED_HELP, TrustName


class RecallInput(StrictInput):
    query: str | None = Field(
        default=None,
        max_length=MAX_QUERY_CHARS,
        description=(
            "Search words. Terms are OR-ed and ranked by relevance (BM25), so a question in "
            "your own words works; at most 32 terms are used. Omit or leave empty to list "
            "recent memories. A query with nothing searchable in it (e.g. `???`) returns "
            "nothing."
        ),
    )
    tag: TagName | None = Field(
        default=None, description="Only entities carrying this exact tag, e.g. `project:myapp`."
    )
    limit: int = Field(
        default=DEFAULT_RECALL_LIMIT,
        ge=1,
        le=MAX_RECALL_LIMIT,
        description=f"Maximum results, 1-{MAX_RECALL_LIMIT} (default {DEFAULT_RECALL_LIMIT}).",
    )
    include_archived: bool = Field(
        default=False, description="Also return archived (forgotten) entities."
    )
    namespace: NamespaceName | None = Field(
        default=None, description="Only entities in this namespace."
    )
    project: ProjectId | None = Field(
        default=None,
        description=(
            "Search this project (an id, as in `project:<id>`): its memories, memories with "
            "no project and global ones. Default: the bound project (the MCP session's, the "
            "CLI's working directory's); over REST none is bound, so a call naming no project "
            "and no `project:` tag searches every project. A `project:<id>` `tag` with no "
            "`project` searches only that project's memories."
        ),
    )
    cross_project: bool = Field(
        default=False,
        description=(
            f"{CROSS_PROJECT_HELP}; as the reference says, it also lifts a `project:` tag "
            "filter and the `namespace` filter (other tags still filter)."
        ),
    )
    session_id: SessionId | None = Field(
        default=None,
        description=(
            f"{SESSION_ID_HELP} A query's results are noted as returned to the session; "
            "those it does not cite become misses when it records its citations (`feedback`)."
        ),
    )
    status: TrustName | None = Field(
        default=None,
        description=(
            "Only facts (sourced and observed) or only hypotheses: the trust status each "
            "result reports in its `trust` block (its own `status` stays active | archived)."
        ),
    )
    include_expired: bool = Field(default=False, description=INCLUDE_EXPIRED_HELP)


class Retrieval(Output):
    mode: Literal["hybrid", "fts"] = Field(
        description="`hybrid` when the vector supplement ran, `fts` when keyword-only."
    )
    degraded: bool = Field(
        description="Embeddings are configured but the vector side could not run now."
    )
    truncated: bool = Field(description="Results filled `limit`; more may exist.")


class RecallOutput(Output):
    entities: list[EntityOutput]
    retrieval: Retrieval
    scope: ScopeOutput = Field(
        description="Which memories were searched: the bound project's, with no project, "
        "global ones, or every project's."
    )
    conflicts: list[str] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Stated `contradicts` relations between returned entities, when any.",
    )
