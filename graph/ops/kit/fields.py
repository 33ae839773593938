"""The field types and limits the operations' input and output models share.

These models are the single schema of each operation: REST validation, the MCP tool schemas,
the OpenAPI document, `memesh export-schema` and CLI help all come from them, so every field
carries a description (it is the tool documentation an agent reads). Limits follow the
reference.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from graph.project_tags import MAX_PROJECT_CHARS, MAX_TAG_CHARS, project_of

MAX_NAME = 255
MAX_TYPE = 100
MAX_TITLE = 200
MAX_OBSERVATIONS = 100
MAX_OBSERVATION_CHARS = 10_000
MAX_TAGS = 50
MAX_RELATIONS = 50
MAX_QUERY_CHARS = 10_000
# A note is split into at most MAX_OBSERVATIONS paragraphs of MAX_OBSERVATION_CHARS each; the
# whole-text cap only stops an absurd body before it is split.
MAX_NOTE_CHARS = 200_000
WHY_PREFIX = "Why: "
MAX_WHY_CHARS = MAX_OBSERVATION_CHARS - len(WHY_PREFIX)
NOTE_TYPE = "note"
DECISION_TYPE = "decision"
# Routine records of what happened (hooks write most of them): the briefing's "recent
# activity", and the types whose memories are `episodic` by default (graph/ops/kit/trust/).
ACTIVITY_TYPES = (
    "commit",
    "session",
    "session_summary",
    "session-summary",
    "session_keypoint",
    "workflow_checkpoint",
    "conversation",
)
DEFAULT_RECALL_LIMIT = 20
MAX_RECALL_LIMIT = 100
MAX_SESSION_ID_CHARS = 128

NamespaceName = Literal["personal", "team", "global"]


def valid_text(value: str) -> str:
    """Text SQLite can store: valid Unicode. A lone surrogate (JSON's "\\ud800") decodes to a
    Python str that no UTF-8 encoder accepts. Constrained string fields get the same refusal
    from pydantic itself; the unconstrained ones (a title, a project) call this."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            "must be valid Unicode text (a lone surrogate such as \\ud800 cannot be stored)"
        ) from None
    return value


def not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def stripped_not_blank(value: str) -> str:
    return not_blank(value).strip()


def blank_to_none(value: str | None) -> str | None:
    if value is None or not valid_text(value).strip():
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
    value = project_of(valid_text(value))
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


Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME), AfterValidator(stripped_not_blank)]
TypeName = Annotated[
    str, Field(min_length=1, max_length=MAX_TYPE), AfterValidator(stripped_not_blank)
]
ObservationText = Annotated[
    str, Field(min_length=1, max_length=MAX_OBSERVATION_CHARS), AfterValidator(not_blank)
]
TagName = Annotated[
    str, Field(min_length=1, max_length=MAX_TAG_CHARS), AfterValidator(stripped_not_blank)
]
WhyText = Annotated[
    str, Field(min_length=1, max_length=MAX_WHY_CHARS), AfterValidator(stripped_not_blank)
]
# A session is named by its caller (an agent host's session id, a UUID say): visible ASCII, no
# spaces, so it can sit in a header, a log line or a command line as it is.
SessionId = Annotated[
    str, Field(min_length=1, max_length=MAX_SESSION_ID_CHARS, pattern=r"^[\x21-\x7e]+$")
]
SESSION_ID_HELP = (
    "The session this call belongs to, so that a memory counts at most once per session as a "
    "hit (cited) or a miss (returned by recall and not cited), for recall's impact factor. "
    f"Visible ASCII, at most {MAX_SESSION_ID_CHARS} characters. Omitted: the MCP connection's "
    "own session over MCP; none over REST and the CLI."
)
# One plain union validated by hand: a `str | Literal[False]` union reports its errors under
# the branch names (`project.function-after[...]`) instead of `project`.
ProjectValue = Annotated[str | bool | None, AfterValidator(_project_value)]
# A project id a read is scoped to (`project:<id>` names the same project).
ProjectId = Annotated[str, AfterValidator(_project_value)]
# Every read's `cross_project` flag says the same thing; each read says what more it lifts.
CROSS_PROJECT_HELP = (
    "Search every project's memories, not only the bound project's (the MCP session's, the "
    "CLI's working directory's, or `project`)"
)


class StrictInput(BaseModel):
    """Unknown keys are rejected and types are not coerced ("5" is not a number)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Output(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
