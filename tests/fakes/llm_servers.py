"""Real HTTP servers on loopback speaking the Anthropic, OpenAI and Ollama chat wire formats.

Point an LLM config at one and steer it while it runs:

    with FakeLLMServer(kind="anthropic", api_key="sk-ant-test-123") as server:
        server.replies.append(LLMReply(text='{"name": "weekly-digest", ...}'))  # next reply
        server.replies.append(LLMReply(status=429, headers={"Retry-After": "7"}))
        server.replies.append(LLMReply(delay=5.0))           # hang, then answer normally
        server.replies.append(LLMReply(body="{not json"))      # malformed JSON
        server.replies.append(LLMReply(content=[tool_use("memory", {...})]))  # a tool call
        config_update({"llm": server.llm_config(model="claude-haiku-4-5")})
        ...                                                  # code under test calls complete()
        server.requests[0].body["messages"]                  # what was sent

`replies` is consumed one per chat request; when it is empty the server answers
`default_text`. A reply's `content` (anthropic) is sent as the message's content blocks, with
`stop_reason: tool_use` when one is a `tool_use` block (`tool_use(name, input)` builds one).
`api_key` (when set) is checked as the real servers check it (anthropic: `x-api-key`; openai:
`Authorization: Bearer`), and a wrong key gets a 401 that echoes the key back, as some
servers do, so tests can prove it is redacted. Model listings (`/v1/models`,
`/api/tags`) answer `models` (set it to [] for a server with none). The server base URL is
`server.url` (no `/v1`); `server.llm_config()` gives a ready `llm` config entry.
"""

from __future__ import annotations

import itertools
import json
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal

from tests.fakes.loopback import LoopbackServer

Kind = Literal["anthropic", "openai", "ollama"]
CHAT_PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions", "ollama": "/api/chat"}


@dataclass(frozen=True)
class LLMReply:
    """One scripted answer. `delay` seconds pass first (cut short when the server stops);
    then `drop` closes the connection unanswered; `body` (str/bytes) or `json` is sent as is
    with `status`; otherwise a well-formed reply in the server's wire format carrying `text`
    (or the server's `default_text`) with `status` — a non-200 status without a body gets a
    small error body in the provider's shape. `content` (anthropic only) replaces the text
    block with these Messages API content blocks."""

    text: str | None = None
    status: int = 200
    body: str | bytes | None = None
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False
    content: list[dict[str, Any]] | None = None


def tool_use(name: str, input: dict[str, Any], id: str | None = None) -> dict[str, Any]:
    """An Anthropic `tool_use` content block (a fresh id unless given)."""
    return {
        "type": "tool_use",
        "id": id or f"toolu_{next(_TOOL_USE_IDS):04d}",
        "name": name,
        "input": input,
    }


_TOOL_USE_IDS = itertools.count(1)


@dataclass(frozen=True)
class RecordedLLMRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or None


