"""`memesh mcp` end to end: the real command as a subprocess, driven by the official SDK client
over stdio, in a fresh MEMESH_HOME (so it also migrates a database that does not exist yet)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from api.mcp_server.server import drop_nulls, sanitize_client_name
from tests import mcp_checks
from tests.processes import ROOT, memesh_env, run_python

pytestmark = pytest.mark.slow  # each test starts a Python + Django process

SESSION_DEADLINE = 120  # a hung server must fail the test, not the run


def server_params(home: Path) -> StdioServerParameters:
    # The SDK's stdio client passes only a whitelist of variables to the server: give it all.
    env = memesh_env(home, MEMESH_EMBEDDER="deterministic")
    return StdioServerParameters(
        command=sys.executable, args=["-m", "memesh_site.cli", "mcp"], env=env, cwd=str(ROOT)
    )


def test_every_tool_over_stdio_with_the_initialize_handshake(tmp_path: Path) -> None:
    async def session() -> None:
        with anyio.fail_after(SESSION_DEADLINE):
            async with Client(
                server_params(tmp_path / "home"),
                mode="legacy",  # the initialize handshake every current agent host performs
                client_info=mcp_checks.client_info(),
            ) as client:
                await mcp_checks.check_everything(client)

    anyio.run(session)


def test_modern_protocol_client_gets_the_same_tools(tmp_path: Path) -> None:
    """The SDK's default client negotiates the 2026 protocol (no handshake; the client's name
    rides each request's envelope). Provenance and results must not depend on the era."""

    async def session() -> None:
        with anyio.fail_after(SESSION_DEADLINE):
            async with Client(
                server_params(tmp_path / "home"), client_info=mcp_checks.client_info()
            ) as client:
                await mcp_checks.check_valid_calls(client)
                await mcp_checks.check_unknown_tool(client)
                await mcp_checks.check_source_host(client)

    anyio.run(session)


def test_a_connection_is_a_session_that_feedback_settles(tmp_path: Path) -> None:
    """What recall returned over one connection and that connection did not cite becomes a
    miss when it sends feedback naming no session; another connection is another session."""
    home = tmp_path / "home"

    async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await client.call_tool(name, arguments)
        assert not result.is_error, mcp_checks.text_of(result)
        return mcp_checks.json_object(result)

    async def first() -> dict[str, Any]:
        with anyio.fail_after(SESSION_DEADLINE):
            async with Client(server_params(home), client_info=mcp_checks.client_info()) as client:
                ids = {}
                for name, text in (("a", "walrus notes"), ("b", "walrus tusks")):
                    stored = await call(
                        client, "remember", {"name": name, "type": "note", "observations": [text]}
                    )
                    ids[name] = stored["entityId"]
                await call(client, "recall", {"query": "walrus"})
                cited = {"text": f"Followed [mem:{ids['a']}]."}
                return {**ids, "feedback": await call(client, "feedback", cited)}

    async def second() -> dict[str, Any]:
        with anyio.fail_after(SESSION_DEADLINE):
            async with Client(server_params(home), client_info=mcp_checks.client_info()) as client:
                return await call(client, "feedback", {})

    settled = anyio.run(first)
    assert settled["feedback"] == {
        "hits": [settled["a"]],
        "misses": [settled["b"]],
        "unchanged": [],
        "unknown": [],
    }
    assert anyio.run(second) == {"hits": [], "misses": [], "unchanged": [], "unknown": []}


