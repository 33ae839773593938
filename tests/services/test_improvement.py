"""improvement (dream/improvement.py): an agent proposes an evidence-linked improvement and
reads its status; only a person's accept or reject (the proposals' services, audited) decides
it, and accepting changes no memory."""

from __future__ import annotations

from typing import Any

import pytest

from core.errors import MemeshError
from dream.improvement import IMPROVEMENT, improvement_accept, improvement_reject
from graph.models import Entity
from graph.ops.kit.operation import CallContext
from proposals.models import Proposal, ProposalKind, ProposalReview
from tests.dreams import stage_digest
from tests.helpers import remember

pytestmark = pytest.mark.django_db

AGENT = CallContext(source_host="codex", guide_rules=True)


def call(payload: dict[str, Any]) -> dict[str, Any]:
    return IMPROVEMENT.run(payload, AGENT)


def refused(payload: dict[str, Any]) -> MemeshError:
    with pytest.raises(MemeshError) as caught:
        call(payload)
    return caught.value


def propose(*evidence: int, title: str = "Show each decision's why in recall") -> dict[str, Any]:
    return call(
        {
            "action": "propose",
            "title": title,
            "description": "Agents ask again why a decision was taken.",
            "evidence": list(evidence),
        }
    )


def test_a_proposed_improvement_is_pending_with_its_evidence() -> None:
    first = remember("why-asked", "the agent asked why twice")["entityId"]
    second = remember("why-asked-again", "and again")["entityId"]

    out = propose(second, first, second)

    proposal = Proposal.objects.get()
    assert proposal.kind == ProposalKind.IMPROVEMENT
    assert proposal.source_ids == [second, first]
    assert proposal.proposed["origin"] == {"by": "agent", "host": "codex"}
    assert (out["id"], out["status"], out["created"], out["evidence"]) == (
        proposal.pk,
        "pending",
        True,
        [second, first],
    )
    assert call({"action": "status", "id": proposal.pk})["status"] == "pending"
    assert propose(second, first)["created"] is False  # the same improvement, once
    assert Proposal.objects.count() == 1


def test_evidence_must_name_stored_memories_and_nothing_is_staged_otherwise() -> None:
    stored = remember("why-asked", "the agent asked why twice")["entityId"]

    error = refused(
        {"action": "propose", "title": "t", "description": "d", "evidence": [stored, 9999]}
    )

    assert (error.error_code, error.field) == ("resource.not-found", "evidence")
    assert "9999" in error.message
    assert refused(
        {"action": "propose", "title": "t", "description": "d", "evidence": []}
    ).error_code == ("validation.bad-body")
    assert not Proposal.objects.exists()


@pytest.mark.parametrize("action", ["accept", "reject", "apply"])
def test_an_agent_can_neither_accept_nor_reject(action: str) -> None:
    evidence = remember("why-asked", "the agent asked why twice")["entityId"]
    improvement = propose(evidence)["id"]

    error = refused({"action": action, "id": improvement})

    assert (error.error_code, error.http_status) == ("review.human-only", 403)
    assert call({"action": "status", "id": improvement})["status"] == "pending"
    assert not ProposalReview.objects.exists()


def test_a_person_accepts_it_audited_and_no_memory_changes() -> None:
    evidence = remember("why-asked", "the agent asked why twice")["entityId"]
    improvement = propose(evidence)["id"]
    before = list(Entity.objects.values_list("pk", "name", "status", "updated_at"))

    improvement_accept(improvement, channel="cli", reviewer="ada", origin="laptop")

    assert call({"action": "status", "id": improvement})["status"] == "accepted"
    assert list(Entity.objects.values_list("pk", "name", "status", "updated_at")) == before
    review = ProposalReview.objects.get()
    assert (review.action, review.outcome, review.channel, review.reviewer, review.origin) == (
        "accept",
        "applied",
        "cli",
        "ada",
        "laptop",
    )
    with pytest.raises(MemeshError):  # a second accept
        improvement_accept(improvement, channel="cli")


def test_a_person_rejects_it_with_a_reason_and_it_is_not_proposed_again() -> None:
    evidence = remember("why-asked", "the agent asked why twice")["entityId"]
    improvement = propose(evidence)["id"]

    improvement_reject(improvement, reason="recall shows why already", channel="htmx")

    status = call({"action": "status", "id": improvement})
    assert (status["status"], status["reason"]) == ("rejected", "recall shows why already")
    assert status["reviewed_at"] is not None
    again = propose(evidence)
    assert (again["id"], again["status"], again["created"]) == (improvement, "rejected", False)
    # Another improvement citing the same memory is its own proposal.
    assert propose(evidence, title="Index decisions by their why")["created"] is True


def test_status_and_review_know_only_improvements() -> None:
    digest = stage_digest("alpha", 3)

    assert refused({"action": "status", "id": digest.pk}).error_code == "resource.not-found"
    with pytest.raises(MemeshError):
        improvement_accept(digest.pk, channel="cli")
    assert Proposal.objects.get(pk=digest.pk).status == "pending"
