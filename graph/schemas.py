"""Input and output models of the memory operations.

These models are the single schema of each operation: REST validation, the MCP tool schemas,
the OpenAPI document and `memesh export-schema` all come from them, so every field carries a
description (it is the tool documentation an agent reads). Limits follow the reference.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

MAX_NAME = 255
MAX_TYPE = 100
MAX_TITLE = 200
MAX_OBSERVATIONS = 100
MAX_OBSERVATION_CHARS = 10_000
MAX_TAGS = 50
MAX_TAG_CHARS = 255
MAX_RELATIONS = 50
MAX_QUERY_CHARS = 10_000
DEFAULT_RECALL_LIMIT = 20
MAX_RECALL_LIMIT = 100

NamespaceName = Literal["personal", "team", "global"]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def _stripped_not_blank(value: str) -> str:
    return _not_blank(value).strip()


def _blank_to_none(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    value = value.strip()
    if len(value) > MAX_TITLE:
        # Rejected, not truncated: the caller can shorten it better than we can.
        raise ValueError(f"must be at most {MAX_TITLE} characters (got {len(value)})")
    return value


Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME), AfterValidator(_stripped_not_blank)]
TypeName = Annotated[
    str, Field(min_length=1, max_length=MAX_TYPE), AfterValidator(_stripped_not_blank)
]
ObservationText = Annotated[
    str, Field(min_length=1, max_length=MAX_OBSERVATION_CHARS), AfterValidator(_not_blank)
]
TagName = Annotated[
    str, Field(min_length=1, max_length=MAX_TAG_CHARS), AfterValidator(_stripped_not_blank)
]


class StrictInput(BaseModel):
    """Unknown keys are rejected and types are not coerced ("5" is not a number)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Output(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


# --- remember -------------------------------------------------------------------------------


class RelationInput(StrictInput):
    to: Name = Field(description="Target entity name; it must already exist.")
    type: TypeName = Field(
        description=(
            "Relation type. A free-form label (e.g. `implements`, `related-to`, `caused`) "
            "except two that act: `supersedes` archives the target at once, and "
            "`contradicts` makes both memories surface as a conflict whenever either is "
            "recalled."
        )
    )


class RememberInput(StrictInput):
    name: Name = Field(
        description=(
            "Unique entity name, e.g. `auth-decision`. Calling remember again with an "
            "existing name appends to that memory."
        )
    )
    type: TypeName = Field(
        description=(
            "Entity type, e.g. `decision`, `pattern`, `lesson`, `commit`. An existing "
            "entity keeps the type it was first stored with."
        )
    )
    title: Annotated[str | None, AfterValidator(_blank_to_none)] = Field(
        default=None,
        description=(
            f"Short human-readable label, at most {MAX_TITLE} characters (longer is "
            "rejected, not truncated). Replaces the title of an existing entity; omitted or "
            "whitespace-only leaves it as it is."
        ),
    )
    observations: list[ObservationText] = Field(
        default_factory=list,
        max_length=MAX_OBSERVATIONS,
        description=(
            f"Facts about the entity, each at most {MAX_OBSERVATION_CHARS} characters, "
            f"at most {MAX_OBSERVATIONS} per call. Appended to an existing entity; one "
            "already stored (ignoring whitespace differences) is not stored again."
        ),
    )
    tags: list[TagName] = Field(
        default_factory=list,
        max_length=MAX_TAGS,
        description=f"Tags for filtering, e.g. `project:myapp`; at most {MAX_TAGS}, deduplicated.",
    )
    relations: list[RelationInput] = Field(
        default_factory=list,
        max_length=MAX_RELATIONS,
        description=(
            f"Relations from this entity to existing ones, at most {MAX_RELATIONS}. A missing "
            "target is reported in `relationErrors`; the entity is still stored."
        ),
    )
    namespace: NamespaceName | None = Field(
        default=None,
        description=(
            "Scope: `personal` (default for a new entity), `team` or `global`. On an existing "
            "entity a different namespace moves it; omitted leaves it where it is."
        ),
    )


class RelationOutput(Output):
    from_: str = Field(alias="from", description="Source entity name.")
    to: str = Field(description="Target entity name.")
    type: str = Field(description="Relation type.")


class RememberOutput(Output):
    stored: bool = Field(description="True when the entity is stored.")
    entityId: int = Field(description="Id of the stored entity.")
    name: str
    type: str = Field(description="The entity's type (the original one for an existing entity).")
    created: bool = Field(description="True when this call created the entity.")
    observations: int = Field(description="Observations this call added (duplicates excluded).")
    tags: int = Field(description="Tags this call added.")
    relations: int = Field(description="Relations this call created.")
    relationsCreated: list[RelationOutput] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The relations actually created; present when the call passed relations.",
    )
    relationErrors: list[str] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Why requested relations were not created (e.g. a missing target).",
    )
    superseded: list[str] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Entities archived by a `supersedes` relation in this call.",
    )
    movedFromNamespace: NamespaceName | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Present when the call moved an existing entity: the namespace it left.",
    )
    reactivated: bool | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Present and true when the call brought back an archived entity.",
    )


# --- recall ---------------------------------------------------------------------------------


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
    cross_project: bool = Field(
        default=False,
        description="Lift project and namespace scoping and search every namespace.",
    )


class Match(Output):
    source: Literal["keyword", "semantic"] = Field(
        description=(
            "`keyword`: the full-text index matched your words. `semantic`: found by vector "
            "similarity alone, which cannot certify relevance."
        )
    )
    relevance: float = Field(
        description="0-1: normalized keyword score, or similarity for semantic results."
    )


class EntityOutput(Output):
    id: int
    name: str = Field(description="Identifier other operations address the memory by.")
    title: str | None = Field(description="Human-readable label, or null when none was given.")
    type: str
    namespace: NamespaceName
    status: Literal["active", "archived"]
    created_at: str = Field(description="ISO 8601 time of creation (UTC).")
    updated_at: str = Field(description="ISO 8601 time of the last write (UTC).")
    confidence: float
    observations: list[str]
    tags: list[str]
    relations: list[RelationOutput] = Field(description="Outgoing relations.")
    metadata: dict[str, Any] = Field(description="Includes provenance.source_host.")
    match: Match | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="How a query found this entity; absent in the recent listing.",
    )


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
    conflicts: list[str] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Stated `contradicts` relations between returned entities, when any.",
    )


# --- forget ---------------------------------------------------------------------------------


class ForgetInput(StrictInput):
    name: Name = Field(description="Entity to archive, or to remove an observation from.")
    observation: ObservationText | None = Field(
        default=None,
        description=(
            "Remove only this observation (exact text, every copy); the entity stays "
            "active. Omit to archive the whole entity. Nothing is ever deleted for good."
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _reject_plural(cls, data: Any) -> Any:
        if isinstance(data, dict) and "observations" in data:
            raise ValueError(
                "`observations` is not accepted: pass one observation as `observation`"
            )
        return data


class ForgetOutput(Output):
    name: str
    archived: bool = Field(description="True when the entity is (now) archived.")
    removed: bool | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Observation mode: true when the observation was found and removed.",
    )
    removedCount: int | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Observation mode: how many copies were removed.",
    )
    message: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Explains a no-op (unknown name, observation not found, already archived).",
    )
