"""export: the portable JSON bundle of the reference, read in chunks.

Bundle: `{"version", "exported_at", "entity_count", "entities": [{name, title, type,
namespace, observations, tags, relations: [{from, to, type}]}], "scope"}`. Only active entities
are exported (the reference's `limit` counts active entities); `title` is null when absent.
Like recall, an export is scoped to the bound project (graph/ops/scope.py): its memories,
those with no project and global ones; `cross_project` exports every project's, and the
bundle's `scope` says which. Import reads only `entities`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from pydantic import Field

from graph.models import Entity, Status
from graph.ops.fields import (
    CROSS_PROJECT_HELP,
    NamespaceName,
    Output,
    ProjectId,
    StrictInput,
    TagName,
)
from graph.ops.scope import UNBOUND, ReadScope, ScopeOutput

BUNDLE_VERSION = "3.0.0"
DEFAULT_EXPORT_LIMIT = 1000
MAX_EXPORT_LIMIT = 10_000  # one response body; the CLI streams any number
EXPORT_CHUNK = 1000


class ExportInput(StrictInput):
    namespace: NamespaceName | None = Field(
        default=None, description="Export only this namespace; omit for all namespaces."
    )
    tag: TagName | None = Field(
        default=None, description="Export only entities carrying this tag, e.g. `project:myapp`."
    )
    limit: int = Field(
        default=DEFAULT_EXPORT_LIMIT,
        ge=1,
        le=MAX_EXPORT_LIMIT,
        description=(
            f"Maximum active entities to export (default {DEFAULT_EXPORT_LIMIT}, at most "
            f"{MAX_EXPORT_LIMIT}; `memesh export` streams any number)."
        ),
    )
    project: ProjectId | None = Field(
        default=None,
        description=(
            "Export this project's memories (an id, as in `project:<id>`), with those of no "
            "project and global ones. Default: the bound project (the MCP session's, the "
            "CLI's working directory's); over REST none is bound, so a call naming no project "
            "and no `project:` tag exports every project."
        ),
    )
    cross_project: bool = Field(
        default=False,
        description=f"{CROSS_PROJECT_HELP}. `namespace` and `tag` still filter.",
    )


class BundleRelation(Output):
    from_: str = Field(alias="from", description="Source entity name.")
    to: str = Field(description="Target entity name.")
    type: str = Field(description="Relation type.")


REPLACED_HISTORY = "replaced_history"


class BundleEntity(Output):
    name: str
    title: str | None = Field(description="Human-readable label, null when none.")
    type: str
    namespace: NamespaceName
    observations: list[str]
    tags: list[str]
    relations: list[BundleRelation] = Field(description="Outgoing relations.")
    replaced_history: list[dict[str, Any]] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Earlier versions of the observations ({at, observations, ...}), when the "
        "memory was rewritten by `replace` or an import overwrite.",
    )


class ExportOutput(Output):
    version: str = Field(description=f"Bundle format version ({BUNDLE_VERSION}).")
    exported_at: str = Field(description="ISO 8601 time of the export (UTC).")
    entity_count: int
    entities: list[BundleEntity]
    scope: ScopeOutput = Field(
        description="Which memories were exported: the bound project's, with no project, "
        "global ones, or every project's. Import ignores it."
    )


def _export_queryset(namespace: str | None, tag: str | None, scope: ReadScope) -> QuerySet[Entity]:
    qs = Entity.objects.filter(status=Status.ACTIVE)
    if namespace is not None:
        qs = qs.filter(namespace=namespace)
    if tag is not None:
        qs = qs.filter(tags__name=tag)
    return scope.apply(qs)


def bundle_count(
    *, namespace: str | None, tag: str | None, limit: int | None, scope: ReadScope = UNBOUND
) -> int:
    count = _export_queryset(namespace, tag, scope).count()
    return count if limit is None else min(count, limit)


def bundle_entities(
    *,
    namespace: str | None,
    tag: str | None,
    limit: int | None,
    scope: ReadScope = UNBOUND,
) -> Iterator[dict[str, Any]]:
    """Bundle entries of the active entities, oldest first, EXPORT_CHUNK at a time.

    Keyset pagination keeps memory flat. Call inside a transaction (as bundle_count) so the
    count written in the header and the entries come from one snapshot.
    """
    qs = _export_queryset(namespace, tag, scope).order_by("id").values_list("id", flat=True)
    last, remaining = 0, limit
    while remaining is None or remaining > 0:
        size = EXPORT_CHUNK if remaining is None else min(EXPORT_CHUNK, remaining)
        ids = list(qs.filter(id__gt=last)[:size])
        if not ids:
            return
        for doc in Entity.objects.documents(ids):
            yield {
                "name": doc.name,
                "title": doc.title,
                "type": doc.type,
                "namespace": doc.namespace,
                "observations": doc.observations,
                "tags": doc.tags,
                "relations": [
                    {"from": frm, "to": to, "type": rel_type}
                    for frm, _, to, rel_type in doc.relations
                ],
                **(
                    {REPLACED_HISTORY: doc.metadata[REPLACED_HISTORY]}
                    if doc.metadata.get(REPLACED_HISTORY)
                    else {}
                ),
            }
        last = ids[-1]
        if remaining is not None:
            remaining -= len(ids)


def exported_at(now: datetime) -> str:
    """The reference's form: `2026-04-17T00:00:00.000Z`."""
    now = now.astimezone(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


@transaction.atomic  # one read snapshot for the count and the entries
def bundle_export(*, data: ExportInput, scope: ReadScope = UNBOUND) -> ExportOutput:
    entries = list(
        bundle_entities(namespace=data.namespace, tag=data.tag, limit=data.limit, scope=scope)
    )
    return ExportOutput(
        version=BUNDLE_VERSION,
        exported_at=exported_at(timezone.now()),
        entity_count=len(entries),
        entities=[BundleEntity.model_validate(e) for e in entries],
        scope=scope.output(),
    )
