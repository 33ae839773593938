"""`POST /v1/dream/run {"async": true}` carried to a real `memesh worker` process: once through
the embedded filesystem broker, once through a Redis broker (a `redis-server` this test starts
on a free loopback port and stops).

The producer is another process running the REST view (Django's test client, no server
needed); the LLM is a fake OpenAI-compatible server in this process, configured in the
worker's MEMESH_HOME/config.json. The outcome is read from the database file, as any other
process would read it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.llm_servers import FakeLLMServer
from tests.processes import ROOT, free_port, memesh, memesh_env, read_rows, run_python, stop

pytestmark = pytest.mark.slow

DEADLINE = 60.0
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
DIGEST = json.dumps({"name": "worker-week", "observations": ["the worker ran the dream pass"]})

# Six commits, then the async run through the REST view; prints the task id.
PRODUCE = """
import json
import django
django.setup()
from django.test import Client
from graph.ops.kit.operation import CallContext
from graph.ops.registry import OPERATIONS
for i in range(6):
    OPERATIONS["remember"].run(
        {"name": f"commit-{i}", "type": "commit", "observations": [f"commit {i} body"],
         "tags": ["project:alpha"]},
        CallContext(source_host="cli"),
    )
response = Client().post("/v1/dream/run", data=json.dumps({"async": True}),
                         content_type="application/json")
assert response.status_code == 200, response.content
print(response.json()["data"]["taskId"])
"""


@pytest.fixture
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(kind="openai", default_text=DIGEST) as server:
        yield server


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    import redis

    port = free_port()
    data = tmp_path / "redis"
    data.mkdir()
    proc = subprocess.Popen(
        [
            *(REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data)),
            *("--save", "", "--appendonly", "no", "--daemonize", "no"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    try:
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=2)
        end = time.monotonic() + DEADLINE
        while True:
            try:
                if client.ping():
                    break
            except redis.exceptions.ConnectionError:
                if time.monotonic() > end or proc.poll() is not None:
                    pytest.fail("redis-server did not start")
                time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(proc)


def run_through_worker(tmp_path: Path, llm: FakeLLMServer, **env: str) -> None:
    home = tmp_path / "home"
    environment = memesh_env(home, MEMESH_EMBEDDER="none", **env)
    migrated = run_python(["-m", "memesh_site.cli", "migrate", "--verbosity", "0"], environment)
    assert migrated.returncode == 0, migrated.stderr
    (home / "config.json").write_text(json.dumps({"llm": llm.llm_config()}))

    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        worker = subprocess.Popen(
            memesh("worker", "--log-level", "info"),
            cwd=ROOT,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        produced = run_python(["-c", PRODUCE], environment)
        assert produced.returncode == 0, produced.stderr
        task_id = produced.stdout.strip().splitlines()[-1]
        db = home / "knowledge-graph.db"
        sql = (
            "SELECT status, result, error_code, error FROM proposals_taskrun "
            f"WHERE id = '{task_id.replace('-', '')}'"
        )
        end = time.monotonic() + DEADLINE
        rows: list[tuple] = []
        while time.monotonic() < end:
            rows = read_rows(db, sql)
            if rows and rows[0][0] in ("succeeded", "failed"):
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"the task never finished ({rows}); worker log:\n{log.read_text()}")
        status, result, error_code, error = rows[0]
        assert status == "succeeded", (error_code, error, log.read_text())
        assert json.loads(result)["proposalsCreated"] == 1
        assert read_rows(db, "SELECT kind, status FROM proposals_proposal") == [
            ("digest", "pending")
        ]
        assert len(llm.chat_requests()) == 1
        assert worker.poll() is None
    finally:
        stop(worker)


def test_an_async_dream_run_is_done_by_a_worker_over_the_embedded_broker(tmp_path, llm):
    run_through_worker(tmp_path, llm)

    assert (tmp_path / "home" / "celery" / "queue").is_dir()


def test_an_async_dream_run_is_done_by_a_worker_over_a_redis_broker(tmp_path, llm, redis_url):
    run_through_worker(tmp_path, llm, MEMESH_CELERY_BROKER=redis_url)

    assert not (tmp_path / "home" / "celery" / "queue").exists()
