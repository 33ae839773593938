"""Remote bind with bearer-token authentication.

Unit tests drive the ASGI gate directly (no network); end-to-end tests start `memesh serve` as
a real process bound to 0.0.0.0 and talk to it only through 127.0.0.1: the check is keyed to
the listener's bind address, so loopback connections to a remote listener are challenged too.
"""

from __future__ import annotations

import asyncio
import json
import re
import stat
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from memesh_site import remote_auth
from tests.processes import ROOT, free_port, memesh_env, run_python, stop
from tests.test_serve import EXIT_DEADLINE, STARTUP_DEADLINE, memesh

# ---------------------------------------------------------------------------------------------
# The gate, at the ASGI level


@pytest.fixture
def listener(monkeypatch: pytest.MonkeyPatch) -> remote_auth.ListenerConfig:
    monkeypatch.setattr(remote_auth, "listener", remote_auth.ListenerConfig())
    return remote_auth.listener


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
    monkeypatch.setenv("MEMESH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MEMESH_REMOTE_TOKEN", raising=False)

    first = remote_auth.provision_token()
    again = remote_auth.provision_token()

    path = tmp_path / "home" / "remote-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip() == first.token
    assert len(first.token) >= 43  # 32 random bytes, URL-safe base64
    assert again == first
    assert first.source == str(path)