def test_citations_over_stdio_lift_a_memory_above_its_twin(tmp_path: Path) -> None:
    """Two memories with the same text, the local model's hybrid recall: four feedback hits lift
    the lower twin above the other, and five notes citing the other as `[mem:<id>]` lift that
    one back (graph/search/scoring.py, impact_first)."""
    home = tmp_path / "home"
    env = memesh_env(home, MEMESH_EMBEDDER="local")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memesh_site.cli", "mcp"], env=env, cwd=str(ROOT)
    )
    text = "The deploy script needs the staging credentials first, then the migration runs."

    async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await client.call_tool(name, arguments)
        assert not result.is_error, mcp_checks.text_of(result)
        return mcp_checks.json_object(result)

    async def order(client: Client) -> list[str]:
        found = await call(client, "recall", {"query": "deploy staging credentials"})
        assert found["retrieval"]["mode"] == "hybrid"
        return [e["name"] for e in found["entities"]]

    async def session() -> list[list[str]]:
        with anyio.fail_after(SESSION_DEADLINE):
            async with Client(params, client_info=mcp_checks.client_info()) as client:
                ids = {}
                for name in ("deploy-order", "deploy-order-copy"):
                    memory = {"name": name, "type": "note", "observations": [text]}
                    ids[name] = (await call(client, "remember", memory))["entityId"]
                embed = ["-m", "memesh_site.cli", "embed", "--json"]
                done = await anyio.to_thread.run_sync(run_python, embed, env)
                assert done.returncode == 0, done.stderr
                before = await order(client)
                first, second = before
                # A memory counts once per session: each report names a session of its own
                # (as four agent sessions would), and so does each handoff note.
                for n in range(4):
                    hit = {"hits": [ids[second]], "session_id": f"review-{n}"}
                    assert (await call(client, "feedback", hit))["hits"] == [ids[second]]
                lifted = await order(client)
                for n in range(5):
                    note = f"Handoff {n}\n\nRan the steps in order, as [mem:{ids[first]}] says."
                    cited = {"note": note, "session_id": f"handoff-{n}"}
                    assert (await call(client, "remember", cited))["cited"] == [ids[first]]
                return [before, lifted, await order(client)]

    before, lifted, back = anyio.run(session)
    assert lifted[:2] == before[::-1]
    assert back[:2] == before


def test_observe_over_stdio_is_the_one_path_from_hypothesis_to_fact(tmp_path: Path) -> None:
    """The trust model end to end (docs/trust.md): an unsourced remember is a hypothesis,
    observe without a source is refused in-band with trust.source-required, observe with one
    promotes it, and recall then shows it as a fact."""

    async def session() -> dict[str, Any]:
        with anyio.fail_after(SESSION_DEADLINE):
            async with Client(
                server_params(tmp_path / "home"), client_info=mcp_checks.client_info()
            ) as client:
                stored = mcp_checks.json_object(
                    await client.call_tool(
                        "remember",
                        {"name": "warm-cache", "type": "note", "observations": ["warm at 3am"]},
                    )
                )
                refused = await client.call_tool("observe", {"name": "warm-cache"})
                observed = await client.call_tool(
                    "observe", {"id": stored["entityId"], "source": "grafana: cache hit rate"}
                )
                recalled = await client.call_tool("recall", {"query": "warm"})
                return {
                    "stored": stored,
                    "refused": (refused.is_error, mcp_checks.json_object(refused)),
                    "observed": (observed.is_error, mcp_checks.json_object(observed)),
                    "recalled": mcp_checks.json_object(recalled),
                }

    out = anyio.run(session)
    assert out["stored"]["trust"]["status"] == "hypothesis"
    is_error, refusal = out["refused"]
    assert is_error and refusal["errorCode"] == "trust.source-required"
    is_error, observed = out["observed"]
    assert not is_error and observed["promoted"] is True
    [entity] = out["recalled"]["entities"]
    assert entity["trust"]["status"] == "fact"
    assert entity["trust"]["source"] == "grafana: cache hit rate"
    assert entity["trust"]["confidence"] == 0.6


