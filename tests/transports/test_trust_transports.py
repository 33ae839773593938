"""The trust model over REST (/v1/observe, /v1/supersede, /v1/memory_list, /v1/ping and the
new fields of remember, recall and forget), the CLI (`memesh observe`, `supersede`,
`memories`, `ping` and the new flags), and the review page showing trust."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from api.rest.openapi import ERROR_CODES
from graph.errors import ObserveRequired, SourceRequired
from graph.models import Entity
from proposals.models import ProposalKind
from proposals.staging import proposal_stage
from tests.dreams import make_user
from tests.helpers import remember, stored
from tests.rest import assert_error, assert_ok, post_json

pytestmark = pytest.mark.django_db


# --- REST -------------------------------------------------------------------------------------


def test_rest_remember_with_a_source_answers_a_fact(client: Client) -> None:
    data = assert_ok(
        post_json(
            client,
            "remember",
            {
                "name": "deploy",
                "type": "note",
                "observations": ["The deploy script restarts php8.4-fpm"],
                "source": "runbook",
                "invalidation_condition": "delete if deploys move to a zero-downtime reload",
            },
        )
    )

    assert (data["trust"]["status"], data["trust"]["confidence"]) == ("fact", 1.0)
    assert data["trust"]["invalidation_condition"].startswith("delete if deploys")


def test_rest_observe_promotes_and_its_refusals_have_stable_codes(client: Client) -> None:
    remember("guess", "maybe")

    assert_error(post_json(client, "observe", {"name": "guess"}), 400, "trust.source-required")
    assert_error(
        post_json(client, "observe", {"name": "nope", "source": "x"}), 404, "resource.not-found"
    )
    assert_error(post_json(client, "observe", {"source": "x"}), 400, "validation.bad-body")
    data = assert_ok(post_json(client, "observe", {"id": stored("guess").pk, "source": "log"}))

    assert data["promoted"] is True and data["trust"]["status"] == "fact"


def test_rest_remember_cannot_raise_trust_and_answers_409(client: Client) -> None:
    remember("guess", "maybe")

    body = assert_error(
        post_json(
            client,
            "remember",
            {"name": "guess", "type": "note", "observations": ["x"], "source": "s"},
        ),
        409,
        "trust.observe-required",
    )

    assert body["field"] == "source"


def test_rest_supersede_recall_status_filter_and_forget_reason(client: Client) -> None:
    remember("admin", "The admin dashboard is at /admin", source="routes")

    out = assert_ok(
        post_json(
            client,
            "supersede",
            {"name": "admin", "observations": ["The admin dashboard moved to /manage"]},
        )
    )
    assert out["superseded"]["status"] == "archived" and out["new"]["name"] == "admin-v2"

    hypotheses = assert_ok(post_json(client, "recall", {"query": "admin", "status": "hypothesis"}))
    assert [e["name"] for e in hypotheses["entities"]] == ["admin-v2"]
    assert (
        assert_ok(post_json(client, "recall", {"query": "admin", "status": "fact"}))["entities"]
        == []
    )

    forgotten = assert_ok(post_json(client, "forget", {"name": "admin-v2", "reason": "wrong"}))
    assert forgotten["reason"] == "wrong"


def test_rest_memory_list_and_ping(client: Client) -> None:
    remember("f", "a fact", source="doc")
    remember("h", "a guess")

    listed = assert_ok(post_json(client, "memory_list", {"status": "fact"}))
    assert [m["name"] for m in listed["memories"]] == ["f"]
    assert listed["memories"][0]["history"][0]["action"] == "remember"
    assert_error(
        post_json(client, "memory_list", {"status": "retired"}), 400, "validation.bad-body"
    )

    pong = assert_ok(post_json(client, "ping", {}))
    assert pong["message"] == "pong" and pong["agent"]["source_host"] == "http"
    assert pong["backend"]["memories"] == 2


def test_every_entity_listing_carries_the_trust_block(client: Client) -> None:
    # GET /v1/entities is what the dashboard reads: it shows the same trust as recall.
    remember("h", "a guess")

    [entity] = assert_ok(client.get("/v1/entities"))["entities"]

    assert entity["trust"]["status"] == "hypothesis"
    assert entity["trust"]["unconfirmed_since"] is not None


# --- CLI ------------------------------------------------------------------------------------


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def run_json(*args: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run(*args, "--json"))
    return data


def test_cli_remember_observe_and_memories() -> None:
    stored_ = run_json(
        "remember",
        "--name",
        "guess",
        "--type",
        "note",
        "--obs",
        "maybe",
        "--ttl-hours",
        "24",
        "--invalidation-tag",
        "temporal",
    )
    assert stored_["trust"]["status"] == "hypothesis"
    assert stored_["trust"]["expires_at"] is not None

    assert "Promoted to fact" in run("observe", "--name", "guess", "--source", "README")
    assert stored("guess").trust == "fact"

    listed = run("memories", "--status", "fact")
    assert "guess — fact 0.6" in listed


def test_cli_supersede_forget_reason_recall_status_and_ping() -> None:
    run_json(
        "remember", "--name", "admin", "--type", "note", "--obs", "at /admin", "--source", "routes"
    )

    out = run_json("supersede", "--name", "admin", "--obs", "at /manage", "--source", "routes")
    assert out["new"]["trust"]["status"] == "fact"

    run("forget", "--name", "admin-v2", "--reason", "moved again")
    assert stored("admin-v2").metadata["forgotten"]["reason"] == "moved again"
    assert "moved again" in run("memories", "--status", "archived")

    remember("h", "admin guess")
    found = run_json("recall", "admin", "--status", "hypothesis")
    assert [e["name"] for e in found["entities"]] == ["h"]

    assert run_json("ping", "--message", "hi")["message"] == "hi"
    assert "agent: cli" in run("ping")


# --- the review page --------------------------------------------------------------------------


def test_the_review_page_shows_the_sources_trust_and_what_accepting_would_store() -> None:
    remember("s1", "one", source="doc", confidence=0.9)
    remember("s2", "two", confidence=0.4, invalidation_condition="if the parser is rewritten")
    proposal, _ = proposal_stage(
        kind=ProposalKind.DIGEST,
        project="alpha",
        cluster_key="k",
        source_ids=[stored("s1").pk, stored("s2").pk],
        proposed={"name": "summary", "observations": ["both"]},
    )
    client = Client()
    client.force_login(make_user("rita", review=True))

    page = client.get(reverse("proposals:detail", args=[proposal.pk]))

    html = page.content.decode()
    assert page.status_code == 200
    assert "Accepting stores it as a <strong>hypothesis</strong>" in html
    assert "confidence 0.4 (the least of its sources)" in html
    assert "if the parser is rewritten" in html
    assert "fact · confidence 0.9 · source doc" in html
    assert "hypothesis, unconfirmed since" in html
    assert not Entity.objects.filter(name="summary").exists()


def test_the_trust_error_codes_are_in_the_openapi_document_and_docs_api_md() -> None:
    docs_api = (Path(settings.BASE_DIR) / "docs" / "api.md").read_text()
    for error in (SourceRequired, ObserveRequired):
        assert error.error_code in ERROR_CODES
        assert f"| `{error.error_code}` | {error.http_status} |" in docs_api
