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

from tests.fakes.llm_servers import RecordedLLMRequest
from tests.fakes.loopback import LoopbackServer

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
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key in ("text", "parts", "functionResponse", "response", "output", "content"):
                if key in value:
                    walk(value[key])

    walk(request.get("systemInstruction"))
    walk(request.get("contents"))
    return "\n".join(parts)


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


class ScriptedGemini(LoopbackServer):
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
                if "Content" in r.path and isinstance(r.body, dict) and offered_tools(r.body)
            ]

    def answer(self, request: dict[str, Any]) -> list[Part]:
        if not offered_tools(request):
            schema = (request.get("generationConfig") or {}).get("responseJsonSchema")
            if isinstance(schema, dict):
                return [{"text": json.dumps(schema_instance(schema))}]
            return [{"text": self.side_text}]
        with self._lock:
            step = self.script[self.steps_taken] if self.steps_taken < len(self.script) else None
            self.steps_taken += step is not None
        return step(request) if step is not None else [{"text": self.done_text}]


def response_body(model: str, parts: list[Part]) -> dict[str, Any]:
    """A GenerateContentResponse carrying `parts`, finished (one candidate)."""
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": model,
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: ScriptedGemini

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._record(None)
        self._send(404, "application/json", b'{"error":{"code":404,"status":"NOT_FOUND"}}')

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self._record(body)
        request: dict[str, Any] = body if isinstance(body, dict) else {}
        # /v1beta/models/<model>:<method>
        model, _, method = self.path.split("?")[0].rpartition("/")[2].partition(":")
        if method == "countTokens":
            count = {"totalTokens": max(1, len(json.dumps(request)) // 4)}
            self._send(200, "application/json", json.dumps(count).encode())
            return
        if method not in ("generateContent", "streamGenerateContent"):
            self._send(404, "application/json", b'{"error":{"code":404,"status":"NOT_FOUND"}}')
            return
        answer = response_body(model, self.fake.answer(request))
        if method == "streamGenerateContent":
            event = f"data: {json.dumps(answer)}\r\n\r\n"
            self._send(200, "text/event-stream", event.encode())
            return
        self._send(200, "application/json", json.dumps(answer).encode())

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
