"""The driver's cursor and the small helpers every storage module's raw SQL shares."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from django.db import connection


@contextmanager
def cursor() -> Iterator[Any]:
    """The driver's own cursor, with its errors raised as django.db exceptions.

    Django's cursor wrapper costs ~35 µs a statement, more than most of these queries take;
    recall runs about eight of them. The SQL here therefore uses `?` placeholders.
    """
    connection.ensure_connection()
    with connection.wrap_database_errors:
        cur = connection.connection.cursor()
        try:
            yield cur
        finally:
            cur.close()


@contextmanager
def read_snapshot() -> Iterator[None]:
    """Run the enclosed reads in one deferred read transaction: under WAL they all see one
    snapshot of the database and block no writer. (`transaction.atomic()` would begin
    IMMEDIATE, as every memesh write does, and hold the write lock for the whole read.)
    Inside an atomic block the enclosing transaction already gives one snapshot.
    https://sqlite.org/lang_transaction.html, https://sqlite.org/wal.html#concurrency
    """
    if connection.in_atomic_block:
        yield
        return
    connection.ensure_connection()
    raw = connection.connection
    with connection.wrap_database_errors:
        raw.execute("BEGIN DEFERRED")
    try:
        yield
    finally:
        with connection.wrap_database_errors:
            raw.execute("COMMIT")


def change_token() -> tuple[Any, int, int] | None:
    """A value that changes whenever anything is committed to the database, by any process:
    (this thread's connection, its PRAGMA data_version — which moves when another connection
    commits, https://sqlite.org/pragma.html#pragma_data_version — and the rows this
    connection itself has written, which data_version does not count). None inside an atomic
    block, whose uncommitted writes may still roll back: nothing read there may be kept.

    Read it before the read it guards: a commit landing between the two then only costs a
    needless re-read, never a stale answer."""
    if connection.in_atomic_block:
        return None
    connection.ensure_connection()
    raw = connection.connection
    with connection.wrap_database_errors:
        version = raw.execute("PRAGMA data_version").fetchone()[0]
    return raw, int(version), int(raw.total_changes)


def placeholders(n: int) -> str:
    return ", ".join(["?"] * n)


def db_time(value: datetime) -> datetime:
    """Naive UTC, the form Django's SQLite backend stores (so text comparisons order)."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value
