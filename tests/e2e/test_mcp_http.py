"""MCP over streamable HTTP at /mcp on a real `memesh serve` process, through the SDK client.

Every test runs against one server process (stateful sessions) and against two (stateless,
the client's name carried in the session id: api/mcp_server/http.py).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from tests import mcp_checks
from tests.processes import Served

pytestmark = pytest.mark.slow  # a server process per module

SESSION_DEADLINE = 120


@pytest.fixture(scope="module", params=[1, 2], ids=["one-process", "two-processes"])
def server_processes(request: pytest.FixtureRequest) -> int:
    """How many HTTP processes the module's server (conftest's `server`) runs: each variant
    is a server, and a home, of its own."""
    return int(request.param)


@pytest.fixture(scope="module")
def serve_args(server_processes: int) -> tuple[str, ...]:
    return ("--no-worker", "--workers", str(server_processes))


@pytest.fixture(scope="module")
def memesh_embedder() -> str:
    return "deterministic"


def test_every_tool_over_streamable_http(server: Served) -> None:
    base = server.base

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


def test_startup_prints_the_mcp_url(server: Served) -> None:
    base, log = server.base, server.log
    assert f"{base}/mcp" in log.read_text()


def test_django_still_serves_everything_else(server: Served) -> None:
    base = server.base
    assert httpx.get(f"{base}/v1/health", timeout=30).json()["success"] is True
    missing = httpx.get(f"{base}/mcpx", timeout=30)
    assert missing.status_code == 404
    assert missing.json()["errorCode"] == "route.not-found"


def test_mcp_refuses_a_foreign_host_header(server: Served) -> None:
    """DNS rebinding: a page served from evil.example must not drive a loopback MCP server."""
    base = server.base
    response = httpx.post(
        f"{base}/mcp",
        headers={"Host": "evil.example", "Content-Type": "application/json"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        timeout=30,
    )
    assert response.status_code in (400, 403, 421)


HANDSHAKE_VERSION = "2025-06-18"
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": HANDSHAKE_VERSION,
}


def rpc_result(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC result of a POST answered as JSON or as a one-event SSE stream."""
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        message = json.loads(data[-1])
    else:
        message = response.json()
    assert "result" in message, message
    return message["result"]


def test_a_handshake_clients_name_stamps_every_call_over_fresh_connections(
    server: Served,
) -> None:
    """A handshake-protocol client declares its name once; each later call, on a connection of
    its own (so, with two processes, landing on either), is stamped with it."""
    base = server.base
    init = httpx.post(
        f"{base}/mcp",
        headers=MCP_HEADERS,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": HANDSHAKE_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "spread-client", "version": "1"},
            },
        },
        timeout=30,
    )
    rpc_result(init)
    headers = {**MCP_HEADERS, "Mcp-Session-Id": init.headers["mcp-session-id"]}
    httpx.post(
        f"{base}/mcp",
        headers=headers,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        timeout=30,
    )
    names = [f"spread-{uuid.uuid4().hex[:8]}-{i}" for i in range(8)]
    for i, name in enumerate(names):
        call = {
            "jsonrpc": "2.0",
            "id": 10 + i,
            "method": "tools/call",
            "params": {
                "name": "remember",
                "arguments": {"name": name, "type": "note", "observations": ["spread"]},
            },
        }
        result = rpc_result(httpx.post(f"{base}/mcp", headers=headers, json=call, timeout=30))
        assert result.get("isError") is not True, result
    for name in names:
        entity = httpx.get(f"{base}/v1/entities/{name}", timeout=30).json()["data"]
        assert entity["metadata"]["provenance"]["source_host"] == "spread-client"


def test_a_stateful_session_is_a_feedback_session_and_a_stateless_one_is_not(
    server: Served, server_processes: int
) -> None:
    """One process: the Mcp-Session-Id the server issued ties recall to feedback, so what was
    returned and not cited becomes a miss. Two (stateless): no session, so nothing settles."""
    base = server.base
    stateful = server_processes == 1
    word = f"zebu{uuid.uuid4().hex[:8]}"

    async def session() -> dict[str, Any]:
        with anyio.fail_after(SESSION_DEADLINE):
            async with Client(
                f"{base}/mcp", mode="legacy", client_info=mcp_checks.client_info()
            ) as client:
                ids = []
                for name in ("cited", "ignored"):
                    stored = mcp_checks.json_object(
                        await client.call_tool(
                            "remember",
                            {"name": f"{word}-{name}", "type": "note", "observations": [word]},
                        )
                    )
                    ids.append(stored["entityId"])
                await client.call_tool("recall", {"query": word})
                result = await client.call_tool("feedback", {"text": f"used [mem:{ids[0]}]"})
                return {"ids": ids, "feedback": mcp_checks.json_object(result)}

    out = anyio.run(session)
    cited, ignored = out["ids"]
    assert out["feedback"]["hits"] == [cited]
    assert out["feedback"]["misses"] == ([ignored] if stateful else [])
