"""improvement (MCP tool `improvement`, POST /v1/improvement, `memesh improvement`): an agent
proposes a product improvement with memories as its evidence, and reads its status; only a
person accepts or rejects it. docs/work-packages.md says how it reads to a user.

An improvement is a proposal of kind `improvement` (proposals/models.py): its evidence is its
`source_ids`, so the review page shows the cited memories beside it the way it shows a digest's
sources, and accept and reject are the proposals' own services — the same conditional claim,
the same ProposalReview audit row of who did it and from where. Accepting one records a
person's agreement and writes nothing to the graph (proposals.appliers.improvement_apply).

- `propose` {title, description, evidence: [memory ids]}: every id must name a stored memory
  (`resource.not-found`, naming the first missing one). The same improvement pending already,
  or rejected by a person, is answered with that one (`created: false`).
- `status` {id}: its state — pending, accepted or rejected (with the reviewer's reason).
- `accept`, `reject`, `apply`: refused with `review.human-only`. A person uses /review/ or
  `memesh improvement accept|reject ID` (improvement_accept / improvement_reject below).
"""

from __future__ import annotations

from typing import Annotated, Literal

from django.db import transaction
from pydantic import AfterValidator, Field

from core.errors import InvalidInput, NotFound
from graph.models import Entity
from graph.ops.kit.fields import Output, StrictInput, stripped_not_blank
from graph.ops.kit.operation import CallContext, Operation, ToolHints
from proposals.decisions import proposal_accept, proposal_reject
from proposals.errors import HumanReviewOnly
from proposals.models import Proposal, ProposalKind, ProposalStatus
from proposals.results import AcceptResult, RejectResult
from proposals.staging import proposal_stage

ACTIONS = ("propose", "status")
REVIEW_ACTIONS = ("accept", "reject", "apply", "approve")
MAX_TITLE_CHARS = 200
MAX_DESCRIPTION_CHARS = 4_000
MAX_EVIDENCE = 20
CLUSTER_KEY = "improvement"
# What the tool calls a proposal's states: a person *accepts* an improvement (the queue's
# `applied`, since nothing is applied to the graph).
STATUS_WORDS = {
    ProposalStatus.PENDING: "pending",
    ProposalStatus.APPLIED: "accepted",
    ProposalStatus.REJECTED: "rejected",
}

Text = Annotated[str, AfterValidator(stripped_not_blank)]


class ImprovementInput(StrictInput):
    action: str = Field(
        min_length=1,
        max_length=32,
        description="propose | status. There is no accept or reject: only a person decides "
        "(refused with review.human-only).",
    )
    title: Annotated[Text, Field(min_length=1, max_length=MAX_TITLE_CHARS)] | None = Field(
        default=None, description="propose (required): the improvement in one line."
    )
    description: Annotated[Text, Field(min_length=1, max_length=MAX_DESCRIPTION_CHARS)] | None = (
        Field(
            default=None,
            description="propose (required): what should change and why, as the evidence shows it.",
        )
    )
    evidence: list[Annotated[int, Field(ge=1)]] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_EVIDENCE,
        description=f"propose (required): ids of stored memories that show the need (1–"
        f"{MAX_EVIDENCE}; the `[mem:id]` handles).",
    )
    id: int | None = Field(default=None, ge=1, description="status (required): its id.")


class ImprovementOutput(Output):
    id: int
    status: Literal["pending", "accepted", "rejected"]
    created: bool | None = Field(
        default=None,
        description="propose: False when the same improvement was pending already or a person "
        "rejected it; nothing new was staged.",
    )
    title: str
    description: str
    evidence: list[int]
    reason: str | None = Field(description="Why a person rejected it.")
    created_at: str
    reviewed_at: str | None


def _output(proposal: Proposal, created: bool | None = None) -> ImprovementOutput:
    proposed = proposal.proposed or {}
    return ImprovementOutput(
        id=proposal.pk,
        status=STATUS_WORDS[ProposalStatus(proposal.status)],  # type: ignore[arg-type]
        created=created,
        title=str(proposed.get("title", "")),
        description=str(proposed.get("description", "")),
        evidence=[int(i) for i in proposal.source_ids or []],
        reason=proposal.reason or None,
        created_at=proposal.created_at.isoformat(),
        reviewed_at=proposal.reviewed_at.isoformat() if proposal.reviewed_at else None,
    )


