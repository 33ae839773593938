"""A real HTTP embedding server on loopback, speaking the OpenAI and Ollama wire formats.

Tests point a remote embedder at it and steer it while it runs: queue canned replies
(`script`), make every request fail (`fail_always`), change the vector width (`width`), and
read back what was sent (`requests`). Vectors are deterministic: a text always maps to the same
vector at a given width and seed, so tests can compute the expected answer with `vector_for`.

    with FakeEmbeddingServer() as server:
        server.script.append(Reply(status=429, headers={"Retry-After": "1"}))
        ...  # OllamaEmbedder(EmbedderConfig("ollama", base_url=server.url))
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np

from tests.fakes.loopback import LoopbackServer

OPENAI_EMBEDDINGS = "/v1/embeddings"
OLLAMA_EMBED = "/api/embed"
EMBEDDING_PATHS = (OPENAI_EMBEDDINGS, OLLAMA_EMBED)

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Reply:
    """One canned answer to an embedding request.

    `hang` seconds pass first (cut short when the server stops). Then: `drop` closes the
    connection without answering; a 200 with neither `body` nor `json` gives the normal answer
    (so `Reply(hang=5.0)` is "slow, then fine"); otherwise the reply is `status` with `body`
    (bytes or str, sent as is) or `json` (encoded), or a small JSON error body by default.
    """

    status: int = 200
    body: bytes | str | None = None
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    hang: float = 0.0
    drop: bool = False

    @property
    def is_normal(self) -> bool:
        return self.status == 200 and self.body is None and self.json is None and not self.drop


@dataclass(frozen=True)
class RecordedRequest:
    """An embedding request as the server received it (recorded before any hang or script)."""

    path: str
    texts: list[str]
    model: str | None
    body: Any  # the parsed JSON body, or None when it was not JSON
    headers: dict[str, str]


class FakeEmbeddingServer(LoopbackServer):
    """See the module docstring. Every knob may be changed while the server runs."""

    def __init__(
        self,
        *,
        width: int = 384,
        api_key: str | None = None,
        models: Iterable[str] | None = None,
        seed: str = "",
    ) -> None:
        super().__init__()
        # Plain attributes are read once per request, so assigning one is atomic for a request.
        self.width = width
        self.api_key = api_key  # when set, /v1/* requires "Authorization: Bearer <api_key>"
        # When set, embedding requests for other models answer 404 (as the real servers do).
        self.models: list[str] | None = list(models) if models is not None else None
        self.seed = seed  # a different seed is a different embedding space ("another model")
        self.semantic = False  # True: texts sharing words get similar vectors (bag of words)
        self.reorder = False  # True: OpenAI `data` comes back in reverse order
        self.fail_always: Reply | None = None
        self.requests: list[RecordedRequest] = []
        self._script: deque[Reply] = deque()

    # -- knobs ------------------------------------------------------------------------------

    @property
    def script(self) -> deque[Reply]:
        """Canned replies, consumed one per embedding request (thread-safe deque)."""
        return self._script

    @script.setter
    def script(self, replies: Iterable[Reply]) -> None:
        with self._lock:
            self._script.clear()
            self._script.extend(replies)

    def texts_sent(self) -> list[str]:
        """Every text of every embedding request so far, in arrival order."""
        with self._lock:
            return [text for request in self.requests for text in request.texts]

    def vector_for(self, text: str, width: int | None = None) -> np.ndarray:
        """The (unnormalised, float64) vector this server answers for `text`."""
        width = self.width if width is None else width
        if not self.semantic:
            return self._hashed(text, width)
        words = _WORD.findall(text.lower()) or [text]
        return np.sum([self._hashed(word, width) for word in words], axis=0)

    def _hashed(self, text: str, width: int) -> np.ndarray:
        digest = hashlib.sha256(f"{self.seed}\0{text}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
        return rng.standard_normal(width)

    # -- lifecycle --------------------------------------------------------------------------

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    @property
    def base_url_openai(self) -> str:
        return self.url + "/v1"

    # -- what a request gets ----------------------------------------------------------------

    def _next_reply(self, path: str, body: Any, headers: dict[str, str]) -> Reply | None:
        """Record an embedding request and pick its canned reply (None: behave normally)."""
        texts: list[str] = []
        model = None
        if isinstance(body, dict):
            raw = body.get("input")
            if isinstance(raw, str):
                texts = [raw]
            elif isinstance(raw, list):
                texts = [str(t) for t in raw]
            model = body.get("model")
        with self._lock:
            self.requests.append(RecordedRequest(path, texts, model, body, headers))
            # fail_always wins and leaves the script untouched until it is cleared.
            if self.fail_always is not None:
                return self.fail_always
            return self._script.popleft() if self._script else None

    def _normal(self, path: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        """The answer of a healthy server: (status, JSON payload)."""
        openai = path == OPENAI_EMBEDDINGS
        if openai and not self._authorised(headers):
            return 401, _openai_error(
                f"Incorrect API key provided: {_bearer(headers)}", "invalid_api_key"
            )
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            message = "the body must be a JSON object with a 'model'"
            return 400, _openai_error(message, "invalid_request") if openai else {"error": message}
        raw = body.get("input")
        if isinstance(raw, str):
            raw = [raw]
        if not isinstance(raw, list) or not all(isinstance(t, str) for t in raw):
            message = "'input' must be a string or a list of strings"
            return 400, _openai_error(message, "invalid_request") if openai else {"error": message}
        model = body["model"]
        if self.models is not None and model not in self.models:
            if openai:
                return 404, _openai_error(f"The model `{model}` does not exist", "model_not_found")
            return 404, {"error": f'model "{model}" not found, try pulling it first'}
        width = self.width
        if openai and isinstance(body.get("dimensions"), int):
            width = body["dimensions"]
        vectors = [self.vector_for(text, width).tolist() for text in raw]
        if not openai:
            return 200, {"model": model, "embeddings": vectors}
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        if self.reorder:
            data.reverse()
        tokens = sum(len(t.split()) for t in raw)
        return 200, {
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _authorised(self, headers: dict[str, str]) -> bool:
        return self.api_key is None or headers.get("authorization") == f"Bearer {self.api_key}"

    def _models(self, headers: dict[str, str]) -> tuple[int, Any]:
        if not self._authorised(headers):
            return 401, _openai_error("Incorrect API key provided", "invalid_api_key")
        names = self.models if self.models is not None else ["fake-embed"]
        return 200, {
            "object": "list",
            "data": [{"id": n, "object": "model", "owned_by": "fake"} for n in names],
        }


def _openai_error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


def _bearer(headers: dict[str, str]) -> str:
    # Echo the presented key back, as some servers do, so tests can prove it gets redacted.
    return headers.get("authorization", "").removeprefix("Bearer ")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the real servers do
    fake: FakeEmbeddingServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the test output stays quiet

    def do_GET(self) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self.path == "/v1/models":
            status, payload = self.fake._models(headers)
        elif self.path == "/api/tags":
            names = self.fake.models if self.fake.models is not None else ["fake-embed"]
            status, payload = 200, {"models": [{"name": n, "model": n} for n in names]}
        else:
            status, payload = 404, {"error": "not found"}
        self._send(status, json.dumps(payload).encode(), {"Content-Type": "application/json"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self.path not in EMBEDDING_PATHS:
            self._send(404, b'{"error": "not found"}', {"Content-Type": "application/json"})
            return
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        reply = self.fake._next_reply(self.path, body, headers)
        if reply is not None and reply.hang > 0 and self.fake._stopping.wait(reply.hang):
            self.close_connection = True
            return
        if reply is not None and reply.drop:
            self.close_connection = True  # the client sees the connection close unanswered
            return
        extra = dict(reply.headers) if reply is not None else {}
        if reply is None or reply.is_normal:
            status, payload = self.fake._normal(self.path, body, headers)
            data = json.dumps(payload).encode()
        else:
            status = reply.status
            if reply.body is not None:
                data = reply.body.encode() if isinstance(reply.body, str) else reply.body
            else:
                payload = reply.json if reply.json is not None else {"error": f"scripted {status}"}
                data = json.dumps(payload).encode()
        self._send(status, data, {"Content-Type": "application/json", **extra})

    def _send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (a timeout test); nobody is left to answer.
            self.close_connection = True