def test_deleting_the_token_file_rotates_the_token(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMESH_HOME", str(tmp_path))
    monkeypatch.delenv("MEMESH_REMOTE_TOKEN", raising=False)
    first = remote_auth.provision_token()

    (tmp_path / "remote-token").unlink()

    assert remote_auth.provision_token().token != first.token


def test_an_existing_token_file_is_kept_and_tightened_to_0600(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMESH_HOME", str(tmp_path))
    monkeypatch.delenv("MEMESH_REMOTE_TOKEN", raising=False)
    path = tmp_path / "remote-token"
    path.write_text("mine\n")
    path.chmod(0o644)

    assert remote_auth.provision_token().token == "mine"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_memesh_remote_token_wins_and_creates_no_file(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMESH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMESH_REMOTE_TOKEN", "  from-env  ")

    provisioned = remote_auth.provision_token()

    assert provisioned == remote_auth.ProvisionedToken("from-env", "MEMESH_REMOTE_TOKEN")
    assert not (tmp_path / "home" / "remote-token").exists()


# ---------------------------------------------------------------------------------------------
# End to end: `memesh serve` as a real process


@dataclass
class Listener:
    base: str
    home: Path
    output: str
    token: str | None  # as printed at startup


def printed_token(output: str) -> str | None:
    found = re.search(r"Bearer token \(from [^)]*\): (\S+)", output)
    return found.group(1) if found else None


def start(
    tmp_path: Path, args: list[str], token: str | None = None, **env: str
) -> tuple[subprocess.Popen[bytes], Listener]:
    """Start `memesh serve ARGS` and wait until /v1/health answers. `token`: the bearer to
    probe with; "file" reads it from the token file the server creates."""
    home = tmp_path / "memesh-home"
    log = tmp_path / "serve.log"
    port = free_port()
    base = f"http://127.0.0.1:{port}"  # traffic stays on loopback whatever the bind address
    with log.open("wb") as out:
        proc = subprocess.Popen(
            memesh("serve", "--port", str(port), *args),
            cwd=ROOT,
            env=memesh_env(home, MEMESH_WORKER="false", **env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + STARTUP_DEADLINE
    while True:
        if proc.poll() is not None:
            pytest.fail(f"memesh serve exited with {proc.returncode}:\n{log.read_text()}")
        if time.monotonic() > deadline:
            stop(proc)
            pytest.fail(f"memesh serve did not answer /v1/health:\n{log.read_text()}")
        probe = token
        if token == "file":
            token_file = home / "remote-token"
            probe = token_file.read_text().strip() if token_file.exists() else None
        headers = bearer(probe) if probe else {}
        try:
            if httpx.get(f"{base}/v1/health", headers=headers, timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    output = log.read_text()
    return proc, Listener(base, home, output, printed_token(output))


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Listener]:
    tmp = tmp_path_factory.mktemp("remote")
    proc, listener = start(tmp, ["--host", "0.0.0.0", "--allow-remote"], token="file")
    try:
        yield listener
    finally:
        stop(proc)


def bearer(token: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def test_the_remote_listener_prints_its_token_and_keeps_it_in_a_0600_file(remote):
    token_file = remote.home / "remote-token"

    assert remote.token is not None
    assert token_file.read_text().strip() == remote.token
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert remote.output.count(remote.token) == 1  # printed once, at startup, nowhere else
    for url in ("/v1 ", "/v1/docs", "/review/", "/admin/", "/mcp"):
        assert re.search(rf"http://0\.0\.0\.0:\d+{url}", remote.output), url


def test_the_remote_listener_demands_a_bearer_token_on_v1(remote):
    missing = httpx.get(f"{remote.base}/v1/health", timeout=30)
    blank = httpx.get(f"{remote.base}/v1/health", headers={"authorization": "Bearer"}, timeout=30)
    wrong = httpx.get(f"{remote.base}/v1/health", headers=bearer("not-the-token"), timeout=30)

    for response in (missing, blank):
        assert response.status_code == 401
        assert response.json() == {
            "success": False,
            "errorCode": "auth.missing-bearer",
            "error": response.json()["error"],
        }
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert wrong.status_code == 401
    assert wrong.json()["errorCode"] == "auth.invalid-token"
    assert wrong.headers["www-authenticate"].startswith("Bearer")


def test_the_right_token_is_served(remote):
    headers = bearer(remote.token)
    health = httpx.get(f"{remote.base}/v1/health", headers=headers, timeout=30)
    remembered = httpx.post(
        f"{remote.base}/v1/remember",
        json={"name": "remote-memory", "type": "note", "observations": ["rem0te9auth"]},
        headers=headers,
        timeout=30,
    )
    recalled = httpx.post(
        f"{remote.base}/v1/recall", json={"query": "rem0te9auth"}, headers=headers, timeout=30
    )

    assert health.status_code == 200 and health.json()["data"]["status"] == "ok"
    assert remembered.status_code == 200, remembered.text
    assert recalled.status_code == 200, recalled.text
    assert [e["name"] for e in recalled.json()["data"]["entities"]] == ["remote-memory"]


def test_an_unauthenticated_oversized_body_is_refused_as_unauthenticated(remote):
    """Authentication comes before the body is parsed (or even size-checked)."""
    response = httpx.post(
        f"{remote.base}/v1/remember",
        content=b"x" * (1024 * 1024 + 1),
        headers={"content-type": "application/json"},
        timeout=30,
    )

    assert response.status_code == 401
    assert response.json()["errorCode"] == "auth.missing-bearer"


MCP_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-03-26",
        "capabilities": {},
        "clientInfo": {"name": "remote-auth-test", "version": "0"},
    },
}
MCP_HEADERS = {"accept": "application/json, text/event-stream"}


def test_mcp_is_behind_the_same_rule(remote):
    missing = httpx.post(f"{remote.base}/mcp", json=MCP_INITIALIZE, headers=MCP_HEADERS, timeout=30)
    wrong = httpx.post(
        f"{remote.base}/mcp",
        json=MCP_INITIALIZE,
        headers={**MCP_HEADERS, **bearer("nope")},
        timeout=30,
    )
    right = httpx.post(
        f"{remote.base}/mcp",
        json=MCP_INITIALIZE,
        headers={**MCP_HEADERS, **bearer(remote.token)},
        timeout=30,
    )

    assert (missing.status_code, missing.json()["errorCode"]) == (401, "auth.missing-bearer")
    assert (wrong.status_code, wrong.json()["errorCode"]) == (401, "auth.invalid-token")
    assert right.status_code == 200, right.text
    assert "serverInfo" in right.text


def test_allow_remote_on_a_loopback_host_generates_no_token_and_is_not_challenged(tmp_path):
    proc, listener = start(tmp_path, ["--allow-remote"])
    try:
        health = httpx.get(f"{listener.base}/v1/health", timeout=30)
        recall = httpx.post(f"{listener.base}/v1/recall", json={"query": "x"}, timeout=30)
        mcp = httpx.post(
            f"{listener.base}/mcp", json=MCP_INITIALIZE, headers=MCP_HEADERS, timeout=30
        )
    finally:
        stop(proc)

    assert health.status_code == 200
    assert recall.status_code == 200
    assert mcp.status_code == 200
    assert listener.token is None
    assert not (listener.home / "remote-token").exists()
    assert "no token is generated and no authentication is required" in listener.output
    assert "Only this machine can reach it" in listener.output


def test_the_environment_allows_remote_and_supplies_the_token(tmp_path):
    proc, listener = start(
        tmp_path,
        ["--host", "0.0.0.0"],
        token="env-token-123",
        MEMESH_HTTP_ALLOW_REMOTE="true",
        MEMESH_REMOTE_TOKEN="env-token-123",
    )
    try:
        missing = httpx.get(f"{listener.base}/v1/health", timeout=30)
    finally:
        stop(proc)

    assert missing.status_code == 401
    assert listener.token == "env-token-123"
    assert "from MEMESH_REMOTE_TOKEN" in listener.output
    assert not (listener.home / "remote-token").exists()


def test_a_non_loopback_host_without_allow_remote_refuses_to_start(tmp_path):
    result = run_python(
        ["-m", "memesh_site.cli", "serve", "--host", "0.0.0.0", "--port", str(free_port())],
        memesh_env(tmp_path / "home"),
        timeout=EXIT_DEADLINE,
    )

    assert result.returncode != 0
    assert "refusing to bind 0.0.0.0" in result.stderr
    assert "--allow-remote" in result.stderr
    assert "MEMESH_HTTP_ALLOW_REMOTE=true" in result.stderr
    assert not (tmp_path / "home" / "remote-token").exists()


@pytest.mark.parametrize(
    ("host", "added"),
    [("192.168.1.10", "192.168.1.10"), ("fd00::5", "[fd00::5]"), ("0.0.0.0", None), ("::", None)],
)
def test_a_specific_remote_bind_address_is_an_accepted_host(settings, host, added):
    from api.management.commands.serve import accept_bind_host

    before = list(settings.ALLOWED_HOSTS)

    accept_bind_host(host)

    assert before + ([added] if added else []) == settings.ALLOWED_HOSTS
