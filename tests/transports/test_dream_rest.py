"""/v1/dream/* and /v1/tasks/<id>: the reference's shapes and error codes over REST."""

from __future__ import annotations

import pytest

from api.rest.openapi import openapi_document
from graph.models import Entity
from proposals.models import Proposal, ProposalKind, TaskRun
from proposals.staging import proposal_stage
from tests.helpers import remember
from tests.rest import assert_error, assert_ok, post_json

pytestmark = pytest.mark.django_db


def commits(n: int) -> list[int]:
    return [
        remember(f"c{i}", f"commit {i}", type="commit", tags=["project:alpha"])["entityId"]
        for i in range(n)
    ]


def staged() -> Proposal:
    proposal, _ = proposal_stage(
        kind=ProposalKind.DIGEST,
        project="alpha",
        cluster_key="2026-W48",
        source_ids=commits(5),
        proposed={"name": "digest-week", "type": "digest", "observations": ["o"], "tags": []},
    )
    return proposal


def test_list_and_detail(client):
    proposal = staged()

    [item] = assert_ok(client.get("/v1/dream/proposals"))
    assert item["id"] == proposal.pk
    assert item["kind"] == "digest"
    assert item["source_count"] == 5
    assert assert_ok(client.get("/v1/dream/proposals?status=applied")) == []
    assert len(assert_ok(client.get("/v1/dream/proposals?status=all"))) == 1
    detail = assert_ok(client.get(f"/v1/dream/proposals/{proposal.pk}"))
    assert detail["proposed_digest"]["name"] == "digest-week"
    assert detail["status"] == "pending"


def test_bad_status_and_missing_ids_answer_the_reference_codes(client):
    assert_error(client.get("/v1/dream/proposals?status=nope"), 400, "validation.bad-param")
    assert_error(client.get("/v1/dream/proposals/999"), 404, "resource.not-found")
    assert_error(post_json(client, "dream/proposals/999/accept", {}), 404, "resource.not-found")
    assert_error(post_json(client, "dream/proposals/999/reject", {}), 404, "resource.not-found")
    assert_error(
        client.get("/v1/tasks/00000000-0000-0000-0000-000000000000"), 404, "resource.not-found"
    )


def test_accept_then_a_second_accept_is_operation_failed(client):
    proposal = staged()

    data = assert_ok(post_json(client, f"dream/proposals/{proposal.pk}/accept", {}))
    assert data == {
        "proposalId": proposal.pk,
        "digestEntityName": "digest-week",
        "sourcesArchived": 5,
        "sourcesLinked": 5,
        "kind": "digest",
    }
    assert_error(
        post_json(client, f"dream/proposals/{proposal.pk}/accept", {}), 400, "operation.failed"
    )
    review = proposal.reviews.first()
    assert (review.channel, review.origin) == ("api", "127.0.0.1")


def test_reject_with_a_reason_and_a_bad_body(client):
    proposal = staged()

    assert_error(
        post_json(client, f"dream/proposals/{proposal.pk}/reject", {"reason": "x" * 501}),
        400,
        "validation.bad-body",
    )
    assert_error(
        post_json(client, f"dream/proposals/{proposal.pk}/reject", {"why": "no"}),
        400,
        "validation.bad-body",
    )
    data = assert_ok(
        post_json(client, f"dream/proposals/{proposal.pk}/reject", {"reason": "vague"})
    )
    assert data == {"id": proposal.pk, "status": "rejected"}
    assert Entity.objects.filter(status="active").count() == 5


def test_dream_run_answers_the_dreamer_result_synchronously(client, llm):
    commits(6)

    data = assert_ok(post_json(client, "dream/run", {"project": "alpha", "maxLlmCalls": 3}))

    assert set(data) == {
        "proposalsCreated",
        "clustersScanned",
        "llmCalls",
        "skipped",
        "durationMs",
        "clusteringMode",
        "clusteringNote",
    }
    assert data["proposalsCreated"] == 1
    assert data["clusteringMode"] == "calendar"


def test_dream_run_without_a_provider_is_llm_not_configured(client):
    commits(6)

    assert_error(post_json(client, "dream/run", {}), 400, "llm.not-configured")


def test_dream_run_validates_its_body(client):
    for body in ({"windowDays": 0}, {"maxLlmCalls": 21}, {"validate": "yes"}, {"nope": 1}):
        assert_error(post_json(client, "dream/run", body), 400, "validation.bad-body")
    assert_error(
        client.post("/v1/dream/run", data="{not json", content_type="application/json"),
        400,
        "validation.bad-body",
    )


def test_async_dream_run_returns_a_task_id_that_tasks_reports_on(
    client, llm, django_capture_on_commit_callbacks
):
    commits(6)

    with django_capture_on_commit_callbacks(execute=True):
        data = assert_ok(post_json(client, "dream/run", {"async": True}))

    task = assert_ok(client.get(f"/v1/tasks/{data['taskId']}"))
    assert task["id"] == data["taskId"]
    assert task["kind"] == "dream_run"
    assert task["status"] == "succeeded"  # the test settings run tasks eagerly
    assert task["result"]["proposalsCreated"] == 1
    assert task["finishedAt"] is not None


def test_an_async_run_that_fails_reports_its_error_code(client, django_capture_on_commit_callbacks):
    commits(6)

    with django_capture_on_commit_callbacks(execute=True):
        data = assert_ok(post_json(client, "dream/run", {"async": True}))

    task = assert_ok(client.get(f"/v1/tasks/{data['taskId']}"))
    assert (task["status"], task["errorCode"]) == ("failed", "llm.not-configured")
    assert TaskRun.objects.get().error


def test_the_routes_are_in_the_openapi_document():
    paths = openapi_document()["paths"]

    assert {"get"} == set(paths["/v1/dream/proposals"])
    assert {"get"} == set(paths["/v1/dream/proposals/{proposal_id}"])
    assert {"post"} == set(paths["/v1/dream/proposals/{proposal_id}/accept"])
    assert {"post"} == set(paths["/v1/dream/proposals/{proposal_id}/reject"])
    assert {"post"} == set(paths["/v1/dream/run"])
    assert {"get"} == set(paths["/v1/tasks/{task_id}"])
    run_body = paths["/v1/dream/run"]["post"]["requestBody"]["content"]["application/json"]
    ref = run_body["schema"]["$ref"].rsplit("/", 1)[1]
    assert {"project", "windowDays", "maxLlmCalls", "validate", "async"} <= set(
        openapi_document()["components"]["schemas"][ref]["properties"]
    )
