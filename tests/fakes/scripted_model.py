"""A scripted model on loopback speaking the Anthropic Messages API, streamed as the real one
streams (server-sent events), for driving a real agent host such as Claude Code:

    script = [
        call("ToolSearch", {"query": "select:mcp__memesh__remember", "max_results": 5}),
        lambda request: [tool_use("mcp__memesh__remember", {...})],  # sees the request
        say("Stored."),
    ]
    with ScriptedModel(script) as model:
        ...  # the host runs with ANTHROPIC_BASE_URL=model.url
        model.agent_requests()[0]["system"]  # what the host sent

Every request is recorded. A request offering tools is an agent step: it takes the script's
next step (a function of the request's body returning content blocks; `say` and `call` build
the plain ones), and once the script is spent it is answered `done_text`. A request offering
no tools is one of the host's side calls (a title, a summary) and is answered `side_text`
without touching the script, so the host's housekeeping cannot shift the agent's steps.
Token counting (`/v1/messages/count_tokens`) is answered with a rough count.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.llm_servers import tool_use
from tests.fakes.scripted_server import (
    ScriptedHandler,
    ScriptedServer,
    joined_text,
    server_sent,
)

Block = dict[str, Any]
Step = Callable[[dict[str, Any]], list[Block]]


def say(text: str) -> Step:
    """A step answering `text`."""
    return lambda request: [{"type": "text", "text": text}]


def call(name: str, input: dict[str, Any]) -> Step:
    """A step calling the tool `name` with `input`."""
    return lambda request: [tool_use(name, input)]


def offered_tools(request: dict[str, Any]) -> list[str]:
    """The names of the tools a request offers the model."""
    return [tool.get("name", "") for tool in request.get("tools") or []]


def request_text(request: dict[str, Any]) -> str:
    """Every piece of text in a request (system prompt, messages, tool results), joined, so a
    test can look for what the host put in front of the model wherever the host put it."""
    keys = ("text", "content", "system")
    return joined_text((request.get("system"), request.get("messages")), keys)


class ScriptedModel(ScriptedServer[Block]):
    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    def is_step_path(self, path: str) -> bool:
        return path == "/v1/messages"

    def text(self, text: str) -> list[Block]:
        return [{"type": "text", "text": text}]


def message_events(model: str, blocks: list[Block]) -> list[tuple[str, dict[str, Any]]]:
    """The server-sent events of one streamed message carrying `blocks`, in the order the
    Messages API sends them: https://docs.anthropic.com/en/api/messages-streaming"""
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    usage = {"input_tokens": 1, "output_tokens": 1}
    message: dict[str, Any] = {
        "id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage,
    }  # fmt: skip
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": message})
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index,
                                     "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": index,
                                     "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]  # fmt: skip
    events += [
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return events


class _Handler(ScriptedHandler):
    fake: ScriptedModel

    def do_HEAD(self) -> None:
        self._send(200, "application/json", b"")

    def do_GET(self) -> None:
        self._record(None)
        self._send(404, "application/json", b'{"type":"error","error":{"type":"not_found"}}')

    def do_POST(self) -> None:
        body = self.read_body()
        path = self.route
        request: dict[str, Any] = body if isinstance(body, dict) else {}
        if path == "/v1/messages/count_tokens":
            self._send_json({"input_tokens": max(1, len(json.dumps(request)) // 4)})
            return
        if path != "/v1/messages":
            self._send(404, "application/json", b'{"type":"error","error":{"type":"not_found"}}')
            return
        blocks = self.fake.answer(request)
        model = str(request.get("model") or "scripted")
        if request.get("stream"):
            self._send(200, "text/event-stream", server_sent(message_events(model, blocks)))
            return
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        message: dict[str, Any] = {
            "id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }  # fmt: skip
        self._send_json(message)
