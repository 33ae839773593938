"""The data step of proposals' migration 0002: proposals staged before it get the state their
sources are in, so a rejection made before the upgrade holds."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from graph.models import Entity
from proposals.decisions import proposal_reject
from proposals.models import Proposal, ProposalKind
from proposals.selectors import sources_state
from proposals.staging import proposal_stage
from tests.dreams import commits

pytestmark = pytest.mark.django_db

migration = importlib.import_module("proposals.migrations.0002_sources_state")


def test_a_rejection_made_before_the_upgrade_holds_while_its_sources_are_unchanged():
    commits(5)
    ids = list(Entity.objects.order_by("id").values_list("id", flat=True))
    old, _ = proposal_stage(
        kind=ProposalKind.DIGEST,
        project="alpha",
        cluster_key="2026-W48",
        source_ids=ids,
        proposed={"name": "digest-old", "observations": ["Flaky parser tests were fixed"]},
    )
    proposal_reject(old.pk, channel="cli")
    Proposal.objects.filter(pk=old.pk).update(sources_state="")  # as 0002's schema step left it

    migration.fill_sources_state(apps, None)

    old.refresh_from_db()
    assert old.sources_state == sources_state(ids)
    again, created = proposal_stage(
        kind=ProposalKind.DIGEST,
        project="alpha",
        cluster_key="2026-W48",
        source_ids=ids,
        proposed={"name": "digest-new", "observations": ["The parser was hardened"]},
    )
    assert (again.pk, created) == (old.pk, False)
