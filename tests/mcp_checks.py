"""What every MCP transport must do, checked through a connected SDK client (stdio or HTTP)."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from api.tool_schemas import tool_definitions

# A client name with control characters and 80 printable ones: what is stored is the sanitised,
# 64-character form.
RAW_CLIENT_NAME = "test\x1b[31m-\u202eagent\n" + "x" * 80
CLIENT_NAME = ("test[31m-agent" + "x" * 80)[:64]

# One valid call per tool, in an order where each finds what it needs.
VALID_CALLS: list[tuple[str, dict[str, Any]]] = [
    (
        "remember",
        # Nulls are what Gemini CLI sends for unset optional parameters: treated as absent.
        {
            "name": "mcp-decision",
            "type": "decision",
            "observations": ["Chose SQLite for the MCP store"],
            "why": "one file, no daemon",
            "tags": None,
            "relations": None,
            "namespace": None,
        },
    ),
    ("remember", {"name": "mcp-note", "type": "note", "observations": ["a plain fact"]}),
    ("recall", {"query": "SQLite", "tag": None, "limit": None}),
    ("feedback", {"text": "Kept SQLite, as decided [mem:1].", "hits": None, "session_id": None}),
    ("pin", {"name": "mcp-note"}),
    ("unpin", {"name": "mcp-note"}),
    ("task_state", {"goal": "ship the MCP server", "next": "write the docs"}),
    ("learn", {"error": "stdout polluted the protocol", "fix": "log to stderr"}),
    ("briefing", {}),
    ("export", {"limit": 10}),
    (
        "import",
        {
            "data": {"entities": [{"name": "imported-one", "type": "note", "observations": ["i"]}]},
            "merge_strategy": "skip",
        },
    ),
    ("user_patterns", {"categories": None}),
    ("stats", {}),
    ("projects", {}),
    # The trust model's tools: a hypothesis observed with its source becomes a fact; memory_list
    # lists it; supersede corrects mcp-note (archiving it), ping answers.
    ("observe", {"name": "mcp-note", "source": "README.md", "confidence": None}),
    ("memory_list", {"status": "fact", "limit": None}),
    ("ping", {"message": "hello", "probe": None}),
    ("supersede", {"name": "mcp-note", "observations": ["a corrected fact"], "tags": None}),
    ("forget", {"name": "mcp-note", "reason": "superseded already"}),
    # The review tools: nothing to digest in this graph yet; an improvement citing the first
    # memory (mcp-decision).
    ("work_package", {"action": "prepare", "kind": "digest", "project": None}),
    ("work_package", {"action": "defer"}),
    (
        "improvement",
        {"action": "propose", "title": "t", "description": "d", "evidence": [1], "id": None},
    ),
    # Agents talking to each other (messaging/): the live agents of the bound project.
    ("message", {"action": "discover", "project": None}),
]

# One invalid call per tool: each must come back in-band as isError with an errorCode.
INVALID_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("remember", {"name": "n", "type": "note", "observations": ["ok", None]}),  # null in array
    ("recall", {"limit": "many"}),
    ("feedback", {"hits": [1], "misses": [1]}),  # a memory is a hit or a miss
    ("forget", {}),
    ("learn", {"error": "missing its fix"}),
    ("task_state", {"goal": 5}),
    ("briefing", {"level": "exhaustive"}),
    ("export", {"limit": "all"}),
    ("import", {"data": {"entities": []}}),
    ("user_patterns", {"categories": "workflow"}),
    ("pin", {}),
    ("unpin", {"name": ["not", "a", "string"]}),
    ("stats", {"type": "decision"}),  # takes no arguments
    ("projects", {"limit": 5}),
    ("observe", {"name": "mcp-decision"}),  # a hypothesis: trust.source-required
    ("supersede", {"name": "mcp-decision"}),  # no observations
    ("memory_list", {"status": "retired"}),
    ("ping", {"probe": "yes"}),
    ("work_package", {"action": "apply"}),  # review.human-only: a person reviews
    ("improvement", {"action": "propose", "title": "t", "description": "d", "evidence": [99999]}),
    ("message", {"action": "shout"}),
    # Domain errors, not schema ones: the agent guide's rule (a decision needs `why`), and a
    # relation to an entity that does not exist.
    ("remember", {"name": "d2", "type": "decision", "observations": ["no reason given"]}),
    (
        "remember",
        {"name": "r2", "observations": ["o"], "relations": [{"to": "nowhere", "type": "uses"}]},
    ),
]


def client_info() -> types.Implementation:
    return types.Implementation(name=RAW_CLIENT_NAME, version="1.0")


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def json_object(result: types.CallToolResult) -> dict[str, Any]:
    body = json.loads(text_of(result))
    assert isinstance(body, dict), f"tool result is not a JSON object: {body!r}"
    return body


async def check_tools_listed(client: Client) -> None:
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    expected = {defn["name"]: defn for defn in tool_definitions()}
    assert set(listed) == set(expected)
    for name, defn in expected.items():
        tool = listed[name]
        assert tool.description == defn["description"]
        assert tool.input_schema == defn["inputSchema"]
        assert tool.annotations is not None
        dumped = tool.annotations.model_dump(by_alias=True, exclude_none=True)
        assert dumped == defn["annotations"]


async def check_valid_calls(client: Client) -> None:
    called = set()
    for name, arguments in VALID_CALLS:
        result = await client.call_tool(name, arguments)
        assert not result.is_error, (name, text_of(result))
        called.add(name)
        if name == "user_patterns":
            assert text_of(result).startswith("# "), "user_patterns answers MCP in markdown"
            continue
        body = json_object(result)
        if name == "projects":  # REST's bare list, wrapped: a tool's result is an object
            assert set(body) == {"projects"} and isinstance(body["projects"], list)
        if name == "recall":
            assert set(body) >= {"entities", "retrieval"}
            assert [e["name"] for e in body["entities"]] == ["mcp-decision"]
    assert called == {defn["name"] for defn in tool_definitions()}


async def check_invalid_calls(client: Client) -> None:
    for name, arguments in INVALID_CALLS:
        result = await client.call_tool(name, arguments)
        assert result.is_error, (name, arguments, text_of(result))
        body = json_object(result)
        assert isinstance(body["errorCode"], str) and body["errorCode"], body
        assert isinstance(body["error"], str) and body["error"], body
    result = await client.call_tool("remember", {"name": "n", "observations": [None]})
    assert json_object(result)["errorCode"] == "validation.bad-body"


async def check_unknown_tool(client: Client) -> None:
    with pytest.raises(MCPError) as info:
        await client.call_tool("no_such_tool", {})
    assert info.value.error.code == types.INVALID_PARAMS


async def check_source_host(client: Client, expected: str = CLIENT_NAME) -> None:
    body = json_object(await client.call_tool("recall", {"query": "SQLite"}))
    stamps = {e["name"]: e["metadata"]["provenance"]["source_host"] for e in body["entities"]}
    assert stamps == {"mcp-decision": expected}


async def check_everything(client: Client) -> None:
    await check_tools_listed(client)
    await check_valid_calls(client)
    await check_invalid_calls(client)
    await check_unknown_tool(client)
    await check_source_host(client)
