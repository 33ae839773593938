"""A team server's PostgreSQL errors that describe the storage rather than the request become
the same stable conditions SQLite's do (graph/storage/conditions.py): a lost connection is
`storage.unavailable`, a write refused to let a concurrent one finish is `storage.busy`, a
read-only transaction is `storage.read-only`. Each error here is raised by a real PostgreSQL
(tests/postgres.py) on connections of the test's own, so they run whichever database the
suite runs on."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import psycopg
import pytest
from django.db import utils

from api.envelope import known_failure
from graph.errors import StorageBusy, StorageError, StorageFull, StorageReadOnly
from graph.storage.conditions import DATABASE_WIDE, storage_error
from tests.postgres import PostgresServer


@pytest.fixture
def url(postgres_server: PostgresServer) -> Iterator[str]:
    database_url = postgres_server.url(postgres_server.fresh_database())
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (id int PRIMARY KEY, n int)")
        conn.execute("INSERT INTO t VALUES (1, 0)")
    yield database_url


def raised(conn: psycopg.Connection, statement: str) -> psycopg.Error:
    with pytest.raises(psycopg.Error) as caught:
        conn.execute(statement)
    return caught.value


def as_django_raises(exc: psycopg.Error) -> utils.Error:
    """What Django's connection raises for `exc` (its own wrapper, on a PostgreSQL backend's
    driver): Django's class of the same name, the driver's exception as its cause."""
    wrapper = utils.DatabaseErrorWrapper(SimpleNamespace(Database=psycopg, errors_occurred=False))
    try:
        with wrapper:
            raise exc
    except utils.Error as wrapped:
        assert wrapped.__cause__ is exc
        return wrapped
    raise AssertionError("not wrapped")


def condition(exc: BaseException) -> StorageError:
    found = storage_error(exc)
    assert found is not None, repr(exc)
    return found


def test_a_connection_the_server_ended_is_storage_unavailable_and_a_new_one_works(
    url: str,
) -> None:
    conn = psycopg.connect(url, autocommit=True)
    pid = conn.info.backend_pid
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])

    lost = raised(conn, "SELECT 1")
    after = raised(conn, "SELECT 1")  # the driver's own "connection is closed"

    for exc in (lost, after, as_django_raises(lost)):
        found = condition(exc)
        assert (found.error_code, found.http_status) == ("storage.unavailable", 503)
        assert isinstance(found, DATABASE_WIDE)
    failure = known_failure(as_django_raises(lost))
    assert failure is not None and failure.error_code == "storage.unavailable"
    assert "MEMESH_DATABASE_URL" in failure.extra["hint"]
    with psycopg.connect(url) as again:
        assert again.execute("SELECT n FROM t").fetchone() == (0,)


def test_a_server_that_cannot_be_reached_is_storage_unavailable(
    postgres_server: PostgresServer, tmp_path: object
) -> None:
    with pytest.raises(psycopg.OperationalError) as caught:
        psycopg.connect(f"postgresql://postgres@/postgres?host={tmp_path}", connect_timeout=5)

    assert condition(caught.value).error_code == "storage.unavailable"


def test_a_write_in_a_read_only_transaction_is_storage_read_only(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET default_transaction_read_only = on")
        exc = raised(conn, "UPDATE t SET n = 1")

    assert exc.sqlstate == "25006"
    found = condition(as_django_raises(exc))
    assert isinstance(found, StorageReadOnly)
    assert (found.error_code, found.http_status) == ("storage.read-only", 503)


def test_a_serialization_failure_and_a_lock_timeout_are_storage_busy(url: str) -> None:
    with psycopg.connect(url) as first, psycopg.connect(url, autocommit=True) as second:
        first.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        first.execute("SELECT n FROM t")  # the snapshot is taken here
        second.execute("UPDATE t SET n = n + 1")
        serialization = raised(first, "UPDATE t SET n = n + 1")
        first.rollback()

        first.execute("UPDATE t SET n = n + 1")  # holds the row's lock until it ends
        second.execute("SET lock_timeout = '10ms'")
        timeout = raised(second, "UPDATE t SET n = n + 1")
        first.rollback()

    assert (serialization.sqlstate, timeout.sqlstate) == ("40001", "55P03")
    for exc in (serialization, timeout):
        found = condition(as_django_raises(exc))
        assert isinstance(found, StorageBusy)
        assert (found.error_code, found.http_status) == ("storage.busy", 503)


def test_the_servers_resource_class_is_storage_full_and_other_errors_are_not_storage(
    url: str,
) -> None:
    # A full disk cannot be staged on the shared test machine: the driver's class for it.
    full = condition(psycopg.errors.DiskFull("could not extend file"))
    assert isinstance(full, StorageFull) and full.http_status == 507
    with psycopg.connect(url, autocommit=True) as conn:
        missing = raised(conn, "SELECT * FROM no_such_table")
        duplicate = raised(conn, "INSERT INTO t VALUES (1, 0)")

    assert storage_error(missing) is None
    assert storage_error(as_django_raises(duplicate)) is None
