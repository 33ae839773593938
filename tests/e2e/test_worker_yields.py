"""The background worker yields to the server's requests (core/request_activity.py), as
real processes: `memesh serve` stamps each request into its home's activity file, and a
`memesh worker` with the local model waits before each model call while a request is recent,
for at most MEMESH_WORKER_YIELD_SECONDS, so a steady stream of requests never stops it.

The waiting worker is shown without racing a client against the clock: the test writes the
stamp itself, a moment ahead on the machine's shared monotonic clock (what a request at that
moment would write), waits until the worker has read it before its model call (the activity
file is then mapped into the worker), lets the request end a second later, and watches the held
memory get its vector only once the stamp says the server is quiet.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from core.request_activity import FILENAME, QUIET_SECONDS, Stamp
from tests.e2e.test_worker_process import (
    DEADLINE,
    REMEMBER,
    has_current_vector,
    has_live_generation,
    wait_for,
)
from tests.processes import ROOT, memesh, memesh_env, run_python, serving, stop

pytestmark = pytest.mark.slow

DB = "knowledge-graph.db"


# The pacing belongs to the local model: its work is on this machine's CPU.
EMBEDDER = "local"


def local_env(home: Path, **extra: str) -> dict[str, str]:
    return memesh_env(home, MEMESH_EMBEDDER=EMBEDDER, **extra)


def remember(home: Path, name: str, text: str) -> None:
    written = run_python(["-c", REMEMBER, name, text], local_env(home))
    assert written.returncode == 0, written.stderr


@pytest.fixture(scope="module")
def memesh_embedder() -> str:
    """What conftest's `migrated_home` migrates with: this module's embedder."""
    return EMBEDDER


def test_each_served_request_stamps_the_homes_activity_file(
    migrated_home: Path, tmp_path: Path
) -> None:
    with serving(migrated_home, tmp_path / "serve.log", "--no-worker", "--no-migrate") as base:
        stamp = Stamp(migrated_home / FILENAME, create=False)
        before = time.monotonic()
        assert httpx.get(f"{base}/v1/health", timeout=30).status_code == 200
        first = stamp.last()
        assert first is not None and first >= before  # the same clock as this process's
        response = httpx.post(
            f"{base}/v1/recall", json={"query": "anything", "limit": 3}, timeout=30
        )
        assert response.status_code == 200, response.text
        second = stamp.last()
        assert second is not None and second > first


def reads_the_stamp(pid: int, activity: Path) -> bool:
    """Whether process `pid` has the activity file mapped: the worker maps it the first time it
    reads the stamp, right before a model call (core/request_activity.py)."""
    try:
        return str(activity.resolve()) in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.fixture
def yielding_worker(
    migrated_home: Path, tmp_path: Path
) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """`memesh worker` with the local model, willing to wait up to 30 s for a quiet moment:
    (the process, its log)."""
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            memesh("worker", "--log-level", "info"),
            cwd=ROOT,
            env=local_env(migrated_home, MEMESH_WORKER_YIELD_SECONDS="30"),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield proc, log
    finally:
        stop(proc)


def test_the_worker_holds_its_model_calls_while_a_request_is_recent(
    migrated_home: Path, yielding_worker: tuple[subprocess.Popen[bytes], Path]
) -> None:
    db = migrated_home / DB
    worker, log = yielding_worker
    wait_for("the worker's start-up pass", lambda: has_live_generation(db), DEADLINE, log)
    # With no request stamped, the worker embeds as it always did (and has its model loaded).
    remember(migrated_home, "first-note", "otters hold hands while they sleep")
    wait_for("the first vector", lambda: has_current_vector(db, "first-note"), DEADLINE, log)

    activity = migrated_home / FILENAME
    stamp = Stamp(activity, create=True)
    stamp.mark(time.monotonic() + 15)  # a request "now", for the next 15 s
    remember(migrated_home, "held-note", "puffins nest in burrows on cliff tops")
    wait_for(
        "the worker to read the stamp before its model call",
        lambda: reads_the_stamp(worker.pid, activity),
        DEADLINE,
        log,
    )
    assert not has_current_vector(db, "held-note"), log.read_text()

    stamp.mark(time.monotonic() + 1)  # the request ends a second from now
    wait_for("the held vector", lambda: has_current_vector(db, "held-note"), DEADLINE, log)
    # The vector came once the server was quiet, not as soon as the worker reached the model
    # (a worker that did not wait would have written it while the stamp was still ahead).
    assert stamp.quiet_for() >= QUIET_SECONDS, log.read_text()


def test_a_steady_stream_of_requests_does_not_stop_the_backlog(
    migrated_home: Path, tmp_path: Path
) -> None:
    db = migrated_home / DB
    with serving(
        migrated_home,
        tmp_path / "serve.log",
        "--no-migrate",
        MEMESH_EMBEDDER="local",
        MEMESH_WORKER_YIELD_SECONDS="0.2",
    ) as base:
        stop_stream = threading.Event()
        answered: list[int] = []

        def stream() -> None:
            with httpx.Client(base_url=base, timeout=30) as client:
                while not stop_stream.is_set():
                    answered.append(client.get("/v1/health").status_code)

        client = threading.Thread(target=stream, daemon=True)
        client.start()
        try:
            names = [f"stream-note-{i}" for i in range(3)]
            for i, name in enumerate(names):
                response = httpx.post(
                    f"{base}/v1/remember",
                    json={"name": name, "type": "note", "observations": [f"kelp forest {i}"]},
                    timeout=30,
                )
                assert response.status_code == 200, response.text
            wait_for(
                "every vector while requests keep arriving",
                lambda: all(has_current_vector(db, name) for name in names),
                DEADLINE * 2,
                tmp_path / "serve.log",
            )
            assert client.is_alive()  # the stream was still running
        finally:
            stop_stream.set()
            client.join(timeout=30)
        assert answered and set(answered) == {200}
