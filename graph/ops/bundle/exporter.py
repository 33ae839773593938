"""export: the portable JSON bundle of the reference, read in chunks.

Bundle: `{"version", "exported_at", "entity_count", "entities": [{name, title, type,
namespace, observations, tags, relations: [{from, to, type}], trust}], "scope"}`. Only active
entities are exported (the reference's `limit` counts active entities), and not the expired ones
unless `include_expired`; `title` is null when absent. `trust` carries each memory's provenance
(graph/ops/kit/trust/) so that an import elsewhere keeps a hypothesis a hypothesis.
Like recall, an export is scoped to the bound project (graph/ops/kit/scope.py): its memories,
those with no project and global ones; `cross_project` exports every project's, and the
bundle's `scope` says which. Import reads only `entities`.

The entries are read one EXPORT_CHUNK at a time, each as the JSON text SQLite writes
(graph/storage/bundle_reads.py), in one read snapshot: the REST answer joins them
(`bundle_export_json`), the handler parses them (`bundle_export`) and `memesh export` writes
them to its file as they come (graph/ops/bundle/files.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, NotRequired

from django.utils import timezone
from pydantic import Field
from pydantic_core import from_json
from typing_extensions import TypedDict

from graph.models import Entity
from graph.ops.kit.fields import (
    CROSS_PROJECT_HELP,
    NamespaceName,
    Output,
    ProjectId,
    StrictInput,
    TagName,
)
from graph.ops.kit.scope import UNBOUND, ReadScope, ScopeOutput
from graph.ops.kit.trust.fields import INCLUDE_EXPIRED_HELP, KindName, TrustName
from graph.storage.cursor import read_snapshot
from graph.storage.entity_filters import EntityFilters

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
    include_expired: bool = Field(default=False, description=INCLUDE_EXPIRED_HELP)


# The bundle's entries are written as JSON by SQLite (graph/storage/bundle_reads.py
# `_ENTRY_JSON`: a field added here is added there) and sent as they come over REST (the
# operation's json_handler); MCP and the CLI's direct calls parse that same text. They are
# TypedDicts, not models: the parsed dicts are in this shape already, and pydantic serialises
# 10,000 dicts against a TypedDict schema in ~80 ms, where validating them into models cost
# ~180 ms more. The shapes give OpenAPI and the MCP tools their schema.
BundleRelation = TypedDict(
    "BundleRelation",
    {
        "from": Annotated[str, Field(description="Source entity name.")],
        "to": Annotated[str, Field(description="Target entity name.")],
        "type": Annotated[str, Field(description="Relation type.")],
    },
)


REPLACED_HISTORY = "replaced_history"


class BundleTrust(TypedDict):
    """A memory's provenance in a bundle: what an import needs to keep its trust honest."""

    status: TrustName
    source: str | None
    confidence: float
    invalidation_tag: str | None
    invalidation_condition: str | None
    kind: KindName
    hop_count: int
    last_observed_at: Annotated[
        str | None, Field(description="ISO 8601 (UTC), null: never observed.")
    ]
    expires_at: Annotated[str | None, Field(description="ISO 8601 (UTC), null: permanent.")]


class BundleEntity(TypedDict):
    name: str
    title: Annotated[str | None, Field(description="Human-readable label, null when none.")]
    type: str
    namespace: NamespaceName
    observations: list[str]
    tags: list[str]
    relations: Annotated[list[BundleRelation], Field(description="Outgoing relations.")]
    replaced_history: NotRequired[
        Annotated[
            list[dict[str, Any]],
            Field(
                description="Earlier versions of the observations ({at, observations, ...}), "
                "when the memory was rewritten by `replace` or an import overwrite."
            ),
        ]
    ]
    trust: NotRequired[
        Annotated[
            BundleTrust,
            Field(
                description="Provenance and trust (docs/trust.md); an import treats a memory "
                "without a `source` as a hypothesis."
            ),
        ]
    ]


class ExportOutput(Output):
    version: str = Field(description=f"Bundle format version ({BUNDLE_VERSION}).")
    exported_at: str = Field(description="ISO 8601 time of the export (UTC).")
    entity_count: int
    entities: list[BundleEntity]
    scope: ScopeOutput = Field(
        description="Which memories were exported: the bound project's, with no project, "
        "global ones, or every project's. Import ignores it."
    )


