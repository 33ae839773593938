"""A read-only database, staged for real under a whole memesh (`memesh serve` on loopback,
`memesh mcp` on stdio with the official client, the CLI): each transport answers a write with
the same `storage.read-only` envelope (code, sentence, hint; graph/errors.py's StorageError
family, mapped once in api/envelope.py), reads go on working, and once the file is writable
again nothing stored was lost. A read-only MEMESH_HOME that no memesh holds open cannot even
be read (`storage.cannot-open`). A locked database: tests/e2e/test_locked_database.py.

How it is staged (tests/mounts.py): the tests run as root in CI, where a chmod does not stop a
write, and as a developer elsewhere, so the condition lives in a user and mount namespace of
the test's own (`unshare --map-root-user --mount`, no privileges needed): a read-only bind
mount (EROFS) stops root and non-root alike. For the database file, it is mounted read-only
over itself: SQLite opens it read-only, as it does a file the user may not write, and answers
a write with SQLITE_READONLY, while the directory stays writable for its -shm and -wal files.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest

from graph.errors import StorageCannotOpen, StorageReadOnly
from tests.mounts import READ_ONLY_BIND, Namespace
from tests.processes import PROCESS_DEADLINE, free_port, stop
from tests.staged import (
    NEW,
    SEEDED,
    SMALL_BUNDLE,
    body_of,
    cli,
    cli_failure,
    mcp_session,
    names_in,
    seed,
    start_server,
    stored_names,
)

pytestmark = pytest.mark.slow


def test_a_read_only_database_refuses_writes_with_storage_read_only_and_still_answers_reads(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    seed(home)
    read_only = body_of(StorageReadOnly)

    with Namespace(READ_ONLY_BIND, str(home / "knowledge-graph.db")) as ns:
        server = start_server(home, ns, tmp_path / "serve.log")
        try:
            rest_write = server.post("remember", NEW)
            rest_import = server.post("import", {"data": SMALL_BUNDLE, "merge_strategy": "skip"})
            rest_reads = server.recalled("SQLite backup")
            listed = httpx.get(f"{server.base}/v1/entities", timeout=PROCESS_DEADLINE)
        finally:
            stop(server.proc)
        mcp = mcp_session(home, ns, [("remember", NEW), ("recall", {"query": "SQLite backup"})])
        cli_write = cli(home, ns, "remember", "--input", json.dumps(NEW), "--json")
        cli_text = cli(home, ns, "remember", "--input", json.dumps(NEW))
        cli_reads = cli(home, ns, "recall", "--input", '{"query": "SQLite backup"}', "--json")

    assert rest_write.status_code == 503 and rest_write.json() == read_only
    assert rest_import.status_code == 503 and rest_import.json() == read_only
    assert mcp[0] == (True, read_only)
    assert cli_failure(cli_write) == read_only
    # Without --json a person reads the sentence and the hint, not a traceback.
    assert cli_text.returncode == 1 and "Traceback" not in cli_text.stderr
    assert StorageReadOnly.sentence in cli_text.stderr and StorageReadOnly.hint in cli_text.stderr
    # Reads work through every transport.
    assert rest_reads == set(SEEDED)
    assert listed.status_code == 200
    assert {e["name"] for e in listed.json()["data"]["entities"]} == set(SEEDED)
    assert mcp[1][0] is False and names_in(mcp[1][1]) == set(SEEDED)
    assert cli_reads.returncode == 0 and names_in(json.loads(cli_reads.stdout)) == set(SEEDED)
    # Writable again: everything is there, nothing half-written, and writes work.
    assert stored_names(home) == set(SEEDED)
    written = cli(home, None, "remember", "--input", json.dumps(NEW), "--json")
    assert written.returncode == 0, written.stderr
    assert stored_names(home) == {*SEEDED, NEW["name"]}


def test_a_read_only_home_that_no_memesh_holds_open_is_storage_cannot_open_until_writable(
    tmp_path: Path,
) -> None:
    # SQLite creates the database's -shm file before its first read; in a read-only directory
    # it cannot, so every statement fails with "unable to open database file".
    home = tmp_path / "home"
    seed(home)
    cannot_open = body_of(StorageCannotOpen)
    query = ["recall", "--input", '{"query": "SQLite backup"}', "--json"]

    with Namespace("true") as ns:
        # Started on a writable home; the wait opens no connection, so none is held after.
        server = start_server(home, ns, tmp_path / "serve.log", touch_database=False)
        try:
            assert not (home / "knowledge-graph.db-shm").exists()
            make_read_only = ns.argv(["sh", "-c", READ_ONLY_BIND, "sh", str(home)])
            subprocess.run(make_read_only, check=True, timeout=PROCESS_DEADLINE)
            rest_read = server.post("recall", {"query": "SQLite backup"})
            rest_write = server.post("remember", NEW)
        finally:
            stop(server.proc)
        mcp = mcp_session(home, ns, [("recall", {"query": "SQLite backup"})])
        cli_read = cli(home, ns, *query)
        serve_refused = cli(home, ns, "serve", "--port", str(free_port()), "--no-worker")

    assert rest_read.status_code == 503 and rest_read.json() == cannot_open
    assert rest_write.status_code == 503 and rest_write.json() == cannot_open
    assert mcp[0] == (True, cannot_open)
    assert cli_failure(cli_read) == cannot_open
    assert serve_refused.returncode == 1 and StorageCannotOpen.sentence in serve_refused.stderr
    assert "Traceback" not in serve_refused.stderr
    # Outside the namespace the home is writable: all there, and writes work.
    assert stored_names(home) == set(SEEDED)
    assert cli(home, None, "remember", "--input", json.dumps(NEW), "--json").returncode == 0
    assert stored_names(home) == {*SEEDED, NEW["name"]}
