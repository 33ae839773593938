"""remember's input and output models: the reference's fields plus the agent guide's `note`,
`replace`, `why` and `project`."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import AfterValidator, Field, model_validator

from graph.ops.kit.entity_view import RelationOutput
from graph.ops.kit.fields import (
    MAX_OBSERVATION_CHARS,
    MAX_OBSERVATIONS,
    MAX_RELATIONS,
    MAX_TAGS,
    MAX_TITLE,
    SESSION_ID_HELP,
    Name,
    NamespaceName,
    ObservationText,
    Output,
    ProjectValue,
    SessionId,
    StrictInput,
    TagName,
    TypeName,
    WhyText,
    blank_to_none,
    field_error,
)
from graph.ops.kit.trust.fields import (
    ConfidenceField,
    InvalidationConditionField,
    InvalidationTagField,
    KindField,
    ParentIdField,
    SourceField,
    TtlHoursField,
)
from graph.ops.kit.trust.view import TrustOutput
from graph.ops.remember.note import NoteText, parse_note
from graph.project_tags import has_project_tag


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
    """remember's input: the reference's fields plus the agent guide's `note`, `replace`,
    `why` and `project`, and the trust model's provenance fields (graph/ops/kit/trust/).

    Cross-field rules checked here (each refusal names its field): `name` is required unless
    `note` is given; `type` unless `note` or `replace` is (a `replace` of a name that does not
    exist yet still needs it, which only the service can tell); a `replace` needs
    `observations` or `note`; `note` and `title` exclude each other (the note's first line is
    its title); `project: false` and a hand-written `project:` tag contradict each other.
    """

    name: Name | None = Field(
        default=None,
        description=(
            "Unique entity name, e.g. `auth-decision`. Calling remember again with an "
            "existing name appends to that memory. May be omitted with `note`: the name is "
            "then derived from the text (the same text twice is one memory)."
        ),
    )
    type: TypeName | None = Field(
        default=None,
        description=(
            "Entity type, e.g. `decision`, `pattern`, `lesson`, `commit`. An existing "
            "entity keeps the type it was first stored with, except on a `replace`, where a "
            "different type reclassifies it. Required unless `note` is given (default "
            "`note`) or `replace` targets an existing name."
        ),
    )
    title: Annotated[str | None, AfterValidator(blank_to_none)] = Field(
        default=None,
        description=(
            f"Short human-readable label, at most {MAX_TITLE} characters (longer is "
            "rejected, not truncated). Replaces the title of an existing entity; omitted or "
            "whitespace-only leaves it as it is. Not accepted with `note`, whose first line "
            "is the title."
        ),
    )
    observations: list[ObservationText] = Field(
        default_factory=list,
        max_length=MAX_OBSERVATIONS,
        description=(
            f"Facts about the entity, each at most {MAX_OBSERVATION_CHARS} characters, "
            f"at most {MAX_OBSERVATIONS} per call. Appended to an existing entity; one "
            "already stored (ignoring whitespace differences) is not stored again. With "
            "`replace`, the observations the memory should now hold."
        ),
    )
    tags: list[TagName] = Field(
        default_factory=list,
        max_length=MAX_TAGS,
        description=(
            f"Tags for filtering, e.g. `topic:auth`; at most {MAX_TAGS}, deduplicated. With "
            "`replace`, passing `tags` rewrites them (project tags follow `project`)."
        ),
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
    note: NoteText | None = Field(
        default=None,
        description=(
            "The cheapest write: free text. Its first line becomes the title and each "
            "following paragraph (separated by a blank line) one observation; `name` and "
            "`type` (default `note`) may be omitted, the name being derived from the text so "
            "the same text twice is one memory. The response echoes the result in `derived`."
        ),
    )
    replace: bool = Field(
        default=False,
        description=(
            "Correct a memory in one call: its observations are rewritten to `observations` "
            "(and/or the note's), its tags too when `tags` is passed, its title when `title` "
            "or `note` is. The previous observations are kept in "
            "`metadata.replaced_history` with the time they were replaced. Needs "
            "`observations` or `note`; replacing a decision needs `why` again."
        ),
    )
    why: WhyText | None = Field(
        default=None,
        description=(
            "For a `decision`: the reason for it AND what would make it stop holding, e.g. "
            "`too heavy to deploy for one user; revisit if we add a hosted tier`. Required "
            "when replacing a decision, and when creating one over the agent transports. "
            "Stored as `metadata.why` and as an observation `Why: <reason>`."
        ),
    )
    project: ProjectValue = Field(
        default=None,
        description=(
            "The project this memory is filed under (tag `project:<id>`), or `false` for a "
            "memory that belongs to no project (a preference, a general lesson). Omitted: a "
            "new memory goes to the caller's current project when the transport knows it "
            "(CLI, bound MCP session); plain HTTP files it under none. Over MCP a name held by "
            "another project's memory is refused (`resource.name-in-other-project`), and the "
            "session's project named by its plain name is stored as its id (`retagged`)."
        ),
    )
    session_id: SessionId | None = Field(
        default=None,
        description=(
            f"{SESSION_ID_HELP} A `[mem:<id>]` handle in the text this call stores cites that "
            "memory: it counts as a hit (not stored with the memory)."
        ),
    )
    # --- provenance and trust (docs/trust.md; declared in graph/ops/kit/trust/fields.py) ---
    source: SourceField = None
    confidence: ConfidenceField = None
    invalidation_tag: InvalidationTagField = None
    invalidation_condition: InvalidationConditionField = None
    kind: KindField = None
    parent_id: ParentIdField = None
    ttl_hours: TtlHoursField = None

    @model_validator(mode="after")
    def _cross_field_rules(self) -> Self:
        if self.name is None and self.note is None:
            raise field_error("name", "required unless `note` is given")
        if self.type is None and self.note is None and not self.replace:
            raise field_error("type", "required unless `note` or `replace` is given")
        if self.note is not None and self.title is not None:
            raise field_error(
                "title", "not accepted with `note`: the note's first line is the title"
            )
        if (
            self.replace
            and not self.observations
            and (self.note is None or not parse_note(self.note).observations)
        ):
            # A one-line note is only a title: replacing with it would empty the memory too.
            raise field_error(
                "replace",
                "needs `observations` or a `note` with a paragraph after its first line: a "
                "replace with neither would empty the memory",
            )
        if self.note is not None:
            total = len(parse_note(self.note).observations) + len(self.observations)
            if total > MAX_OBSERVATIONS:
                raise field_error(
                    "note",
                    f"the note's paragraphs and `observations` together must be at most "
                    f"{MAX_OBSERVATIONS} (got {total})",
                )
        if self.project is False and has_project_tag(self.tags):
            raise field_error("project", "`false` (no project) contradicts a `project:` tag")
        return self


class DerivedNote(Output):
    name: str = Field(description="The name the memory is stored under.")
    title: str = Field(description="The title taken from the note's first line.")
    observations: list[str] = Field(description="The observations taken from its paragraphs.")


class Retag(Output):
    from_: str = Field(alias="from", description="The tag as the call gave it.")
    to: str = Field(description="The tag stored instead: the project's id.")


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
    derived: DerivedNote | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Present when the call passed `note`: what was derived from it.",
    )
    replacedHistoryCount: int | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description=(
            "Present when a `replace` moved the previous observations to "
            "`metadata.replaced_history`: how many versions that history now holds."
        ),
    )
    project: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The project this call filed the memory under (its `project:<id>` tag).",
    )
    cited: list[int] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description=(
            "Present when the text this call stored cites other memories as `[mem:<id>]`: "
            "their ids, each counted as a hit (once per session)."
        ),
    )
    retagged: list[Retag] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description=(
            "Present over MCP when the call named the session's own project by its plain name "
            "(`project:widgets` for `acme/widgets`, in `tags` or `project`): stored as the id."
        ),
    )
    trust: TrustOutput = Field(
        description="The memory's provenance and trust after this call (docs/trust.md)."
    )
