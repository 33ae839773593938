"""Django's WSGI handler under ASGI with one hand-over each way.

A general WSGI-in-ASGI adapter (a2wsgi, asgiref) runs the app on a worker thread and lets it
pull the request body and push each response chunk through the event loop, every step a
round trip between threads. Profiled under load, those round trips cost about as much CPU as
a whole recall. memesh's requests and answers are small JSON documents, so this bridge reads
the body on the event loop first, runs the app on a thread pool with the body in memory,
collects the whole answer there, and sends it from the loop: one hand-over there, one back.

The 1 MB body limit keeps that memory bounded: a body is read only when its Content-Length is
within the limit. Otherwise nothing is read, and Django's BodySizeLimitMiddleware answers
from the headers alone (413 too large, 411 chunked, 400 a malformed length), as before.

A `direct` answerer, when given, sees each request first on the pool thread: it answers the
requests it can answer without Django's request cycle (api/rest/fast_path.py: the JSON operation
routes) and declines the others, which Django then answers.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from a2wsgi.wsgi import build_environ

Scope = dict[str, Any]
Message = dict[str, Any]
Headers = list[tuple[bytes, bytes]]
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
Answer = tuple[int, Headers, bytes]
Direct = Callable[[Scope, bytes], Answer | None]


class WSGIBridge:
    def __init__(
        self, app: WSGIApp, *, threads: int, max_body: int, direct: Direct | None = None
    ) -> None:
        self.app = app
        self.direct = direct
        self.max_body = max_body
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="memesh-http")

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        body = await self.read_body(scope, receive)
        if body is None:
            return  # the client went away
        loop = asyncio.get_running_loop()
        status, headers, content = await loop.run_in_executor(self.pool, self.answer, scope, body)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": content})

    async def read_body(self, scope: Scope, receive: Any) -> bytes | None:
        declared = _content_length(scope)
        if declared is None or declared > self.max_body:
            return b""  # Django answers from the headers; see the module docstring
        chunks: list[bytes] = []
        received = 0
        while received < declared:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            chunks.append(chunk)
            received += len(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)[:declared]

    def answer(self, scope: Scope, body: bytes) -> Answer:
        if self.direct is not None:
            answered = self.direct(scope, body)
            if answered is not None:
                return answered
        # a2wsgi's environ builder (CGI variables from the scope), over the body in memory.
        environ = dict(build_environ(scope, io.BytesIO(body)))  # type: ignore[arg-type]
        return self.run(environ)

    def run(self, environ: dict[str, Any]) -> Answer:
        """Call the app on a pool thread; the whole answer comes back at once."""
        started: dict[str, Any] = {}

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            started["status"] = int(status.split(" ", 1)[0])
            started["headers"] = [
                (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers
            ]
            return lambda data: None  # the legacy write() callable; Django never uses it

        result = self.app(environ, start_response)
        try:
            content = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()  # Django's request_finished: connections and the like are tidied
        return started["status"], started["headers"], content


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
