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


def placeholders(n: int) -> str:
    return ", ".join(["?"] * n)


def db_time(value: datetime) -> datetime:
    """Naive UTC, the form Django's SQLite backend stores (so text comparisons order)."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value
