"""Remote bind with bearer-token authentication, end to end: `memesh serve` as a real process
bound to 0.0.0.0, spoken to only through 127.0.0.1 — the check is keyed to the listener's bind
address, so loopback connections to a remote listener are challenged too.

tests/transports/test_remote_auth.py drives the ASGI gate itself, in process.
"""

from __future__ import annotations

import re
import stat
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.processes import (
    EXIT_DEADLINE,
    ROOT,
    STARTUP_DEADLINE,
    free_port,
    memesh,
    memesh_env,
    run_python,
    stop,
)


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
    for url in ("/v1 ", "/v1/docs", "/dashboard/", "/review/", "/admin/", "/mcp"):
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
