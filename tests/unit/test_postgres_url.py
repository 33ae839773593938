"""MEMESH_DATABASE_URL read as libpq reads it, and shown without its password."""

from __future__ import annotations

import pytest

from core.db.postgres.base import reason
from core.db.postgres.errors import DatabaseUrlInvalid
from core.db.postgres.url import ERROR_KEY, SAFE_NAME_KEY, database_settings, parse


def test_a_url_becomes_djangos_entry_with_its_extra_parameters_as_options() -> None:
    entry = database_settings(
        "postgresql://team:pw@db.internal:6432/memory?sslmode=require&connect_timeout=3",
        conn_max_age=None,
    )

    assert entry["ENGINE"] == "core.db.postgres"
    assert (entry["NAME"], entry["USER"], entry["PASSWORD"]) == ("memory", "team", "pw")
    assert (entry["HOST"], entry["PORT"]) == ("db.internal", "6432")
    assert entry["OPTIONS"] == {"sslmode": "require", "connect_timeout": "3"}
    assert entry[SAFE_NAME_KEY] == "postgresql://team@db.internal:6432/memory"


def test_a_unix_socket_url_is_shown_with_its_host_parameter() -> None:
    entry = database_settings("postgres://me@/memory?host=/run/postgresql", conn_max_age=0)

    assert entry["HOST"] == "/run/postgresql"
    assert entry[SAFE_NAME_KEY] == "postgresql://me@/memory?host=/run/postgresql"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sqlite:///x.db", "must be a postgresql:// URL, not 'sqlite://'"),
        ("postgresql://u:pw@h:abc/db", "port 'abc' is not a number"),
        ("postgresql://u:pw@h/db?nosuch=1", 'invalid URI query parameter: "nosuch"'),
        ("postgresql://u:pw@h", "names no database"),
    ],
)
def test_a_url_that_cannot_be_read_says_why_without_the_password(url: str, message: str) -> None:
    with pytest.raises(DatabaseUrlInvalid) as raised:
        parse(url)

    assert message in raised.value.message
    assert "pw" not in raised.value.message.replace("postgresql", "")
    assert raised.value.error_code == "storage.bad-url"


def test_an_unreadable_url_is_kept_for_the_first_connection_to_report() -> None:
    entry = database_settings("postgresql://u:pw@h:abc/db", conn_max_age=None)

    assert "port 'abc'" in entry[ERROR_KEY]
    assert entry["PASSWORD"] == ""


def test_libpqs_reason_is_kept_without_its_prefixes() -> None:
    failure = Exception(
        'connection failed: connection to server at "10.0.0.5", port 5432 failed: FATAL:  '
        'password authentication failed for user "team"\nmore detail'
    )

    assert reason(failure) == 'password authentication failed for user "team"'
