"""work_package and improvement on REST and the CLI, and what a person sees of their proposals
at /review/: the same services, the same errorCodes, and only a person decides."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from proposals.models import Proposal, ProposalReview, ProposalStatus
from tests.dreams import commits
from tests.helpers import remember
from tests.rest import assert_error, assert_ok, post_json
from tests.transcripts import PASTED_KEY, SESSION_IDS, install

pytestmark = pytest.mark.django_db

LESSON = {
    "type": "lesson_learned",
    "name": "embedder-key-separate",
    "observations": ["The embedder reads MEMESH_EMBEDDER_API_KEY before OPENAI_API_KEY."],
}


def cli(command: str, *args: str) -> dict[str, Any]:
    out = StringIO()
    call_command(command, *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def cli_failure(command: str, *args: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    err = StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command(command, *args, "--json", stdout=StringIO(), stderr=err)
    assert exited.value.code == 1
    return json.loads(err.getvalue().strip().splitlines()[-1])


def submit_over_rest(client: Client, root: Path) -> dict[str, Any]:
    package = assert_ok(
        post_json(
            client,
            "work_package",
            {"action": "prepare", "kind": "transcript", "workspace_root": str(root)},
        )
    )["package"]
    return assert_ok(
        post_json(
            client,
            "work_package",
            {
                "action": "submit",
                "package_id": package["package_id"],
                "source_hash": package["source_hash"],
                "workspace_hash": package["workspace_hash"],
                "result": LESSON,
                # REST knows no roots: the submission names its workspace again.
                "workspace_root": str(root),
            },
        )
    )["proposal"]


# --- REST ------------------------------------------------------------------------------------


def test_rest_prepares_and_submits_a_transcript_package(transcript_project: Path) -> None:
    install(Path(settings.CLAUDE_CONFIG_DIR), transcript_project, "secret")

    proposal = submit_over_rest(Client(), transcript_project)

    assert (proposal["kind"], proposal["status"], proposal["created"]) == (
        "memory",
        "pending",
        True,
    )
    assert Proposal.objects.get(pk=proposal["id"]).proposed["origin"]["host"] == "http"


def test_rest_refuses_with_the_stable_codes(transcript_project: Path) -> None:
    client = Client()
    assert_error(post_json(client, "work_package", {"action": "apply"}), 403, "review.human-only")
    assert_error(
        post_json(client, "work_package", {"action": "prepare", "kind": "transcript"}),
        400,
        "work_package.no-workspace-root",
    )
    assert_error(
        post_json(
            client,
            "work_package",
            {
                "action": "submit",
                "package_id": "digest:2026-W01:alpha",
                "source_hash": "a",
                "workspace_hash": "b",
                "result": {},
            },
        ),
        409,
        "work_package.workspace-mismatch",
    )
    assert_error(
        post_json(client, "improvement", {"action": "accept", "id": 1}), 403, "review.human-only"
    )
    assert not Proposal.objects.exists()


def test_rest_proposes_an_improvement_and_reads_its_status() -> None:
    evidence = remember("why-asked", "the agent asked why twice")["entityId"]
    client = Client()

    made = assert_ok(
        post_json(
            client,
            "improvement",
            {"action": "propose", "title": "t", "description": "d", "evidence": [evidence]},
        )
    )
    read = assert_ok(post_json(client, "improvement", {"action": "status", "id": made["id"]}))

    assert (made["status"], read["status"], read["evidence"]) == ("pending", "pending", [evidence])


# --- CLI -------------------------------------------------------------------------------------


def test_the_cli_prepares_from_its_directory_and_submits(
    transcript_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(Path(settings.CLAUDE_CONFIG_DIR), transcript_project, "secret")
    monkeypatch.chdir(transcript_project)

    package = cli("work_package", "prepare", "--kind", "transcript")["package"]
    out = cli(
        "work_package",
        "submit",
        "--package-id",
        package["package_id"],
        "--source-hash",
        package["source_hash"],
        "--workspace-hash",
        package["workspace_hash"],
        "--result",
        json.dumps(LESSON),
    )

    assert package["package_id"].startswith(f"transcript:{SESSION_IDS['secret']}:")
    assert PASTED_KEY not in package["material"]
    assert out["proposal"]["status"] == "pending"
    assert cli("work_package", "defer")["deferred"] is True


def test_the_cli_refuses_an_agents_apply_with_its_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_failure("work_package", "apply", capsys=capsys)["errorCode"] == "review.human-only"
    digest_like = cli("work_package", "prepare", "--kind", "digest")
    assert digest_like["available"] is False


def test_a_person_accepts_and_rejects_improvements_on_the_cli() -> None:
    evidence = remember("why-asked", "the agent asked why twice")["entityId"]
    first = cli(
        "improvement",
        "propose",
        "--title",
        "one",
        "--description",
        "d",
        "--evidence",
        str(evidence),
    )
    second = cli(
        "improvement",
        "propose",
        "--title",
        "two",
        "--description",
        "d",
        "--evidence",
        f"{evidence}",
    )

    cli("improvement", "accept", str(first["id"]))
    cli("improvement", "reject", str(second["id"]), "--reason", "not now")

    assert cli("improvement", "status", str(first["id"]))["status"] == "accepted"
    rejected = cli("improvement", "status", str(second["id"]))
    assert (rejected["status"], rejected["reason"]) == ("rejected", "not now")
    channels = set(ProposalReview.objects.values_list("channel", "outcome"))
    assert channels == {("cli", "applied"), ("cli", "rejected")}
    with pytest.raises(CommandError, match="not pending"):
        call_command("improvement", "accept", str(first["id"]), stdout=StringIO())


# --- the review page -------------------------------------------------------------------------


def test_an_agents_transcript_result_waits_at_review_with_its_masked_turns(
    transcript_project: Path, reviewer_client: Client
) -> None:
    install(Path(settings.CLAUDE_CONFIG_DIR), transcript_project, "secret")
    proposal = submit_over_rest(Client(), transcript_project)

    queue = reviewer_client.get(reverse("proposals:queue")).content.decode()
    detail = reviewer_client.get(
        reverse("proposals:detail", args=[proposal["id"]])
    ).content.decode()

    assert f'id="proposal-{proposal["id"]}"' in queue and "embedder-key-separate" in queue
    assert "Submitted by the agent" in detail and "work package" in detail
    assert "set the embedder key separately" in detail  # the source turns, for comparison
    assert PASTED_KEY not in detail and "[secret: " in detail


def test_an_improvement_is_reviewed_at_review_beside_its_evidence(reviewer_client: Client) -> None:
    evidence = remember("why-asked", "the agent asked why twice")["entityId"]
    commits(1)
    made = assert_ok(
        post_json(
            Client(),
            "improvement",
            {
                "action": "propose",
                "title": "Show the why in recall",
                "description": "Agents ask again why a decision was taken.",
                "evidence": [evidence],
            },
        )
    )

    queue = reviewer_client.get(
        reverse("proposals:queue"), {"kind": "improvement"}
    ).content.decode()
    detail = reviewer_client.get(reverse("proposals:detail", args=[made["id"]])).content.decode()
    accepted = reviewer_client.post(
        reverse("proposals:accept", args=[made["id"]]), REMOTE_ADDR="127.0.0.9", follow=True
    )

    assert "Show the why in recall" in queue and "commit-alpha-0" not in queue
    assert "Evidence (1)" in detail and "the agent asked why twice" in detail
    assert [m.level_tag for m in accepted.context["messages"]] == ["success"]
    assert Proposal.objects.get(pk=made["id"]).status == ProposalStatus.APPLIED
    review = ProposalReview.objects.get(proposal_id=made["id"])
    assert (review.channel, review.reviewer, review.origin) == ("htmx", "rita", "127.0.0.9")
    status = assert_ok(post_json(Client(), "improvement", {"action": "status", "id": made["id"]}))
    assert status["status"] == "accepted"
    admin = reviewer_client.get(reverse("admin:proposals_proposal_change", args=[made["id"]]))
    assert admin.status_code == 200 and "Show the why in recall" in admin.content.decode()


def test_the_rest_review_routes_refuse_an_improvement_and_record_the_attempt() -> None:
    evidence = remember("why-asked", "the agent asked why twice")["entityId"]
    client = Client()
    made = assert_ok(
        post_json(
            client,
            "improvement",
            {"action": "propose", "title": "t", "description": "d", "evidence": [evidence]},
        )
    )

    for action in ("accept", "reject"):
        assert_error(
            post_json(client, f"dream/proposals/{made['id']}/{action}", {}),
            403,
            "review.human-only",
        )

    assert Proposal.objects.get(pk=made["id"]).status == ProposalStatus.PENDING
    assert list(ProposalReview.objects.values_list("action", "outcome", "channel")) == [
        ("accept", "refused", "api"),
        ("reject", "refused", "api"),
    ]
