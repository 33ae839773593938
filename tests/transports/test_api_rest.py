"""The REST transport under /v1: envelopes, error mapping, body limits and routing.

Everything goes through Django's test client, the real middleware stack, DRF and the
in-memory SQLite database built from migrations (FTS5 tables included).
"""

from __future__ import annotations

import json

import pytest

from graph.models import Entity
from tests.helpers import observations_of, recall, remember
from tests.rest import ONE_MB, assert_error, assert_json, post_json

pytestmark = pytest.mark.django_db


# --- success envelopes ------------------------------------------------------------------------


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


def test_health_reports_status_version_and_the_active_entity_count(client):
    remember("one", "first")
    remember("two", "second")

    response = client.get("/v1/health")

    assert response.status_code == 200
    body = assert_json(response)
    assert body["success"] is True
    assert body["data"]["status"] == "ok"
    assert body["data"]["version"]
    assert body["data"]["entities"] == 2
    assert isinstance(body["data"]["vectors"], bool)


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


# --- validation failures: 400 validation.bad-body naming the field ----------------------------


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


def test_malformed_json_is_a_json_400_never_html(client):
    response = client.post(
        "/v1/remember", data='{"name": "x", "type":', content_type="application/json"
    )

    body = assert_error(response, 400, "validation.bad-body")
    assert "JSON" in body["error"]
    assert b"<html" not in response.content.lower()


def test_a_json_array_body_is_rejected(client):
    response = post_json(client, "remember", [{"name": "x", "type": "note"}])

    body = assert_error(response, 400, "validation.bad-body")
    assert "object" in body["error"]


def test_a_body_without_content_type_still_parses_as_json(client):
    payload = json.dumps({"name": "no-ctype", "type": "note", "observations": ["bare"]})

    # An empty CONTENT_TYPE is what Django and DRF see when the header is absent
    # (content_type=None would put a literal None into META, which no server does).
    response = client.generic("POST", "/v1/remember", data=payload, content_type="")

    assert response.status_code == 200, response.content
    assert assert_json(response)["data"]["created"] is True
    assert observations_of("no-ctype") == ["bare"]


def test_a_form_encoded_content_type_still_parses_as_json(client):
    # curl -d '{...}' sends application/x-www-form-urlencoded.
    payload = json.dumps({"name": "curl-style", "type": "note", "observations": ["from curl"]})

    response = client.post(
        "/v1/remember", data=payload, content_type="application/x-www-form-urlencoded"
    )

    assert response.status_code == 200, response.content
    assert observations_of("curl-style") == ["from curl"]


@pytest.mark.parametrize("accept", ["text/html", "application/xml", "*/*"])
def test_the_answer_is_json_whatever_the_accept_header_asks_for(client, accept):
    remember("auth-decision", "Chose JWT for authentication", type="decision")

    response = client.post(
        "/v1/recall",
        data=json.dumps({"query": "JWT"}),
        content_type="application/json",
        HTTP_ACCEPT=accept,
    )

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert [e["name"] for e in response.json()["data"]["entities"]] == ["auth-decision"]


def test_an_empty_body_to_recall_lists_recent_entities(client):
    remember("older", "first")
    remember("newer", "second")

    response = client.post("/v1/recall", data="", content_type="application/json")

    assert response.status_code == 200, response.content
    body = assert_json(response)
    assert [e["name"] for e in body["data"]["entities"]] == ["newer", "older"]
    assert all("match" not in e for e in body["data"]["entities"])


# --- body limit -------------------------------------------------------------------------------


def test_a_body_of_one_megabyte_plus_one_byte_is_413_with_the_reference_envelope(client):
    response = client.post("/v1/remember", data="x" * (ONE_MB + 1), content_type="application/json")

    body = assert_error(response, 413, "payload.too-large")
    assert body["code"] == "PAYLOAD_TOO_LARGE"
    assert body["limit"] == "1mb"
    assert "memesh export" in body["hint"]


def test_a_body_of_exactly_one_megabyte_is_accepted(client):
    remember("kept", "still listed")
    raw = json.dumps({"limit": 5})
    padded = raw + " " * (ONE_MB - len(raw))
    assert len(padded.encode()) == ONE_MB

    response = client.post("/v1/recall", data=padded, content_type="application/json")

    assert response.status_code == 200, response.content
    assert [e["name"] for e in assert_json(response)["data"]["entities"]] == ["kept"]


def test_a_non_numeric_content_length_is_a_json_400(client):
    response = client.post(
        "/v1/recall", data="{}", content_type="application/json", CONTENT_LENGTH="lots"
    )

    assert_error(response, 400, "validation.bad-body")


def test_a_chunked_body_without_content_length_is_refused_not_read_as_empty(client):
    # DRF reads a body without Content-Length as empty, so a chunked recall would list
    # recent memories instead of searching, and no size limit could apply.
    remember("present", "listed when the body is lost")

    response = client.generic(
        "POST",
        "/v1/recall",
        data="",
        content_type="application/json",
        headers={"transfer-encoding": "chunked"},
    )

    body = assert_error(response, 411, "request.length-required")
    assert "Content-Length" in body["error"]


# --- routing ----------------------------------------------------------------------------------


def test_an_unknown_route_is_a_json_404_with_the_legacy_code(client):
    response = client.get("/v1/no-such-thing")

    body = assert_error(response, 404, "route.not-found")
    assert body["code"] == "NOT_FOUND"


def test_an_unknown_route_outside_v1_is_a_json_404_too(client):
    response = client.post("/wp-login.php", data="{}", content_type="application/json")

    assert_error(response, 404, "route.not-found")


def test_get_on_a_post_route_is_a_json_405(client):
    response = client.get("/v1/remember")

    assert response.status_code == 405
    body = assert_json(response)
    assert body["success"] is False
    assert body["errorCode"]
    assert "GET" in body["error"]


def test_a_foreign_host_header_is_a_json_400(client):
    response = client.get("/v1/health", headers={"host": "attacker.example"})

    body = assert_error(response, 400, "request.bad-host")
    assert "Host" in body["error"]


def test_a_write_with_a_foreign_host_header_is_refused_before_it_runs(client):
    response = post_json(
        client,
        "remember",
        {"name": "rebound", "type": "note", "observations": ["via dns rebinding"]},
        headers={"host": "attacker.example:3737"},
    )

    assert_error(response, 400, "request.bad-host")
    assert not Entity.objects.filter(name="rebound").exists()


def test_loopback_host_headers_with_a_port_are_allowed(client):
    for host in ("127.0.0.1:3737", "localhost:3737", "[::1]:3737"):
        response = client.get("/v1/health", headers={"host": host})
        assert response.status_code == 200, host
