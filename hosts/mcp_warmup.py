"""`memesh setup codex` asks a `memesh mcp` for its tool list once, so that Codex's first
session finds memesh's tools at its first step.

Codex builds each step's tools from the MCP servers that have listed theirs by then; the
first step is built about a second after the server starts, and Codex's tool search finds
nothing a server lists later. `memesh mcp` lists its tools at once only from the answer an
earlier process stored (api/mcp_server/tools_cache.py, keyed on memesh's files and the
MEMESH_* environment); without one, the list waits for the operation registry (1.5 s and
more), and the first session after setup would start without memesh's tools. The server
run here stores that answer, in the environment setup runs in: the one Codex hands the
server through `env_vars` (hosts/setup.py writes every MEMESH_* set here).

Standard library only: the server is spoken to as a host speaks to it, over stdio.
https://modelcontextprotocol.io/specification/2025-06-18/basic/lifecycle#initialization
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Mapping

# The handshake protocol version `memesh mcp` answers before its SDK has loaded.
PROTOCOL_VERSION = "2025-06-18"
LIST_ID = 2
DEADLINE = 60.0  # seconds; a server that never answers must not hang setup


def _line(message: Mapping[str, object]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def store_tool_list(command: str) -> bool:
    """Run `command mcp`, ask for its tools as Codex does, and stop it: whether it answered.
    A failure is not setup's: the first session then lists the tools the slow way."""
    requests = b"".join(
        _line(message)
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                "clientInfo": {"name": "memesh-setup", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": LIST_ID, "method": "tools/list"},
        )
    )  # fmt: skip
    try:
        server = subprocess.Popen(
            [command, "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(os.environ),
        )
    except OSError:
        return False
    assert server.stdin is not None and server.stdout is not None
    answered = threading.Event()

    def read() -> None:
        # The answer is stored by the server once it has written it; closing its stdin then
        # ends it (EOF), having finished the write.
        assert server.stdout is not None
        for raw in server.stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == LIST_ID:
                answered.set()
                return

    reader = threading.Thread(target=read, name="memesh-setup-mcp", daemon=True)
    reader.start()
    try:
        server.stdin.write(requests)
        server.stdin.flush()
        answered.wait(DEADLINE)
        server.stdin.close()
        server.wait(timeout=DEADLINE)
    except (OSError, subprocess.TimeoutExpired):
        server.kill()
        server.wait()
    return answered.is_set()
