"""MCP over streamable HTTP at /mcp on a real `memesh serve` process, through the SDK client."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from tests import mcp_checks
from tests.processes import ROOT, memesh_env
from tests.test_serve import free_port, memesh, stop, wait_until_healthy

pytestmark = pytest.mark.slow  # a server process per module

SESSION_DEADLINE = 120


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    home = tmp_path_factory.mktemp("mcp-http") / "home"
    log = home.parent / "serve.log"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            memesh("serve", "--port", str(port), "--no-worker"),
            cwd=ROOT,
            env=memesh_env(home, MEMESH_EMBEDDER="deterministic"),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_healthy(proc, base, log)
        yield base, log
    finally:
        stop(proc)


def test_every_tool_over_streamable_http(server: tuple[str, Path]) -> None:
    base, _ = server

    async def session() -> None:
        with anyio.fail_after(SESSION_DEADLINE):
            async with Client(
                f"{base}/mcp", mode="legacy", client_info=mcp_checks.client_info()
            ) as client:
                await mcp_checks.check_everything(client)
            # The 2026 protocol (the SDK's default) reaches the same tools, same provenance.
            async with Client(f"{base}/mcp", client_info=mcp_checks.client_info()) as client:
                await mcp_checks.check_source_host(client)
                await mcp_checks.check_unknown_tool(client)

    anyio.run(session)


def test_startup_prints_the_mcp_url(server: tuple[str, Path]) -> None:
    base, log = server
    assert f"{base}/mcp" in log.read_text()


def test_django_still_serves_everything_else(server: tuple[str, Path]) -> None:
    base, _ = server
    assert httpx.get(f"{base}/v1/health", timeout=30).json()["success"] is True
    missing = httpx.get(f"{base}/mcpx", timeout=30)
    assert missing.status_code == 404
    assert missing.json()["errorCode"] == "route.not-found"


def test_mcp_refuses_a_foreign_host_header(server: tuple[str, Path]) -> None:
    """DNS rebinding: a page served from evil.example must not drive a loopback MCP server."""
    base, _ = server
    response = httpx.post(
        f"{base}/mcp",
        headers={"Host": "evil.example", "Content-Type": "application/json"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        timeout=30,
    )
    assert response.status_code in (400, 403, 421)
