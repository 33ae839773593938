"""The protocol side of `memesh mcp` from the process's first milliseconds: it owns stdin and
stdout, reads stdin on a thread, and answers `initialize` before anything heavy is imported.

Importing the MCP SDK alone takes ~1 s here, Django and the operation registry another
~0.8 s; an agent host that builds its tool list while the server is still starting (Codex
does) sees no memesh tools. So the entry point (memesh_site/cli.py) calls `begin()` first,
with the standard library only: fd 0 and fd 1 are taken over at once (a stray print while
the SDK, Django and the operations load cannot reach the protocol stream), a thread reads
the client's lines, and a well-formed `initialize` request is answered right away with the
result the SDK would give (the same bytes: tests/transports/test_mcp_early_stdio.py). A
`tools/list` after it is answered too when the answer an earlier process gave is stored
under the same key (api/mcp_server/tools_cache.py). Every line is still handed to the SDK
once it runs (api/mcp_server/stdio.py), `initialize` included, so its session knows the
client; its own answer to a request answered here is dropped (`ProtocolPipes.write`), and
its first `tools/list` answer is stored for the next process.

Hosts that speak the 2026 protocol send no `initialize`: they wait for the SDK.
https://modelcontextprotocol.io/specification/2025-06-18/basic/lifecycle#initialization
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable

from api.mcp_server import tools_cache
from core.version import VERSION

SERVER_NAME = "memesh"
INSTRUCTIONS = (
    "memesh is persistent memory for coding agents. Call `briefing` at the start of a "
    "session, `recall` before deciding something already discussed, `remember` decisions "
    "(with why) and facts worth keeping (with their `source`: without one a memory is a "
    "hypothesis), `observe` a memory you have confirmed against its source, and `learn` after "
    "fixing a mistake."
)
# The SDK's HANDSHAKE_PROTOCOL_VERSIONS (mcp_types.version), oldest to newest: a version a
# client asks for is granted when listed, else the newest is offered, as the SDK does
# (mcp.server.runner's _negotiate_initialize). A test holds the two lists equal.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# memesh serves tools only, and its list never changes while a process runs.
CAPABILITIES = {"tools": {"listChanged": False}}

READ_CHUNK = 65536
ANSWER_PREFIX = '{"jsonrpc":"2.0","id":'  # how the SDK's stdio transport starts each answer
Deliver = Callable[[str | None], None]  # a line, or None at the end of input


def initialize_answer(line: str) -> tuple[str, str] | None:
    """The JSON-RPC answer to `line` when it is a well-formed `initialize` request, with the
    request's id as the SDK writes it; None for anything else (the SDK will answer it)."""
    message = _request(line, "initialize")
    if message is None:
        return None
    request_id = message["id"]
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    client, capabilities = params.get("clientInfo"), params.get("capabilities")
    requested = params.get("protocolVersion")
    if not isinstance(requested, str) or not isinstance(capabilities, dict):
        return None
    if not all(isinstance(value, dict) for value in capabilities.values()):
        return None
    if not isinstance(client, dict) or not all(
        isinstance(client.get(key), str) for key in ("name", "version")
    ):
        return None
    result = {
        # The SDK's field order: pydantic dumps InitializeResult's fields alphabetically.
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
        "serverInfo": {"name": SERVER_NAME, "version": VERSION},
    }
    wire_id = _compact(request_id)
    return wire_id, '{"jsonrpc":"2.0","id":' + wire_id + ',"result":' + _compact(result) + "}"


def list_request_id(line: str) -> str | None:
    """The id (as written) of a `tools/list` request asking for the whole list; else None."""
    if '"tools/list"' not in line:
        return None
    message = _request(line, "tools/list")
    if message is None:
        return None
    params = message.get("params")
    if params in (None, {}):
        return _compact(message["id"])
    # Codex asks with `{"_meta": {"progressToken": 0}}`: a token for progress notifications,
    # which a list answered at once never sends, so the answer is the same.
    # https://modelcontextprotocol.io/specification/2025-06-18/basic/utilities/progress
    # A cursor, or the 2026 protocol's envelope (reserved `io.modelcontextprotocol/` keys in
    # `_meta`), is the SDK's to read.
    if not isinstance(params, dict) or set(params) != {"_meta"}:
        return None
    meta = params["_meta"]
    if not isinstance(meta, dict) or not set(meta) <= {"progressToken"}:
        return None
    return _compact(message["id"])


