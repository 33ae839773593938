"""MEMESH_DATABASE_URL as Django's DATABASES entry.

The URL is parsed by libpq's own parser (psycopg's `conninfo_to_dict`, `PQconninfoParse`), so
every form a PostgreSQL client accepts works here too: `postgresql://user:pass@host:5432/db`,
a Unix socket as `?host=/path/to/dir`, `?sslmode=require`, and so on
(https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING-URIS).

A URL that cannot be parsed is not refused here: settings are read before any command can
report an error, so the entry carries the error and the backend raises it when it first
connects, where every transport reports it as one sentence (`storage.bad-url`).
"""

from __future__ import annotations

from typing import Any

from core.db.postgres.errors import DatabaseUrlInvalid

SCHEMES = ("postgresql://", "postgres://")
ENGINE = "core.db.postgres"
# Kept in the entry so that the backend can name the database without the password.
SAFE_NAME_KEY = "MEMESH_SAFE_URL"
ERROR_KEY = "MEMESH_URL_ERROR"


def parse(url: str) -> dict[str, str]:
    """libpq's parameters of `url` (user, password, host, port, dbname, sslmode, …)."""
    if not url.startswith(SCHEMES):
        raise DatabaseUrlInvalid(
            f"MEMESH_DATABASE_URL must be a postgresql:// URL, not {_scheme(url)!r}"
        )
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        params = {key: str(value) for key, value in conninfo_to_dict(url).items()}
    except ProgrammingError as exc:
        raise DatabaseUrlInvalid(f"MEMESH_DATABASE_URL is not a valid URL: {exc}") from None
    port = params.get("port", "")
    if port and not all(part.isdigit() for part in port.split(",")):
        raise DatabaseUrlInvalid(f"MEMESH_DATABASE_URL's port {port!r} is not a number")
    if not params.get("dbname"):
        raise DatabaseUrlInvalid("MEMESH_DATABASE_URL names no database (…/DBNAME)")
    return params


def safe_url(params: dict[str, str]) -> str:
    """The URL as error messages and `memesh status` show it: never the password."""
    user = params.get("user", "")
    host = params.get("host", "")
    port = params.get("port", "")
    netloc = f"{user}@" if user else ""
    if host.startswith("/"):
        # A Unix socket directory cannot sit in the authority part of a URL.
        return f"postgresql://{netloc}/{params.get('dbname', '')}?host={host}"
    netloc += host + (f":{port}" if port else "")
    return f"postgresql://{netloc}/{params.get('dbname', '')}"


def _scheme(url: str) -> str:
    return url.split("://", 1)[0] + "://" if "://" in url else url[:16]


def database_settings(url: str, *, conn_max_age: int | None) -> dict[str, Any]:
    """The DATABASES["default"] entry for `url`."""
    entry: dict[str, Any] = {
        "ENGINE": ENGINE,
        "NAME": "",
        "USER": "",
        "PASSWORD": "",
        "HOST": "",
        "PORT": "",
        # Persistent connections, checked before reuse: a server that restarted or a
        # connection a proxy dropped is replaced instead of failing the next request.
        "CONN_MAX_AGE": conn_max_age,
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": {},
        "TEST": {"NAME": None},
    }
    try:
        params = parse(url)
    except DatabaseUrlInvalid as exc:
        entry[ERROR_KEY] = exc.message
        entry[SAFE_NAME_KEY] = "MEMESH_DATABASE_URL"
        return entry
    entry.update(
        NAME=params.pop("dbname"),
        USER=params.pop("user", ""),
        PASSWORD=params.pop("password", ""),
        HOST=params.pop("host", ""),
        PORT=params.pop("port", ""),
    )
    entry[SAFE_NAME_KEY] = safe_url(
        {
            "user": entry["USER"],
            "host": entry["HOST"],
            "port": entry["PORT"],
            "dbname": entry["NAME"],
        }
    )
    entry["OPTIONS"] = params  # sslmode, connect_timeout, application_name, …
    return entry
