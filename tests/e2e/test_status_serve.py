"""End to end: `memesh status` against a real `memesh serve` of the same MEMESH_HOME — running
while it answers, not running once it stopped (its record removed), and stale after a SIGKILL
left the record behind."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.serve_record import RECORD_FILENAME
from tests.processes import (
    EXIT_DEADLINE,
    ROOT,
    STARTUP_DEADLINE,
    free_port,
    memesh,
    memesh_env,
    run_python,
    stop,
    wait_until_healthy,
)

pytestmark = pytest.mark.slow


def status(home: Path) -> dict[str, Any]:
    # Another free port as the configured one: only the record can lead status to the server.
    done = run_python(
        ["-m", "memesh_site.cli", "status", "--json"],
        memesh_env(home, MEMESH_HTTP_PORT=str(free_port())),
    )
    assert done.returncode == 0, done.stderr
    server: dict[str, Any] = json.loads(done.stdout)["server"]
    return server


@pytest.fixture
def started(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path, int]]:
    home = tmp_path / "home"
    log = tmp_path / "serve.log"
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            memesh("serve", "--port", str(port), "--workers", "1", "--no-worker"),
            cwd=ROOT,
            env=memesh_env(home),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_healthy(proc, f"http://127.0.0.1:{port}", log, STARTUP_DEADLINE)
        yield proc, home, port
    finally:
        stop(proc)


def test_status_sees_the_running_server_and_then_that_it_stopped(
    started: tuple[subprocess.Popen[bytes], Path, int],
) -> None:
    proc, home, port = started

    running = status(home)

    assert running["running"] is True and running["state"] == "running"
    assert running["pid"] == proc.pid and running["url"] == f"http://127.0.0.1:{port}"
    assert running["worker"] is False and running["version"]

    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=EXIT_DEADLINE)

    stopped = status(home)
    assert (stopped["running"], stopped["state"]) == (False, "not-running")
    assert not (home / RECORD_FILENAME).exists()


def test_a_server_killed_outright_leaves_a_record_status_calls_stale(
    started: tuple[subprocess.Popen[bytes], Path, int],
) -> None:
    proc, home, _ = started

    proc.kill()
    proc.wait(timeout=EXIT_DEADLINE)

    killed = status(home)
    assert (killed["running"], killed["state"], killed["pid"]) == (False, "stale", proc.pid)
    assert (home / RECORD_FILENAME).exists()
