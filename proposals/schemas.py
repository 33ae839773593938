"""Input and output models of the dream routes and commands (the reference's shapes).

Inputs are strict (unknown keys refused, no coercion); `parse` turns a pydantic error into
`validation.bad-body` naming the field, as the operation registry does for /v1 operations.
"""

from __future__ import annotations

from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from core.errors import InvalidInput
from graph.ops.kit.validation_errors import describe_validation_error, first_field
from proposals import results

MAX_REASON_CHARS = 500
DEFAULT_WINDOW_DAYS = 14
MAX_WINDOW_DAYS = 90
DEFAULT_MAX_LLM_CALLS = 5
MAX_LLM_CALLS = 20
# Transcript mining spends one call per chunk of a session: a scheduled run catching up on
# many sessions needs more than a dream pass.
MAX_TRANSCRIPT_LLM_CALLS = 100
DEFAULT_MAX_PAIRS = 20
MAX_PAIRS = 200

ProposalStatusFilter = Literal["pending", "applied", "rejected", "all"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class DreamRunInput(_Strict):
    project: str | None = Field(
        default=None, min_length=1, max_length=255, description="Restrict to one project."
    )
    windowDays: int = Field(
        default=DEFAULT_WINDOW_DAYS,
        ge=1,
        le=MAX_WINDOW_DAYS,
        description="Look-back window in days (1–90).",
    )
    maxLlmCalls: int = Field(
        default=DEFAULT_MAX_LLM_CALLS,
        ge=1,
        le=MAX_LLM_CALLS,
        description="Hard cap on LLM calls (1–20), validator calls included.",
    )
    validate_: bool = Field(
        default=False,
        alias="validate",
        description="Run the digest validator as a second LLM pass before staging.",
    )
    dryRun: bool = Field(
        default=False, description="Cluster and report, without calling an LLM or staging."
    )
    async_: bool = Field(
        default=False,
        alias="async",
        description="Enqueue the run for the worker and answer `{taskId}` at once "
        "(GET /v1/tasks/<id> reports on it).",
    )


class RejectInput(_Strict):
    reason: str = Field(
        default="",
        max_length=MAX_REASON_CHARS,
        description=f"Why this proposal was rejected (at most {MAX_REASON_CHARS} characters).",
    )


def parse(model: type[BaseModel], payload: object) -> Any:
    """Validate a JSON body (an object; a missing body arrives as `{}`) or raise
    `validation.bad-body`."""
    if not isinstance(payload, dict):
        raise InvalidInput("Request body must be a JSON object")
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(exc), field=first_field(exc)) from None


# --- outputs (documentation of the shapes the selectors and services return) -------------


class SkippedCluster(BaseModel):
    reason: str
    project: str
    clusterKey: str


class DreamRunOutput(BaseModel):
    proposalsCreated: int = Field(ge=0)
    clustersScanned: int = Field(ge=0)
    llmCalls: int = Field(ge=0)
    skipped: list[SkippedCluster]
    durationMs: int = Field(ge=0)
    clusteringMode: Literal["semantic", "calendar"] | None = None
    clusteringNote: str | None = None


class DreamTaskQueued(BaseModel):
    taskId: str = Field(description="GET /v1/tasks/<taskId> reports on the run.")


def documented(shape: type, name: str) -> type[BaseModel]:
    """The OpenAPI model of a result shape (a TypedDict such as those of proposals/results.py):
    its keys, all required, with their types and `Field` metadata."""
    fields: dict[str, Any] = {
        key: (hint, ...) for key, hint in get_type_hints(shape, include_extras=True).items()
    }
    return create_model(name, **fields)


ProposalListItem = documented(results.ProposalListEntry, "ProposalListItem")
ProposalDetail = documented(results.ProposalView, "ProposalDetail")
AcceptOutput = documented(results.AcceptResult, "AcceptOutput")
RejectOutput = documented(results.RejectResult, "RejectOutput")
TaskRunOutput = documented(results.TaskRunView, "TaskRunOutput")
