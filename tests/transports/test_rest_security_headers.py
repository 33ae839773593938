"""The security headers on every /v1 response: answers, errors of every kind, and the body
limit's refusal (written before the view runs)."""

from __future__ import annotations

import pytest

from api.rest.middleware import SECURITY_HEADERS
from tests.rest import ONE_MB, assert_error, post_json

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("method", "route", "status"),
    [
        ("get", "/v1/health", 200),
        ("get", "/v1/no-such-route", 404),
        ("get", "/elsewhere", 404),
        ("get", "/v1/entities?limit=abc", 400),
        ("get", "/v1/entities/missing", 404),
        ("post", "/v1/consolidate", 410),
        ("get", "/v1/remember", 405),
    ],
)
def test_every_response_carries_the_security_headers(client, method, route, status):
    response = getattr(client, method)(route)

    assert response.status_code == status
    for header, value in SECURITY_HEADERS.items():
        assert response[header] == value
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "no-referrer"


def test_the_body_limit_refusal_carries_the_security_headers(client):
    response = post_json(client, "remember", {"name": "x", "observations": ["a" * ONE_MB]})

    assert_error(response, 413, "payload.too-large")
    assert response["X-Content-Type-Options"] == "nosniff"
