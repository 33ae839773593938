"""What the scripted models on loopback share, whatever wire format they speak (Anthropic
Messages, OpenAI Responses, OpenAI Chat, Gemini): the script a test steps them through, the
requests they record, and the HTTP handling around each format's own answer.

A request offering tools is an agent step: it takes the script's next step (a function of the
request's body), and once the script is spent it is answered `done_text`. A request offering
no tools is one of the host's side calls (a title, a summary) and is answered `side_text`
without touching the script, so the host's housekeeping cannot shift the agent's steps.
A format's server says what its requests offer, which of them are agent steps, and how a
plain text answer looks in its format.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler
from typing import Any, Generic, TypeVar

from tests.fakes.llm_servers import RecordedLLMRequest
from tests.fakes.loopback import LoopbackServer

Piece = TypeVar("Piece")


class ScriptedServer(LoopbackServer, Generic[Piece]):
    """A scripted model whose answers are lists of `Piece` (content blocks, output items or
    parts, as its format names them)."""

    def __init__(
        self,
        script: list[Callable[[dict[str, Any]], list[Piece]]],
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

    def offers_tools(self, request: dict[str, Any]) -> bool:
        return bool(request.get("tools"))

    def is_step_path(self, path: str) -> bool:
        """Whether a request to `path` asks the model for an answer."""
        raise NotImplementedError

    def text(self, text: str) -> list[Piece]:
        """An answer saying `text` in the server's format."""
        raise NotImplementedError

    def side_answer(self, request: dict[str, Any]) -> list[Piece]:
        return self.text(self.side_text)

    def agent_requests(self) -> list[dict[str, Any]]:
        """The bodies of the requests that took (or asked for) a step, in order."""
        with self._lock:
            return [
                r.body
                for r in self.requests
                if self.is_step_path(r.path)
                and isinstance(r.body, dict)
                and self.offers_tools(r.body)
            ]

    def answer(self, request: dict[str, Any]) -> list[Piece]:
        if not self.offers_tools(request):
            return self.side_answer(request)
        with self._lock:
            step = self.script[self.steps_taken] if self.steps_taken < len(self.script) else None
            self.steps_taken += step is not None
        return step(request) if step is not None else self.text(self.done_text)


def server_sent(events: Iterable[tuple[str | None, Any]], newline: str = "\n") -> bytes:
    """`events` ((event name or None, data)) as a server-sent event stream, each event's
    lines ended with `newline` (Gemini's API ends them with CRLF)."""
    stream = ""
    for name, data in events:
        if name is not None:
            stream += f"event: {name}{newline}"
        stream += f"data: {json.dumps(data)}{newline}{newline}"
    return stream.encode()


def joined_text(values: Iterable[Any], keys: tuple[str, ...]) -> str:
    """Every string in `values`, walking lists and, in dicts, the values under `keys`, joined
    by newlines: what a request put in front of the model, wherever the host put it."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key in keys:
                if key in value:
                    walk(value[key])

    for value in values:
        walk(value)
    return "\n".join(parts)


class ScriptedHandler(BaseHTTPRequestHandler):
    """Reads, records and answers one request to a `ScriptedServer`."""

    protocol_version = "HTTP/1.1"
    fake: ScriptedServer[Any]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def route(self) -> str:
        """The request's path without its query."""
        return self.path.split("?")[0]

    def read_body(self) -> Any:
        """The request's JSON body (None when absent or not JSON), recorded."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self._record(body)
        return body

    def _record(self, body: Any) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.fake._lock:
            self.fake.requests.append(RecordedLLMRequest(self.command, self.route, headers, body))

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _send_json(self, payload: Any) -> None:
        self._send(200, "application/json", json.dumps(payload).encode())
