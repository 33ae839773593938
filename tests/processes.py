"""Running memesh in other OS processes: an isolated environment, a bounded run, and the
lifecycle of a server process (a free port, waiting for health, stopping)."""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
PROCS = ROOT / "tests" / "procs"  # scripts the tests run as processes
PROCESS_DEADLINE = 300  # a hang must fail the test, not the whole run
STARTUP_DEADLINE = 60  # a server that never answers must fail the test, not hang it
EXIT_DEADLINE = 60


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
    proc: subprocess.Popen[bytes], base: str, log: Path, deadline: float = 60
) -> None:
    """Until `memesh serve` at `base` answers /v1/health; raises, with its log, if it exits or
    does not answer within `deadline` seconds."""
    give_up = time.monotonic() + deadline
    while time.monotonic() < give_up:
        if proc.poll() is not None:
            raise RuntimeError(f"memesh serve exited with {proc.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{base}/v1/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"memesh serve did not answer /v1/health:\n{log.read_text()}")


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
