"""`memesh mcp`'s start and end as an agent host meets them, with the real command as a
subprocess: `initialize` is answered before Django and the SDK load (Codex lists its tools
that early), and SIGINT or SIGTERM ends the server while its client still holds stdin open
(Claude Code sends SIGINT, then SIGTERM 100 ms later), keeping every write it acknowledged.
How fast is measured by bench/mcp_initialize.py and bench/mcp_shutdown.py, not here."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from api.cli.forward import HOSTS_DIRNAME
from tests import mcp_checks
from tests.processes import ANSWER_DEADLINE, EXIT_DEADLINE, ROOT, memesh, memesh_env

pytestmark = pytest.mark.slow  # each test starts a Python + Django process

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "codex-mcp-client", "version": "0.169.0"},
    },
}


def read_line(proc: subprocess.Popen[str]) -> str:
    """The process's next stdout line, or "" if none comes before the deadline."""
    stdout = proc.stdout
    assert stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(ANSWER_DEADLINE)
    return lines[0] if lines else ""


def test_initialize_is_answered_before_django_is_set_up(tmp_path: Path) -> None:
    # Settings that cannot load: the server never gets as far as Django, yet the client has
    # its answer, so that answer waited for nothing Django or the operations load.
    env = {
        **memesh_env(tmp_path / "home"),
        "DJANGO_SETTINGS_MODULE": "memesh_site.no_such_settings",
    }
    proc = subprocess.Popen(
        memesh("mcp"),
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(INITIALIZE) + "\n")
        proc.stdin.flush()
        answer = json.loads(read_line(proc))
    finally:
        proc.kill()
        proc.wait()
    assert answer["id"] == 1
    assert answer["result"]["serverInfo"]["name"] == "memesh"
    assert answer["result"]["protocolVersion"] == "2025-06-18"


def raw_session(env: dict[str, str], *messages: dict[str, object]) -> tuple[list[str], str]:
    """Send `messages` to a `memesh mcp`, read one answer to each request, close its stdin;
    its answers as written, and its stderr."""
    proc = subprocess.Popen(
        memesh("mcp"),
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None
    answers = []
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                answers.append(read_line(proc))
        _, stderr = proc.communicate(timeout=EXIT_DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return answers, stderr


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
PING = {"jsonrpc": "2.0", "id": 3, "method": "ping"}


def test_the_next_process_lists_the_tools_before_django_is_set_up(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = memesh_env(home, MEMESH_EMBEDDER="deterministic")
    # The first session in a home: the registry lists the tools, and the list is kept.
    (_, first_list), stderr = raw_session(env, INITIALIZE, INITIALIZED, TOOLS_LIST)
    assert json.loads(first_list)["result"]["tools"], stderr
    # The next one answers with it before it could load Django (its settings do not load),
    # byte for byte what the registry gave.
    broken = {**env, "DJANGO_SETTINGS_MODULE": "memesh_site.no_such_settings"}
    (_, next_list), _ = raw_session(broken, INITIALIZE, INITIALIZED, TOOLS_LIST)
    assert next_list == first_list
    # And a server that does load finds its own list the same as the one it gave early (the
    # SDK answers requests in order: by its answer to the ping, it has compared the list).
    (_, listed, pong), stderr = raw_session(env, INITIALIZE, INITIALIZED, TOOLS_LIST, PING)
    assert listed == first_list
    assert json.loads(pong) == {"jsonrpc": "2.0", "id": 3, "result": {}}
    assert "differs" not in stderr


def server_pid(home: Path) -> int:
    """The pid of the home's one `memesh mcp` (its CLI host record: api/cli/host.py)."""
    (record,) = (home / HOSTS_DIRNAME).glob("*.json")
    pid = json.loads(record.read_text())["pid"]
    assert isinstance(pid, int)
    return pid


def has_exited(pid: int) -> bool:
    """Whether `pid` has ended (a child not yet reaped by the SDK's client is a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def wait_for_exit(pid: int) -> bool:
    deadline = time.monotonic() + EXIT_DEADLINE
    while time.monotonic() < deadline:
        if has_exited(pid):
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_the_server_and_keeps_the_write_it_acknowledged(
    tmp_path: Path, signum: signal.Signals
) -> None:
    home = tmp_path / "home"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memesh_site.cli", "mcp"],
        env=memesh_env(home, MEMESH_EMBEDDER="deterministic"),
        cwd=str(ROOT),
    )
    exited: list[bool] = []

    async def session() -> None:
        with anyio.fail_after(ANSWER_DEADLINE):
            async with Client(
                params, mode="legacy", client_info=mcp_checks.client_info()
            ) as client:
                stored = await client.call_tool(
                    "remember",
                    {"name": "kept-through-signal", "type": "note", "observations": ["kept"]},
                )
                assert not stored.is_error, mcp_checks.text_of(stored)
                # A recall notes an access, which the process writes a second later or as it
                # exits (graph/ops/recall/access.py).
                recalled = await client.call_tool("recall", {"query": "kept-through-signal"})
                assert "kept-through-signal" in mcp_checks.text_of(recalled)
                pid = server_pid(home)
                # The client keeps the server's stdin open, as Claude Code does when it signals.
                os.kill(pid, signum)
                exited.append(await anyio.to_thread.run_sync(wait_for_exit, pid))

    anyio.run(session)
    assert exited == [True]
    with sqlite3.connect(home / "knowledge-graph.db") as db:
        rows = db.execute(
            "SELECT name, access_count FROM graph_entity WHERE name = 'kept-through-signal'"
        ).fetchall()
    assert rows == [("kept-through-signal", 1)]
    # It ended as it ends at the end of input, not killed: its CLI host record is gone.
    assert list((home / HOSTS_DIRNAME).glob("*.json")) == []
