"""A full disk, staged for real under a whole memesh (`memesh serve` on loopback, `memesh mcp`
on stdio with the official client, the CLI): each transport answers a write with the same
`storage.full` envelope (code, sentence, hint; graph/errors.py's StorageError family, mapped
once in api/envelope.py), reads go on working, and once there is room again the same
processes write and nothing stored was lost. On a full disk with no memesh holding the
database open even a read fails (`storage.io-error`), and an import loses only the entries
that are bad or do not fit.

How it is staged (tests/mounts.py): the tests run as root in CI and as a developer elsewhere,
so the disk is a 16 MB tmpfs mounted on MEMESH_HOME inside a user and mount namespace of the
test's own (`unshare --map-root-user --mount`, no privileges needed), filled to the last
block (or to a given room) by a filler file. ENOSPC makes SQLite answer SQLITE_FULL exactly as
a real full disk does; deleting the filler gives the room back. Chosen over RLIMIT_FSIZE,
which limits each file rather than the disk and turns some writes into EFBIG ("disk I/O
error") depending on where a write starts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph.errors import StorageFull, StorageIOError
from graph.ops.bundle.importer import IMPORT_CHUNK
from tests.mounts import SMALL_DISK, Namespace
from tests.processes import free_port, stop
from tests.staged import (
    NEW,
    SEEDED,
    SMALL_BUNDLE,
    body_of,
    cli,
    cli_failure,
    entry,
    mcp_session,
    names_in,
    seed,
    start_server,
    stored_names,
)

pytestmark = pytest.mark.slow

DISK_SIZE = "16m"


def test_a_full_disk_refuses_writes_with_storage_full_and_writes_again_once_there_is_room(
    tmp_path: Path,
) -> None:
    seeded, home = tmp_path / "seeded", tmp_path / "home"
    seed(seeded)
    home.mkdir()
    full = body_of(StorageFull)

    with Namespace(SMALL_DISK, str(home), DISK_SIZE, str(seeded)) as ns:
        server = start_server(home, ns, tmp_path / "serve.log")
        try:
            filler = ns.fill(home)
            rest_write = server.post("remember", NEW)
            rest_import = server.post("import", {"data": SMALL_BUNDLE, "merge_strategy": "skip"})
            rest_reads = server.recalled("SQLite backup")
            mcp = mcp_session(home, ns, [("remember", NEW), ("recall", {"query": "SQLite backup"})])
            cli_write = cli(home, ns, "remember", "--input", json.dumps(NEW), "--json")
            cli_reads = cli(home, ns, "recall", "--input", '{"query": "SQLite backup"}', "--json")

            filler.unlink()  # room again, for the same server
            written = server.post("remember", NEW)
            after = server.recalled("SQLite backup fact stored afterwards")
        finally:
            stop(server.proc)

    assert rest_write.status_code == 507 and rest_write.json() == full
    # Not one entry of the bundle fits: the import stops with the condition.
    assert rest_import.status_code == 507 and rest_import.json() == full
    assert mcp[0] == (True, full)
    assert cli_failure(cli_write) == full
    assert rest_reads == set(SEEDED)
    assert mcp[1][0] is False and names_in(mcp[1][1]) == set(SEEDED)
    assert cli_reads.returncode == 0 and names_in(json.loads(cli_reads.stdout)) == set(SEEDED)
    assert written.status_code == 200, written.text
    assert after == {*SEEDED, NEW["name"]}


def test_a_full_disk_no_memesh_has_open_is_storage_io_error_even_for_reads_until_there_is_room(
    tmp_path: Path,
) -> None:
    # With no connection open, SQLite must first create the database's -shm file, and on a
    # full disk it cannot: every statement, a read too, fails with "disk I/O error". A server
    # that has not opened the database yet (no request so far) meets the same.
    seeded, home = tmp_path / "seeded", tmp_path / "home"
    seed(seeded)
    home.mkdir()
    io_error = body_of(StorageIOError)
    query = ["recall", "--input", '{"query": "SQLite backup"}', "--json"]

    with Namespace(SMALL_DISK, str(home), DISK_SIZE, str(seeded)) as ns:
        server = start_server(home, ns, tmp_path / "serve.log", touch_database=False)
        try:
            assert not ns.path(home / "knowledge-graph.db-shm").exists()
            filler = ns.fill(home)
            rest_read = server.post("recall", {"query": "SQLite backup"})
            cli_read = cli(home, ns, *query)
            serve_refused = cli(home, ns, "serve", "--port", str(free_port()), "--no-worker")
            mcp = mcp_session(
                home,
                ns,
                [
                    ("recall", {"query": "SQLite backup"}),
                    filler.unlink,  # room again: the same session recovers
                    ("recall", {"query": "SQLite backup"}),
                ],
            )
            rest_after = server.recalled("SQLite backup")
        finally:
            stop(server.proc)
        cli_after = cli(home, ns, *query)

    assert rest_read.status_code == 503 and rest_read.json() == io_error
    assert cli_failure(cli_read) == io_error
    # A server started on the full disk says why it cannot start.
    assert serve_refused.returncode == 1 and StorageIOError.sentence in serve_refused.stderr
    assert "Traceback" not in serve_refused.stderr
    assert mcp[0] == (True, io_error)
    assert mcp[1][0] is False and names_in(mcp[1][1]) == set(SEEDED)
    assert rest_after == set(SEEDED)
    assert cli_after.returncode == 0 and names_in(json.loads(cli_after.stdout)) == set(SEEDED)


# --- import, chunk by chunk, on a nearly full disk --------------------------------------------


def test_an_import_on_a_nearly_full_disk_loses_only_the_entries_that_are_bad_or_do_not_fit(
    tmp_path: Path,
) -> None:
    seeded, home = tmp_path / "seeded", tmp_path / "home"
    seed(seeded)
    home.mkdir()
    first = [entry(f"e{i}", f"fact {i}") for i in range(IMPORT_CHUNK)]
    # Chunk two: a bad entry (no type), refused before the chunk is written, and one of about
    # 3 MB that cannot fit in the room left, between entries that can.
    second = [entry(f"e{i}", f"fact {i}") for i in range(IMPORT_CHUNK, IMPORT_CHUNK + 6)]
    second.insert(2, {"name": "no-type", "observations": ["x"]})
    second.insert(4, entry("too-big", *(f"{i} " + "word " * 1990 for i in range(300))))
    bundle = tmp_path / "bundle.json"  # outside the small disk
    bundle.write_text(json.dumps({"version": "3.0.0", "entities": first + second}))

    with Namespace(SMALL_DISK, str(home), DISK_SIZE, str(seeded)) as ns:
        filler = ns.fill(home, leave=1_500_000)
        done = cli(home, ns, "import", str(bundle), "--json")
        filler.unlink()
        stored = stored_names(home, ns)

    # Exit 1: entries were reported; stdout holds the result all the same.
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["imported"] == IMPORT_CHUNK + 6
    bad, big = result["errors"]
    assert bad.startswith(f'entities[{IMPORT_CHUNK + 2}] "no-type": ') and "type" in bad
    assert big == (
        f'entities[{IMPORT_CHUNK + 4}] "too-big": could not be stored: database or disk is '
        "full (storage.full)"
    )
    assert stored == {*SEEDED, *(f"e{i}" for i in range(IMPORT_CHUNK + 6))}
