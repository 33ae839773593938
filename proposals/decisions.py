"""A person's decision on a proposal: accept (apply it) or reject it.

Accept and reject claim the proposal with a conditional `UPDATE … WHERE status='pending'`
and check that one row changed (as healthchecks' sendalerts claims a flip), so two reviewers
racing — or one double-clicking — cannot apply a proposal twice. The whole accept is one
transaction: the graph writes (proposals/appliers.py) and the status change commit or roll
back together. Every accept and reject, also a refused one, leaves a ProposalReview row saying
who did it and from where.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from core.errors import InvalidInput, NotFound, OperationFailed
from proposals.appliers import Unclaimable, proposal_apply
from proposals.errors import HumanReviewOnly
from proposals.models import (
    Proposal,
    ProposalKind,
    ProposalReview,
    ProposalStatus,
    ReviewChannel,
)
from proposals.results import AcceptResult, RejectResult
from proposals.schemas import MAX_REASON_CHARS

ACTION_ACCEPT = "accept"
ACTION_REJECT = "reject"
OUTCOME_APPLIED = "applied"
OUTCOME_REJECTED = "rejected"
OUTCOME_REFUSED = "refused"


@dataclass(frozen=True)
class _Review:
    """Who reviews a proposal, how, and with which action: every outcome of that review is
    recorded in the audit trail under it."""

    proposal_id: int
    action: str
    channel: str
    reviewer: str
    origin: str

    def record(self, outcome: str, reason: str = "") -> None:
        ProposalReview.objects.create(
            proposal_id=self.proposal_id,
            action=self.action,
            outcome=outcome,
            channel=self.channel,
            reviewer=self.reviewer[:150],
            origin=self.origin[:255],
            reason=reason,
        )


def _check_channel(channel: str) -> None:
    if channel not in ReviewChannel.values:
        raise InvalidInput(
            f"channel must be one of {', '.join(ReviewChannel.values)} (got {channel!r})",
            field="channel",
        )


def _claim(proposal_id: int, to: str, reason: str = "") -> bool:
    """Flip pending -> `to`; True when this call did it (exactly one row changed)."""
    changed = Proposal.objects.filter(pk=proposal_id, status=ProposalStatus.PENDING).update(
        status=to, reviewed_at=timezone.now(), reason=reason
    )
    return changed == 1


def _person_only(proposal: Proposal, review: _Review) -> None:
    """An improvement is decided by a person, in the review page, the admin or the CLI — not
    over the REST API, which an agent can reach as well (docs/work-packages.md). The refused
    attempt is recorded like any refused review."""
    if proposal.kind != ProposalKind.IMPROVEMENT or review.channel != ReviewChannel.API:
        return
    with transaction.atomic():
        review.record(OUTCOME_REFUSED, "an improvement is reviewed by a person, not over the API")
    raise HumanReviewOnly(
        f"Improvement {proposal.pk} is accepted or rejected by a person at /review/ or with "
        "`memesh improvement accept|reject`, not over the API; nothing was changed"
    )


def _refuse(proposal: Proposal, review: _Review) -> OperationFailed:
    """Record a refused review (in its own transaction) and the error to raise."""
    with transaction.atomic():
        review.record(OUTCOME_REFUSED, f"proposal is {proposal.status}")
    return OperationFailed(
        f"Proposal {proposal.pk} is {proposal.status}, not pending; nothing was changed"
    )


def proposal_accept(
    proposal_id: int, *, channel: str, reviewer: str = "", origin: str = ""
) -> AcceptResult:
    """Apply a pending proposal (the reference's accept):

    - digest: creates the digest entity, a `summarizes` edge to each source it can still
      claim, and archives those sources (through graph.ops.forget.entity_forget, which
      cleans the indexes); source_ids are kept on the proposal.
    - pattern_emergent: creates the pattern entity and an `evidence_for` edge from each
      evidence memory still active; archives nothing.
    - relation: creates the relation between the two (still active) memories; `supersedes`
      archives the superseded one, as remember does.
    - memory (mined from a transcript): creates the memory; it has no sources.
    - improvement: records the acceptance only; nothing is written to the graph.

    A proposal that can no longer claim any source (all archived — summarised by another
    digest or forgotten — or deleted) raises OperationFailed and is left rejected; its audit
    row is a refused accept whose reason says so. Not pending (a double accept) raises
    OperationFailed and changes nothing. A missing id is NotFound.
    """
    _check_channel(channel)
    proposal = Proposal.objects.filter(pk=proposal_id).first()
    if proposal is None:
        raise NotFound(f"No proposal with id {proposal_id}", field="id")
    review = _Review(proposal.pk, ACTION_ACCEPT, channel, reviewer, origin)
    _person_only(proposal, review)
    result: AcceptResult | None = None
    try:
        with transaction.atomic():
            if _claim(proposal.pk, ProposalStatus.APPLIED):
                result = proposal_apply(proposal)
                review.record(OUTCOME_APPLIED)
    except Unclaimable as exc:
        # The transaction rolled back (nothing applied); resolve the proposal as rejected. The
        # accept itself was refused, and the audit row says so: outcome `rejected` is kept for a
        # person's reject (the dreamer remembers those, proposals/selectors.py).
        reason = str(exc)
        with transaction.atomic():
            _claim(proposal.pk, ProposalStatus.REJECTED, reason)
            review.record(OUTCOME_REFUSED, f"{reason}; the proposal was marked rejected")
        raise OperationFailed(
            f"Proposal {proposal.pk} can no longer be applied ({reason}); it has been marked "
            "rejected"
        ) from None
    except OperationFailed as exc:
        # Rolled back and still pending: a person may reject it, or fix the graph and retry.
        with transaction.atomic():
            review.record(OUTCOME_REFUSED, exc.message[:MAX_REASON_CHARS])
        raise
    if result is None:
        proposal.refresh_from_db()
        raise _refuse(proposal, review)
    return result


def proposal_reject(
    proposal_id: int, *, reason: str = "", channel: str, reviewer: str = "", origin: str = ""
) -> RejectResult:
    """Mark a pending proposal rejected, recording why; the source memories are untouched."""
    _check_channel(channel)
    reason = reason.strip()
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidInput(
            f"reason: must be at most {MAX_REASON_CHARS} characters (got {len(reason)})",
            field="reason",
        )
    proposal = Proposal.objects.filter(pk=proposal_id).first()
    if proposal is None:
        raise NotFound(f"No proposal with id {proposal_id}", field="id")
    review = _Review(proposal.pk, ACTION_REJECT, channel, reviewer, origin)
    _person_only(proposal, review)
    with transaction.atomic():
        claimed = _claim(proposal.pk, ProposalStatus.REJECTED, reason)
        if claimed:
            review.record(OUTCOME_REJECTED, reason)
    if not claimed:
        proposal.refresh_from_db()
        raise _refuse(proposal, review)
    return {"id": proposal.pk, "status": "rejected"}
