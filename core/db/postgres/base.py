"""Django's own PostgreSQL backend (psycopg 3), with a connection failure told in one sentence.

Why a subclass: Django raises libpq's message wrapped in its OperationalError, which every
transport would report as an unexpected 500 with a traceback. Here a URL that could not be
parsed (core/db/postgres/url.py), a server that cannot be reached, a wrong password or a
missing database become `DatabaseUnavailable` / `DatabaseUrlInvalid` (core/db/postgres/
errors.py), which the CLI prints as one line and the HTTP transports answer with 503. The
password is never part of a message: the database is named by the URL without it.
"""

from __future__ import annotations

from typing import Any

import psycopg
from django.db.backends.postgresql import base as postgresql_base

from core.db.postgres.errors import DatabaseUnavailable, DatabaseUrlInvalid
from core.db.postgres.url import ERROR_KEY, SAFE_NAME_KEY

# libpq waits for an unreachable host as long as the network lets it (minutes); a server
# process must say what is wrong sooner. A URL's own connect_timeout wins.
DEFAULT_CONNECT_TIMEOUT_SECONDS = 10


def reason(exc: BaseException) -> str:
    """libpq's reason for a failed connection, without its prefixes and hints: 'connection
    failed: connection to server at "h", port 5432 failed: FATAL:  password authentication
    failed for user "u"' → 'password authentication failed for user "u"'."""
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = first_line.rsplit(" failed: ", 1)[-1]
    for prefix in ("FATAL:", "ERROR:"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    return text.strip()


class DatabaseWrapper(postgresql_base.DatabaseWrapper):
    @property
    def safe_name(self) -> str:
        """The database's URL without the password, for messages and reports."""
        return str(self.settings_dict.get(SAFE_NAME_KEY) or self.settings_dict.get("NAME"))

    def get_connection_params(self) -> dict[str, Any]:
        if error := self.settings_dict.get(ERROR_KEY):
            raise DatabaseUrlInvalid(str(error))
        params = super().get_connection_params()
        params.setdefault("connect_timeout", DEFAULT_CONNECT_TIMEOUT_SECONDS)
        return params

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        try:
            return super().get_new_connection(conn_params)
        except psycopg.OperationalError as exc:
            raise DatabaseUnavailable(
                f"cannot connect to the database at {self.safe_name}: {reason(exc)}"
            ) from None
