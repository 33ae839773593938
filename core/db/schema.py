"""The database schema brought up to date before memesh uses it: `memesh serve`, the first
tool call of `memesh mcp` and every CLI command that touches the database call
`migrate_if_needed`, so a fresh MEMESH_HOME works from whichever comes first.

Checking costs a read of `django_migrations` and a listing of the migration files (a few
ms); migrating happens once per home and per upgrade. A new SQLite home gets its schema from a
recording of what the migrations build (core/db/recorded_schema.py): a few ms instead of the
~0.35 s Django spends rendering migration states, in the first process of a new home.
Processes that start together on a fresh home (an agent host launching hooks and `memesh mcp`
at once) take turns through an `flock` on a file beside the database: Django's migrate is not
safe to run twice at the same time, and the one that waited finds nothing left to do.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import pkgutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import cast

from django.apps import apps
from django.core.management import call_command
from django.db import connection, transaction
from django.db.backends.sqlite3.base import DatabaseWrapper
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

from core.db import recorded_schema
from core.db.postgres.extensions import ensure_pgvector

LOCK_SUFFIX = ".migrate-lock"


def pending_migrations() -> bool:
    """Whether any migration is not applied yet (reads only: fine on a read-only database).

    The usual answer, every migration file recorded as applied, is told from the files' names
    and one query (a few ms); Django's loader, which imports every migration module to build the
    graph (~15 ms, in every hook and command process), decides the rest: a new migration, a
    squashed one recorded under the names it replaces."""
    if _every_file_applied():
        return False
    executor = MigrationExecutor(connection)
    return bool(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def _every_file_applied() -> bool:
    """Whether every migration module on disk is in `django_migrations`: then the migration
    plan is empty."""
    recorder = MigrationRecorder(connection)
    if not recorder.has_table():
        return False
    return _migration_files() <= set(recorder.applied_migrations())


def _migration_files() -> set[tuple[str, str]]:
    """The migration modules on disk, named as Django's loader names them
    (MigrationLoader.load_disk: the migrations package of each installed app, its modules but
    packages and names starting with _ or ~), without importing them."""
    on_disk: set[tuple[str, str]] = set()
    for config in apps.get_app_configs():
        module_name, _explicit = MigrationLoader.migrations_module(config.label)
        if module_name is None:
            continue
        try:
            spec = importlib.util.find_spec(module_name)
        except ImportError:
            continue  # no migrations package: an app without migrations, as for the loader
        locations = spec.submodule_search_locations if spec is not None else None
        if not locations:
            continue
        on_disk |= {
            (config.label, module.name)
            for module in pkgutil.iter_modules(locations)
            if not module.ispkg and module.name[0] not in "_~"
        }
    return on_disk


def _created_from_recording() -> bool:
    """Create the schema of an empty SQLite database from the recording of what the migrations
    build (core/db/recorded_schema.py), when the recording stands for exactly the migration
    files on disk; False, having done nothing, otherwise."""
    if connection.vendor != "sqlite" or recorded_schema.recorded_migrations() != _migration_files():
        return False
    with transaction.atomic(), connection.cursor() as cursor:
        if not recorded_schema.is_empty(cursor):
            return False  # a database with tables of its own (an older schema): Django migrates
        recorded_schema.apply(cursor)
    return True


def _open_lock_file() -> int | None:
    sqlite = cast(DatabaseWrapper, connection)  # the SQLite backend (core/db)
    if sqlite.is_in_memory_db():
        return None
    try:
        return os.open(
            str(sqlite.settings_dict["NAME"]) + LOCK_SUFFIX, os.O_RDWR | os.O_CREAT, 0o600
        )
    except OSError:
        return None  # a read-only directory: migrate alone, and SQLite will say what is wrong


# On PostgreSQL the processes that migrate together may sit on different hosts: they take
# turns through a session-level advisory lock (a fixed key of memesh's own), which the server
# releases if the process holding it dies.
# https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS
ADVISORY_LOCK_KEY = 0x6D656D65_73680001  # "memesh" + 1, within bigint


@contextmanager
def _advisory_lock() -> Iterator[None]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [ADVISORY_LOCK_KEY])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [ADVISORY_LOCK_KEY])


@contextmanager
def _migration_lock() -> Iterator[None]:
    if connection.vendor == "postgresql":
        with _advisory_lock():
            yield
        return
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
    if connection.vendor != "sqlite":
        return None  # a server's database has no file: checked each time (one query)
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
    if _every_file_applied():
        return False  # the usual answer, before any lock
    with _migration_lock():
        # An empty database is told before Django's loader imports every migration module.
        if _created_from_recording():
            return True
        if not pending_migrations():  # another process migrated while this one waited
            return False
        if connection.vendor == "postgresql":
            # Before any table: a database that cannot have pgvector is refused untouched.
            ensure_pgvector(connection)
        call_command("migrate", interactive=False, verbosity=0)
    return True
