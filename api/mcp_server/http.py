"""/mcp: JSON nested too deep refused before the SDK reads it, and sessions when `memesh serve`
runs more than one worker process.

Every POST body is checked against MAX_JSON_DEPTH (core/json_limits.py, the bound on
every transport's JSON) and one nested deeper is answered as the SDK answers a body it cannot
parse: 400 with a JSON-RPC parse error (-32700). The SDK copes by itself (pydantic's parser
stops at 200 levels; its 2026-protocol path catches the RecursionError), but this module's own
reading of `initialize` did not: 1,000 levels and uvicorn answered a plain-text 500. One limit
for every transport also means what /mcp accepts is what REST and stdio accept.

A streamable-HTTP session lives in the memory of the process that created it, and the kernel
hands each connection to whichever worker accepts it first, so a session's next request may
reach a worker that never saw it. With several workers the SDK therefore runs stateless: every
request stands alone, nothing is kept between them.

The one thing memesh keeps per session is the client's self-declared name, the provenance stamp
(`source_host`) of what it stores. Clients of the 2026 protocol send it with every request;
clients of the handshake protocol send it once, in `initialize`. For those, the name travels in
the session id this module hands out with the `initialize` answer, which the client then sends
with each request. The name is self-declared anyway: carrying it on the client side trusts the
client with nothing new.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Awaitable, Callable, MutableMapping
from contextvars import ContextVar
from typing import Any

from core import json_limits

SESSION_HEADER = b"mcp-session-id"
SESSION_PREFIX = "memesh-name."
NAME_MAX = 200  # characters of a declared name kept (source_host keeps fewer)
# An `initialize` body is a few hundred bytes; a body past this cannot be one.
INITIALIZE_MAX_BYTES = 64 * 1024
# JSON-RPC's codes for a body that cannot be parsed, and for a server-defined refusal.
PARSE_ERROR = -32700
SERVER_ERROR = -32000

Message = MutableMapping[str, Any]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

# The declared client name of the request being served (None: unknown or not needed).
declared_client_name: ContextVar[str | None] = ContextVar("declared_client_name", default=None)


def session_id_for(name: str) -> str:
    # base64url keeps the id within the visible ASCII a session id must use; the name is cut
    # to what provenance keeps anyway, so the header stays small.
    encoded = base64.urlsafe_b64encode(name[:NAME_MAX].encode()).decode()
    return SESSION_PREFIX + encoded.rstrip("=")


def name_from_session_id(session_id: str) -> str | None:
    if not session_id.startswith(SESSION_PREFIX):
        return None
    encoded = session_id[len(SESSION_PREFIX) :]
    try:
        padded = encoded + "=" * (-len(encoded) % 4)
        return base64.b64decode(padded, altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def initialize_client_name(body: bytes) -> str | None:
    """The clientInfo name of a JSON-RPC `initialize` request, else None."""
    if len(body) > INITIALIZE_MAX_BYTES:
        return None
    try:
        message = json_limits.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None
    params = message.get("params")
    info = params.get("clientInfo") if isinstance(params, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else ""


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


class BodyTooLarge(Exception):
    """A POST body past the server's limit (MEMESH_MAX_BODY_BYTES, as on REST)."""


async def _buffered(receive: Receive, limit: int) -> tuple[bytes, bool, list[Message]]:
    """Read the request body (the SDK reads all of it too): (body, complete, messages read);
    not complete when the client went away first. BodyTooLarge as soon as it passes `limit`:
    a body is held in memory whole, so it is bounded as REST bounds it."""
    messages: list[Message] = []
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return b"".join(chunks), False, messages
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), True, messages


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed


async def _answer(send: Send, status: int, text: str, code: int = SERVER_ERROR) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": text}})
    headers = [(b"content-type", b"application/json")]
    if status == 405:
        headers.append((b"allow", b"POST"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body.encode()})


Handler = Callable[[Scope, Receive, Send], Awaitable[None]]


async def serve(
    handle: Handler,
    scope: Scope,
    receive: Receive,
    send: Send,
    *,
    stateless: bool,
    max_body: int,
) -> None:
    """Serve one /mcp request on the SDK's session manager (`handle`): a POST body is read,
    its size and depth checked first; with `stateless`, the client's name is carried in the
    session id."""
    body, complete = b"", False
    if scope.get("method", "") == "POST":
        try:
            body, complete, messages = await _buffered(receive, max_body)
        except BodyTooLarge:
            limit = f"{max_body / (1024 * 1024):g} MB"
            await _answer(send, 413, f"Invalid request: the body exceeds the {limit} limit", -32600)
            return
        try:
            json_limits.check_depth(body)
        except json_limits.JSONTooDeep as exc:
            await _answer(send, 400, f"Parse error: the body {exc}", PARSE_ERROR)
            return
        receive = _replay(messages, receive)
    if stateless:
        await serve_stateless(handle, scope, receive, send, body if complete else None)
    else:
        await handle(scope, receive, send)


async def serve_stateless(
    handle: Handler, scope: Scope, receive: Receive, send: Send, body: bytes | None
) -> None:
    """Serve one /mcp request on a stateless session manager, carrying the client's name
    across requests in the session id; `body` is a POST's whole body (None for no POST)."""
    method = scope.get("method", "")
    if method == "GET":
        # No server-initiated stream: nothing here ever sends one, and a GET held open on a
        # stateless transport would never end. The protocol allows a plain 405.
        await _answer(send, 405, "Method Not Allowed: this server offers no SSE stream")
        return
    if method == "DELETE":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    session_id = _header(scope, SESSION_HEADER)
    if session_id is not None:
        token = declared_client_name.set(name_from_session_id(session_id))
        try:
            await handle(scope, receive, send)
        finally:
            declared_client_name.reset(token)
        return
    name = initialize_client_name(body) if body is not None else None
    if name is None:
        await handle(scope, receive, send)
        return

    async def send_with_session(message: Message) -> None:
        if message["type"] == "http.response.start" and message.get("status") == 200:
            headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != SESSION_HEADER]
            headers.append((SESSION_HEADER, session_id_for(name).encode()))
            message = {**message, "headers": headers}
        await send(message)

    await handle(scope, receive, send_with_session)
