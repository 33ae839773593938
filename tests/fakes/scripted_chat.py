"""A scripted model on loopback speaking the OpenAI Chat Completions API (`POST
/v1/chat/completions`), streamed as the real one streams when asked (server-sent `data:` chunks
ending in `data: [DONE]`), for driving a real agent host configured with an OpenAI-compatible
endpoint, such as Hermes Agent:

    script = [call("memesh_remember", {...}), say("Stored.")]
    with ScriptedChat(script) as model:
        ...  # the host's base URL is model.url + "/v1"
        model.agent_requests()[0]["messages"]  # what the host sent

Steps are those of tests/fakes/scripted_model.py (functions of the request's body returning
Anthropic-style content blocks; `say` and `call` build the plain ones); here a `tool_use` block
becomes a `tool_calls` entry. As there, a request offering tools is an agent step and one
offering none (a title, a summary) is a side call answered `side_text` without touching the
script. `GET /v1/models` lists the one model, for hosts that look their model up first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.scripted_model import Block
from tests.fakes.scripted_server import ScriptedHandler, ScriptedServer, server_sent

MODEL = "scripted-chat"


def offered_functions(request: dict[str, Any]) -> list[str]:
    """The names of the functions a chat request offers the model."""
    return [
        str((tool.get("function") or {}).get("name", "")) for tool in request.get("tools") or []
    ]


def chat_text(request: dict[str, Any]) -> str:
    """Every piece of text in a chat request's messages (system, user, tool results), joined."""
    parts: list[str] = []
    for message in request.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [str(p.get("text", "")) for p in content if isinstance(p, dict)]
    return "\n".join(parts)


def tool_results(request: dict[str, Any]) -> dict[str, str]:
    """The results the host sent back for the model's tool calls, by call id."""
    return {
        str(m.get("tool_call_id")): str(m.get("content"))
        for m in request.get("messages") or []
        if m.get("role") == "tool"
    }


def as_message(blocks: list[Block]) -> dict[str, Any]:
    """The assistant message carrying `blocks`: text as its content, tool uses as tool calls."""
    text = "".join(b["text"] for b in blocks if b["type"] == "text")
    calls = [
        {"id": b["id"], "type": "function",
         "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
        for b in blocks if b["type"] == "tool_use"
    ]  # fmt: skip
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return message


def stream_chunks(model: str, message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The chunks of one streamed completion carrying `message`, in the order the API sends
    them: https://platform.openai.com/docs/api-reference/chat-streaming"""
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": model}
    yield {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                "finish_reason": None}]}  # fmt: skip
    if message["content"]:
        yield {**base, "choices": [{"index": 0, "delta": {"content": message["content"]},
                                    "finish_reason": None}]}  # fmt: skip
    for index, tool_call in enumerate(message.get("tool_calls") or []):
        delta = {"tool_calls": [{"index": index, **tool_call}]}
        yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    yield {**base, "choices": [], "usage": usage}


class ScriptedChat(ScriptedServer[Block]):
    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    def is_step_path(self, path: str) -> bool:
        return path.endswith("/chat/completions")

    def text(self, text: str) -> list[Block]:
        return [{"type": "text", "text": text}]


class _Handler(ScriptedHandler):
    fake: ScriptedChat

    def do_GET(self) -> None:
        self._record(None)
        if self.route.endswith("/models"):
            self._send_json({"object": "list", "data": [{"id": MODEL, "object": "model",
                                                         "owned_by": "scripted"}]})  # fmt: skip
            return
        self._send(404, "application/json", b'{"error":{"message":"not found"}}')

    def do_POST(self) -> None:
        body = self.read_body()
        if not self.route.endswith("/chat/completions"):
            self._send(404, "application/json", b'{"error":{"message":"not found"}}')
            return
        request: dict[str, Any] = body if isinstance(body, dict) else {}
        model = str(request.get("model") or MODEL)
        message = as_message(self.fake.answer(request))
        if request.get("stream"):
            stream = server_sent((None, c) for c in stream_chunks(model, message))
            self._send(200, "text/event-stream", stream + b"data: [DONE]\n\n")
            return
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        completion = {
            "id": "chatcmpl-scripted", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }  # fmt: skip
        self._send_json(completion)
