"""The shapes the proposals' services and selectors answer with, as the transports read them.

They are TypedDicts, so a result is the JSON object REST sends and `memesh dream --json`
prints, key for key. They are also the documentation: proposals/schemas.py makes the OpenAPI
models of the routes from them (`documented`), so the shape and its description cannot drift
apart; the `Field` metadata below is for that description only.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict

from pydantic import Field

# The values of the models' choices, as the answers carry them.
ProposalStatusName = Literal["pending", "applied", "rejected"]
ProposalKindName = Literal["digest", "pattern_emergent", "relation", "memory", "improvement"]
TaskStatusName = Literal["queued", "running", "succeeded", "failed"]


class AcceptResult(TypedDict):
    """What an accept did: the entity it created (None for a relation or an improvement),
    the sources it archived and those it linked."""

    proposalId: int
    digestEntityName: Annotated[
        str | None,
        Field(description="The entity the accept created (null for a relation proposal)."),
    ]
    sourcesArchived: Annotated[int, Field(ge=0)]
    sourcesLinked: Annotated[int, Field(ge=0)]
    kind: ProposalKindName


class RejectResult(TypedDict):
    id: int
    status: Literal["rejected"]


class ProposalListEntry(TypedDict):
    """A proposal in a listing (GET /v1/dream/proposals, the review queue)."""

    id: int
    project: str
    cluster_key: str
    source_count: int
    digest_name: str | None
    digest_observations_preview: list[str]
    status: ProposalStatusName
    created_at: str
    kind: ProposalKindName


class ProposalView(TypedDict):
    """A proposal in full (GET /v1/dream/proposals/<id>, `memesh dream show`)."""

    id: int
    kind: ProposalKindName
    project: str
    cluster_key: str
    source_ids: list[int]
    proposed_digest: Annotated[
        dict[str, Any],
        Field(
            description="digest / pattern: {name, type, observations, tags, "
            "validation_warnings?}; relation: {from, to, relation, verdict, rationale}."
        ),
    ]
    llm_model: str
    prompt_version: str
    status: ProposalStatusName
    reason: str | None
    created_at: str
    reviewed_at: str | None


class SourceMemory(TypedDict):
    """A proposal's source memory as review shows it; a deleted one has status `missing` and
    None for what is gone."""

    id: int
    name: str | None
    type: str | None
    title: str | None
    observations: list[str]
    tags: list[str]
    status: str
    trust: dict[str, Any] | None


class AcceptTrust(TypedDict):
    """The trust an accept would give the memory it creates."""

    status: str
    confidence: float
    hop_count: int
    invalidation_tag: str | None
    invalidation_conditions: list[str]


class TaskRunView(TypedDict):
    """A task run (GET /v1/tasks/<id>)."""

    id: str
    kind: str
    status: TaskStatusName
    params: dict[str, Any]
    result: dict[str, Any] | None
    errorCode: str | None
    error: str | None
    createdAt: str
    startedAt: str | None
    finishedAt: str | None


class DreamRunSummary(TypedDict):
    """A dream task run as `memesh status` and the review page show it."""

    id: str
    kind: str
    status: str
    trigger: str | None
    errorCode: str | None
    proposalsCreated: int | None
    createdAt: str
    finishedAt: str | None


class TaskCounts(TypedDict):
    queued: int
    running: int


class DreamStatus(TypedDict):
    """What `memesh status` says of the dream workflow and the task queue."""

    tasks: TaskCounts
    proposalsPending: int
    lastDream: DreamRunSummary | None
    lastProposalAt: str | None
