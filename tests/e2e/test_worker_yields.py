"""The background worker yields to the server's requests (core/request_activity.py), as
real processes: `memesh serve` stamps each request into its home's activity file, and a
`memesh worker` with the local model waits before each model call while a request is recent,
for at most MEMESH_WORKER_YIELD_SECONDS, so a steady stream of requests never stops it.

The waiting worker is shown without racing a client against the clock: the test writes the
stamp itself, a moment ahead on the machine's shared monotonic clock (what a request at that
moment would write), then takes it back and watches the held memory get its vector.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from core.request_activity import FILENAME, Stamp
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


def local_env(home: Path, **extra: str) -> dict[str, str]:
    # The pacing belongs to the local model: its work is on this machine's CPU.
    return memesh_env(home, MEMESH_EMBEDDER="local", **extra)


def migrated(home: Path) -> Path:
    done = run_python(["-m", "memesh_site.cli", "migrate", "--verbosity", "0"], local_env(home))
    assert done.returncode == 0, done.stderr
    return home


def remember(home: Path, name: str, text: str) -> None:
    written = run_python(["-c", REMEMBER, name, text], local_env(home))
    assert written.returncode == 0, written.stderr


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return migrated(tmp_path / "home")


def test_each_served_request_stamps_the_homes_activity_file(home: Path, tmp_path: Path) -> None:
    with serving(home, tmp_path / "serve.log", "--no-worker", "--no-migrate") as base:
        stamp = Stamp(home / FILENAME, create=False)
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


@pytest.fixture
def yielding_worker(home: Path, tmp_path: Path) -> Iterator[Path]:
    """`memesh worker` with the local model, willing to wait up to 30 s for a quiet moment."""
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            memesh("worker", "--log-level", "info"),
            cwd=ROOT,
            env=local_env(home, MEMESH_WORKER_YIELD_SECONDS="30"),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield log
    finally:
        stop(proc)


def test_the_worker_holds_its_model_calls_while_a_request_is_recent(
    home: Path, yielding_worker: Path
) -> None:
    db = home / DB
    log = yielding_worker
    wait_for("the worker's start-up pass", lambda: has_live_generation(db), DEADLINE, log)
    # With no request stamped, the worker embeds as it always did (and has its model loaded).
    remember(home, "first-note", "otters hold hands while they sleep")
    wait_for("the first vector", lambda: has_current_vector(db, "first-note"), DEADLINE, log)

    stamp = Stamp(home / FILENAME, create=True)
    stamp.mark(time.monotonic() + 15)  # a request "now", for the next 15 s
    remember(home, "held-note", "puffins nest in burrows on cliff tops")
    time.sleep(3)  # time for the task to reach the worker and the worker to reach the model
    assert not has_current_vector(db, "held-note"), log.read_text()

    stamp.mark(0.0)  # quiet since long ago
    wait_for("the held vector", lambda: has_current_vector(db, "held-note"), DEADLINE, log)


def test_a_steady_stream_of_requests_does_not_stop_the_backlog(home: Path, tmp_path: Path) -> None:
    db = home / DB
    with serving(
        home,
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
