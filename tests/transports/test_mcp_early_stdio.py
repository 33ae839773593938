"""`memesh mcp` answers `initialize` before the MCP SDK is imported (api/mcp_server/early_stdio.py):
that answer must be the one the SDK's server gives, byte for byte, for every protocol version
a client may ask for."""

from __future__ import annotations

import json
import tomllib

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from api.mcp_server import early_stdio, tools_cache
from api.mcp_server.server import build_server
from tests.processes import ROOT


def initialize_line(version: str, request_id: int | str = 1) -> str:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"roots": {"listChanged": True}},
            "clientInfo": {"name": "codex-mcp-client", "version": "0.169.0"},
        },
    }
    return json.dumps(message) + "\n"


def sdk_answer(line: str) -> str:
    """The SDK server's answer to `line`, as its stdio transport writes it."""

    async def exchange() -> str:
        server = build_server(project=None)
        send_in, receive_in = anyio.create_memory_object_stream[SessionMessage | Exception](1)
        send_out, receive_out = anyio.create_memory_object_stream[SessionMessage](1)
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(
                    server.run, receive_in, send_out, server.create_initialization_options()
                )
                message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                await send_in.send(SessionMessage(message))
                answer = await receive_out.receive()
                group.cancel_scope.cancel()
        return answer.message.model_dump_json(by_alias=True, exclude_unset=True)

    return anyio.run(exchange)


def test_the_handshake_versions_are_the_sdks() -> None:
    assert early_stdio.HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, "2026-07-28", "1999-01-01"])
def test_the_early_initialize_answer_is_the_sdks_byte_for_byte(version: str) -> None:
    line = initialize_line(version)
    answer = early_stdio.initialize_answer(line)
    assert answer is not None
    assert answer == ("1", sdk_answer(line))


def test_a_string_id_is_answered_as_the_sdk_answers_it() -> None:
    line = initialize_line("2025-06-18", request_id="init-1")
    assert early_stdio.initialize_answer(line) == ('"init-1"', sdk_answer(line))


@pytest.mark.parametrize(
    "line",
    [
        "not json\n",
        '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n',
        '{"jsonrpc":"2.0","id":1,"method":"initialize"}\n',
        '{"jsonrpc":"2.0","id":true,"method":"initialize","params":{}}\n',
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        '"capabilities":{"roots":1},"clientInfo":{"name":"x","version":"1"}}}\n',
        initialize_line("2025-06-18", request_id='a"b'),
    ],
)
def test_anything_else_is_left_to_the_sdk(line: str) -> None:
    assert early_stdio.initialize_answer(line) is None


def test_the_tool_list_key_covers_every_package_memesh_installs() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    included = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    assert sorted(tools_cache.PACKAGES) == sorted(name.rstrip("*") for name in included)


def test_a_tools_list_request_is_recognised_only_when_it_asks_for_the_whole_list() -> None:
    assert early_stdio.list_request_id('{"jsonrpc":"2.0","id":7,"method":"tools/list"}') == "7"
    assert (
        early_stdio.list_request_id('{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}')
        == '"a"'
    )
    cursor = '{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"x"}}'
    assert early_stdio.list_request_id(cursor) is None
    assert early_stdio.list_request_id('{"jsonrpc":"2.0","id":7,"method":"tools/call"}') is None


def test_codex_s_tools_list_with_a_progress_token_is_answered_early() -> None:
    # Codex 0.169.0's request, as it sends it right after `initialize`.
    codex = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":0}}}'
    assert early_stdio.list_request_id(codex) == "1"
    envelope = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": envelope}
    assert early_stdio.list_request_id(json.dumps(request)) is None
    paged = {"_meta": {"progressToken": 0}, "cursor": "x"}
    assert early_stdio.list_request_id(json.dumps({**request, "params": paged})) is None