@dataclass(frozen=True, slots=True)
class BundleSelection:
    """Which active entities an export reads: the call's namespace, tag and limit (None: all),
    the scope's project (graph/ops/kit/scope.py), and only those unexpired at `now` (None: the
    time it is read) unless `include_expired`."""

    namespace: str | None = None
    tag: str | None = None
    limit: int | None = None
    scope: ReadScope = UNBOUND
    include_expired: bool = False
    now: datetime | None = None

    def filters(self) -> EntityFilters:
        unexpired_at = None if self.include_expired else (self.now or timezone.now())
        return EntityFilters(
            namespace=self.namespace,
            tag=self.tag,
            project=self.scope.storage_project,
            unexpired_at=unexpired_at,
        )


def bundle_count(selection: BundleSelection) -> int:
    count = Entity.objects.bundle_count(selection.filters())
    return count if selection.limit is None else min(count, selection.limit)


def bundle_entries_json(selection: BundleSelection) -> Iterator[str]:
    """The bundle entries (BundleEntity, as JSON text) of the entities `selection` keeps,
    oldest first, EXPORT_CHUNK at a time.

    Keyset pagination keeps memory flat. Call inside one read snapshot (as bundle_count) so
    the count written in the header and the entries agree.
    """
    filters = selection.filters()
    last, remaining = 0, selection.limit
    while remaining is None or remaining > 0:
        size = EXPORT_CHUNK if remaining is None else min(EXPORT_CHUNK, remaining)
        rows = Entity.objects.bundle_entries_json(filters, last, size)
        if not rows:
            return
        for _, entry in rows:
            yield entry
        last = rows[-1][0]
        if remaining is not None:
            remaining -= len(rows)


def exported_at(now: datetime) -> str:
    """The reference's form: `2026-04-17T00:00:00.000Z`."""
    now = now.astimezone(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


@dataclass(frozen=True, slots=True)
class BundleRead:
    """One export as SQLite wrote it: each entry's JSON text (graph/storage/bundle_reads.py),
    oldest first, with the header's time and scope."""

    exported_at: str
    entries: list[str]
    scope: ScopeOutput

    def answer_json(self) -> str:
        """POST /v1/export's answer: the keys are ExportOutput's, in its order (by alias)."""
        header = (
            f'{{"version":"{BUNDLE_VERSION}","exported_at":"{self.exported_at}",'
            f'"entity_count":{len(self.entries)},"entities":['
        )
        scope = self.scope.model_dump_json(by_alias=True)
        return "".join([header, ",".join(self.entries), '],"scope":', scope, "}"])

    def output(self) -> ExportOutput:
        """The read parsed. Constructed, not validated: the entries are SQLite's encoding of
        stored columns in BundleEntity's shape (tests/services/test_bundle_json.py holds them
        equal), and validating 10,000 of them again cost more than reading them."""
        entities = from_json("[" + ",".join(self.entries) + "]")
        return ExportOutput.model_construct(
            version=BUNDLE_VERSION,
            exported_at=self.exported_at,
            entity_count=len(entities),
            entities=entities,
            scope=self.scope,
        )


def bundle_read(
    *, data: ExportInput, scope: ReadScope = UNBOUND, now: datetime | None = None
) -> BundleRead:
    """The export `data` asks for, within `scope`, as of `now`."""
    now = now or timezone.now()
    with read_snapshot():  # one snapshot for every chunk, blocking no writer
        selection = BundleSelection(
            namespace=data.namespace,
            tag=data.tag,
            limit=data.limit,
            scope=scope,
            include_expired=data.include_expired,
            now=now,
        )
        entries = list(bundle_entries_json(selection))
    return BundleRead(exported_at=exported_at(now), entries=entries, scope=scope.output())


def bundle_export(
    *, data: ExportInput, scope: ReadScope = UNBOUND, now: datetime | None = None
) -> ExportOutput:
    """The export, parsed: the operation's handler (MCP, the CLI's direct calls)."""
    return bundle_read(data=data, scope=scope, now=now).output()


def bundle_export_json(
    *, data: ExportInput, scope: ReadScope = UNBOUND, now: datetime | None = None
) -> str:
    """The export as JSON text, as SQLite wrote its entries: the REST route's answer."""
    return bundle_read(data=data, scope=scope, now=now).answer_json()
