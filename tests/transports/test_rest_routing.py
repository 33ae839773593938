"""Which requests reach a /v1 route: unknown routes (inside /v1 or not) as route.not-found,
retired routes as 410 naming their replacement, a wrong method as 405, and the Host header
check that refuses DNS rebinding before anything runs."""

from __future__ import annotations

import pytest

from graph.models import Entity
from tests.rest import assert_error, assert_json, post_json

pytestmark = pytest.mark.django_db


def test_an_unknown_route_is_a_json_404_with_the_legacy_code(client):
    response = client.get("/v1/no-such-thing")

    body = assert_error(response, 404, "route.not-found")
    assert body["code"] == "NOT_FOUND"


def test_an_unknown_route_outside_v1_is_a_json_404_too(client):
    response = client.post("/wp-login.php", data="{}", content_type="application/json")

    assert_error(response, 404, "route.not-found")


@pytest.mark.parametrize(
    ("route", "replacement"),
    [("consolidate", "POST /v1/dream/run"), ("verify", None)],
)
def test_retired_routes_answer_410_naming_the_replacement(client, route, replacement):
    body = assert_error(post_json(client, route, {"name": "x"}), 410, "route.retired")

    assert body["replacement"] == replacement
    assert f"/v1/{route}" in body["error"]
    if replacement:
        assert replacement in body["error"]
    else:
        assert "no replacement" in body["error"]


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
