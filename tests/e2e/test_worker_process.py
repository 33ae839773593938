"""The background worker as a real process: the filesystem broker carries a write's embedding
task from the writing process to `memesh worker`, `memesh serve`'s worker child does not
outlive the server, and it starts with one line of ours (Celery's banner only at debug).

Each test gets its own MEMESH_HOME (database and broker folder) and the deterministic
embedder, so nothing needs the network or the model. Vectors are observed by reading the
database file directly, as another process would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.processes import (
    ROOT,
    STARTUP_DEADLINE,
    free_port,
    memesh,
    memesh_env,
    read_rows,
    run_python,
    stop,
)

pytestmark = pytest.mark.slow

DEADLINE = 30.0  # seconds for the worker to do what it must; a hang fails, not blocks

# Remember through the operation in a separate process, as `memesh remember` / MCP would:
# its committed write queues the embedding task on the broker and the process exits.
REMEMBER = """
import sys
import django
django.setup()
from graph.ops.kit.operation import CallContext
from graph.ops.registry import OPERATIONS
OPERATIONS["remember"].run(
    {"name": sys.argv[1], "type": "note", "observations": [sys.argv[2]]},
    CallContext(source_host="cli"),
)
"""


EMBEDDER = "deterministic"


def worker_env(home: Path) -> dict[str, str]:
    return memesh_env(home, MEMESH_EMBEDDER=EMBEDDER)


def wait_for(what: str, condition: Callable[[], bool], deadline: float, log: Path) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}; process log:\n{log.read_text()}")


def has_live_generation(db: Path) -> bool:
    return bool(read_rows(db, "SELECT 1 FROM graph_metaentry WHERE key = 'vectors.live'"))


def has_current_vector(db: Path, name: str) -> bool:
    rows = read_rows(
        db,
        "SELECT 1 FROM graph_entity AS e JOIN graph_entityvector AS v ON v.entity_id = e.id"
        " WHERE e.name = ? AND v.text_hash = e.embedding_hash",
        name,
    )
    return bool(rows)


def alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped by whoever adopted it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


@pytest.fixture(scope="module")
def memesh_embedder() -> str:
    """What conftest's `migrated_home` migrates with: this module's embedder."""
    return EMBEDDER


@pytest.fixture
def worker(migrated_home: Path, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            memesh("worker", "--log-level", "info"),
            cwd=ROOT,
            env=worker_env(migrated_home),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield proc, log
    finally:
        stop(proc)


def test_the_worker_embeds_a_memory_written_by_another_process(
    migrated_home: Path, worker: tuple[subprocess.Popen[bytes], Path]
) -> None:
    proc, log = worker
    db = migrated_home / "knowledge-graph.db"
    # The worker's start-up pass creates the live index; a memory written after that is
    # embedded only if its own write queued a task.
    wait_for("the worker's start-up pass", lambda: has_live_generation(db), DEADLINE, log)
    assert proc.poll() is None

    written = run_python(
        ["-c", REMEMBER, "walrus-note", "walruses haul out on the ice"], worker_env(migrated_home)
    )
    assert written.returncode == 0, written.stderr

    wait_for("the vector", lambda: has_current_vector(db, "walrus-note"), DEADLINE, log)
    # The task travelled through the embedded broker, a folder under MEMESH_HOME.
    assert (migrated_home / "celery" / "queue").is_dir()

    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the worker ignored SIGTERM:\n{log.read_text()}")


def test_serve_runs_a_worker_child_that_exits_when_the_server_is_killed(
    migrated_home: Path, tmp_path: Path
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            memesh("serve", "--port", str(port), "--no-migrate"),
            cwd=ROOT,
            env=worker_env(migrated_home),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    child: int | None = None
    try:
        wait_for("the server", lambda: healthy(base), STARTUP_DEADLINE, log)
        [child] = [pid for pid in children(server.pid) if b"worker" in cmdline(pid)]
        assert f"--parent-pid\0{server.pid}".encode() in cmdline(child)

        # The child does the embedding for the server's writes.
        assert_embeds_a_write(base, migrated_home, log, "served-note", "seals bask")
        # ... at a lower CPU priority than the server's (MEMESH_WORKER_NICENESS, default 10).
        served_at = os.getpriority(os.PRIO_PROCESS, server.pid)
        assert os.getpriority(os.PRIO_PROCESS, child) == min(19, served_at + 10)

        # Killed outright, the server cannot stop its child: the child's watchdog must.
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=15)
        wait_for("the worker child to exit", lambda: not alive(child), DEADLINE, log)
    finally:
        stop(server)
        if child is not None and alive(child):
            os.kill(child, signal.SIGKILL)


def assert_embeds_a_write(base: str, home: Path, log: Path, name: str, text: str) -> None:
    """Remember `name` through the server at `base`, then wait for its current vector."""
    response = httpx.post(
        f"{base}/v1/remember",
        json={"name": name, "type": "note", "observations": [text]},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    db = home / "knowledge-graph.db"
    wait_for("the vector", lambda: has_current_vector(db, name), DEADLINE, log)


READY = "Background worker ready (embedded): concurrency 1 (solo pool), filesystem broker at "
# Pieces of Celery's start-up banner and of its warning about running as root.
BANNER = ("-------------- celery@", "[config]", "[queues]", ".> transport:")


@pytest.fixture
def serve_log(
    migrated_home: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Path]:
    """The output of a `memesh serve --log-level <param>` whose worker is ready."""
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            memesh("serve", "--port", str(port), "--workers", "1", "--log-level", request.param),
            cwd=ROOT,
            env=worker_env(migrated_home),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for("the worker's line", lambda: READY in log.read_text(), STARTUP_DEADLINE, log)
        # Ready means consuming: a write of the server is embedded by it.
        assert_embeds_a_write(
            f"http://127.0.0.1:{port}", migrated_home, log, "startup-note", "otters float"
        )
        yield log
    finally:
        stop(server)


@pytest.mark.parametrize("serve_log", ["warning"], indirect=True)
def test_serve_starts_its_worker_with_one_line_and_no_celery_banner(serve_log: Path) -> None:
    output = serve_log.read_text()

    # (The test's own folder is named after it: it says "worker" too.)
    lines = output.replace(str(serve_log.parent), "<tmp>").splitlines()
    assert [line for line in lines if "worker" in line.lower()] == [
        READY + "<tmp>/home/celery, dream check every 3600 s"
    ]
    assert not [piece for piece in BANNER if piece in output], output
    assert "SecurityWarning" not in output


@pytest.mark.parametrize("serve_log", ["debug"], indirect=True)
def test_serve_at_debug_shows_celerys_banner_too(serve_log: Path) -> None:
    output = serve_log.read_text()

    assert READY in output
    assert all(piece in output for piece in BANNER), output


def healthy(base: str) -> bool:
    try:
        return httpx.get(f"{base}/v1/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
