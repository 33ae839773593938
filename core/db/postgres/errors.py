"""What can be wrong with a team server's database before any request is served: the URL, the
server (unreachable, refusing the credentials, no such database), or a database without
pgvector. Each is one sentence with a stable errorCode; none ever repeats the password."""

from __future__ import annotations

from core.errors import MemeshError


class DatabaseUrlInvalid(MemeshError):
    """MEMESH_DATABASE_URL cannot be read as a PostgreSQL connection URL."""

    error_code = "storage.bad-url"
    http_status = 503  # no request can be served until the setting is fixed


class DatabaseUnavailable(MemeshError):
    """The database server cannot be reached, or refuses the connection (a wrong password, a
    missing database, too many clients)."""

    error_code = "storage.unavailable"
    http_status = 503


class NoPgvector(MemeshError):
    """The database has no pgvector extension and it cannot be created there."""

    error_code = "storage.no-pgvector"
    http_status = 503


class UnsupportedServer(MemeshError):
    """A PostgreSQL or pgvector older than memesh needs."""

    error_code = "storage.unsupported-server"
    http_status = 503