def test_with_the_peer_switch_on_the_peers_tools_answer_its_documented_calls(
    tmp_path: Path,
) -> None:
    """MEMESH_PEER_API=1: the trusted-memory service's `memory_*` tools are listed after
    memesh's, and its own tools/call examples (memory_remember, memory_recall) answer."""
    env = memesh_env(tmp_path / "home", MEMESH_EMBEDDER="none", MEMESH_PEER_API="1")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memesh_site.cli", "mcp"], env=env, cwd=str(ROOT)
    )

    async def session() -> dict[str, Any]:
        with anyio.fail_after(SESSION_DEADLINE):
            async with Client(params, client_info=mcp_checks.client_info()) as client:
                listed = [t.name for t in (await client.list_tools()).tools]
                stored = await client.call_tool(
                    "memory_remember",
                    {
                        "content": "The deploy script restarts php8.4-fpm after composer install.",
                        "source": "runbook",
                        "invalidation_condition": "delete if deploys move to a zero-downtime "
                        "reload",
                    },
                )
                found = await client.call_tool(
                    "memory_recall", {"query": "what happens to php-fpm on deploy?"}
                )
                return {
                    "listed": listed,
                    "stored": mcp_checks.json_object(stored),
                    "found": mcp_checks.json_object(found),
                }

    out = anyio.run(session)
    assert {"memory_remember", "memory_recall", "memory_observe", "ping_memory"} <= set(
        out["listed"]
    )
    assert out["listed"].index("remember") < out["listed"].index("memory_remember")
    assert (out["stored"]["status"], out["stored"]["expiry"]) == ("fact", "permanent")
    [first] = out["found"]["results"]
    assert (first["id"], first["status"]) == (out["stored"]["id"], "fact")


def test_stdout_carries_only_the_protocol(tmp_path: Path) -> None:
    requests: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "remember",
                "arguments": {"name": "raw", "type": "note", "observations": ["o"]},
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "recall", "arguments": {"query": "raw"}},
        },
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "memesh_site.cli", "mcp"],
        cwd=ROOT,
        env=memesh_env(tmp_path / "home", MEMESH_EMBEDDER="none", MEMESH_LOG_LEVEL="INFO"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    responses: dict[int, dict[str, Any]] = {}
    try:
        for request in requests:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            if "id" in request:
                line = proc.stdout.readline()
                message = json.loads(line)  # every stdout line is a JSON-RPC message
                responses[message["id"]] = message
        proc.stdin.close()  # end of input: the server shuts down cleanly
        proc.wait(timeout=60)
        rest = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rest == ""
    assert proc.returncode == 0
    assert responses[1]["result"]["serverInfo"]["name"] == "memesh"
    assert len(responses[2]["result"]["tools"]) == len(mcp_checks.tool_definitions())
    recalled = json.loads(responses[4]["result"]["content"][0]["text"])
    # A client that declares an empty name is stamped `mcp`.
    assert recalled["entities"][0]["metadata"]["provenance"]["source_host"] == "mcp"


@pytest.mark.parametrize(
    ("raw", "stamped"),
    [
        ("claude-code", "claude-code"),
        ("  gemini-cli\n", "gemini-cli"),
        # What the real hosts declare in `initialize`, stamped as the hosts' names.
        ("codex-mcp-client", "codex"),
        ("gemini-cli-mcp-client", "gemini-cli"),
        ("  codex-mcp-client\u200b", "codex"),
        ("my-codex-mcp-client", "my-codex-mcp-client"),
        ("co\x00de\x1bx\u200b", "codex"),
        ("a" * 100, "a" * 64),
        ("", "mcp"),
        ("\t\r\n", "mcp"),
        (None, "mcp"),
    ],
)
def test_client_names_are_sanitised(raw: str | None, stamped: str) -> None:
    assert sanitize_client_name(raw) == stamped


def test_null_arguments_are_absent_but_nulls_in_arrays_are_kept() -> None:
    assert drop_nulls({"query": None, "tags": ["a", None], "limit": 3}) == {
        "tags": ["a", None],
        "limit": 3,
    }
    assert drop_nulls(None) == {}
