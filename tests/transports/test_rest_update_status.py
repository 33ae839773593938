"""GET /v1/update-status: the installed version against the configured source, cached, and
honest when the source cannot be reached or answers nonsense.

No test touches the network: the source is a local server or a closed local port.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from core import update_check
from tests.processes import free_port
from tests.rest import assert_json

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_update_cache() -> Iterator[None]:
    update_check.reset_update_cache()
    yield
    update_check.reset_update_cache()


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
    settings.MEMESH_UPDATE_URL = f"http://127.0.0.1:{free_port()}/pypi/memesh/json"

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
