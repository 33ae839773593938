"""End to end: `memesh serve` as a real process, spoken to over real HTTP on loopback.

The module's server (tests/e2e/conftest.py) runs with MEMESH_HOME pointing at a directory that
does not exist yet, nor does its parent, so these tests also see memesh create its data
directory (0700) and database file (0600).
"""

from __future__ import annotations

import socket
import sqlite3
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

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


@pytest.fixture(scope="module")
def serve_args() -> tuple[str, ...]:
    """The module's server (conftest's `server`) as a user starts it: with its worker."""
    return ()


@pytest.fixture(scope="module")
def memesh_embedder() -> str | None:
    """And with memesh's default embedder."""
    return None


def test_the_server_answers_health_on_loopback(server):
    response = httpx.get(f"{server.base}/v1/health", timeout=30)

    assert response.status_code == 200
    body = response.json()
    assert body["success"] is True
    assert body["data"]["status"] == "ok"


def test_remember_then_recall_over_real_http(server):
    remembered = server.post(
        "remember",
        {
            "name": "http-memory",
            "type": "decision",
            "observations": ["Served over loopback, token srv4real"],
            "tags": ["project:serve"],
        },
    )
    assert remembered.status_code == 200, remembered.text
    assert remembered.json()["data"]["created"] is True

    recalled = server.post("recall", {"query": "srv4real"})

    assert recalled.status_code == 200, recalled.text
    [entity] = recalled.json()["data"]["entities"]
    assert entity["name"] == "http-memory"
    assert entity["tags"] == ["project:serve"]
    assert entity["metadata"]["provenance"]["source_host"] == "http"


def _access_count(home: Path, name: str) -> int | None:
    db = sqlite3.connect(f"file:{home / 'knowledge-graph.db'}?mode=ro", uri=True)
    try:
        row = db.execute("SELECT access_count FROM graph_entity WHERE name = ?", [name]).fetchone()
    finally:
        db.close()
    return None if row is None else int(row[0])


def test_a_served_recall_counts_its_access_without_waiting_for_another_request(server):
    remembered = server.post(
        "remember", {"name": "counted-memory", "type": "note", "observations": ["cnt7write"]}
    )
    assert remembered.status_code == 200, remembered.text
    assert server.post("recall", {"query": "cnt7write"}).status_code == 200

    # A server process writes the counts from a thread of its own, a second after the recall
    # that noted them (graph/ops/recall/access.py), not on some later request or at exit.
    deadline = time.monotonic() + EXIT_DEADLINE
    while _access_count(server.home, "counted-memory") != 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _access_count(server.home, "counted-memory") == 1


def test_a_post_without_content_type_parses_as_json_over_real_http(server):
    response = httpx.post(
        f"{server.base}/v1/remember",
        content=b'{"name": "bare-post", "type": "note", "observations": ["bare2body"]}',
        timeout=30,
    )
    assert "content-type" not in response.request.headers

    assert response.status_code == 200, response.text
    recalled = server.post("recall", {"query": "bare2body"})
    assert [e["name"] for e in recalled.json()["data"]["entities"]] == ["bare-post"]


def test_a_chunked_body_is_refused_with_length_required_over_real_http(server):
    def chunks() -> Iterator[bytes]:
        yield b'{"name": "chunked", "type": "note", '
        yield b'"observations": ["chunk5body"]}'

    response = httpx.post(
        f"{server.base}/v1/remember",
        content=chunks(),
        headers={"content-type": "application/json"},
        timeout=30,
    )
    assert response.request.headers["transfer-encoding"] == "chunked"

    assert response.status_code == 411
    assert response.json()["errorCode"] == "request.length-required"
    entities = server.post("recall", {"query": "chunk5body"}).json()["data"]["entities"]
    # Nothing was stored: no keyword match (semantic neighbours of other memories may come back,
    # labelled as such, once the worker has embedded them).
    assert [e["name"] for e in entities if e["match"]["source"] == "keyword"] == []
    assert "chunked" not in [e["name"] for e in entities]


