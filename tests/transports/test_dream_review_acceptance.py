"""Issue acceptance, end to end: a dream run over 12 commit memories of one project, against a
real loopback LLM server, stages one pending digest; a reviewer accepts it in the Django admin
(archiving the 12, creating the digest and its `summarizes` edges, writing an audit record); a
second accept fails cleanly; rejecting another run's digest leaves its sources active."""

from __future__ import annotations

import pytest
from django.urls import reverse

from dream.dreamer import dream_run
from graph.models import Entity, Relation, Status
from proposals.models import Proposal, ProposalReview, ProposalStatus
from tests.dreams import commits

pytestmark = pytest.mark.django_db


def test_a_dreamed_digest_accepted_in_the_admin_replaces_its_twelve_sources(llm, reviewer_client):
    names = commits(12, project="alpha")
    assert dream_run(project="alpha")["proposalsCreated"] == 1
    proposal = Proposal.objects.get(status=ProposalStatus.PENDING)
    accept = reverse("admin:proposals_proposal_accept", args=[proposal.pk])

    first = reviewer_client.post(accept, REMOTE_ADDR="127.0.0.7", follow=True)
    assert [m.level_tag for m in first.context["messages"]] == ["success"]

    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.APPLIED
    assert Entity.objects.filter(name__in=names, status=Status.ARCHIVED).count() == 12
    digest = Entity.objects.get(name=proposal.proposed["name"])
    assert digest.status == Status.ACTIVE
    summarized = Relation.objects.filter(from_entity=digest, type="summarizes")
    assert set(summarized.values_list("to_entity__name", flat=True)) == set(names)
    review = ProposalReview.objects.get(proposal=proposal)
    assert (review.outcome, review.channel, review.reviewer, review.origin) == (
        "applied",
        "admin",
        "rita",
        "127.0.0.7",
    )

    again = reviewer_client.post(accept, follow=True)

    assert again.status_code == 200
    assert [m.level_tag for m in again.context["messages"]] == ["error"]
    assert Entity.objects.filter(name=proposal.proposed["name"]).count() == 1
    assert list(proposal.reviews.values_list("outcome", flat=True)) == ["applied", "refused"]


def test_a_dreamed_digest_rejected_in_the_admin_leaves_its_sources_active(llm, reviewer_client):
    names = commits(6, project="beta")
    assert dream_run(project="beta")["proposalsCreated"] == 1
    proposal = Proposal.objects.get(status=ProposalStatus.PENDING)

    reviewer_client.post(
        reverse("admin:proposals_proposal_reject", args=[proposal.pk]),
        {"reason": "too vague"},
    )

    proposal.refresh_from_db()
    assert (proposal.status, proposal.reason) == (ProposalStatus.REJECTED, "too vague")
    assert Entity.objects.filter(name__in=names, status=Status.ACTIVE).count() == 6