def _only(data: ImprovementInput, allowed: set[str]) -> None:
    for name in sorted(ImprovementInput.model_fields):
        value = getattr(data, name)
        if name != "action" and name not in allowed and value is not None:
            raise InvalidInput(f"{name}: not taken by action {data.action!r}", field=name)
        if name in allowed and value is None:
            raise InvalidInput(f"{name}: required by action {data.action!r}", field=name)


@transaction.atomic
def improvement_propose(
    *, title: str, description: str, evidence: list[int], source_host: str
) -> ImprovementOutput:
    ids = list(dict.fromkeys(evidence))  # in the order cited, each once
    found = set(Entity.objects.filter(pk__in=ids).values_list("pk", flat=True))
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(
            f"evidence: no memory with id {missing[0]}"
            + (f" (nor {', '.join(map(str, missing[1:]))})" if missing[1:] else ""),
            field="evidence",
        )
    proposal, created = proposal_stage(
        kind=ProposalKind.IMPROVEMENT,
        project="",
        cluster_key=CLUSTER_KEY,
        source_ids=ids,
        proposed={
            "title": title,
            "description": description,
            "origin": {"by": "agent", "host": source_host},
        },
    )
    return _output(proposal, created)


def improvement_get(improvement_id: int) -> Proposal:
    proposal = Proposal.objects.filter(pk=improvement_id, kind=ProposalKind.IMPROVEMENT).first()
    if proposal is None:
        raise NotFound(f"No improvement with id {improvement_id}", field="id")
    return proposal


def improvement_accept(
    improvement_id: int, *, channel: str, reviewer: str = "", origin: str = ""
) -> AcceptResult:
    """A person accepts it (the proposals' accept, audited the same way)."""
    improvement_get(improvement_id)
    return proposal_accept(improvement_id, channel=channel, reviewer=reviewer, origin=origin)


def improvement_reject(
    improvement_id: int, *, reason: str = "", channel: str, reviewer: str = "", origin: str = ""
) -> RejectResult:
    """A person rejects it (the proposals' reject, audited the same way)."""
    improvement_get(improvement_id)
    return proposal_reject(
        improvement_id, reason=reason, channel=channel, reviewer=reviewer, origin=origin
    )


def _improvement(data: ImprovementInput, ctx: CallContext) -> ImprovementOutput:
    action = data.action.strip().lower()
    if action in REVIEW_ACTIONS:
        raise HumanReviewOnly(
            f"An agent cannot {action} an improvement: only a person decides, at /review/ or "
            "with `memesh improvement accept|reject ID`",
            field="action",
        )
    if action == "propose":
        _only(data, {"title", "description", "evidence"})
        assert data.title and data.description and data.evidence
        return improvement_propose(
            title=data.title,
            description=data.description,
            evidence=data.evidence,
            source_host=ctx.source_host,
        )
    if action == "status":
        _only(data, {"id"})
        assert data.id is not None
        return _output(improvement_get(data.id))
    raise InvalidInput(
        f"action: must be one of {', '.join(ACTIONS)} (got {data.action!r})", field="action"
    )


IMPROVEMENT = Operation(
    name="improvement",
    summary=(
        "Propose an evidence-linked product improvement (evidence: ids of stored memories) or "
        "read its status (pending, accepted, rejected); only a human may accept or reject it."
    ),
    input_model=ImprovementInput,
    output_model=ImprovementOutput,
    handler=_improvement,
    hints=ToolHints(read_only=False, destructive=False, idempotent=True),
    examples=[
        {
            "action": "propose",
            "title": "Show each decision's reason in recall results",
            "description": "Agents re-ask why a decision was taken; recall could show its why.",
            "evidence": [1],
        },
        {"action": "status", "id": 1},
    ],
)
