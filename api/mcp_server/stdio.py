"""The stdio transport of `memesh mcp`, answering lines the SDK cannot read.

The SDK's stdio reader turns a line that is not JSON, or not a JSON-RPC message, into an
exception that its dispatcher only logs: the client gets no answer, and one waiting on that
request's id waits forever. JSON-RPC 2.0 asks for an error instead: -32700 (parse error, id
null) for a line that is not JSON, -32600 (invalid request) for one that is JSON but not a
valid message, with the request's id when it has a usable one. This module reads stdin itself
so that it knows the line that failed, and answers it.

A line nested deeper than MAX_JSON_DEPTH (core/json_limits.py, the bound on every
transport's JSON) never reaches the SDK's parser: it is answered -32700 like a line that is
not JSON, and the next line is served as usual.
"""

from __future__ import annotations

import io
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from core import json_limits

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


# What the SDK is handed instead of a line nested too deep: it cannot read an empty line
# either, so that line is answered the way every unreadable line is (AnsweringReadStream).
UNREADABLE = "\n"


class TrackedLines:
    """stdin as an async iterator of lines that remembers the last line it read."""

    def __init__(self, source: anyio.AsyncFile[str]) -> None:
        self.source = source
        self.last_line = ""

    def __aiter__(self) -> TrackedLines:
        return self

    async def __anext__(self) -> str:
        line = await self.source.readline()
        if not line:
            raise StopAsyncIteration
        self.last_line = line
        try:
            json_limits.check_depth(line)
        except json_limits.JSONTooDeep:
            return UNREADABLE
        return line


def error_for(line: str) -> types.JSONRPCError:
    """The JSON-RPC error answering an unreadable line."""
    try:
        parsed = json_limits.loads(line)
    except json_limits.JSONTooDeep as exc:
        return _error(None, PARSE_ERROR, f"Parse error: the line {exc}")
    except ValueError:
        return _error(None, PARSE_ERROR, "Parse error: the line is not JSON")
    raw_id = parsed.get("id") if isinstance(parsed, dict) else None
    # Only ids the protocol allows (a string or a whole number) are echoed back.
    usable = isinstance(raw_id, str) or (isinstance(raw_id, int) and not isinstance(raw_id, bool))
    return _error(
        raw_id if usable else None,
        INVALID_REQUEST,
        "Invalid request: not a valid JSON-RPC 2.0 message",
    )


def _error(request_id: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


class AnsweringReadStream:
    """The SDK's read stream, minus its exceptions: each one is answered on the write stream
    (the line that caused it is the tracker's last: the reader waits for each hand-over)."""

    def __init__(self, inner: Any, write_stream: Any, lines: TrackedLines) -> None:
        self.inner = inner
        self.write_stream = write_stream
        self.lines = lines

    @property
    def last_context(self) -> Any:
        return getattr(self.inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        while True:
            item = await self.inner.receive()
            if not isinstance(item, Exception):
                return item  # type: ignore[no-any-return]
            if self.lines.last_line.strip():  # a blank line is no message: nothing to answer
                await self.write_stream.send(SessionMessage(error_for(self.lines.last_line)))

    def __aiter__(self) -> AnsweringReadStream:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> AnsweringReadStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@asynccontextmanager
async def stdio_transport() -> AsyncIterator[tuple[AnsweringReadStream, Any]]:
    """The SDK's stdio_server over a stdin this module reads. Like the SDK, it points fd 0 at
    the null device while serving (a child process must not read the protocol) and restores
    it after; fd 1 the SDK diverts itself."""
    from mcp.server.stdio import stdio_server

    protocol_fd = os.dup(0)
    null_fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null_fd, 0)
    os.close(null_fd)
    text = io.TextIOWrapper(
        io.FileIO(protocol_fd, "rb", closefd=True), encoding="utf-8", errors="replace"
    )
    lines = TrackedLines(anyio.wrap_file(text))
    try:
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            yield AnsweringReadStream(read_stream, write_stream, lines), write_stream
    finally:
        os.dup2(protocol_fd, 0)  # still open: `text` owns it and closes it next
        text.close()