def _request(line: str, method: str) -> dict[str, object] | None:
    """`line` as a JSON-RPC 2.0 request for `method` with an id the SDK echoes as given (an
    integer or a plain string); None for anything else."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != method:
        return None
    request_id = message.get("id")
    if message.get("jsonrpc") != "2.0" or isinstance(request_id, bool):
        return None
    if not isinstance(request_id, int) and not _plain(request_id):
        return None
    return message


def _plain(request_id: object) -> bool:
    """A string id that every JSON encoder writes the same way (so the SDK's answer to it is
    recognised by its first bytes)."""
    return isinstance(request_id, str) and all(
        " " <= ch <= "~" and ch not in '"\\' for ch in request_id
    )


def _compact(value: object) -> str:
    # pydantic's model_dump_json: no spaces, non-ASCII kept as is.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class ProtocolPipes:
    """stdin and stdout of the MCP session, from `begin()` to the process's end."""

    def __init__(self) -> None:
        # Private copies of the client's pipes; fd 0 then reads the null device (a child
        # process must not read the protocol) and fd 1 writes to stderr.
        self.input_fd = os.dup(0)
        self.output_fd = os.dup(1)
        null_fd = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null_fd, 0)
        os.close(null_fd)
        os.dup2(2, 1)
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._pending: list[str | None] = []
        self._deliver: Deliver | None = None
        # Requests answered here, by their id as written: the SDK's answer to each is dropped.
        self._answered: dict[str, str] = {}
        self._handshake = False  # whether `initialize` was answered here
        # tools/list requests not yet answered by the SDK: its first answer is stored.
        self._list_ids: set[str] = set()
        self._tools_key: str | None = None
        self._tools_result: str | None = None  # the stored answer, under the current key
        self._tools_lock = threading.Lock()
        self.mismatches: list[tuple[str, str]] = []  # (ours, the SDK's): a bug if ever any
        self._reader = threading.Thread(target=self._read, name="memesh-mcp-stdin", daemon=True)
        # Daemon: a thread blocked reading a pipe the client keeps open must not hold the
        # process's exit (Claude Code signals the server without closing its stdin).
        self._reader.start()

    def attach(self, deliver: Deliver) -> list[str | None]:
        """The lines read so far; each next one the reader thread hands to `deliver`. Called
        once; the caller takes the returned lines before any later one can reach it."""
        with self._lock:
            pending, self._pending = self._pending, []
            self._deliver = deliver
        return pending

    def write(self, text: str) -> None:
        """Write one message (its JSON, no newline), unless the SDK is answering a request
        that was answered here already."""
        if (self._answered or self._list_ids) and text.startswith(ANSWER_PREFIX):
            if self._list_ids:
                self._keep_tools(text)
            for wire_id, ours in list(self._answered.items()):
                if text.startswith(ANSWER_PREFIX + wire_id + ","):
                    del self._answered[wire_id]
                    if text != ours:
                        self.mismatches.append((ours, text))
                        sys.stderr.write("memesh mcp: an early answer differs from the SDK's\n")
                    return
        self._write_raw(text)

    def _keep_tools(self, text: str) -> None:
        """Store the SDK's first `tools/list` result for the next process (tools_cache)."""
        for wire_id in list(self._list_ids):
            head = ANSWER_PREFIX + wire_id + ',"result":'
            if text.startswith(head) and text.endswith("}"):
                self._list_ids.clear()
                result = text[len(head) : -1]
                if result != self._tools_cached():
                    tools_cache.store(os.environ, self._tools_keyed(), result)
                return

    def _tools_keyed(self) -> str:
        with self._tools_lock:
            if self._tools_key is None:
                self._tools_key = tools_cache.cache_key(os.environ)
                self._tools_result = tools_cache.load(os.environ, self._tools_key)
            return self._tools_key

    def _tools_cached(self) -> str | None:
        self._tools_keyed()
        return self._tools_result

    def _answer_early(self, line: str, first: bool) -> None:
        """Answer `line` here when it is the opening `initialize`, or a `tools/list` after it
        whose answer is stored; record a `tools/list` whose answer the SDK will give."""
        if first:
            answer = initialize_answer(line)
            if answer is not None:
                self._handshake = True
                self._answered[answer[0]] = answer[1]
                self._write_raw(answer[1])
            return
        wire_id = list_request_id(line)
        if wire_id is None:
            return
        cached = self._tools_cached() if self._handshake else None
        if cached is None:
            self._list_ids.add(wire_id)
            return
        ours = ANSWER_PREFIX + wire_id + ',"result":' + cached + "}"
        self._list_ids.add(wire_id)  # should the SDK's list differ after all, it is stored
        self._answered[wire_id] = ours
        self._write_raw(ours)

    def _write_raw(self, text: str) -> None:
        data = (text + "\n").encode("utf-8")
        # The reader thread answers too: messages must not interleave. A lock of its own, so
        # that a client slow to read never stops the reader reading (the pipes would deadlock).
        with self._write_lock:
            while data:
                data = data[os.write(self.output_fd, data) :]

    def _read(self) -> None:
        first = True
        buffer = b""
        while True:
            try:
                chunk = os.read(self.input_fd, READ_CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                if buffer:
                    self._hand_over(buffer.decode("utf-8", errors="replace"))
                self._hand_over(None)
                return
            buffer += chunk
            while b"\n" in buffer:
                raw, buffer = buffer.split(b"\n", 1)
                line = raw.decode("utf-8", errors="replace") + "\n"
                self._answer_early(line, first)
                first = False
                self._hand_over(line)

    def _hand_over(self, line: str | None) -> None:
        with self._lock:
            deliver = self._deliver
            if deliver is None:
                self._pending.append(line)
                return
        with contextlib.suppress(RuntimeError):  # anyio's RunFinishedError: the server stopped
            deliver(line)


_protocol: ProtocolPipes | None = None


def _exit_at_once(signum: int, frame: object) -> None:
    # Nothing has been written yet (no tool call runs before the server serves): there is
    # nothing to finish, and Claude Code allows a server 100 ms after SIGINT.
    os._exit(128 + signum)


def begin() -> ProtocolPipes:
    """Take over stdin and stdout for the MCP session (once per process) and start reading."""
    global _protocol
    if _protocol is None:
        _protocol = ProtocolPipes()
        if threading.current_thread() is threading.main_thread():
            # Until the server installs its own handlers (serve_stdio), a signal ends the
            # process at once.
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, _exit_at_once)
    return _protocol
