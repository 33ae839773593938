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

from tests.fakes.llm_servers import RecordedLLMRequest, tool_use
from tests.fakes.loopback import LoopbackServer

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
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key in ("text", "content", "system"):
                if key in value:
                    walk(value[key])

    walk(request.get("system"))
    walk(request.get("messages"))
    return "\n".join(parts)


class ScriptedModel(LoopbackServer):
    def __init__(
        self,
        script: list[Step],
        *,
        done_text: str = "Done.",
        side_text: str = "memesh session",
    ) -> None:
        super().__init__()
        self.script = list(script)
        self.done_text = done_text
        self.side_text = side_text
        self.requests: list[RecordedLLMRequest] = []
        self.steps_taken = 0

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    def agent_requests(self) -> list[dict[str, Any]]:
        """The bodies of the requests that took (or asked for) a step, in order."""
        with self._lock:
            return [
                r.body
                for r in self.requests
                if r.path == "/v1/messages" and isinstance(r.body, dict) and r.body.get("tools")
            ]

    def answer(self, request: dict[str, Any]) -> list[Block]:
        if not request.get("tools"):
            return [{"type": "text", "text": self.side_text}]
        with self._lock:
            step = self.script[self.steps_taken] if self.steps_taken < len(self.script) else None
            self.steps_taken += step is not None
        return step(request) if step is not None else [{"type": "text", "text": self.done_text}]


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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: ScriptedModel

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_HEAD(self) -> None:
        self._send(200, "application/json", b"")

    def do_GET(self) -> None:
        self._record(None)
        self._send(404, "application/json", b'{"type":"error","error":{"type":"not_found"}}')

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self._record(body)
        path = self.path.split("?")[0]
        request: dict[str, Any] = body if isinstance(body, dict) else {}
        if path == "/v1/messages/count_tokens":
            count = {"input_tokens": max(1, len(json.dumps(request)) // 4)}
            self._send(200, "application/json", json.dumps(count).encode())
            return
        if path != "/v1/messages":
            self._send(404, "application/json", b'{"type":"error","error":{"type":"not_found"}}')
            return
        blocks = self.fake.answer(request)
        model = str(request.get("model") or "scripted")
        if request.get("stream"):
            stream = "".join(
                f"event: {name}\ndata: {json.dumps(data)}\n\n"
                for name, data in message_events(model, blocks)
            )
            self._send(200, "text/event-stream", stream.encode())
            return
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        message: dict[str, Any] = {
            "id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }  # fmt: skip
        self._send(200, "application/json", json.dumps(message).encode())

    def _record(self, body: Any) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.fake._lock:
            self.fake.requests.append(
                RecordedLLMRequest(self.command, self.path.split("?")[0], headers, body)
            )

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
