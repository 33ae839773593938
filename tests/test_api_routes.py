"""The /v1 read routes and the transport's edges: health, doctor, entities, update-status,
the retired routes, route.not-found and the security headers on every response.

No test touches the network: update-status is pointed at a local server or a closed local port.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from api import views
from api.middleware import SECURITY_HEADERS
from graph import doctor
from graph.models import Entity
from memesh_site import update_check
from tests.fakes.embedding_server import FakeEmbeddingServer
from tests.helpers import forget, recall, remember
from tests.processes import memesh_env, run_python
from tests.rest import ONE_MB, assert_error, assert_json, post_json
from tests.vector_support import use_fake_openai

pytestmark = pytest.mark.django_db


def entities(client: Any, query: str = "") -> dict[str, Any]:
    response = client.get(f"/v1/entities{query}")
    assert response.status_code == 200, response.content
    body = assert_json(response)
    assert body["success"] is True
    return body["data"]


def names(data: dict[str, Any]) -> list[str]:
    return [e["name"] for e in data["entities"]]


# --- health -----------------------------------------------------------------------------------


def test_health_reports_status_version_and_count(client):
    remember("one", "first")
    remember("gone", "second")
    forget("gone")

    body = assert_json(client.get("/v1/health"))

    assert body["success"] is True
    assert body["data"]["status"] == "ok"
    assert body["data"]["version"]
    assert body["data"]["entities"] == 1  # active only


_HEALTH_SCRIPT = """
import json, django
django.setup()
from django.test import Client
r = Client().get("/v1/health")
print(json.dumps({"status": r.status_code, "headers": dict(r.headers), "body": r.json()}))
"""


def test_health_answers_503_when_the_database_cannot_be_opened(tmp_path: Path) -> None:
    # A directory where the database file should be: SQLite cannot open it.
    unopenable = tmp_path / "not-a-database"
    unopenable.mkdir()
    env = memesh_env(tmp_path / "home", MEMESH_DB_PATH=str(unopenable))

    done = run_python(["-c", _HEALTH_SCRIPT], env, timeout=120)

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == 503
    assert result["body"]["success"] is False
    assert result["body"]["errorCode"] == "server.internal"
    assert "database" in result["body"]["error"]
    assert result["headers"]["X-Content-Type-Options"] == "nosniff"


# --- security headers ---------------------------------------------------------------------------


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


# --- route.not-found / retired ------------------------------------------------------------------


def test_an_unknown_route_is_route_not_found_with_the_legacy_code(client):
    body = assert_error(client.get("/v1/nope"), 404, "route.not-found")
    assert body["code"] == "NOT_FOUND"


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


# --- GET /v1/entities -------------------------------------------------------------------------


def test_entities_lists_active_entities_newest_first_as_recall_serialises_them(client):
    remember("first", "one", type="decision")
    remember("second", "two", tags=["t"])
    remember("third", "three")

    data = entities(client)

    assert names(data) == ["third", "second", "first"]
    assert data["total"] == 3 and data["truncated"] is False
    assert data["limit"] == 20 and data["offset"] == 0
    # Exactly recall's EntityOutput (recall's listing is the same newest-first order).
    assert data["entities"] == recall()["entities"]
    assert "match" not in data["entities"][0]
    assert data["entities"][1]["tags"] == ["t"]


def test_entities_filters_by_type_and_status(client):
    remember("a-decision", "x", type="decision")
    remember("a-note", "y")
    remember("old-decision", "z", type="decision")
    forget("old-decision")

    assert names(entities(client, "?type=decision")) == ["a-decision"]
    assert names(entities(client, "?status=archived")) == ["old-decision"]
    assert names(entities(client, "?type=decision&status=all")) == [
        "old-decision",
        "a-decision",
    ]
    assert entities(client, "?type=unknown-type")["entities"] == []


def test_entities_paginates_with_limit_and_offset(client):
    for i in range(5):
        remember(f"e{i}", f"obs {i}")

    page1 = entities(client, "?limit=2")
    page2 = entities(client, "?limit=2&offset=2")
    page3 = entities(client, "?limit=2&offset=4")

    assert names(page1) == ["e4", "e3"] and page1["truncated"] is True
    assert names(page2) == ["e2", "e1"] and page2["truncated"] is True
    assert names(page3) == ["e0"] and page3["truncated"] is False
    assert {p["total"] for p in (page1, page2, page3)} == {5}
    assert entities(client, "?offset=10")["entities"] == []


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("?limit=abc", "limit"),
        ("?limit=0", "limit"),
        ("?limit=101", "limit"),
        ("?limit=", "limit"),
        ("?offset=-1", "offset"),
        ("?offset=1.5", "offset"),
        ("?status=deleted", "status"),
        ("?type=", "type"),
        ("?type=" + "x" * 101, "type"),
    ],
)
def test_entities_rejects_a_bad_query_parameter_naming_it(client, query, param):
    body = assert_error(client.get(f"/v1/entities{query}"), 400, "validation.bad-param")

    assert body["field"] == param
    assert param in body["error"]


def test_an_entity_is_read_by_name_archived_or_not(client):
    remember("auth-decision", "Chose JWT", type="decision", relations=[])
    remember("path/with/slashes", "ok")
    forget("path/with/slashes")

    body = assert_json(client.get("/v1/entities/auth-decision"))
    archived = assert_json(client.get("/v1/entities/path/with/slashes"))

    assert body["success"] is True
    assert body["data"]["name"] == "auth-decision"
    assert body["data"]["observations"] == ["Chose JWT"]
    assert body["data"]["id"] == Entity.objects.get(name="auth-decision").id
    assert archived["data"]["status"] == "archived"


def test_a_missing_entity_is_resource_not_found(client):
    body = assert_error(client.get("/v1/entities/nobody"), 404, "resource.not-found")
    assert "nobody" in body["error"]


# --- GET /v1/doctor ---------------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer() as fake:
        yield fake


def test_doctor_does_not_probe_the_embedder_unless_asked(client, monkeypatch, server):
    use_fake_openai(monkeypatch, server)

    plain = assert_json(client.get("/v1/doctor"))
    assert server.requests == []  # no (possibly paid) embedding call per GET
    probed = assert_json(client.get("/v1/doctor?probe=true"))

    assert plain["success"] is True and plain["data"]["probed"] is False
    [embedder] = [c for c in plain["data"]["checks"] if c["name"] == "embedder"]
    assert "not probed" in embedder["detail"]
    assert probed["data"]["probed"] is True
    assert len(server.requests) == 1


def test_doctor_rejects_a_bad_probe_flag(client):
    body = assert_error(client.get("/v1/doctor?probe=maybe"), 400, "validation.bad-param")
    assert body["field"] == "probe"


def test_doctor_redacts_secrets_and_home_paths(client, monkeypatch):
    home = str(Path.home())
    secret = "sk-live-0123456789abcdefABCDEF"
    checks = [
        doctor.Check(
            "database",
            "ok",
            f"opened {home}/.memesh/knowledge-graph.db",
            {"error": f"Authorization: Bearer {secret}", "nested": [f"apiKey={secret}"]},
        ),
        doctor.Check("embedder", "warn", f"provider echoed {secret}"),
    ]
    monkeypatch.setattr(doctor, "run_checks", lambda probe: checks)

    response = client.get("/v1/doctor")

    text = response.content.decode()
    assert response.status_code == 200
    assert secret not in text
    assert home not in text
    data = assert_json(response)["data"]
    assert data["checks"][0]["detail"] == "opened ~/.memesh/knowledge-graph.db"
    assert data["checks"][0]["data"]["error"] == "Authorization: Bearer ***"


def test_doctor_redacts_a_memesh_home_outside_the_home_directory(monkeypatch):
    monkeypatch.setenv("MEMESH_HOME", "/srv/memesh-data")

    assert views.redact({"p": ["/srv/memesh-data/x.db"]}) == {"p": ["$MEMESH_HOME/x.db"]}


def test_a_failing_doctor_suite_is_a_500_envelope_without_secrets(client, monkeypatch):
    def boom(probe: bool) -> list[doctor.Check]:
        raise RuntimeError(f"exploded in {Path.home()}/.memesh with key sk-abcdefghijklmnop")

    monkeypatch.setattr(doctor, "run_checks", boom)

    body = assert_error(client.get("/v1/doctor"), 500, "server.internal")
    assert str(Path.home()) not in body["error"]
    assert "sk-abcdefghijklmnop" not in body["error"]


# --- GET /v1/update-status --------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _fresh_update_cache() -> Iterator[None]:
    update_check.reset_update_cache()
    yield
    update_check.reset_update_cache()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _VersionServer:
    """A local HTTP server answering PyPI's JSON format with a chosen version."""

    def __init__(self, version: str) -> None:
        outer = self
        self.version = version
        self.hits = 0

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.hits += 1
                body = json.dumps({"info": {"version": outer.version}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/pypi/memesh/json"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def update_status(client: Any, query: str = "") -> dict[str, Any]:
    body = assert_json(client.get(f"/v1/update-status{query}"))
    assert body["success"] is True
    return body["data"]


def test_update_status_without_a_source_says_so(client, settings):
    settings.MEMESH_UPDATE_URL = ""

    data = update_status(client)

    assert data["currentVersion"] == settings.VERSION
    assert data["latestVersion"] is None
    assert data["state"] == "unknown"
    assert data["reason"] == "no update source configured"
    assert data["freshness"] == "unavailable"
    assert data["updateAvailable"] is None
    assert data["checkSucceeded"] is False


def test_update_status_is_honest_when_the_source_cannot_be_reached(client, settings):
    settings.MEMESH_UPDATE_URL = f"http://127.0.0.1:{closed_port()}/pypi/memesh/json"

    data = update_status(client)

    assert data["latestVersion"] is None
    assert data["state"] == "unknown"
    assert data["reason"].startswith("update source unavailable")
    assert data["checkSucceeded"] is False
    assert data["lastAttemptAt"] is not None
    assert data["lastSuccessfulCheckAt"] is None


def test_update_status_reads_the_source_then_falls_back_to_the_last_result(client, settings):
    source = _VersionServer("999.0.0")
    settings.MEMESH_UPDATE_URL = source.url
    try:
        fresh = update_status(client)
    finally:
        source.close()

    assert fresh["latestVersion"] == "999.0.0"
    assert fresh["state"] == "outdated" and fresh["updateAvailable"] is True
    assert fresh["freshness"] == "fresh" and fresh["source"] == "live"
    assert fresh["checkSucceeded"] is True

    # The source is gone now: the last good answer, marked as cached.
    fallback = update_status(client)
    assert fallback["latestVersion"] == "999.0.0"
    assert fallback["checkSucceeded"] is False
    assert fallback["freshness"] == "cached" and fallback["source"] == "cache"
    assert fallback["lastError"].startswith("update source unavailable")


def test_update_status_cached_only_makes_no_request(client, settings):
    source = _VersionServer("0.0.1")
    settings.MEMESH_UPDATE_URL = source.url
    try:
        before = update_status(client, "?cached=1")
        live = update_status(client)
        cached = update_status(client, "?cached=1")
    finally:
        source.close()

    assert before["state"] == "unknown" and before["latestVersion"] is None
    assert live["state"] == "current" and live["updateAvailable"] is False
    assert cached["latestVersion"] == "0.0.1" and cached["source"] == "cache"
    assert source.hits == 1


def test_update_status_treats_a_malformed_answer_as_unreachable(client, settings):
    source = _VersionServer("not a version")
    settings.MEMESH_UPDATE_URL = source.url
    try:
        data = update_status(client)
    finally:
        source.close()

    assert data["state"] == "unknown" and data["latestVersion"] is None
    assert data["reason"].startswith("update source unavailable")
