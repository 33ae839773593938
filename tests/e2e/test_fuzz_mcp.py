"""Malformed frames and arguments against a real `memesh mcp` stdio process.

Raw JSON-RPC lines go straight to the process's stdin; hypothesis-generated tool arguments go
through the official SDK client. Whatever arrives, the server answers requests it can read with
a JSON-RPC error or an `isError: true` result carrying a memesh errorCode, never crashes or
stops answering, and serves valid requests afterwards.

Liveness is checked by following each frame with a `ping`: its answer proves the server still
reads and answers. The deadline only turns a hang into a failure; nothing asserts how fast.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import mcp_types as types
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from mcp import Client, StdioServerParameters

from api.rest.openapi import ERROR_CODES
from api.tool_schemas import tool_definitions
from tests.processes import ROOT, StdioServer, memesh_env

pytestmark = pytest.mark.slow  # each test starts a Python + Django process

DEADLINE = 120  # seconds; a hung server fails the test instead of hanging the run
HUGE_ID = 123456789012345678901234567890


def _call(request_id: object, params: object) -> str:
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    )


# Requests the server can read: each must be answered, with an error of one of these kinds.
# "protocol" = a JSON-RPC error object; "in-band" = an isError result with this errorCode.
ANSWERED: list[tuple[str, object, str, str | None]] = [
    ('{"jsonrpc":"2.0","id":1,"method":"no/such/method"}', 1, "protocol", None),
    ('{"jsonrpc":"2.0","id":2,"method":"tools/call"}', 2, "protocol", None),  # no params
    ('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":null}', 3, "protocol", None),
    (_call(4, {"name": "recall", "arguments": "query"}), 4, "protocol", None),  # not an object
    (_call(5, {"name": "recall", "arguments": [1, 2]}), 5, "protocol", None),
    (_call(6, {"name": "no_such_tool", "arguments": {}}), 6, "protocol", None),
    (_call(7, {"name": 5}), 7, "protocol", None),
    (_call(8, {"name": "remember", "arguments": {"name": 5}}), 8, "in-band", "validation.bad-body"),
    (
        _call(9, {"name": "recall", "arguments": {"query": "x", "limit": 1e308}}),
        9,
        "in-band",
        "validation.bad-body",
    ),
    (
        _call(10, {"name": "recall", "arguments": {"query": "x", "surprise": True}}),
        10,
        "in-band",
        "validation.bad-body",
    ),
    (
        _call(11, {"name": "remember", "arguments": {"name": "n", "observations": "not a list"}}),
        11,
        "in-band",
        "validation.bad-body",
    ),
    (
        _call(12, {"name": "remember", "arguments": {"observations": ["x" * 200_000]}}),
        12,
        "in-band",
        "validation.bad-body",
    ),
    (_call(13, {"name": "forget", "arguments": {}}), 13, "in-band", "validation.bad-body"),
    (
        _call(14, {"name": "unpin", "arguments": {"name": ["a"]}}),
        14,
        "in-band",
        "validation.bad-body",
    ),
    (
        _call(15, {"name": "import", "arguments": {"data": [], "merge_strategy": "x"}}),
        15,
        "in-band",
        "validation.bad-body",
    ),
    (_call("ünïcode-id ✓", {"name": "nope"}), "ünïcode-id ✓", "protocol", None),
]

# Frames that are not readable JSON-RPC requests (bad JSON, wrong types, responses the server
# never asked for, notifications), each with the answer JSON-RPC 2.0 asks for: (id, code) of an
# error, or None for no answer at all (blank lines, responses, notifications).
PARSE, INVALID = -32700, -32600
UNREADABLE: list[tuple[str, tuple[object, int] | None]] = [
    ("{not json", (None, PARSE)),
    ("", None),
    ("   ", None),
    ("null", (None, INVALID)),
    ("[]", (None, INVALID)),
    ("42", (None, INVALID)),
    ('"a string"', (None, INVALID)),
    ("[1, 2]", (None, INVALID)),
    ("\x00\x01\x02", (None, PARSE)),
    ('{"jsonrpc":"2.0"}', (None, INVALID)),
    ('{"jsonrpc":"1.0","id":101,"method":"ping"}', (101, INVALID)),
    ('{"id":102,"method":"ping"}', (102, INVALID)),
    ('{"jsonrpc":"2.0","id":103,"method":5}', (103, INVALID)),
    # The SDK reads a message whose id is unusable (an object, a float, null) as a
    # notification, which is owed no answer.
    ('{"jsonrpc":"2.0","id":{"an":"object"},"method":"ping"}', None),
    ('{"jsonrpc":"2.0","id":1e400,"method":"ping"}', None),
    ('{"jsonrpc":"2.0","id":104,"method":"tools/list","params":[]}', (104, INVALID)),
    # A lone surrogate escape: pydantic's JSON parser rejects the whole line.
    (
        _call(105, {"name": "recall", "arguments": {"query": "\\ud800"}}).replace("\\\\", "\\"),
        (105, INVALID),
    ),
    ('{"jsonrpc":"2.0","id":106,"result":{}}', None),
    ('{"jsonrpc":"2.0","id":107,"error":{"code":1,"message":"x"}}', None),
    ('{"jsonrpc":"2.0","id":null,"method":"ping"}', None),
    ('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}', None),
    ('{"jsonrpc":"2.0","method":"no/such/notification"}', None),
    ("[" + ",".join(['{"jsonrpc":"2.0","id":108,"method":"ping"}'] * 3) + "]", (None, INVALID)),
]


@pytest.fixture
def mcp_process(tmp_path: Path) -> Iterator[StdioServer]:
    """A `memesh mcp` process of the test's own, spoken to in raw lines."""
    proc = StdioServer(tmp_path / "home")
    try:
        yield proc
    finally:
        proc.kill()


