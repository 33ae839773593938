"""The one envelope (api/envelope.py): what each exception means. SQLite's storage errors are
raised for real here (a held lock, a read-only connection, a page-count cap) on scratch files;
tests/e2e/test_locked_database.py and test_storage_conditions.py stage them for a whole
memesh and check REST, MCP and the CLI report them the same way."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.db import OperationalError
from django.db.utils import DatabaseErrorWrapper
from rest_framework import exceptions as drf

from api.envelope import INTERNAL, failure_for, known_failure, ok, ok_json
from core.db.driver import Database
from core.errors import Failure, InvalidInput, NotFound
from graph.errors import StorageFull

# --- the mapping ---------------------------------------------------------------------------------


def test_a_memesh_error_keeps_its_code_status_message_and_field() -> None:
    failure = known_failure(InvalidInput("limit: too big", field="limit"))

    assert failure == Failure(400, "validation.bad-body", "limit: too big", "limit")
    assert failure.body() == {
        "success": False,
        "errorCode": "validation.bad-body",
        "error": "limit: too big",
        "field": "limit",
    }


def test_a_failure_without_a_field_has_no_field_key_and_keeps_its_extras_last() -> None:
    failure = Failure(404, "route.not-found", "No route", extra={"code": "NOT_FOUND"})

    assert list(failure.body()) == ["success", "errorCode", "error", "code"]
    assert json.loads(failure.to_json()) == failure.body()


# --- storage conditions, raised by SQLite itself ----------------------------------------------


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "scratch.db"
    with closing(Database.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE t (x TEXT)")
    yield path


def as_django_raises(action: Callable[[], Any]) -> BaseException:
    """What `action` raises once Django's own wrapper has turned the driver's error into
    django.db's (as every query memesh runs does)."""
    wrapper = DatabaseErrorWrapper(SimpleNamespace(Database=Database, errors_occurred=False))
    with pytest.raises(Exception) as raised, wrapper:
        action()
    return raised.value


def write(path: Path, *, uri: str = "", timeout: float = 5, setup: str = "") -> None:
    with closing(Database.connect(f"file:{path}{uri}", uri=True, timeout=timeout)) as conn:
        if setup:
            conn.execute(setup)
        conn.execute("INSERT INTO t VALUES (?)", ["x" * 100_000])
        conn.commit()


def test_a_database_locked_by_another_writer_is_storage_busy(db: Path) -> None:
    with closing(Database.connect(db, isolation_level=None)) as holder:
        holder.execute("BEGIN EXCLUSIVE")
        exc = as_django_raises(lambda: write(db, timeout=0))

    failure = known_failure(exc)
    assert isinstance(exc, OperationalError)
    assert failure is not None and (failure.status, failure.error_code) == (503, "storage.busy")
    assert failure.extra["hint"] and "MEMESH_BUSY_TIMEOUT_SECONDS" in failure.extra["hint"]


def test_a_write_to_a_read_only_database_is_storage_read_only(db: Path) -> None:
    exc = as_django_raises(lambda: write(db, uri="?mode=ro"))

    failure = known_failure(exc)
    assert failure is not None and (failure.status, failure.error_code) == (
        503,
        "storage.read-only",
    )
    assert "writable" in failure.extra["hint"]
    assert list(failure.body()) == ["success", "errorCode", "error", "hint"]


def test_a_database_that_cannot_grow_is_storage_full_with_507(db: Path) -> None:
    # max_page_count caps the file where it is: SQLite answers SQLITE_FULL, as on a full disk.
    exc = as_django_raises(lambda: write(db, setup="PRAGMA max_page_count = 2"))

    failure = known_failure(exc)
    assert failure is not None and (failure.status, failure.error_code) == (507, "storage.full")
    assert "Free space" in failure.extra["hint"]


def test_a_database_file_sqlite_cannot_open_is_storage_cannot_open(tmp_path: Path) -> None:
    exc = as_django_raises(lambda: write(tmp_path / "no-such-directory" / "kg.db"))

    failure = known_failure(exc)
    assert failure is not None
    assert (failure.status, failure.error_code) == (503, "storage.cannot-open")
    assert "MEMESH_HOME" in failure.extra["hint"]


def test_the_driver_error_itself_and_sqlites_words_alone_are_recognised_too(db: Path) -> None:
    with pytest.raises(Database.OperationalError) as raw:
        write(db, setup="PRAGMA max_page_count = 2")
    full = known_failure(raw.value)
    assert full is not None and full.error_code == "storage.full"
    # A driver without sqlite_errorcode: Django's exception carries SQLite's message only.
    io_error = known_failure(OperationalError("disk I/O error"))
    assert io_error is not None and (io_error.status, io_error.error_code) == (
        503,
        "storage.io-error",
    )


def test_a_storage_error_keeps_its_code_and_hint_and_logs_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failure = failure_for(StorageFull(), where="test")

    assert failure.body() == {
        "success": False,
        "errorCode": "storage.full",
        "error": StorageFull.sentence,
        "hint": StorageFull.hint,
    }
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert caplog.records[0].exc_info is None


def test_other_database_errors_are_internal(db: Path) -> None:
    exc = as_django_raises(lambda: write(db, setup="DROP TABLE t"))

    assert "no such table" in str(exc)
    assert known_failure(exc) is None
    assert failure_for(exc, where="test") is INTERNAL


def test_drf_parse_errors_are_bad_bodies_and_unknown_exceptions_are_internal() -> None:
    parse = known_failure(drf.ParseError("Expecting value"))
    assert parse is not None and (parse.status, parse.error_code) == (400, "validation.bad-body")
    assert known_failure(ValueError("a bug")) is None
    assert failure_for(ValueError("a bug"), where="test") is INTERNAL
    assert failure_for(NotFound("gone"), where="test").status == 404


def test_the_success_envelope_is_the_same_built_from_data_or_from_json() -> None:
    assert (
        json.loads(ok_json('{"a":[1]}')) == ok({"a": [1]}) == {"success": True, "data": {"a": [1]}}
    )
