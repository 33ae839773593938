"""`memesh dream …`: the same services as REST, with --json output and exit codes."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from graph.models import Entity
from proposals.models import ProposalKind, ProposalReview
from proposals.services import proposal_stage
from tests.helpers import remember

pytestmark = pytest.mark.django_db


def dream(*args: str) -> str:
    out = StringIO()
    call_command("dream", *args, stdout=out)
    return out.getvalue()


def staged() -> int:
    ids = [
        remember(f"c{i}", f"commit {i}", type="commit", tags=["project:alpha"])["entityId"]
        for i in range(5)
    ]
    proposal, _ = proposal_stage(
        kind=ProposalKind.DIGEST,
        project="alpha",
        cluster_key="2026-W48",
        source_ids=ids,
        proposed={
            "name": "digest-week",
            "type": "digest",
            "observations": ["first fact", "a second fact hiding past the preview"] * 2,
            "tags": ["project:alpha"],
        },
    )
    return proposal.pk


def test_list_show_accept_with_json():
    pk = staged()

    [item] = json.loads(dream("list", "--json"))
    assert item["id"] == pk
    shown = json.loads(dream("show", str(pk), "--json"))
    assert shown["proposed_digest"]["observations"][3] == "a second fact hiding past the preview"
    assert [s["name"] for s in shown["sources"]] == [f"c{i}" for i in range(5)]
    accepted = json.loads(dream("accept", str(pk), "--json"))
    assert accepted["sourcesArchived"] == 5
    review = ProposalReview.objects.get()
    assert review.channel == "cli"
    assert review.origin  # the host name


def test_show_prints_every_observation_in_full():
    pk = staged()

    text = dream("show", str(pk))

    assert text.count("a second fact hiding past the preview") == 2
    assert "[" in text and "c0 (commit, active)" in text


def test_reject_with_reason_leaves_sources_active():
    pk = staged()

    assert "Rejected proposal" in dream("reject", str(pk), "--reason", "too vague")

    assert Entity.objects.filter(status="active").count() == 5
    assert ProposalReview.objects.get().reason == "too vague"


def test_errors_exit_1_with_the_envelope_in_json_mode():
    pk = staged()
    dream("accept", str(pk))

    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("dream", "accept", str(pk), "--json", stdout=out, stderr=err)
    assert exit_info.value.code == 1
    assert json.loads(err.getvalue())["errorCode"] == "operation.failed"
    assert out.getvalue() == ""
    with pytest.raises(CommandError, match=re.escape("resource.not-found")):
        dream("show", "999")
    with pytest.raises(CommandError, match=re.escape("validation.bad-param")):
        dream("list", "--status", "bogus")
    with pytest.raises(CommandError, match="max-llm-calls"):
        dream("run", "--max-llm-calls", "50")


def test_run_dry_run_and_conflicts_dry_run_need_no_provider():
    staged()

    run = json.loads(dream("run", "--dry-run", "--json"))
    assert run["llmCalls"] == 0
    assert run["clusteringMode"] == "calendar"
    conflicts = json.loads(dream("conflicts", "--dry-run", "--json"))
    assert conflicts["candidates"] == 0
    patterns = json.loads(dream("patterns", "--dry-run", "--json"))
    assert patterns["llmCalls"] == 0


def test_run_without_a_provider_says_llm_not_configured():
    staged()

    with pytest.raises(CommandError, match=re.escape("llm.not-configured")):
        dream("run")
