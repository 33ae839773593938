"""remember, recall and forget over /v1: the success envelope, provenance stamped by the
transport (never by the caller), and every validation failure a validation.bad-body naming the
field, with nothing stored.

Everything goes through Django's test client, the real middleware stack, DRF and the
in-memory SQLite database built from migrations (FTS5 tables included).
"""

from __future__ import annotations

import pytest

from graph.models import Entity
from tests.helpers import recall, remember
from tests.rest import assert_error, assert_json, post_json

pytestmark = pytest.mark.django_db


def test_remember_returns_the_success_envelope(client):
    response = post_json(
        client,
        "remember",
        {"name": "auth-decision", "type": "decision", "observations": ["Chose JWT"]},
    )

    assert response.status_code == 200
    body = assert_json(response)
    assert body["success"] is True
    assert body["data"]["stored"] is True
    assert body["data"]["created"] is True
    assert body["data"]["name"] == "auth-decision"
    assert body["data"]["observations"] == 1


def test_recall_returns_the_success_envelope_with_a_keyword_match(client):
    remember("auth-decision", "Chose JWT for authentication", type="decision")

    response = post_json(client, "recall", {"query": "JWT"})

    assert response.status_code == 200
    body = assert_json(response)
    assert body["success"] is True
    [entity] = body["data"]["entities"]
    assert entity["name"] == "auth-decision"
    assert entity["observations"] == ["Chose JWT for authentication"]
    assert entity["match"]["source"] == "keyword"
    assert set(body["data"]["retrieval"]) == {"mode", "degraded", "truncated"}


def test_forget_returns_the_success_envelope_and_archives(client):
    remember("old-plan", "Use MySQL")

    response = post_json(client, "forget", {"name": "old-plan"})

    assert response.status_code == 200
    body = assert_json(response)
    assert body == {"success": True, "data": {"name": "old-plan", "archived": True}}
    assert Entity.objects.get(name="old-plan").status == "archived"


def test_an_empty_body_to_recall_lists_recent_entities(client):
    remember("older", "first")
    remember("newer", "second")

    response = client.post("/v1/recall", data="", content_type="application/json")

    assert response.status_code == 200, response.content
    body = assert_json(response)
    assert [e["name"] for e in body["data"]["entities"]] == ["newer", "older"]
    assert all("match" not in e for e in body["data"]["entities"])


def test_rest_stamps_http_as_the_provenance_source_host(client):
    post_json(client, "remember", {"name": "via-rest", "type": "note", "observations": ["x1"]})

    [entity] = recall("x1")["entities"]
    assert entity["metadata"]["provenance"]["source_host"] == "http"


def test_the_caller_cannot_supply_its_own_provenance(client):
    response = post_json(
        client,
        "remember",
        {"name": "forged", "type": "note", "metadata": {"provenance": {"source_host": "x"}}},
    )

    body = assert_error(response, 400, "validation.bad-body")
    assert "metadata" in body["error"]
    assert not Entity.objects.filter(name="forged").exists()


@pytest.mark.parametrize(
    ("route", "payload", "field"),
    [
        ("remember", {"type": "note", "observations": ["x"]}, "name"),
        ("remember", {"name": "n", "type": "note", "title": "t" * 201}, "title"),
        ("remember", {"name": "n", "type": "note", "bogus": 1}, "bogus"),
        ("remember", {"name": "n", "type": "note", "observations": "not a list"}, "observations"),
        ("remember", {"name": "n", "type": 5}, "type"),
        ("recall", {"query": "x", "limit": 101}, "limit"),
        ("recall", {"limit": "5"}, "limit"),
        ("forget", {"name": "n", "observations": ["a"]}, "observations"),
    ],
    ids=[
        "missing-name",
        "too-long-title",
        "unknown-key",
        "observations-not-a-list",
        "type-not-a-string",
        "limit-over-100",
        "limit-as-string",
        "forget-plural-observations",
    ],
)
def test_every_validation_failure_is_a_bad_body_naming_the_field(client, route, payload, field):
    response = post_json(client, route, payload)

    body = assert_error(response, 400, "validation.bad-body")
    assert field in body["error"]


def test_a_rejected_remember_stores_nothing(client):
    post_json(client, "remember", {"name": "n", "type": "note", "title": "t" * 201})

    assert not Entity.objects.filter(name="n").exists()
