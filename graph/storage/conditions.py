"""SQLite's errors that describe the storage rather than the request: a database another
writer keeps locked, a read-only file, a full disk, a failing disk, a file that cannot be
opened (a read-only or missing directory).

`storage_error` turns them into graph.errors' StorageError family, which every transport
reports with a stable code (api/envelope.py) and which the import uses to tell a condition of
the whole database from a bad entry (graph/ops/bundle/importer.py).

The driver's exception carries SQLite's result code (`sqlite_errorcode`, Python 3.11+'s
sqlite3 and the pysqlite3/sqlean forks of it); the primary code is its low byte
(https://sqlite.org/rescode.html). Django re-raises the driver's exception as its own class
with the original as `__cause__`. The message is matched only when no code is there.

On a team server's PostgreSQL the driver's exception (psycopg's) carries the SQLSTATE
instead (https://www.postgresql.org/docs/current/errcodes-appendix.html): a lost or refused
connection is `storage.unavailable`, and the conditions SQLite also has keep their codes,
with hints about a server rather than a file.
"""

from __future__ import annotations

import sqlite3

from django.db import DatabaseError

from core.errors import InvalidInput
from graph.errors import (
    ServerBusy,
    ServerFull,
    ServerReadOnly,
    StorageBusy,
    StorageCannotOpen,
    StorageError,
    StorageFull,
    StorageIOError,
    StorageReadOnly,
    StorageUnavailable,
)

# Primary result code -> the condition. SQLITE_LOCKED is a conflict inside one connection's
# shared cache, which a retry resolves like SQLITE_BUSY.
_BY_CODE: dict[int, type[StorageError]] = {
    sqlite3.SQLITE_BUSY: StorageBusy,
    sqlite3.SQLITE_LOCKED: StorageBusy,
    sqlite3.SQLITE_READONLY: StorageReadOnly,
    sqlite3.SQLITE_FULL: StorageFull,
    sqlite3.SQLITE_IOERR: StorageIOError,
    sqlite3.SQLITE_CANTOPEN: StorageCannotOpen,
}
# SQLite's English for the same codes (sqlite3ErrStr), for a driver that does not give one.
_BY_MESSAGE: tuple[tuple[str, type[StorageError]], ...] = (
    ("database is locked", StorageBusy),
    ("database table is locked", StorageBusy),
    ("attempt to write a readonly database", StorageReadOnly),
    ("database or disk is full", StorageFull),
    ("disk I/O error", StorageIOError),
    ("unable to open database file", StorageCannotOpen),
)
_NOT_STORAGE = {sqlite3.SQLITE_IOERR_NOMEM}  # an I/O "error" that is really out of memory
# SQLSTATE -> the condition, by the whole code first, then by its class (the first two
# characters). Too many connections is a server that cannot take this one, not a full disk.
_BY_SQLSTATE: dict[str, type[StorageError]] = {
    "40001": ServerBusy,  # serialization_failure
    "40P01": ServerBusy,  # deadlock_detected
    "55P03": ServerBusy,  # lock_not_available (lock_timeout)
    "25006": ServerReadOnly,  # read_only_sql_transaction (default_transaction_read_only, a standby)
    "53300": StorageUnavailable,  # too_many_connections
    "57P01": StorageUnavailable,  # admin_shutdown (the server stopping, pg_terminate_backend)
    "57P02": StorageUnavailable,  # crash_shutdown
    "57P03": StorageUnavailable,  # cannot_connect_now (starting up, in recovery)
    "58030": StorageIOError,  # io_error
}
_BY_SQLSTATE_CLASS: dict[str, type[StorageError]] = {
    "08": StorageUnavailable,  # connection exception
    "53": ServerFull,  # insufficient resources: disk_full, out_of_memory, ...
}
# Conditions of the whole database, not of one write: while one lasts nothing can be stored
# (a full disk may still take a smaller write).
DATABASE_WIDE: tuple[type[StorageError], ...] = (
    StorageBusy,
    StorageReadOnly,
    StorageIOError,
    StorageCannotOpen,
    StorageUnavailable,
)


def _postgres_condition(exc: BaseException) -> type[StorageError] | None:
    """The condition psycopg's exception `exc` reports. One without a SQLSTATE came from the
    client, not the server: an OperationalError there is a connection that failed or was
    lost, an InterfaceError one already closed."""
    import psycopg  # loaded already: `exc` is one of its exceptions

    sqlstate = getattr(exc, "sqlstate", None)
    if isinstance(sqlstate, str):
        return _BY_SQLSTATE.get(sqlstate) or _BY_SQLSTATE_CLASS.get(sqlstate[:2])
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        return StorageUnavailable
    return None


def _condition(exc: BaseException) -> type[StorageError] | None:
    if type(exc).__module__.startswith("psycopg"):
        return _postgres_condition(exc)
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):  # the driver's own exception
        return None if code in _NOT_STORAGE else _BY_CODE.get(code & 0xFF)
    if not isinstance(exc, DatabaseError):
        return None
    message = str(exc)
    return next((kind for text, kind in _BY_MESSAGE if message.startswith(text)), None)


def storage_error(exc: BaseException) -> StorageError | None:
    """The storage condition `exc` (a database error from Django or the driver) reports, or
    None when it is about something else (a missing table, a constraint, a bug)."""
    if isinstance(exc, StorageError):
        return exc
    for candidate in (exc.__cause__, exc):
        if candidate is not None and (kind := _condition(candidate)) is not None:
            error = kind()
            error.__cause__ = exc
            return error
    return None


# psycopg's own words, raised in the client before the statement reaches the server.
_NUL_IN_TEXT = "PostgreSQL text fields cannot contain NUL"


def unstorable_input(exc: BaseException) -> InvalidInput | None:
    """The request's text that this database cannot hold, as bad input (400): PostgreSQL's
    text type has no NUL character (U+0000), which SQLite stores as it is. The write's
    transaction rolled back; nothing was stored."""
    for candidate in (exc, exc.__cause__):
        if candidate is not None and str(candidate).startswith(_NUL_IN_TEXT):
            return InvalidInput(
                "this memory's text holds a NUL character (U+0000), which a PostgreSQL "
                "database cannot store: remove it and send the request again"
            )
    return None
