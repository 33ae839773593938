"""A scripted model on loopback speaking the Gemini API (`generateContent`, and
`streamGenerateContent?alt=sse` streamed as server-sent events), for driving the real Gemini CLI:

    script = [
        call("mcp_memesh_remember", {...}),
        lambda request: [function_call("run_shell_command", {...})],  # sees the request
        say("Stored."),
    ]
    with ScriptedGemini(script) as model:
        ...  # Gemini CLI runs with GOOGLE_GEMINI_BASE_URL=model.url
        model.agent_requests()[0]["contents"]  # what the host sent

The shape of tests/fakes/scripted_model.py (the Anthropic Messages twin): every request is
recorded; a request offering tools (`tools[].functionDeclarations`) is an agent step and takes
the script's next step (a function of the request's body returning the reply's parts), and once
the script is spent it is answered `done_text`. A request offering no tools is one of the
host's side calls — Gemini CLI asks a small model to route each prompt, and for JSON answers
(`generationConfig.responseJsonSchema`) — and is answered without touching the script: with
the smallest JSON the schema admits, else `side_text`. `countTokens` gets a rough count.
The wire format: https://ai.google.dev/api/generate-content
"""

from __future__ import annotations

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

Part = dict[str, Any]
Step = Callable[[dict[str, Any]], list[Part]]


def say(text: str) -> Step:
    """A step answering `text`."""
    return lambda request: [{"text": text}]


def function_call(name: str, args: dict[str, Any]) -> Part:
    return {"functionCall": {"name": name, "args": args}}


def call(name: str, args: dict[str, Any]) -> Step:
    """A step calling the tool `name` with `args`."""
    return lambda request: [function_call(name, args)]


def declarations(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The functions a request offers the model, by name (`name`, `description`, and the
    arguments' schema as `parametersJsonSchema` or `parameters`)."""
    return {
        declaration.get("name", ""): declaration
        for tool in request.get("tools") or []
        for declaration in tool.get("functionDeclarations") or []
    }


def offered_tools(request: dict[str, Any]) -> list[str]:
    """The names of the functions a request offers the model."""
    return list(declarations(request))


def request_text(request: dict[str, Any]) -> str:
    """Every piece of text in a request (system instruction, contents, function responses),
    joined, so a test can look for what the host put in front of the model wherever it did."""
    keys = ("text", "parts", "functionResponse", "response", "output", "content")
    return joined_text((request.get("systemInstruction"), request.get("contents")), keys)


def function_responses(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The `functionResponse`s the host sent back (the tools' results), in order."""
    return [
        part["functionResponse"]
        for content in request.get("contents") or []
        for part in content.get("parts") or []
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)
    ]


def schema_instance(schema: dict[str, Any]) -> Any:
    """The smallest value a (Gemini-flavoured, upper-case type names) JSON schema admits: the
    first of an enum, 1 for numbers, every required property of an object."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "STRING")).upper()
    if kind == "OBJECT":
        properties = schema.get("properties") or {}
        return {
            name: schema_instance(properties.get(name, {}))
            for name in schema.get("required") or list(properties)
        }
    if kind == "ARRAY":
        return []
    if kind in ("INTEGER", "NUMBER"):
        return 1
    if kind == "BOOLEAN":
        return False
    return "scripted"


class ScriptedGemini(ScriptedServer[Part]):
    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    def offers_tools(self, request: dict[str, Any]) -> bool:
        return bool(offered_tools(request))

    def is_step_path(self, path: str) -> bool:
        return "Content" in path

    def text(self, text: str) -> list[Part]:
        return [{"text": text}]

    def side_answer(self, request: dict[str, Any]) -> list[Part]:
        schema = (request.get("generationConfig") or {}).get("responseJsonSchema")
        if isinstance(schema, dict):
            return [{"text": json.dumps(schema_instance(schema))}]
        return self.text(self.side_text)


def response_body(model: str, parts: list[Part]) -> dict[str, Any]:
    """A GenerateContentResponse carrying `parts`, finished (one candidate)."""
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": model,
    }


class _Handler(ScriptedHandler):
    fake: ScriptedGemini

    def do_GET(self) -> None:
        self._record(None)
        self._send(404, "application/json", b'{"error":{"code":404,"status":"NOT_FOUND"}}')

    def do_POST(self) -> None:
        body = self.read_body()
        request: dict[str, Any] = body if isinstance(body, dict) else {}
        # /v1beta/models/<model>:<method>
        model, _, method = self.route.rpartition("/")[2].partition(":")
        if method == "countTokens":
            self._send_json({"totalTokens": max(1, len(json.dumps(request)) // 4)})
            return
        if method not in ("generateContent", "streamGenerateContent"):
            self._send(404, "application/json", b'{"error":{"code":404,"status":"NOT_FOUND"}}')
            return
        answer = response_body(model, self.fake.answer(request))
        if method == "streamGenerateContent":
            self._send(200, "text/event-stream", server_sent([(None, answer)], newline="\r\n"))
            return
        self._send_json(answer)
