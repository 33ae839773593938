"""memory_list: browse and audit memories by their trust — filters, no search.

Newest write first, paginated by `limit` and `offset`, `total` counting every memory the
filters keep. By default the live memories (active: facts and hypotheses, not expired);
`status` narrows to facts, hypotheses, or the archived ones (forgotten or superseded, with
their reasons). Each row is a memory as recall shows it plus its trust `history` (remember,
observe, supersede, forget, and the migration's classification). A listing is not a match:
no access is counted.

It lists within the read's project scope, as recall does (graph/ops/kit/scope.py): the bound
project's memories, those with no project and global ones; `scope` says which. The filters
shared with recall are recall's own (EntityFilters.restrict), so the two never disagree on what
a namespace, a tag, a trust status, expiry or a project keeps.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from django.db.models import Q, QuerySet
from django.utils import timezone
from pydantic import Field

from graph.models import Entity, Status, TrustStatus
from graph.ops.kit.entity_view import EntityOutput, entity_outputs
from graph.ops.kit.fields import (
    CROSS_PROJECT_HELP,
    DEFAULT_RECALL_LIMIT,
    MAX_RECALL_LIMIT,
    NamespaceName,
    Output,
    ProjectId,
    StrictInput,
    TagName,
    TypeName,
)
from graph.ops.kit.operation import READ_ONLY, CallContext, Operation
from graph.ops.kit.scope import UNBOUND, ReadScope, ScopeOutput, read_scope
from graph.ops.kit.trust.fields import INCLUDE_EXPIRED_HELP, KindName
from graph.ops.kit.trust.rules import HISTORY_KEY
from graph.ops.kit.trust.view import STALE_AFTER_DAYS
from graph.storage.entity_filters import EntityFilters

MAX_OFFSET = 10**12  # as GET /v1/entities: past any real graph, and SQLite's OFFSET fits it


class MemoryListInput(StrictInput):
    status: Literal["fact", "hypothesis", "archived"] | None = Field(
        default=None,
        description=(
            "`fact` or `hypothesis`: live memories of that trust status; `archived`: the "
            "forgotten and superseded ones (kept, with their reasons). Default: every live "
            "memory."
        ),
    )
    namespace: NamespaceName | None = Field(default=None, description="Only this namespace.")
    tag: TagName | None = Field(default=None, description="Only memories with this exact tag.")
    type: TypeName | None = Field(default=None, description="Only memories of this type.")
    kind: KindName | None = Field(default=None, description="Only semantic or episodic ones.")
    stale: bool = Field(
        default=False,
        description=f"Only facts not observed for {STALE_AFTER_DAYS} days or more.",
    )
    include_expired: bool = Field(default=False, description=INCLUDE_EXPIRED_HELP)
    project: ProjectId | None = Field(
        default=None,
        description=(
            "List this project (an id, as in `project:<id>`): its memories, memories with no "
            "project and global ones. Default: the bound project (the MCP session's, the "
            "CLI's working directory's); over REST none is bound, so a call naming no project "
            "and no `project:` tag lists every project. A `project:<id>` `tag` with no "
            "`project` lists only that project's memories."
        ),
    )
    cross_project: bool = Field(
        default=False,
        description=f"{CROSS_PROJECT_HELP}; the other filters, a `tag` too, still apply.",
    )
    limit: int = Field(
        default=DEFAULT_RECALL_LIMIT,
        ge=1,
        le=MAX_RECALL_LIMIT,
        description=f"Memories per page, 1-{MAX_RECALL_LIMIT} (default {DEFAULT_RECALL_LIMIT}).",
    )
    offset: int = Field(default=0, ge=0, le=MAX_OFFSET, description="Memories to skip.")


class MemoryRow(EntityOutput):
    history: list[dict[str, Any]] = Field(
        description=(
            "The memory's trust events, oldest first: {at, action: remember | observe | "
            "superseded | forget | migrate, ...}: a source, a confidence, a reason."
        )
    )


class MemoryListOutput(Output):
    memories: list[MemoryRow] = Field(description="This page, newest write first.")
    total: int = Field(description="Memories the filters keep, on every page.")
    limit: int
    offset: int
    truncated: bool = Field(description="Whether memories remain after this page.")
    scope: ScopeOutput = Field(description="Which projects' memories the listing kept.")


def _filtered(data: MemoryListInput, scope: ReadScope, now: datetime) -> QuerySet[Entity]:
    qs = Entity.objects.all()
    if data.status == Status.ARCHIVED:
        qs = qs.filter(status=Status.ARCHIVED)
    else:
        qs = qs.filter(status=Status.ACTIVE)
    shared = EntityFilters(
        namespace=data.namespace,
        tag=data.tag,
        project=scope.storage_project,
        trust=data.status if data.status != Status.ARCHIVED else None,
        unexpired_at=None if data.include_expired else now,
    )
    qs = shared.restrict(qs)
    if data.type is not None:
        qs = qs.filter(type=data.type)
    if data.kind is not None:
        qs = qs.filter(kind=data.kind)
    if data.stale:
        cutoff = now - timedelta(days=STALE_AFTER_DAYS)
        qs = qs.filter(trust=TrustStatus.FACT).filter(
            Q(last_observed_at__isnull=True) | Q(last_observed_at__lte=cutoff)
        )
    return qs


def memory_list(
    *, data: MemoryListInput, scope: ReadScope = UNBOUND, now: datetime | None = None
) -> MemoryListOutput:
    """A page of the memories `scope` and the filters keep (module docstring)."""
    now = now or timezone.now()
    qs = _filtered(data, scope, now)
    total = qs.count()
    ids = list(
        qs.order_by("-updated_at", "-id").values_list("id", flat=True)[
            data.offset : data.offset + data.limit
        ]
    )
    docs = Entity.objects.documents(ids)
    rows = [
        MemoryRow.model_construct(
            **dict(output),
            history=list(doc.metadata.get(HISTORY_KEY, [])),
        )
        for doc, output in zip(docs, entity_outputs(docs, now=now), strict=True)
    ]
    return MemoryListOutput.model_construct(
        memories=rows,
        total=total,
        limit=data.limit,
        offset=data.offset,
        truncated=data.offset + len(ids) < total,
        scope=scope.output(),
    )


def _memory_list(data: MemoryListInput, ctx: CallContext) -> MemoryListOutput:
    scope = read_scope(
        project=data.project, tag=data.tag, cross_project=data.cross_project, ctx=ctx
    )
    return memory_list(data=data, scope=scope)


MEMORY_LIST = Operation(
    name="memory_list",
    summary=(
        "Browse and audit memories by trust, newest first, with filters and no search: "
        "facts, hypotheses, stale facts, or archived ones with why they were forgotten; each "
        "with its trust block and history. Lists the bound project's memories, those with no "
        "project and global ones (`scope` says which); `cross_project: true` lists every "
        "project's."
    ),
    input_model=MemoryListInput,
    output_model=MemoryListOutput,
    handler=_memory_list,
    hints=READ_ONLY,
    examples=[{"status": "hypothesis", "limit": 10}, {"status": "archived"}],
)
