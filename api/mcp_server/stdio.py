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

The lines come from api/mcp_server/early_stdio.py, which has read stdin since the process
started (and answered `initialize` before the SDK was imported); answers go out through it.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from mcp.shared.message import SessionMessage

from api.mcp_server import early_stdio
from core import json_limits

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


# What the SDK is handed instead of a line nested too deep: it cannot read an empty line
# either, so that line is answered the way every unreadable line is (AnsweringReadStream).
UNREADABLE = "\n"


class LineSource(Protocol):
    async def readline(self) -> str: ...


class ProtocolLines:
    """The lines early_stdio's reader thread reads, to be awaited on the event loop ("" at the
    end of input). No thread waits on the pipe for the loop, so a signal stops the server at
    once (serve_stdio) while the client keeps its end open."""

    def __init__(self, protocol: early_stdio.ProtocolPipes) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[str | None](math.inf)
        token = anyio.lowlevel.current_token()

        def deliver(line: str | None) -> None:  # on the reader thread
            anyio.from_thread.run_sync(self._put, line, token=token)

        for line in protocol.attach(deliver):
            self._put(line)

    def _put(self, line: str | None) -> None:
        with contextlib.suppress(anyio.ClosedResourceError):  # the server has stopped
            self._send.send_nowait(line)

    def close(self) -> None:
        self._send.close()
        self._receive.close()

    async def readline(self) -> str:
        try:
            line = await self._receive.receive()
        except anyio.EndOfStream:
            return ""
        return line or ""


class ProtocolOutput:
    """stdout for the SDK's writer: each message through early_stdio (which drops the SDK's
    answer to a request it answered itself), on a worker thread, since a client slow to read
    may fill the pipe."""

    def __init__(self, protocol: early_stdio.ProtocolPipes) -> None:
        self.protocol = protocol

    async def write(self, text: str) -> None:
        await anyio.to_thread.run_sync(self.protocol.write, text.removesuffix("\n"))

    async def flush(self) -> None:
        return None


class TrackedLines:
    """stdin as an async iterator of lines that remembers the last line it read."""

    def __init__(self, source: LineSource) -> None:
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
    """The SDK's stdio_server over the process's protocol pipes, which early_stdio holds (fd 0
    reads the null device and fd 1 writes to stderr meanwhile: a child process must not read
    the protocol, nor a stray print write into it)."""
    from mcp.server.stdio import stdio_server

    protocol = early_stdio.begin()
    source = ProtocolLines(protocol)
    lines = TrackedLines(source)
    output = ProtocolOutput(protocol)
    try:
        async with stdio_server(stdin=lines, stdout=output) as (read_stream, write_stream):  # type: ignore[arg-type]
            yield AnsweringReadStream(read_stream, write_stream, lines), write_stream
    finally:
        source.close()