class FakeLLMServer(LoopbackServer):
    def __init__(
        self,
        kind: Kind = "openai",
        *,
        api_key: str | None = None,
        models: list[str] | None = None,
        default_text: str = "fake reply",
    ) -> None:
        super().__init__()
        self.kind = kind
        self.api_key = api_key
        self.models: list[str] = (
            list(models) if models is not None else [f"fake-{kind}-large", f"fake-{kind}-mini"]
        )
        self.default_text = default_text
        self.replies: deque[LLMReply] = deque()
        self.requests: list[RecordedLLMRequest] = []

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    def llm_config(self, model: str | None = None) -> dict[str, Any]:
        """An `llm` / `llmFallbacks` entry pointing at this server."""
        entry: dict[str, Any] = {"provider": self.kind, "baseUrl": self.url}
        if model:
            entry["model"] = model
        if self.api_key:
            entry["apiKey"] = self.api_key
        return entry

    def chat_requests(self) -> list[RecordedLLMRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == CHAT_PATHS[self.kind]]

    # -- wire formats -----------------------------------------------------------------------

    def authorised(self, headers: dict[str, str]) -> tuple[bool, str]:
        if self.api_key is None or self.kind == "ollama":
            return True, ""
        if self.kind == "anthropic":
            presented = headers.get("x-api-key", "")
        else:
            presented = headers.get("authorization", "").removeprefix("Bearer ")
        return presented == self.api_key, presented

    def error_body(self, status: int, message: str) -> Any:
        if self.kind == "anthropic":
            return {"type": "error", "error": {"type": f"http_{status}", "message": message}}
        if self.kind == "openai":
            return {"error": {"message": message, "type": "invalid_request_error", "code": None}}
        return {"error": message}

    def chat_body(
        self, text: str, request: Any, content: list[dict[str, Any]] | None = None
    ) -> Any:
        model = request.get("model") if isinstance(request, dict) else None
        if self.kind == "anthropic":
            blocks = content if content is not None else [{"type": "text", "text": text}]
            uses_tool = any(block.get("type") == "tool_use" for block in blocks)
            return {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": blocks,
                "stop_reason": "tool_use" if uses_tool else "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        if self.kind == "openai":
            return {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
            }
        return {
            "model": model,
            "message": {"role": "assistant", "content": text},
            "done": True,
        }

    def models_body(self) -> Any:
        if self.kind == "ollama":
            return {
                "models": [
                    {"name": m, "model": m, "modified_at": f"2026-0{1 + i % 9}-01T00:00:00Z"}
                    for i, m in enumerate(self.models)
                ]
            }
        if self.kind == "anthropic":
            return {
                "data": [
                    {"id": m, "type": "model", "created_at": f"2026-0{1 + i % 9}-01T00:00:00Z"}
                    for i, m in enumerate(self.models)
                ],
                "has_more": False,
            }
        return {
            "object": "list",
            "data": [
                {"id": m, "object": "model", "created": 1_700_000_000 + i, "owned_by": "fake"}
                for i, m in enumerate(self.models)
            ],
        }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeLLMServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _record(self, body: Any) -> dict[str, str]:
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.fake._lock:
            self.fake.requests.append(
                RecordedLLMRequest(self.command, self.path.split("?")[0], headers, body)
            )
        return headers

    def do_GET(self) -> None:
        headers = self._record(None)
        path = self.path.split("?")[0]
        listing = "/api/tags" if self.fake.kind == "ollama" else "/v1/models"
        if path != listing:
            self._send(404, self.fake.error_body(404, "not found"))
            return
        ok, presented = self.fake.authorised(headers)
        if not ok:
            self._send(401, self.fake.error_body(401, f"invalid x-api-key: {presented}"))
            return
        self._send(200, self.fake.models_body())

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = self._record(body)
        if self.path.split("?")[0] != CHAT_PATHS[self.fake.kind]:
            self._send(404, self.fake.error_body(404, "not found"))
            return
        with self.fake._lock:
            reply = self.fake.replies.popleft() if self.fake.replies else LLMReply()
        if reply.delay > 0 and self.fake._stopping.wait(reply.delay):
            self.close_connection = True
            return
        if reply.drop:
            self.close_connection = True
            return
        ok, presented = self.fake.authorised(headers)
        if not ok:
            message = f"Incorrect API key provided: {presented}"
            self._send(401, self.fake.error_body(401, message), reply.headers)
            return
        if reply.body is not None:
            data = reply.body.encode() if isinstance(reply.body, str) else reply.body
            self._send_raw(reply.status, data, reply.headers)
        elif reply.json is not None:
            self._send(reply.status, reply.json, reply.headers)
        elif reply.status != 200:
            body_out = self.fake.error_body(reply.status, f"scripted {reply.status}")
            self._send(reply.status, body_out, reply.headers)
        else:
            text = reply.text if reply.text is not None else self.fake.default_text
            self._send(200, self.fake.chat_body(text, body, reply.content), reply.headers)

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode(), headers or {})

    def _send_raw(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
