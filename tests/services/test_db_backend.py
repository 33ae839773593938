"""The SQLite backend (core/db): driver, extensions, PRAGMAs, files and system checks.

The pytest database is in memory, so file-only behaviour (WAL, file modes, the write lock)
is checked on a fresh connection of the same backend to a temporary file, and keyword-only
mode in subprocesses with MEMESH_SQLITE_VEC_PATH pointing nowhere.
"""

from __future__ import annotations

import copy
import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection, connections, transaction

from core.db.base import DatabaseWrapper
from core.db.driver import Database
from graph.checks import fts5_error
from tests.processes import PROCS, memesh_env, run_python

# SQLite's backend itself: PRAGMAs, FTS5, sqlite-vec.
pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_only]


def scalar(cursor, sql: str) -> object:
    cursor.execute(sql)
    return cursor.fetchone()[0]


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@pytest.fixture
def file_db(tmp_path: Path) -> Iterator[tuple[DatabaseWrapper, Path]]:
    """A memesh connection to a file in a directory that does not exist yet."""
    path = tmp_path / "fresh-home" / "knowledge-graph.db"
    settings = copy.deepcopy(connection.settings_dict)
    settings["NAME"] = str(path)
    wrapper = DatabaseWrapper(settings, alias="memesh_file_test")
    try:
        yield wrapper, path
    finally:
        wrapper.close()


# --- the Django connection --------------------------------------------------------------------


def test_the_bundled_sqlite_is_at_least_3_43():
    # contentless_delete=1 on the FTS5 tables needs 3.43.
    with connection.cursor() as cur:
        version = scalar(cur, "SELECT sqlite_version()")

    assert version_tuple(version) >= (3, 43)


def test_sqlite_vec_is_loaded_on_the_connection():
    with connection.cursor() as cur:
        version = scalar(cur, "SELECT vec_version()")

    assert version.startswith("v")
    assert connection.vec_error is None
    assert connection.vec_available is True


def test_busy_timeout_is_at_least_thirty_seconds():
    with connection.cursor() as cur:
        assert scalar(cur, "PRAGMA busy_timeout") >= 30_000


def test_foreign_keys_are_enforced():
    with connection.cursor() as cur:
        assert scalar(cur, "PRAGMA foreign_keys") == 1


def test_migrations_create_the_fts5_and_vocab_tables_and_no_fixed_width_vec0_table():
    with connection.cursor() as cur:
        cur.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        tables = dict(cur.fetchall())

    assert "USING fts5" in tables["graph_entity_fts"]
    assert "USING fts5" in tables["graph_entity_fts_archived"]
    assert "USING fts5vocab" in tables["graph_entity_fts_vocab"]
    # vec0 tables are made per index generation, at the embedder's width
    # (graph/indexing/generations.py).
    assert "graph_entity_vec" not in tables
    assert not any(name.startswith("graph_vec_g") for name in tables)


def test_fts5_error_reports_a_missing_module_and_passes_on_real_fts5():
    with connection.cursor() as cur:
        missing = fts5_error(cur, module="no_such_fts_module")
        present = fts5_error(cur)

    assert isinstance(missing, str)
    assert "no_such_fts_module" in missing
    assert present is None


def test_the_fts5_probe_leaves_no_table_behind():
    with connection.cursor() as cur:
        fts5_error(cur)
        cur.execute("SELECT count(*) FROM temp.sqlite_master WHERE name = 'memesh_fts5_probe'")
        assert cur.fetchone()[0] == 0


# --- a file database --------------------------------------------------------------------------


def test_a_file_database_runs_in_wal_mode_with_normal_sync(file_db):
    wrapper, _ = file_db
    with wrapper.cursor() as cur:
        assert scalar(cur, "PRAGMA journal_mode") == "wal"
        assert scalar(cur, "PRAGMA synchronous") == 1  # NORMAL
        assert scalar(cur, "PRAGMA foreign_keys") == 1
        assert scalar(cur, "PRAGMA busy_timeout") >= 30_000


