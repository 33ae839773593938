"""A scripted model on loopback speaking the OpenAI Responses API, streamed as the real one
streams (server-sent events), for driving a real agent host such as Codex CLI through a custom
model provider (`model_providers.<name>.base_url` = `model.url`, `wire_api = "responses"`):

    script = [
        call("tool_search", {"query": "memesh remember"}),
        lambda request: [function_call("mcp__memesh__remember", {...})],  # sees the request
        say("Stored."),
    ]
    with ScriptedResponses(script) as model:
        ...  # the host runs against model.url
        model.agent_requests()[0]["instructions"]  # what the host sent

The step rules are scripted_model's: a request offering tools takes the script's next step (a
function of the request's body returning output items; `say` and `call` build the plain ones),
and is answered `done_text` once the script is spent; a request offering no tools is one of the
host's side calls and is answered `side_text` without touching the script.

Codex reads only some of the stream's events (codex-rs `codex-api/src/sse/responses.rs`):
`response.created`, `response.output_item.added`/`.done` (each carrying a whole item),
`response.output_text.delta`, and `response.completed`, whose `response.id` ends the turn; a
stream closed without `response.completed` is an error Codex retries.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.scripted_server import (
    ScriptedHandler,
    ScriptedServer,
    joined_text,
    server_sent,
)

Item = dict[str, Any]
Step = Callable[[dict[str, Any]], list[Item]]

_IDS = itertools.count(1)


def message(text: str) -> Item:
    """An assistant `message` output item saying `text`."""
    return {
        "type": "message",
        "id": f"msg_{next(_IDS):04d}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call(name: str, arguments: dict[str, Any], namespace: str | None = None) -> Item:
    """A `function_call` output item calling the tool `name` (in `namespace`, for a tool the
    host offers inside a namespace) with `arguments`, under a fresh call id."""
    number = next(_IDS)
    item: Item = {
        "type": "function_call",
        "id": f"fc_{number:04d}",
        "call_id": f"call_{number:04d}",
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }
    if namespace is not None:
        item["namespace"] = namespace
    return item


def tool_search_call(query: str, limit: int = 8) -> Item:
    """A `tool_search_call` output item: the model searching the host's deferred tools (Codex
    runs the search itself, `execution: client`, and answers with a `tool_search_output`)."""
    number = next(_IDS)
    return {
        "type": "tool_search_call",
        "id": f"ts_{number:04d}",
        "call_id": f"search_{number:04d}",
        "execution": "client",
        "status": "completed",
        "arguments": {"query": query, "limit": limit},
    }


def search(query: str, limit: int = 8) -> Step:
    """A step searching the host's deferred tools for `query`."""
    return lambda request: [tool_search_call(query, limit)]


def say(text: str) -> Step:
    """A step answering `text`."""
    return lambda request: [message(text)]


def call(name: str, arguments: dict[str, Any], namespace: str | None = None) -> Step:
    """A step calling the tool `name` with `arguments`."""
    return lambda request: [function_call(name, arguments, namespace)]


def tool_names(tools: list[dict[str, Any]]) -> list[str]:
    """The names of `tools` as a Responses request lists them; a namespace's tools are named
    `<namespace>.<tool>`."""
    names: list[str] = []
    for tool in tools:
        name = str(tool.get("name") or tool.get("type") or "")
        inner = tool.get("tools")
        if isinstance(inner, list):
            names += [f"{name}.{n}" for n in tool_names(inner)]
        else:
            names.append(name)
    return names


def request_text(request: dict[str, Any]) -> str:
    """Every piece of text in a request (instructions, input items, tool outputs), joined, so a
    test can look for what the host put in front of the model wherever the host put it."""
    keys = ("text", "content", "output")
    return joined_text((request.get("instructions"), request.get("input")), keys)


class ScriptedResponses(ScriptedServer[Item]):
    @property
    def base_url(self) -> str:
        """What a model provider's `base_url` names: the host appends `/responses`."""
        return f"{self.url}/v1"

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    def is_step_path(self, path: str) -> bool:
        return path.endswith("/responses")

    def text(self, text: str) -> list[Item]:
        return [message(text)]


def response_events(model: str, items: list[Item]) -> list[dict[str, Any]]:
    """The server-sent events of one streamed response carrying `items`, in the order the
    Responses API sends them: https://platform.openai.com/docs/api-reference/responses-streaming"""
    response_id = f"resp_{next(_IDS):04d}"
    response: dict[str, Any] = {
        "id": response_id, "object": "response", "status": "in_progress", "model": model,
        "output": [],
    }  # fmt: skip
    events: list[dict[str, Any]] = [{"type": "response.created", "response": response}]
    for index, item in enumerate(items):
        events.append({"type": "response.output_item.added", "output_index": index,
                       "item": {**item, "status": "in_progress"}})  # fmt: skip
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append({"type": "response.output_text.delta", "item_id": item["id"],
                           "output_index": index, "content_index": 0, "delta": text})  # fmt: skip
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    usage = {
        "input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2,
    }  # fmt: skip
    completed = {**response, "status": "completed", "output": items, "usage": usage}
    events.append({"type": "response.completed", "response": completed})
    return events


class _Handler(ScriptedHandler):
    fake: ScriptedResponses

    def do_GET(self) -> None:
        # The host's model list (`/models`) and anything else it probes: none here, so it
        # keeps the model named on its command line.
        self._record(None)
        self._send(404, "application/json", b'{"error":{"message":"not found"}}')

    def do_POST(self) -> None:
        body = self.read_body()
        if not self.route.endswith("/responses"):
            self._send(404, "application/json", b'{"error":{"message":"not found"}}')
            return
        request: dict[str, Any] = body if isinstance(body, dict) else {}
        items = self.fake.answer(request)
        events = response_events(str(request.get("model") or "scripted"), items)
        self._send(200, "text/event-stream", server_sent((e["type"], e) for e in events))
