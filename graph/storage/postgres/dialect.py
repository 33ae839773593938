"""SQL fragments that say in PostgreSQL's dialect what the shared statements say in SQLite's:
kept here once so every twin statement renders a time or a JSON number the same way."""

from __future__ import annotations


def iso_utc(column: str) -> str:
    """The timestamptz `column` as the ISO 8601 text SQLite's statements give: UTC, a `T`, a
    fraction only when the time has one (Django's SQLite backend stores `str(datetime)`,
    which leaves out a zero fraction) and a `Z`; NULL stays NULL."""
    utc = f"({column} AT TIME ZONE 'UTC')"
    return (
        f"""(to_char({utc}, 'YYYY-MM-DD"T"HH24:MI:SS')"""
        f" || CASE WHEN date_trunc('second', {utc}) = {utc} THEN ''"
        f" ELSE to_char({utc}, '.US') END || 'Z')"
    )


def json_float(column: str) -> str:
    """The double precision `column` as JSON number text that reads back to the stored double
    (PostgreSQL prints the shortest such digits), with `.0` kept on a whole number as SQLite's
    statements give it (`1.0`, not `1`)."""
    return (
        f"CAST({column} AS TEXT) || CASE WHEN {column} = trunc({column}) "
        f"AND CAST({column} AS TEXT) ~ '^-?[0-9]+$' THEN '.0' ELSE '' END"
    )