def _in_band_error(message: dict[str, Any]) -> dict[str, Any]:
    result = message["result"]
    assert result["isError"] is True, message
    body = json.loads(result["content"][0]["text"])
    assert body["errorCode"] in ERROR_CODES and body["errorCode"] != "server.internal", body
    assert isinstance(body["error"], str) and body["error"], body
    return body


def test_junk_frames_get_errors_and_the_server_keeps_serving(mcp_process: StdioServer) -> None:
    assert mcp_process.initialize("fuzz")["result"]

    for n, (line, expected) in enumerate(UNREADABLE):
        seen = len(mcp_process.arrived)
        mcp_process.send(line)
        assert mcp_process.request(f"ping-{n}", "ping") == {
            "jsonrpc": "2.0",
            "id": f"ping-{n}",
            "result": {},
        }
        # Answers arrive in order: whatever came before the ping's answer answered the line.
        before_ping = mcp_process.arrived[seen:-1]
        if expected is None:
            assert before_ping == [], (line, before_ping)
        else:
            assert [(m["id"], m["error"]["code"]) for m in before_ping] == [expected], (
                line,
                before_ping,
            )
            assert before_ping[0]["error"]["message"]
    for line, _, _, _ in ANSWERED:
        mcp_process.send(line)
    mcp_process.send(json.dumps({"jsonrpc": "2.0", "id": HUGE_ID, "method": "ping"}))

    assert mcp_process.wait_for(HUGE_ID)["result"] == {}  # a 100-bit id comes back unchanged
    for _, request_id, kind, code in ANSWERED:
        answer = mcp_process.wait_for(request_id)
        if kind == "protocol":
            assert isinstance(answer["error"]["code"], int), answer
            assert answer["error"]["message"], answer
        else:
            body = _in_band_error(answer)
            assert code is None or body["errorCode"] == code, (request_id, body)

    # After all that, the tools still work.
    arguments = {"name": "after-junk", "type": "note", "observations": ["survived the fuzzing"]}
    stored = mcp_process.request("ok-1", "tools/call", {"name": "remember", "arguments": arguments})
    assert stored["result"]["isError"] is False, stored
    recalled = mcp_process.request(
        "ok-2", "tools/call", {"name": "recall", "arguments": {"query": "fuzzing"}}
    )
    body = json.loads(recalled["result"]["content"][0]["text"])
    assert [e["name"] for e in body["entities"]] == ["after-junk"]

    code, stderr = mcp_process.close()
    assert code == 0, stderr
    assert "Traceback" not in stderr


# --- generated arguments through the official SDK client -------------------------------------

TOOLS = {definition["name"]: definition["inputSchema"] for definition in tool_definitions()}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _from_schema(schema: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values that mostly fit `schema` (a small subset of JSON Schema: what the tools use)."""
    if "$ref" in schema:
        return _from_schema(defs[schema["$ref"].rsplit("/", 1)[1]], defs)
    if "anyOf" in schema:
        return st.one_of([_from_schema(s, defs) for s in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return st.text(min_size=schema.get("minLength", 0), max_size=60)
    if kind == "integer":
        return st.integers(schema.get("minimum", -5), schema.get("maximum", 500))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(_from_schema(schema.get("items", {}), defs), max_size=3)
    if kind == "object" and "properties" in schema:
        return st.fixed_dictionaries(
            {},
            optional={k: _from_schema(v, defs) for k, v in schema["properties"].items()},
        )
    return json_values


def _arguments(name: str) -> st.SearchStrategy[Any]:
    schema = TOOLS[name]
    fitting = _from_schema(schema, schema.get("$defs", {}))
    # Mostly close to the schema (reaching the handlers), sometimes any JSON at all.
    junk = st.dictionaries(
        st.sampled_from([*schema.get("properties", {}), "unexpected"]), json_values, max_size=4
    )
    return st.one_of(fitting, fitting, junk)


tool_calls = st.sampled_from(sorted(TOOLS)).flatmap(
    lambda name: st.tuples(st.just(name), _arguments(name))
)


def test_generated_tool_arguments_get_results_or_in_band_errors(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memesh_site.cli", "mcp"],
        env=memesh_env(tmp_path / "home", MEMESH_EMBEDDER="none"),
        cwd=str(ROOT),
    )
    seen: list[str] = []
    with anyio.from_thread.start_blocking_portal() as portal:
        client = portal.wrap_async_context_manager(Client(params, mode="legacy"))
        with client as session:

            def call(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
                async def bounded() -> types.CallToolResult:
                    with anyio.fail_after(DEADLINE):
                        return await session.call_tool(name, arguments)

                return portal.call(bounded)

            @settings(max_examples=30, deadline=None, derandomize=True, database=None)
            @given(tool_calls)
            @example(("recall", {"query": '"NEAR(x" OR *', "limit": 1}))
            @example(("remember", {"name": "fuzz", "type": "note", "observations": ["\x00"]}))
            @example(("import", {"data": {"entities": [None, 5, {}]}, "merge_strategy": "skip"}))
            def check(call_: tuple[str, dict[str, Any]]) -> None:
                name, arguments = call_
                result = call(name, arguments)
                seen.append(name)
                assert len(result.content) == 1
                block = result.content[0]
                assert isinstance(block, types.TextContent)
                if result.is_error:
                    body = json.loads(block.text)
                    assert body["errorCode"] in ERROR_CODES, body
                    assert body["errorCode"] != "server.internal", (name, arguments, body)
                    assert body["error"], body
                elif name != "user_patterns":  # user_patterns answers in markdown
                    assert isinstance(json.loads(block.text), dict)

            check()
            # The session survived every call.
            assert call("recall", {"query": "anything"}).is_error is False
    assert len(set(seen)) > 3
