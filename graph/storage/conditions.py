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
"""

from __future__ import annotations

import sqlite3

from django.db import DatabaseError

from graph.errors import (
    StorageBusy,
    StorageCannotOpen,
    StorageError,
    StorageFull,
    StorageIOError,
    StorageReadOnly,
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
# Conditions of the whole database, not of one write: while one lasts nothing can be stored
# (a full disk may still take a smaller write).
DATABASE_WIDE: tuple[type[StorageError], ...] = (
    StorageBusy,
    StorageReadOnly,
    StorageIOError,
    StorageCannotOpen,
)


def _condition(exc: BaseException) -> type[StorageError] | None:
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
