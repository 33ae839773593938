"""The database schema brought up to date before memesh uses it: `memesh serve`, the first
tool call of `memesh mcp` and every CLI command that touches the database call
`migrate_if_needed`, so a fresh MEMESH_HOME works from whichever comes first.

Checking costs a read of `django_migrations` and the migration files (~20 ms); migrating
happens once per home and per upgrade. Processes that start together on a fresh home (an
agent host launching hooks and `memesh mcp` at once) take turns through an `flock` on a file
beside the database: Django's migrate is not safe to run twice at the same time, and the one
that waited finds nothing left to do.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import cast

from django.core.management import call_command
from django.db import connection
from django.db.backends.sqlite3.base import DatabaseWrapper
from django.db.migrations.executor import MigrationExecutor

LOCK_SUFFIX = ".migrate-lock"


def pending_migrations() -> bool:
    """Whether any migration is not applied yet (reads only: fine on a read-only database)."""
    executor = MigrationExecutor(connection)
    return bool(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def _open_lock_file() -> int | None:
    sqlite = cast(DatabaseWrapper, connection)  # memesh runs on SQLite only (core/db)
    if sqlite.is_in_memory_db():
        return None
    try:
        return os.open(
            str(sqlite.settings_dict["NAME"]) + LOCK_SUFFIX, os.O_RDWR | os.O_CREAT, 0o600
        )
    except OSError:
        return None  # a read-only directory: migrate alone, and SQLite will say what is wrong


@contextmanager
def _migration_lock() -> Iterator[None]:
    fd = _open_lock_file()
    if fd is None:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


# Database files this process found up to date, by (device, inode): the schema of a file only
# moves forward, and only by a migrate of this code, so a long-lived process (the server
# running forwarded CLI commands, api/cli/forward.py) checks each file once. A file
# replaced under the same name has another inode and is checked again.
_current: set[tuple[int, int]] = set()


def _file_identity() -> tuple[int, int] | None:
    sqlite = cast(DatabaseWrapper, connection)
    if sqlite.is_in_memory_db():
        return None
    try:
        stat = os.stat(sqlite.settings_dict["NAME"])
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def migrate_if_needed() -> bool:
    """Apply the pending migrations, if any; True when this call applied them."""
    identity = _file_identity()
    if identity is not None and identity in _current:
        return False
    applied = _migrate_if_needed()
    if identity is not None or (identity := _file_identity()) is not None:
        _current.add(identity)
    return applied


def _migrate_if_needed() -> bool:
    if not pending_migrations():
        return False
    with _migration_lock():
        if not pending_migrations():  # another process migrated while this one waited
            return False
        call_command("migrate", interactive=False, verbosity=0)
    return True
