"""A consistent copy of the whole database file, taken through SQLite's online backup API
(https://sqlite.org/backup.html): pages are copied from a live connection, so the copy is one
snapshot even while other processes write, and it includes what the WAL holds — a plain file
copy of knowledge-graph.db would miss both.

The copy is read through a connection of its own, opened read-only: backup_step answers
SQLITE_LOCKED for as long as the source connection is itself writing, and Python's
`Connection.backup` retries that without end. (An in-memory database, in tests, can only be
copied through Django's connection, outside any transaction.) A source that stays busy past
BACKUP_DEADLINE_SECONDS ends the copy with StorageBusy instead of waiting for ever.

A team server's PostgreSQL is no file memesh can copy: it is backed up with the server's own
tools (pg_dump), and a copy is refused with a sentence that says so (backup_refusal).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from django.db import connection
from django.db.backends.sqlite3.creation import DatabaseCreation

from core.db.driver import Database
from core.errors import OperationFailed
from graph.errors import StorageBusy

BACKUP_DEADLINE_SECONDS = 30
_RETRIED = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)  # the result codes backup() retries


def database_file() -> Path | None:
    """The database file this process uses; None for an in-memory database (tests) and for a
    database server (PostgreSQL, whose NAME is no file)."""
    if connection.vendor != "sqlite":
        return None
    name = str(connection.settings_dict["NAME"])
    return None if DatabaseCreation.is_in_memory_db(name) else Path(name)


def backup_refusal() -> OperationFailed | None:
    """Why this database cannot be copied by database_backup, or None when it can."""
    if connection.vendor == "sqlite":
        return None
    return OperationFailed(
        "memesh copies only a SQLite database file; this memory is on a PostgreSQL server "
        "(MEMESH_DATABASE_URL), which is backed up with pg_dump"
    )


def database_backup(target: Path) -> None:
    """Copy the whole database into `target` (created by the caller, empty, with the mode it
    should keep)."""
    if (refusal := backup_refusal()) is not None:
        raise refusal
    deadline = time.monotonic() + BACKUP_DEADLINE_SECONDS

    def progress(status: int, remaining: int, total: int) -> None:
        if status in _RETRIED and time.monotonic() > deadline:
            raise StorageBusy()

    source_file = database_file()
    destination = Database.connect(str(target))
    try:
        if source_file is None:
            connection.ensure_connection()
            connection.connection.backup(destination, progress=progress)
        else:
            uri = f"{source_file.resolve().as_uri()}?mode=ro"
            source = Database.connect(uri, uri=True)
            try:
                source.backup(destination, progress=progress)
            finally:
                source.close()
    finally:
        destination.close()
