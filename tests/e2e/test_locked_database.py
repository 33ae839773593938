"""REST, MCP and the CLI report a locked database the same way (`storage.busy`, 503, with a
hint: graph/errors.py's StorageBusy, mapped in api/envelope.py), and nothing is stored until
the lock is gone. The other storage conditions: tests/e2e/test_storage_conditions.py."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from api.envelope import known_failure
from graph.errors import StorageBusy
from tests.processes import (
    ROOT,
    free_port,
    memesh,
    memesh_env,
    run_python,
    stop,
    wait_until_healthy,
)

# --- a locked database, through every transport ---------------------------------------------------

REMEMBER = {"name": "blocked", "type": "note", "observations": ["written while locked"]}


@contextmanager
def write_locked(db: Path) -> Iterator[None]:
    """Another process's writer holding the database's write lock until the block ends."""
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        yield
        holder.execute("ROLLBACK")
    finally:
        holder.close()


@pytest.mark.slow
def test_a_locked_database_is_the_same_error_over_rest_mcp_and_the_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = memesh_env(home, MEMESH_EMBEDDER="none", MEMESH_WORKER="false")
    migrated = run_python(["-m", "memesh_site.cli", "migrate", "-v", "0"], env)
    assert migrated.returncode == 0, migrated.stderr
    port, log = free_port(), tmp_path / "serve.log"
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        server = subprocess.Popen(
            memesh("serve", "--port", str(port), "--no-worker"),
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_until_healthy(server, base, log)
        with write_locked(home / "knowledge-graph.db"), ThreadPoolExecutor(3) as pool:
            # Each writer waits out the busy timeout (at least 30 s) before it gives up: the
            # three wait side by side.
            rest = pool.submit(httpx.post, f"{base}/v1/remember", json=REMEMBER, timeout=120)
            mcp = pool.submit(mcp_call, env, "remember", REMEMBER)
            # The CLI runs in its own process (MEMESH_CLI_LOCAL): forwarded to the server it
            # would queue behind the REST call's wait and report the server's error.
            cli = pool.submit(
                subprocess.run,
                memesh("remember", "--input", json.dumps(REMEMBER), "--json"),
                cwd=ROOT, env={**env, "MEMESH_CLI_LOCAL": "1"}, capture_output=True,
                text=True, timeout=120,
            )  # fmt: skip
            rest_answer, mcp_answer, cli_done = rest.result(), mcp.result(), cli.result()
    finally:
        stop(server)

    failure = known_failure(StorageBusy())
    assert failure is not None and failure.status == 503
    busy = failure.body()
    assert busy["errorCode"] == "storage.busy" and busy["hint"]
    assert rest_answer.status_code == 503 and rest_answer.json() == busy
    assert mcp_answer == busy
    assert cli_done.returncode == 1 and cli_done.stdout == ""
    assert json.loads(cli_done.stderr.strip().splitlines()[-1]) == busy
    # Nothing was stored by any of them; once the lock is gone the same write succeeds.
    stored = subprocess.run(
        memesh("remember", "--input", json.dumps(REMEMBER), "--json"),
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    assert json.loads(stored.stdout)["created"] is True


def mcp_call(env: dict[str, str], name: str, arguments: dict[str, object]) -> object:
    """One tool call over stdio; the JSON of its isError text (the call must fail)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memesh_site.cli", "mcp", "--no-migrate"],
        env=env,
        cwd=str(ROOT),
    )
    answer: list[object] = []

    async def session() -> None:
        with anyio.fail_after(120):
            async with Client(params, mode="legacy") as client:
                result = await client.call_tool(name, arguments)
                assert result.is_error, result
                [block] = result.content
                answer.append(json.loads(getattr(block, "text", "")))

    anyio.run(session)
    return answer[0]
