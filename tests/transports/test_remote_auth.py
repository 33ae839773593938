"""Remote bind with bearer-token authentication, in process: the ASGI gate driven directly (no
network), the token file, and the hosts a remote bind adds to ALLOWED_HOSTS.

tests/e2e/test_remote_auth_serve.py starts `memesh serve` bound to 0.0.0.0 and checks the same
rules over real HTTP.
"""

from __future__ import annotations

import asyncio
import json
import stat
from typing import Any

import pytest
from django.conf import settings

from api.edge import remote_auth

# ---------------------------------------------------------------------------------------------
# The gate, at the ASGI level


def scope(
    path: str = "/v1/health",
    authorization: bytes | None = None,
    server: tuple[str, int] | None = ("127.0.0.1", 3737),
    method: str = "GET",
) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1:3737")]
    if authorization is not None:
        headers.append((b"authorization", authorization))
    return {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": headers,
        "server": server,
        "client": ("127.0.0.1", 50000),
    }


class Downstream:
    """Stands in for Django / MCP: records whether the request reached it."""

    def __init__(self) -> None:
        self.called = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.called = True
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def call(app: Any, request_scope: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    """Run one request; returns the sent messages and whether the body was read."""
    sent: list[dict[str, Any]] = []
    body_read = False

    async def receive() -> dict[str, Any]:
        nonlocal body_read
        body_read = True
        return {"type": "http.request", "body": b"x" * 10, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(request_scope, receive, send))
    return sent, body_read


@pytest.fixture
def gated() -> tuple[Any, Downstream]:
    """The real router with Django and /mcp replaced by a recorder."""
    from memesh_site.asgi import MemeshApplication

    downstream = Downstream()
    app = MemeshApplication(downstream)
    app.mcp_running = True
    app.mcp.handle_request = downstream  # type: ignore[method-assign, assignment]
    return app, downstream


def status_and_body(sent: list[dict[str, Any]]) -> tuple[int, dict[str, Any], dict[bytes, bytes]]:
    start, body = sent
    return start["status"], json.loads(body["body"]), dict(start["headers"])


def test_a_loopback_listener_is_never_challenged(listener, gated):
    app, downstream = gated

    sent, _ = call(app, scope("/v1/health"))

    assert downstream.called
    assert sent[0]["status"] == 200


def test_a_remote_listener_without_a_header_answers_missing_bearer_before_reading_the_body(
    listener, gated
):
    remote_auth.configure(remote=True, token="s3cret-token")
    app, downstream = gated

    sent, body_read = call(app, scope("/v1/remember", method="POST"))

    status, body, headers = status_and_body(sent)
    assert status == 401
    assert body == {
        "success": False,
        "errorCode": "auth.missing-bearer",
        "error": body["error"],
    }
    assert headers[b"www-authenticate"].startswith(b"Bearer")
    assert headers[b"content-type"] == b"application/json"
    assert not body_read
    assert not downstream.called


@pytest.mark.parametrize(
    "authorization", [b"", b"Bearer", b"Bearer   ", b"Basic dXNlcjpwYXNz", b"s3cret-token"]
)
def test_blank_or_non_bearer_authorization_is_missing_bearer(listener, authorization):
    remote_auth.configure(remote=True, token="s3cret-token")

    rejection = remote_auth.challenge(scope(authorization=authorization))

    assert rejection is not None
    assert rejection[:2] == (401, "auth.missing-bearer")


def test_a_wrong_token_is_invalid_token(listener, gated):
    remote_auth.configure(remote=True, token="s3cret-token")
    app, downstream = gated

    sent, body_read = call(app, scope(authorization=b"Bearer s3cret-tokeN"))

    status, body, headers = status_and_body(sent)
    assert (status, body["errorCode"]) == (401, "auth.invalid-token")
    assert b"invalid_token" in headers[b"www-authenticate"]
    assert not body_read and not downstream.called


@pytest.mark.parametrize(
    "authorization", [b"Bearer s3cret-token", b"bearer s3cret-token", b"  Bearer  s3cret-token "]
)
def test_the_right_token_passes_through(listener, gated, authorization):
    remote_auth.configure(remote=True, token="s3cret-token")
    app, downstream = gated

    sent, _ = call(app, scope(authorization=authorization))

    assert downstream.called
    assert sent[0]["status"] == 200


def test_the_token_is_compared_in_constant_time(listener, monkeypatch):
    remote_auth.configure(remote=True, token="s3cret-token")
    compared: list[tuple[bytes, bytes]] = []

    def compare_digest(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return a == b

    monkeypatch.setattr(remote_auth.hmac, "compare_digest", compare_digest)

    assert remote_auth.challenge(scope(authorization=b"Bearer guess")) is not None
    assert compared == [(b"guess", b"s3cret-token")]


@pytest.mark.parametrize("path", ["/mcp", "/mcp/", "/v1", "/v1/recall", "//v1/health", "//mcp"])
def test_mcp_and_every_v1_path_are_challenged(listener, gated, path):
    remote_auth.configure(remote=True, token="s3cret-token")
    app, downstream = gated

    sent, _ = call(app, scope(path, method="POST"))

    assert sent[0]["status"] == 401
    assert not downstream.called


@pytest.mark.parametrize("path", ["/dashboard", "/", "/v10", "/mcpx"])
def test_paths_outside_v1_and_mcp_are_not_challenged(listener, path):
    remote_auth.configure(remote=True, token="s3cret-token")

    assert remote_auth.challenge(scope(path)) is None


def test_a_remote_listener_without_a_token_is_not_configured(listener, gated):
    remote_auth.configure(remote=True, token=None)
    app, downstream = gated

    sent, _ = call(app, scope(authorization=b"Bearer anything"))

    status, body, headers = status_and_body(sent)
    assert (status, body["errorCode"]) == (503, "auth.not-configured")
    assert b"www-authenticate" not in headers
    assert not downstream.called


def test_a_connection_on_a_non_loopback_address_is_refused_when_no_remote_listener_was_set_up(
    listener,
):
    """The app served on 0.0.0.0 by some other means than `memesh serve --allow-remote`."""
    rejection = remote_auth.challenge(scope(server=("192.168.1.10", 3737)))

    assert rejection is not None and rejection[:2] == (503, "auth.not-configured")
    assert remote_auth.challenge(scope(server=("::ffff:127.0.0.1", 3737))) is None
    assert remote_auth.challenge(scope(server=("testserver", 80))) is None
    assert remote_auth.challenge(scope(server=None)) is None


def test_lifespan_is_not_gated(listener):
    remote_auth.configure(remote=True, token="s3cret-token")

    assert remote_auth.challenge({"type": "lifespan"}) is None


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.1", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host, loopback):
    assert remote_auth.is_loopback(host) is loopback


# ---------------------------------------------------------------------------------------------
# Token provisioning


def test_a_missing_token_file_is_created_0600_with_a_fresh_token(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "MEMESH_HOME", tmp_path / "home")
    monkeypatch.setattr(settings, "MEMESH_REMOTE_TOKEN", "")

    first = remote_auth.provision_token()
    again = remote_auth.provision_token()

    path = tmp_path / "home" / "remote-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip() == first.token
    assert len(first.token) >= 43  # 32 random bytes, URL-safe base64
    assert again == first
    assert first.source == str(path)


def test_deleting_the_token_file_rotates_the_token(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "MEMESH_HOME", tmp_path)
    monkeypatch.setattr(settings, "MEMESH_REMOTE_TOKEN", "")
    first = remote_auth.provision_token()

    (tmp_path / "remote-token").unlink()

    assert remote_auth.provision_token().token != first.token


def test_an_existing_token_file_is_kept_and_tightened_to_0600(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "MEMESH_HOME", tmp_path)
    monkeypatch.setattr(settings, "MEMESH_REMOTE_TOKEN", "")
    path = tmp_path / "remote-token"
    path.write_text("mine\n")
    path.chmod(0o644)

    assert remote_auth.provision_token().token == "mine"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_memesh_remote_token_wins_and_creates_no_file(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "MEMESH_HOME", tmp_path / "home")
    monkeypatch.setattr(settings, "MEMESH_REMOTE_TOKEN", "from-env")  # settings strip it

    provisioned = remote_auth.provision_token()

    assert provisioned == remote_auth.ProvisionedToken("from-env", "MEMESH_REMOTE_TOKEN")
    assert not (tmp_path / "home" / "remote-token").exists()


@pytest.mark.parametrize(
    ("host", "added"),
    [("192.168.1.10", "192.168.1.10"), ("fd00::5", "[fd00::5]"), ("0.0.0.0", None), ("::", None)],
)
def test_a_specific_remote_bind_address_is_an_accepted_host(settings, host, added):
    from api.cli.installation.management.commands.serve import accept_bind_host

    before = list(settings.ALLOWED_HOSTS)

    accept_bind_host(host)

    assert before + ([added] if added else []) == settings.ALLOWED_HOSTS
