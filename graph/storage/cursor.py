"""The driver's cursor and the small helpers every storage module's raw SQL shares."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from django.db import connection


@contextmanager
def cursor() -> Iterator[Any]:
    """The driver's own cursor, with its errors raised as django.db exceptions.

    Django's cursor wrapper costs ~35 µs a statement, more than most of these queries take;
    recall runs about eight of them. The SQL here therefore uses `?` placeholders, SQLite's
    own; on PostgreSQL they become psycopg's `%s` (FormatCursor), as Django's SQLite backend
    turns its `%s` into `?` the other way round.
    """
    connection.ensure_connection()
    with connection.wrap_database_errors:
        cur = connection.connection.cursor()
        try:
            yield FormatCursor(cur) if connection.vendor == "postgresql" else cur
        finally:
            cur.close()


class FormatCursor:
    """A psycopg cursor taking SQL written with `?` placeholders (the storage modules')."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        return self._cursor.execute(format_placeholders(sql), params)

    def executemany(self, sql: str, params: Iterable[Sequence[Any]]) -> Any:
        return self._cursor.executemany(format_placeholders(sql), params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._cursor)


@lru_cache(maxsize=1024)
def format_placeholders(sql: str) -> str:
    """`sql` with each `?` outside a quoted string or name as `%s`, and each `%` as `%%`
    (psycopg reads `%` as the start of a placeholder everywhere)."""
    out: list[str] = []
    quote: str | None = None
    for char in sql:
        if quote is not None:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "?":
            out.append("%s")
            continue
        out.append("%%" if char == "%" else char)
    return "".join(out)


@contextmanager
def read_snapshot() -> Iterator[None]:
    """Run the enclosed reads in one read transaction that sees one snapshot of the database
    and blocks no writer. Inside an atomic block the enclosing transaction already gives one.

    SQLite: a deferred transaction under WAL (`transaction.atomic()` would begin IMMEDIATE, as
    every memesh write does, and hold the write lock for the whole read).
    https://sqlite.org/lang_transaction.html, https://sqlite.org/wal.html#concurrency
    PostgreSQL: REPEATABLE READ, whose one snapshot serves every statement (READ COMMITTED,
    Django's default, takes a new one per statement), READ ONLY as nothing here writes.
    https://www.postgresql.org/docs/current/transaction-iso.html#XACT-REPEATABLE-READ
    """
    if connection.in_atomic_block:
        yield
        return
    connection.ensure_connection()
    raw = connection.connection
    postgres = connection.vendor == "postgresql"
    with connection.wrap_database_errors:
        raw.execute(_BEGIN_SNAPSHOT_POSTGRES if postgres else "BEGIN DEFERRED")
    try:
        yield
    except BaseException:
        # PostgreSQL refuses every statement after a failed one until the transaction ends;
        # ending it must not hide the error that ended the reads.
        if postgres:
            with suppress(Exception), connection.wrap_database_errors:
                raw.execute("ROLLBACK")
        else:
            with connection.wrap_database_errors:
                raw.execute("COMMIT")
        raise
    with connection.wrap_database_errors:
        raw.execute("COMMIT")


_BEGIN_SNAPSHOT_POSTGRES = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
# Result: the server's current snapshot as text, `xmin:xmax:in-progress ids`
# (https://www.postgresql.org/docs/current/functions-info.html#FUNCTIONS-PG-SNAPSHOT). A
# writing transaction takes an id when it starts (xmax moves) and leaves the in-progress list
# when it ends, so two equal snapshots have the same transactions committed between them, on
# any host. Reads take no id and move nothing. (The write-ahead log position would move with
# a plain read too, when it prunes a page.)
_SQL_SNAPSHOT = "SELECT CAST(pg_current_snapshot() AS TEXT)"
_PG_IDLE = 0  # psycopg.pq.TransactionStatus.IDLE: no transaction open on the connection


ChangeToken = tuple[object, object, int]


def change_token() -> ChangeToken | None:
    """A value that changes whenever anything is committed to the database, by any process:
    (this thread's connection, and on SQLite its PRAGMA data_version — which moves when
    another connection commits, https://sqlite.org/pragma.html#pragma_data_version — and the
    rows this connection itself has written, which data_version does not count; on PostgreSQL
    the server's current snapshot, which every commit on any host changes). None inside a
    transaction: an atomic block's uncommitted writes may still roll back, and a snapshot read
    (read_snapshot) may be older than the token read now, so nothing read there may be
    kept.

    Read it before the read it guards: a commit landing between the two then only costs a
    needless re-read, never a stale answer."""
    if connection.in_atomic_block:
        return None
    connection.ensure_connection()
    raw = connection.connection
    with connection.wrap_database_errors:
        if connection.vendor == "postgresql":
            if raw.info.transaction_status != _PG_IDLE:
                return None
            snapshot = raw.execute(_SQL_SNAPSHOT).fetchone()[0]
            return raw, str(snapshot), 0
        version = raw.execute("PRAGMA data_version").fetchone()[0]
    return raw, int(version), int(raw.total_changes)


def placeholders(n: int) -> str:
    return ", ".join(["?"] * n)


def db_time(value: datetime) -> datetime:
    """Naive UTC, the form Django's SQLite backend stores (so text comparisons order)."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value
