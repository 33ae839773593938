"""A `memesh mcp` process runs forwarded `memesh` commands too, while no `memesh serve` runs.

Claude Code and Codex start `memesh mcp` for the whole of a session (the plugin's .mcp.json),
and the same session's hooks are `memesh hook <event>` processes: each would spend ~1 s
importing and setting up Django to do a few milliseconds of work. The MCP process has all of
that loaded already, so it takes them as `memesh serve` does (api/cli/forward.py):
- it listens on an ephemeral loopback port, for POST CLI_PATH only, with a random token;
- it records itself in MEMESH_HOME/HOSTS_DIRNAME/<pid>.json (mode 0600, in MEMESH_HOME, mode
  0700), with the fields a CLI process compares with its own (database, MEMESH_* environment,
  installation), and removes the record as it stops;
- a command runs through api/cli/runner.py, exactly as the server runs it: same parser,
  output, exit status, and the caller's working directory as the project.

A CLI process prefers the `memesh serve` of its home, then the newest live MCP process.
MEMESH_MCP_RUNS_CLI=false turns this off; MEMESH_CLI_LOCAL=1 keeps a CLI process in its own.
The MCP protocol is untouched: it runs on the process's stdin/stdout, which
api/mcp_server/early_stdio.py took over before any command can swap `sys.stdout`, and the
listener serves a single user's loopback.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from api.cli import forward as cli_forward
from api.cli.runner import CLI_THREAD, BadRequest, parse_request, run_command
from core import json_limits, paths
from core.errors import Failure

logger = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
WAKE_TIMEOUT_SECONDS = 0.01


class CliHost:
    """The listener and its record; `start()` then `stop()` (both idempotent)."""

    def __init__(self) -> None:
        self.token = cli_forward.new_token()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.record: Path | None = None

    def start(self) -> None:
        try:
            server = ThreadingHTTPServer((LOOPBACK, 0), _handler_for(self.token))
        except OSError as exc:
            logger.warning("memesh mcp will not run CLI commands: %s", exc)
            return
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, name="memesh-cli-host", daemon=True
        )
        self._thread.start()
        self.record = _record_write(server.server_address[1], self.token)

    def stop(self) -> None:
        if self.record is not None:
            with contextlib.suppress(OSError):
                self.record.unlink()
            self.record = None
        if self._server is not None:
            _shut_down(self._server)
            self._server.server_close()
            self._server = None


def _shut_down(server: ThreadingHTTPServer) -> None:
    """`server.shutdown()`, without waiting for the serve loop's next poll (every 0.5 s): it
    runs as `memesh mcp` exits, which Claude Code allows 100 ms after SIGINT. A connection
    wakes the loop, which then sees the request to stop (and answers the empty connection, if
    it got there first, by closing it). A command already running finishes: it runs on
    CLI_THREAD, whose worker the interpreter waits for at exit."""
    stopper = threading.Thread(target=server.shutdown, name="memesh-cli-host-stop", daemon=True)
    stopper.start()
    address = (LOOPBACK, server.server_address[1])
    while stopper.is_alive():
        with contextlib.suppress(OSError):
            socket.create_connection(address, timeout=WAKE_TIMEOUT_SECONDS).close()
        stopper.join(WAKE_TIMEOUT_SECONDS)


def _record_write(port: int, token: str) -> Path | None:
    """This process's record, written atomically (0600); None when the home is read-only
    (then CLI processes simply run their commands themselves)."""
    directory = paths.memesh_home() / cli_forward.HOSTS_DIRNAME
    record = {
        **cli_forward.record_fields(os.environ, token),
        "pid": os.getpid(),
        "host": LOOPBACK,
        "port": port,
    }
    path = directory / f"{os.getpid()}.json"
    try:
        paths.ensure_private_dir(directory)
        _remove_stale(directory)
        paths.write_private_json(path, record)
    except OSError as exc:
        logger.warning("memesh mcp could not record itself in %s: %s", directory, exc)
        return None
    return path


def _remove_stale(directory: Path) -> None:
    """Remove the records of MCP processes that ended without removing theirs (killed
    outright): CLI processes skip them anyway, but they would pile up."""
    for path in directory.glob("*.json"):
        try:
            pid = json.loads(path.read_text()).get("pid")
        except (OSError, ValueError, AttributeError):
            continue
        if not cli_forward.process_alive(pid):
            with contextlib.suppress(OSError):
                path.unlink()


def _handler_for(token: str) -> type[BaseHTTPRequestHandler]:
    expected = token.encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            supplied = (self.headers.get(cli_forward.TOKEN_HEADER) or "").encode()
            if self.path != cli_forward.CLI_PATH or not hmac.compare_digest(supplied, expected):
                self._answer(404, Failure(404, "route.not-found", "Not found").to_json())
                return
            try:
                length = int(self.headers.get("Content-Length") or "0")
            except ValueError:
                length = -1
            if not 0 <= length <= cli_forward.MAX_REQUEST_BYTES:
                failure = Failure(413, "payload.too-large", "Request body too large")
                self._answer(413, failure.to_json())
                return
            try:
                request = parse_request(json_limits.loads(self.rfile.read(length)))
            except (BadRequest, ValueError) as exc:
                self._answer(400, Failure(400, "validation.bad-body", str(exc)).to_json())
                return
            # One command at a time on CLI_THREAD: it swaps sys.stdout / sys.stderr.
            answer = CLI_THREAD.submit(
                run_command, request.argv, request.cwd, request.stdin
            ).result()
            self._answer(200, json.dumps(answer))

        def do_GET(self) -> None:
            self._answer(404, Failure(404, "route.not-found", "Not found").to_json())

        def _answer(self, status: int, body: str) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # a request log on stderr would be noise in the agent host's MCP log

    return Handler