def test_a_shorter_configured_timeout_never_lowers_busy_timeout(file_db):
    wrapper, _ = file_db
    wrapper.settings_dict["OPTIONS"] = {**wrapper.settings_dict["OPTIONS"], "timeout": 1}

    with wrapper.cursor() as cur:
        assert scalar(cur, "PRAGMA busy_timeout") == 30_000


def test_a_database_file_created_by_memesh_is_private(file_db):
    wrapper, path = file_db
    assert not path.parent.exists()

    wrapper.ensure_connection()

    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_the_wal_file_is_as_private_as_the_database(file_db):
    wrapper, path = file_db
    with wrapper.cursor() as cur:
        cur.execute("CREATE TABLE t (x)")
        cur.execute("INSERT INTO t VALUES (1)")

    wal = path.with_name(path.name + "-wal")
    assert wal.exists()
    assert stat.S_IMODE(wal.stat().st_mode) == 0o600


def test_a_transaction_takes_the_write_lock_at_begin(file_db):
    # BEGIN IMMEDIATE: a read-then-write transaction cannot lose the lock race half-way
    # (DESIGN §10). While an atomic block is open, before it has run a single statement,
    # a second writer is refused at once (timeout=0, so no waiting is involved).
    wrapper, path = file_db
    with wrapper.cursor() as cur:
        cur.execute("CREATE TABLE t (x)")
    other = Database.connect(str(path), timeout=0, isolation_level=None)
    connections[wrapper.alias] = wrapper
    try:
        with (
            transaction.atomic(using=wrapper.alias),
            pytest.raises(Database.OperationalError, match="locked"),
        ):
            other.execute("BEGIN IMMEDIATE")
        other.execute("BEGIN IMMEDIATE")  # free again once the block has ended
        other.execute("ROLLBACK")
    finally:
        del connections[wrapper.alias]
        other.close()


# --- keyword-only mode when sqlite-vec cannot load --------------------------------------------


def keyword_only_env(home: Path) -> dict[str, str]:
    return memesh_env(
        home, MEMESH_DB_PATH=str(home / "kg.db"), MEMESH_SQLITE_VEC_PATH="/nonexistent/vec0"
    )


def test_check_warns_w001_when_sqlite_vec_cannot_load_and_still_passes(tmp_path):
    result = run_python(["manage.py", "check"], keyword_only_env(tmp_path))

    assert result.returncode == 0, result.stderr
    assert "memesh.W001" in result.stderr
    assert "keyword-only" in result.stderr
    assert "MEMESH_SQLITE_VEC_PATH" in result.stderr
    assert "memesh.E001" not in result.stderr + result.stdout


def test_check_is_silent_about_extensions_when_everything_loads(tmp_path):
    env = keyword_only_env(tmp_path)
    del env["MEMESH_SQLITE_VEC_PATH"]

    result = run_python(["manage.py", "check"], env)

    assert result.returncode == 0, result.stderr
    assert "memesh.W001" not in result.stderr
    assert "memesh.E001" not in result.stderr


def test_remember_and_recall_work_keyword_only_without_sqlite_vec(tmp_path):
    env = keyword_only_env(tmp_path)

    migrated = run_python(["manage.py", "migrate", "--verbosity", "0"], env)
    remembered = run_python([str(PROCS / "remember_many.py"), "k", "25"], env)
    recalled = run_python([str(PROCS / "recall_each.py"), "25", "k"], env)

    assert migrated.returncode == 0, migrated.stderr
    assert remembered.returncode == 0, remembered.stderr
    assert recalled.returncode == 0, recalled.stderr
    report = json.loads(recalled.stdout)
    assert report["vectors"] is False
    assert report["entities"] == 25
    assert report["missed"] == 0, report
    assert report["ambiguous"] == 0, report
    # The migration skipped the vec0 table it could not create.
    db = Database.connect(str(tmp_path / "kg.db"))
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    finally:
        db.close()
    assert "graph_entity_fts" in tables
    assert "graph_entity_vec" not in tables
