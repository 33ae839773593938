"""How /v1 reads a request body: JSON whatever the Content-Type or Accept header says, a JSON
400 (never HTML) for what does not parse, and the reference's one-megabyte body limit."""

from __future__ import annotations

import json

import pytest

from core.json_limits import MAX_JSON_DEPTH
from graph.models import Entity
from tests.helpers import observations_of, remember
from tests.rest import ONE_MB, assert_error, assert_json, post_json

pytestmark = pytest.mark.django_db


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


@pytest.mark.parametrize("route", ["recall", "export", "remember", "forget", "dream/run"])
def test_a_null_body_is_not_an_object_and_changes_nothing(client, route):
    remember("kept", "stays as it was")

    response = post_json(client, route, None)

    body = assert_error(response, 400, "validation.bad-body")
    assert "object" in body["error"]
    assert observations_of("kept") == ["stays as it was"]


@pytest.mark.parametrize(
    ("route", "payload", "field"),
    [
        (
            "remember",
            {"name": "s", "type": "note", "observations": ["o"], "title": "a\ud800"},
            "title",
        ),
        (
            "remember",
            {"name": "s", "type": "note", "observations": ["o"], "project": "\udfffp"},
            "project",
        ),
        ("learn", {"error": "e", "fix": "f", "project": "p\ud800"}, "project"),
        ("remember", {"name": "s\ud800", "type": "note", "observations": ["o"]}, "name"),
    ],
)
def test_a_lone_surrogate_in_a_text_field_is_a_400_naming_it(client, route, payload, field):
    # json.dumps escapes the surrogate (\\ud800); the server decodes it back to a lone one.
    response = post_json(client, route, payload)

    body = assert_error(response, 400, "validation.bad-body")
    assert body["field"] == field
    assert not Entity.objects.exists()


def test_a_body_nested_one_level_past_the_limit_is_refused_naming_the_limit(client):
    remember("kept", "stays as it was")

    def nested_query(levels: int) -> str:  # the body's own object is the first level
        return '{"query": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"

    at_limit = client.post("/v1/recall", nested_query(MAX_JSON_DEPTH), "application/json")
    past_it = client.post("/v1/recall", nested_query(MAX_JSON_DEPTH + 1), "application/json")

    # At the limit the body parses, and the schema answers; one level more never parses.
    assert assert_error(at_limit, 400, "validation.bad-body")["field"] == "query"
    body = assert_error(past_it, 400, "validation.bad-body")
    assert f"deeper than {MAX_JSON_DEPTH} levels" in body["error"]
    assert observations_of("kept") == ["stays as it was"]


def test_a_missing_body_is_an_empty_object(client):
    remember("listed", "a recent memory")

    response = client.post("/v1/recall", content_type="application/json")

    assert [e["name"] for e in assert_json(response)["data"]["entities"]] == ["listed"]


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
