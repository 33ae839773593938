"""Running memesh in other OS processes: an isolated environment, a bounded run, and the
lifecycle of a server process (a free port, waiting for health, stopping)."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
PROCS = ROOT / "tests" / "procs"  # scripts the tests run as processes
PROCESS_DEADLINE = 300  # a hang must fail the test, not the whole run
STARTUP_DEADLINE = 60  # a server that never answers must fail the test, not hang it
EXIT_DEADLINE = 60
ANSWER_DEADLINE = 120  # seconds a `memesh mcp` answer may take before the test fails


def memesh(*args: str) -> list[str]:
    """The command line of `memesh ARGS` run by this interpreter."""
    return [sys.executable, "-m", "memesh_site.cli", *args]


def memesh_env(home: Path, **extra: str) -> dict[str, str]:
    """This environment without any MEMESH_* setting, with MEMESH_HOME at `home`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMESH_")}
    env.update(MEMESH_HOME=str(home), DJANGO_SETTINGS_MODULE="memesh_site.settings", **extra)
    return env


def run_python(
    args: list[str], env: dict[str, str], timeout: float = PROCESS_DEADLINE
) -> subprocess.CompletedProcess[str]:
    """Run `python ARGS` from the repository root to completion, capturing its output."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def free_port() -> int:
    """A loopback TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(proc: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `timeout` seconds."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_until_healthy(
    proc: subprocess.Popen[bytes],
    base: str,
    log: Path,
    deadline: float = 60,
    bearer: str | None = None,
) -> None:
    """Until `memesh serve` at `base` answers /v1/health (sent `bearer` as its token when
    given: a listener beyond loopback asks for it); raises, with its log, if it exits or
    does not answer within `deadline` seconds."""
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    give_up = time.monotonic() + deadline
    while time.monotonic() < give_up:
        if proc.poll() is not None:
            raise RuntimeError(f"memesh serve exited with {proc.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{base}/v1/health", headers=headers, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"memesh serve did not answer /v1/health:\n{log.read_text()}")


@contextlib.contextmanager
def serving(
    home: Path, log: Path, *args: str, bearer: str | None = None, **env: str
) -> Iterator[str]:
    """`memesh serve ARGS` on a free loopback port, MEMESH_HOME at `home` and its output in
    `log`: the server's base URL once it answers /v1/health (asked with `bearer`, for a
    remote listener); stopped afterwards."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            memesh("serve", "--port", str(port), *args),
            cwd=ROOT,
            env=memesh_env(home, **env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_healthy(proc, base, log, STARTUP_DEADLINE, bearer)
        yield base
    finally:
        stop(proc)


@dataclass(frozen=True)
class Served:
    """A running `memesh serve` (tests/e2e/conftest.py's `server`): its base URL, its home and
    everything it printed."""

    base: str
    home: Path
    log: Path

    def post(self, route: str, payload: object) -> httpx.Response:
        """POST `payload` as JSON to /v1/`route`."""
        return httpx.post(f"{self.base}/v1/{route}", json=payload, timeout=30)


def read_rows(db: Path, sql: str, *params: object) -> list[tuple]:
    """Rows read from a memesh database file from outside its processes (read-only); [] while
    the file does not exist, is not migrated yet, or a writer holds the lock."""
    if not db.exists():
        return []
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as conn:
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError:
            return []


class StdioServer:
    """A `memesh mcp` process spoken to in raw JSON-RPC lines, with reader threads so that
    reads wait with a deadline (and stderr never fills its pipe)."""

    def __init__(self, home: Path, **env: str) -> None:
        self.proc = subprocess.Popen(
            memesh("mcp"),
            cwd=ROOT,
            env=memesh_env(home, **{"MEMESH_EMBEDDER": "none", **env}),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.answers: dict[Any, dict[str, Any]] = {}
        self.arrived: list[dict[str, Any]] = []  # every message, in order
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def _receive(self, waiting_for: object) -> None:
        line = self.lines.get(timeout=ANSWER_DEADLINE)
        assert line is not None, f"the server exited (waiting for {waiting_for!r})"
        message = json.loads(line)  # every stdout line is a JSON-RPC message
        assert message.get("jsonrpc") == "2.0", message
        assert "id" in message, message  # the server sends no requests or notifications
        self.answers[message["id"]] = message
        self.arrived.append(message)

    def wait_for(self, request_id: object) -> dict[str, Any]:
        """Read messages until the answer to `request_id` arrives; keep every answer seen."""
        while request_id not in self.answers:
            self._receive(request_id)
        return self.answers[request_id]

    def take_answer(self, *request_ids: object) -> dict[str, Any]:
        """Read until an answer with one of `request_ids` arrives, and take it out of the
        answers kept (an id such as None can then answer the next line too)."""
        while not any(i in self.answers for i in request_ids):
            self._receive(request_ids)
        return self.answers.pop(next(i for i in request_ids if i in self.answers))

    def request(self, request_id: object, method: str, params: object = None) -> dict[str, Any]:
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            frame["params"] = params
        self.send(json.dumps(frame))
        return self.wait_for(request_id)

    def initialize(self, client_name: str) -> dict[str, Any]:
        """The handshake: `initialize`, answered, then `notifications/initialized`."""
        params = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": client_name, "version": "0"},
        }
        answer = self.request("init", "initialize", params)
        self.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        return answer

    def close(self) -> tuple[int, str]:
        """End its input (it shuts down) and wait: (exit status, everything on its stderr)."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=ANSWER_DEADLINE)
        finally:
            self.kill()
        return code, "".join(self.stderr)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
