"""The server versions a team server needs, and pgvector created in its database.

memesh needs PostgreSQL 15 or later with pgvector 0.5 or later (HNSW indexes arrived in 0.5.0).
`CREATE EXTENSION vector` needs a superuser (pgvector's control file does not mark it
trusted), so a database prepared by an administrator is used as it is, and a role that may not
create it is told what to ask for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.db.postgres.errors import NoPgvector, UnsupportedServer

MIN_SERVER_VERSION = 150000  # server_version_num of PostgreSQL 15.0
MIN_PGVECTOR = (0, 5, 0)

# Installed in this database, and available on the server (its files present), by version.
INSTALLED_SQL = "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
AVAILABLE_SQL = "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"


@dataclass(frozen=True)
class ServerInfo:
    """What `memesh status` and `doctor` report of the database server."""

    version: str  # "16.2"
    version_num: int  # 160002
    pgvector: str | None  # the extension's version in this database, None when absent


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def server_info(connection: Any) -> ServerInfo:
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        version = str(cursor.fetchone()[0]).split(" ", 1)[0]
        cursor.execute("SHOW server_version_num")
        version_num = int(cursor.fetchone()[0])
        cursor.execute(INSTALLED_SQL)
        row = cursor.fetchone()
    return ServerInfo(version, version_num, str(row[0]) if row else None)


def ensure_pgvector(connection: Any) -> str:
    """Create pgvector in the database when it is missing; its version. Raises
    UnsupportedServer for a server or extension too old, NoPgvector when it cannot be had."""
    name = getattr(connection, "safe_name", "the database")
    info = server_info(connection)
    if info.version_num < MIN_SERVER_VERSION:
        raise UnsupportedServer(
            f"the database at {name} runs PostgreSQL {info.version}: memesh needs 15 or later"
        )
    installed = info.pgvector
    if installed is None:
        installed = _create(connection, name)
    if _version_tuple(installed) < MIN_PGVECTOR:
        raise UnsupportedServer(
            f"the database at {name} has pgvector {installed}: memesh needs 0.5 or later "
            "(ALTER EXTENSION vector UPDATE)"
        )
    return installed


def _create(connection: Any, name: str) -> str:
    from django.db import DatabaseError, transaction

    with connection.cursor() as cursor:
        cursor.execute(AVAILABLE_SQL)
        if cursor.fetchone() is None:
            raise NoPgvector(
                f"the database at {name} has no pgvector extension: install pgvector 0.5 or "
                "later on its server (https://github.com/pgvector/pgvector#installation)"
            )
        try:
            # Its own savepoint (inside a migration) or transaction: a refusal leaves the
            # connection usable for the error to be reported and the migration rolled back.
            with transaction.atomic(using=connection.alias):
                cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except DatabaseError as exc:
            raise NoPgvector(
                f"the database at {name} has no pgvector extension, and its role may not "
                f"create it ({str(exc).strip().splitlines()[0]}): ask an administrator to run "
                "CREATE EXTENSION vector in that database"
            ) from None
        cursor.execute(INSTALLED_SQL)
        return str(cursor.fetchone()[0])
