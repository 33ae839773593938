"""A real PostgreSQL with pgvector for the tests that run memesh on a team server's database.

The pinned `pgserver` wheel (requirements-dev.txt) bundles PostgreSQL and pgvector, so a fresh
machine needs nothing else. Each pytest process (each xdist worker) starts its own server in a
temporary folder, once, and stops it at the end; pgserver waits for the server to accept
connections (it polls; it does not sleep a fixed time). Each test gets a database of its own
(`fresh_database`), so tests never see each other's tables.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

_numbers = itertools.count(1)


@dataclass(frozen=True)
class PostgresServer:
    """A running server: its data folder, and the URL of its maintenance database as the
    superuser (over its Unix socket)."""

    data: Path
    admin_url: str

    def url(self, database: str, *, user: str = "postgres", password: str = "") -> str:
        """The URL memesh is given for `database` on this server."""
        secret = f":{password}" if password else ":"
        return f"postgresql://{user}{secret}@/{database}?host={self.data}"

    def run(self, statement: sql.Composable | str) -> None:
        """Run one statement as the superuser, outside a transaction (CREATE DATABASE)."""
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(statement)  # type: ignore[arg-type]

    def fresh_database(self, *, owner: str = "postgres") -> str:
        """A new empty database's name."""
        name = f"memesh_test_{os.getpid()}_{next(_numbers)}"
        self.run(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(name), sql.Identifier(owner)
            )
        )
        return name

    def test_database_settings(self) -> dict[str, Any]:
        """DATABASES["default"] for a test run on this server: Django connects to the
        maintenance database and creates its test database beside it."""
        from core.db.postgres.url import database_settings

        entry = database_settings(self.url("postgres"), conn_max_age=0)
        entry["TEST"] = {"NAME": f"memesh_test_{os.getpid()}"}
        return entry


_process_server: PostgresServer | None = None


def process_server() -> PostgresServer:
    """This process's own server, started on first use and stopped at exit: what the test
    settings use when the whole run is on PostgreSQL (MEMESH_TEST_BACKEND=postgresql)."""
    global _process_server
    if _process_server is None:
        data = Path(tempfile.mkdtemp(prefix="memesh-test-postgres-")) / "data"
        with quiet():
            import pgserver

            server = pgserver.get_server(data, cleanup_mode="stop")

        def stop() -> None:
            with quiet():
                server.cleanup()
            shutil.rmtree(data.parent, ignore_errors=True)

        atexit.register(stop)
        _process_server = PostgresServer(data=data, admin_url=server.get_uri())
    return _process_server


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    data = tmp_path_factory.mktemp("postgres") / "data"
    with quiet():
        import pgserver

        server = pgserver.get_server(data, cleanup_mode="stop")
    try:
        yield PostgresServer(data=data, admin_url=server.get_uri())
    finally:
        with quiet():
            server.cleanup()


@contextmanager
def quiet() -> Iterator[None]:
    """platformdirs warns that XDG_RUNTIME_DIR is unset (as it is in CI) whenever pgserver
    asks where to keep its lock files: nothing a test should report."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