def test_errors_over_real_http_are_json_envelopes(server):
    too_large = httpx.post(
        f"{server.base}/v1/remember",
        content=b"x" * (1024 * 1024 + 1),
        headers={"content-type": "application/json"},
        timeout=30,
    )
    foreign_host = httpx.get(
        f"{server.base}/v1/health", headers={"host": "attacker.example"}, timeout=30
    )
    not_found = httpx.get(f"{server.base}/v1/nothing-here", timeout=30)

    assert too_large.status_code == 413
    assert too_large.json()["errorCode"] == "payload.too-large"
    assert foreign_host.status_code == 400
    assert foreign_host.json()["success"] is False
    assert not_found.status_code == 404
    assert not_found.json()["errorCode"] == "route.not-found"


def test_the_server_creates_a_private_home_and_database_file(server):
    db = server.home / "knowledge-graph.db"

    assert db.is_file()
    assert stat.S_IMODE(server.home.stat().st_mode) == 0o700
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


def test_serve_refuses_a_non_loopback_host_and_does_not_listen(tmp_path):
    port = free_port()

    result = run_python(
        ["-m", "memesh_site.cli", "serve", "--host", "0.0.0.0", "--port", str(port)],
        memesh_env(tmp_path / "home"),
        timeout=EXIT_DEADLINE,
    )

    assert result.returncode != 0
    assert "refusing to bind 0.0.0.0" in result.stderr
    assert "loopback" in result.stderr
    assert "serving" not in result.stderr
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


@pytest.mark.parametrize("host", ["192.168.1.10", "example.com", "::"])
def test_serve_refuses_other_non_loopback_hosts(tmp_path, host):
    result = run_python(
        ["-m", "memesh_site.cli", "serve", "--host", host, "--port", str(free_port())],
        memesh_env(tmp_path / "home"),
        timeout=EXIT_DEADLINE,
    )

    assert result.returncode != 0
    assert f"refusing to bind {host}" in result.stderr


def test_serve_refuses_a_non_loopback_host_from_the_environment(tmp_path):
    env = memesh_env(tmp_path / "home")
    env["MEMESH_HTTP_HOST"] = "0.0.0.0"

    result = run_python(
        ["-m", "memesh_site.cli", "serve", "--port", str(free_port())], env, timeout=EXIT_DEADLINE
    )

    assert result.returncode != 0
    assert "refusing to bind 0.0.0.0" in result.stderr


@pytest.mark.parametrize("workers", ["0", "33"])
def test_serve_refuses_a_worker_count_out_of_range(tmp_path, workers):
    result = run_python(
        ["-m", "memesh_site.cli", "serve", "--port", str(free_port()), "--workers", workers],
        memesh_env(tmp_path / "home"),
        timeout=EXIT_DEADLINE,
    )

    assert result.returncode != 0
    assert "--workers must be between 1 and 32" in result.stderr


def children_of(pid: int) -> set[int]:
    out: set[int] = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.add(int(entry.name))
    return out


def test_server_processes_leave_when_the_server_is_killed_outright(tmp_path):
    """SIGKILL runs no cleanup: the HTTP worker processes notice and leave, freeing the port."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            memesh("serve", "--port", str(port), "--no-worker", "--workers", "2"),
            cwd=ROOT,
            env=memesh_env(tmp_path / "home"),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_healthy(proc, base, log, STARTUP_DEADLINE)
        assert "2 server processes" in log.read_text()
        workers = children_of(proc.pid)
        assert len(workers) >= 2  # the two HTTP processes (and the spawn helper, if any)
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + EXIT_DEADLINE
        while time.monotonic() < deadline and any(Path(f"/proc/{w}").exists() for w in workers):
            time.sleep(0.2)
        assert not any(Path(f"/proc/{w}/stat").exists() for w in workers), log.read_text()
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{base}/v1/health", timeout=5)
    finally:
        stop(proc)
