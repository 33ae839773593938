"""Input and output models of the memory operations.

These models are the single schema of each operation: REST validation, the MCP tool schemas,
the OpenAPI document and `memesh export-schema` all come from them, so every field carries a
description (it is the tool documentation an agent reads). Limits follow the reference.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

MAX_NAME = 255
MAX_TYPE = 100
MAX_TITLE = 200
MAX_OBSERVATIONS = 100
MAX_OBSERVATION_CHARS = 10_000
MAX_TAGS = 50
MAX_TAG_CHARS = 255
MAX_RELATIONS = 50
MAX_QUERY_CHARS = 10_000
# A note is split into at most MAX_OBSERVATIONS paragraphs of MAX_OBSERVATION_CHARS each; the
# whole-text cap only stops an absurd body before it is split.
MAX_NOTE_CHARS = 200_000
WHY_PREFIX = "Why: "
MAX_WHY_CHARS = MAX_OBSERVATION_CHARS - len(WHY_PREFIX)
PROJECT_TAG_PREFIX = "project:"
MAX_PROJECT_CHARS = 255 - len(PROJECT_TAG_PREFIX)  # the tag `project:<id>` must fit a tag
NOTE_TYPE = "note"
DECISION_TYPE = "decision"
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


def _project_value(value: str | bool | None) -> str | Literal[False] | None:
    """A project id, `false` (no project) or None; `true` means nothing and is refused."""
    if value is True:
        raise ValueError("must be a project id, or false for no project")
    if not isinstance(value, str):
        return value
    # `project: "project:x"` means project x: the tag prefix is not doubled.
    value = value.strip().removeprefix(PROJECT_TAG_PREFIX).strip()
    if not value:
        raise ValueError("must name a project")
    if len(value) > MAX_PROJECT_CHARS:
        raise ValueError(f"must be at most {MAX_PROJECT_CHARS} characters (got {len(value)})")
    return value


def field_error(field: str, message: str) -> ValidationError:
    """A validation error located at `field`, so transports name it (`why: ...`)."""
    return ValidationError.from_exception_data(
        "RememberInput",
        [
            InitErrorDetails(
                type=PydanticCustomError("value_error", message), loc=(field,), input=None
            )
        ],
    )


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
WhyText = Annotated[
    str, Field(min_length=1, max_length=MAX_WHY_CHARS), AfterValidator(_stripped_not_blank)
]
# One plain union validated by hand: a `str | Literal[False]` union reports its errors under
# the branch names (`project.function-after[...]`) instead of `project`.
ProjectValue = Annotated[str | bool | None, AfterValidator(_project_value)]


# --- notes ----------------------------------------------------------------------------------

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n")
_NOT_SLUG = re.compile(r"[^\w]+")
NOTE_SLUG_CHARS = 60
NOTE_HASH_CHARS = 10


@dataclass(frozen=True, slots=True)
class ParsedNote:
    """A `note` split the way remember stores it, and the name that text always gets."""

    title: str
    observations: list[str]
    name: str


def parse_note(text: str) -> ParsedNote:
    """First line -> title, each following paragraph (blank-line separated) -> one observation.

    A first line longer than the title limit is shortened for the title (the note's author
    chose no title, so there is nobody to refuse) and also kept whole as the first
    observation, so no text is lost. The name is `note-<slug of title>-<hash>`, the hash taken
    over the parsed shape with whitespace normalised: the same text twice (even re-wrapped)
    is one memory, while two notes that share a first line stay two.
    """
    first, _, rest = text.strip().partition("\n")
    first = first.strip()
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(rest.strip()) if p.strip()]
    title = first
    if len(first) > MAX_TITLE:
        cut = first[: MAX_TITLE - 1]
        # At a word boundary when there is one in the last quarter; else a hard cut.
        space = cut.rfind(" ")
        title = (cut[:space] if space > MAX_TITLE * 3 // 4 else cut).rstrip() + "…"
        paragraphs.insert(0, first)
    canonical = "\n\n".join(" ".join(part.split()) for part in (first, *paragraphs))
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:NOTE_HASH_CHARS]
    slug = _NOT_SLUG.sub("-", first.lower()).strip("-_")[:NOTE_SLUG_CHARS].strip("-_")
    name = f"note-{slug}-{digest}" if slug else f"note-{digest}"
    return ParsedNote(title=title, observations=paragraphs, name=name)


def _valid_note(value: str) -> str:
    value = _not_blank(value)
    parsed = parse_note(value)
    if len(parsed.observations) > MAX_OBSERVATIONS:
        raise ValueError(
            f"at most {MAX_OBSERVATIONS} paragraphs after the first line "
            f"(got {len(parsed.observations)})"
        )
    longest = max((len(p) for p in parsed.observations), default=0)
    if longest > MAX_OBSERVATION_CHARS:
        raise ValueError(
            f"each paragraph must be at most {MAX_OBSERVATION_CHARS} characters (one has {longest})"
        )
    return value


NoteText = Annotated[
    str, Field(min_length=1, max_length=MAX_NOTE_CHARS), AfterValidator(_valid_note)
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
    """remember's input: the reference's fields plus the agent guide's `note`, `replace`,
    `why` and `project`.

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
    title: Annotated[str | None, AfterValidator(_blank_to_none)] = Field(
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
            "(CLI, bound MCP session); plain HTTP files it under none."
        ),
    )

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
        if self.project is False and any(t.startswith(PROJECT_TAG_PREFIX) for t in self.tags):
            raise field_error("project", "`false` (no project) contradicts a `project:` tag")
        return self


class RelationOutput(Output):
    from_: str = Field(alias="from", description="Source entity name.")
    to: str = Field(description="Target entity name.")
    type: str = Field(description="Relation type.")


class DerivedNote(Output):
    name: str = Field(description="The name the memory is stored under.")
    title: str = Field(description="The title taken from the note's first line.")
    observations: list[str] = Field(description="The observations taken from its paragraphs.")


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
    metadata: dict[str, Any] = Field(
        description=(
            "Includes provenance.source_host; `why` for a decision. Earlier versions kept by "
            "a `replace` are not returned here (see `replaced_history_count`; export has them)."
        )
    )
    replaced_history_count: int | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Present when `replace` rewrote this memory: how many earlier versions exist.",
    )
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
