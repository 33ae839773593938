"""A `memesh` command run by the `memesh serve` already running on this home, when there is one.

A CLI process spends ~1 s importing and setting up Django, the operations and, for a recall,
the embedding model, before doing a few milliseconds of work; hooks and shell habits are made
of such processes. While `memesh serve` runs on the same MEMESH_HOME, the short commands
(FORWARDED) are sent to it instead: it has all of that loaded, runs the command exactly as the
CLI would (same parser, output, exit status; graph/.. sees the caller's working directory as
the project's), and this process only relays the answer. Python starts, reads one file,
makes one loopback request, and exits.

`memesh hook <event>` (Claude Code's hooks, which must answer fast) is forwarded too, with its
standard input: the process reads it (at most MAX_STDIN_BYTES) and sends it as the request's
`stdin`, which the server gives the command as its own (api/cli/runner.py). The hook's
entry point (api/hooks/entry.py) keeps what it read, so a hook the server cannot take
runs in process on the same input.

This module runs before Django is imported, so it uses the standard library only.

Which server: `memesh serve` records itself in RUNTIME_FILENAME (core/serve_record.py:
mode 0600, in MEMESH_HOME, mode 0700) as it starts and removes it as it stops. Without one, a
`memesh mcp` process an agent host keeps running for its session takes the commands
(api/cli/host.py: records in HOSTS_DIRNAME, the newest first). A command is forwarded only
when every one of these holds, and otherwise runs in this process as before — the result is
the same either way:
- the file names a live process and a loopback listener;
- the server uses this process's database file and this installation of memesh;
- this process's MEMESH_* environment equals the one the server was started with (a
  different embedder, say, must not be answered by a server that uses another);
- MEMESH_CLI_LOCAL is not set (set it to 1 to always run in process).
The request carries the file's random token, so only a process that can read MEMESH_HOME
(its owner) can have a command run, and a web page that finds the port cannot.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.paths import RUNTIME_FILENAME, database_from_env, home_from_env

# Where `memesh mcp` processes record themselves when they take commands too (api/cli/host.py).
HOSTS_DIRNAME = "cli-hosts"
CLI_PATH = "/_cli"
TOKEN_HEADER = "X-Memesh-CLI-Token"
LOCAL_ENV = "MEMESH_CLI_LOCAL"
# How `memesh serve` hands the token to its server processes (never part of the file's check).
TOKEN_ENV = "MEMESH_CLI_TOKEN"
# The commands worth forwarding: short, no progress bar, no terminal input, no file paths in
# their arguments. Everything else (serve, mcp, import, export, reindex, ...) runs in process.
FORWARDED = frozenset(
    {
        "remember",
        "recall",
        "learn",
        "forget",
        "pin",
        "unpin",
        "briefing",
        "patterns",
        "feedback",
        "status",
        "stats",
        "projects",
        # The trust model's commands (docs/trust.md).
        "observe",
        "supersede",
        "memories",
        "ping",
        # Claude Code's hooks (api/hooks/): the one command that reads stdin, which the
        # request carries (`stdin`, at most MAX_STDIN_BYTES).
        "hook",
    }
)
# Commands whose standard input is read here and sent with the request.
READS_STDIN = frozenset({"hook"})
MAX_STDIN_BYTES = 4 * 1024 * 1024
# The /_cli body a server accepts: a JSON string of MAX_STDIN_BYTES (a hook payload is JSON
# itself, so escaping at most about doubles it) and the rest of the request.
MAX_REQUEST_BYTES = 2 * MAX_STDIN_BYTES + 64 * 1024
HELP_ARGS: tuple[list[str], ...] = (["--help"], ["-h"], ["help"], [])
# Connecting to a loopback port that nobody listens on fails at once; a server that accepts
# but does not answer is waited for this long before the command runs in process instead.
CONNECT_TIMEOUT_S = 1.0
ANSWER_TIMEOUT_S = 300.0
# Variables `memesh serve` sets for the processes it starts: not part of what the user chose.
_SERVE_OWN = frozenset({LOCAL_ENV, TOKEN_ENV, "MEMESH_SERVE_PID", "MEMESH_HTTP_WORKERS"})


# Variables outside MEMESH_* that decide what a command reads: where the agent hosts keep
# their session files (the Stop hook's notes and transcripts, transcript mining). A server
# started with other values would answer for another host's files.
HOST_CONTEXT = ("CLAUDE_CONFIG_DIR", "CODEX_HOME")


def environment_fingerprint(env: Mapping[str, str]) -> str:
    """A digest of the variables that decide how commands behave: every MEMESH_* one (but
    serve's own) and HOST_CONTEXT."""
    chosen = sorted(
        (k, v)
        for k, v in env.items()
        if (k.startswith("MEMESH_") and k not in _SERVE_OWN) or k in HOST_CONTEXT
    )
    return hashlib.sha256(json.dumps(chosen).encode()).hexdigest()


def _package_dir() -> str:
    return str(Path(__file__).resolve().parent)


def new_token() -> str:
    return secrets.token_urlsafe(32)


def record_fields(env: Mapping[str, str], token: str) -> dict[str, Any]:
    """What `memesh serve` adds to its record (core/serve_record.py) for CLI processes:
    the token, and what `_server_for` compares with the CLI's own."""
    return {
        "token": token,
        "database": str(database_from_env(env).resolve()),
        "environment": environment_fingerprint(env),
        "package": _package_dir(),
    }


def process_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _loopback_address(host: object) -> str | None:
    """Where to reach a listener bound to `host` from this machine, if it listens on loopback."""
    if host in ("127.0.0.1", "localhost", "0.0.0.0"):
        return "127.0.0.1"
    if host in ("::1", "[::1]", "::"):
        return "::1"
    return None


def _server_for(env: Mapping[str, str]) -> dict[str, Any] | None:
    """The running process that may run a command of this process, or None: the home's
    `memesh serve`, else the newest `memesh mcp` that takes commands (api/cli/host.py)."""
    home = home_from_env(env)
    try:
        database = str(database_from_env(env).resolve())
    except OSError:
        return None
    candidates = [home / RUNTIME_FILENAME]
    try:
        hosts = [p for p in (home / HOSTS_DIRNAME).iterdir() if p.suffix == ".json"]
    except OSError:
        hosts = []
    candidates += sorted(hosts, key=_modified, reverse=True)
    fingerprint = environment_fingerprint(env)
    for path in candidates:
        record = _record_at(path)
        if record is not None and _answers_for(record, database, fingerprint):
            return record
    return None


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _record_at(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and process_alive(record.get("pid")) else None


def _answers_for(record: dict[str, Any], database: str, fingerprint: str) -> bool:
    """Whether the recorded process uses this database, this environment and this memesh."""
    return (
        record.get("database") == database
        and record.get("environment") == fingerprint
        and record.get("package") == _package_dir()
        and isinstance(record.get("port"), int)
        and isinstance(record.get("token"), str)
        and _loopback_address(record.get("host")) is not None
    )


def forwardable(args: list[str]) -> bool:
    return args in HELP_ARGS or bool(args and args[0] in FORWARDED)


def read_stdin(limit: int = MAX_STDIN_BYTES) -> str:
    """This process's standard input as text: at most `limit` bytes and one more (so a reader
    can tell that it was longer); "" when there is none."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return ""
    try:
        data = stream.read(limit + 1)
    except (OSError, ValueError):
        return ""
    return data.decode("utf-8", errors="replace")


def forward(
    args: list[str], env: Mapping[str, str] | None = None, *, stdin: str | None = None
) -> int | None:
    """Run `memesh <args>` on the running server: its exit status, after writing its output
    to this process's stdout and stderr; None when it must run in this process instead.
    `stdin`: what the command reads as its standard input there (READS_STDIN commands)."""
    env = os.environ if env is None else env
    if env.get(LOCAL_ENV) or not forwardable(args):
        return None
    server = _server_for(env)
    if server is None:
        return None
    import http.client  # here: a command that runs in process does not pay for it

    address = _loopback_address(server["host"])
    assert address is not None
    request: dict[str, Any] = {"argv": args, "cwd": os.getcwd()}
    if stdin is not None:
        request["stdin"] = stdin
    body = json.dumps(request, ensure_ascii=False).encode()
    if len(body) > MAX_REQUEST_BYTES:
        return None  # the server would refuse it: run in process
    connection = http.client.HTTPConnection(address, server["port"], timeout=CONNECT_TIMEOUT_S)
    try:
        connection.connect()
    except OSError:
        connection.close()
        return None  # not listening yet, or stopping: run in process
    try:
        assert connection.sock is not None
        connection.sock.settimeout(ANSWER_TIMEOUT_S)
        connection.request(
            "POST",
            CLI_PATH,
            body=body,
            headers={"Content-Type": "application/json", TOKEN_HEADER: server["token"]},
        )
        response = connection.getresponse()
        content = response.read()
    except (OSError, http.client.HTTPException) as exc:
        # The command may have run: running it again here could store it twice.
        sys.stderr.write(f"memesh: the server at port {server['port']} did not answer: {exc}\n")
        return 1
    finally:
        connection.close()
    if response.status != 200:
        return None  # refused before running (a stale token, a memesh without CLI_PATH)
    try:
        answer = json.loads(content)
    except ValueError:
        sys.stderr.write("memesh: the server's answer was not JSON\n")
        return 1
    sys.stdout.write(answer.get("stdout", ""))
    sys.stdout.flush()
    sys.stderr.write(answer.get("stderr", ""))
    sys.stderr.flush()
    status = answer.get("exit", 1)
    return status if isinstance(status, int) else 1
