"""A new SQLite home's schema, created from a recording of what the migrations build.

Running the migrations on an empty database costs ~0.35 s of CPU on this machine (Django
renders the model states of every migration, and each `RunPython` renders them again), and a
new home meets it in its first process: the SessionStart hook an agent host fires as it starts,
or the first `memesh` command. The recording (`sqlite_schema.json` beside this module) holds
the end state of those migrations on an empty database, the schema objects and the rows they
leave (content types, permissions), and the migrations it stands for. A database with no
tables at all gets it in one transaction, a few ms, when the migration files on disk are
exactly the ones recorded; any other database, or a recording older than the files, is
migrated by Django as before (core/db/schema.py).

The recording is made by this module from a database Django migrated, and kept true by a test
that records again and compares (tests/services/test_recorded_schema.py), and by one that
compares a home made from it with a migrated one, object by object and row by row:

    .venv/bin/python -m core.db.recorded_schema          # write the recording again

PostgreSQL is always migrated by Django: a team server is set up once, not per session.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

RECORDING = Path(__file__).with_name("sqlite_schema.json")
MIGRATIONS_TABLE = "django_migrations"
# The order objects are created in: tables before what refers to them.
KIND_ORDER = {"table": 0, "index": 1, "view": 2, "trigger": 3}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _shadow_tables(cursor: Any) -> set[str]:
    """Tables SQLite made for a virtual table (FTS5's data, index, ...): created again with it."""
    cursor.execute("PRAGMA table_list")
    return {row[1] for row in cursor.fetchall() if row[0] == "main" and row[2] == "shadow"}


def _virtual_tables(cursor: Any) -> set[str]:
    cursor.execute("PRAGMA table_list")
    return {row[1] for row in cursor.fetchall() if row[0] == "main" and row[2] == "virtual"}


def record(cursor: Any) -> dict[str, Any]:
    """The recording of the database `cursor` reads (one Django migrated from empty)."""
    shadow = _shadow_tables(cursor)
    virtual = _virtual_tables(cursor)
    cursor.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
        "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid"
    )
    objects = [(kind, name, sql) for kind, name, sql in cursor.fetchall() if name not in shadow]
    objects.sort(key=lambda entry: KIND_ORDER[entry[0]])  # stable: rowid order within a kind
    rows: list[dict[str, Any]] = []
    for kind, name, _sql in objects:
        if kind != "table" or name in virtual or name == MIGRATIONS_TABLE:
            continue
        cursor.execute(f"SELECT * FROM {_quote(name)} ORDER BY rowid")
        values = [list(row) for row in cursor.fetchall()]
        if values:
            columns = [column[0] for column in cursor.description]
            rows.append({"table": name, "columns": columns, "values": values})
    cursor.execute(f"SELECT app, name FROM {MIGRATIONS_TABLE} ORDER BY id")
    migrations = [[app, name] for app, name in cursor.fetchall()]
    # AUTOINCREMENT's counters, including those of tables Django rebuilt while altering them.
    cursor.execute("SELECT name, seq FROM sqlite_sequence ORDER BY rowid")
    return {
        "migrations": migrations,
        "sql": [sql for _kind, _name, sql in objects],
        "rows": rows,
        "sequences": [[name, seq] for name, seq in cursor.fetchall()],
    }


@cache
def load() -> dict[str, Any] | None:
    try:
        recording: dict[str, Any] = json.loads(RECORDING.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # no recording (or a broken one): Django migrates
    return recording


def recorded_migrations() -> set[tuple[str, str]]:
    recording = load()
    return {(app, name) for app, name in recording["migrations"]} if recording else set()


def is_empty(cursor: Any) -> bool:
    cursor.execute("SELECT count(*) FROM sqlite_master")
    return bool(cursor.fetchone()[0] == 0)


def apply(cursor: Any) -> None:
    """Create the recorded schema and rows, and record its migrations as applied. The caller
    holds the transaction (and knows the database is empty)."""
    recording = load()
    if recording is None:
        raise LookupError(f"no schema recording at {RECORDING}")
    for statement in recording["sql"]:
        cursor.execute(statement)
    for table in recording["rows"]:
        columns = ", ".join(_quote(column) for column in table["columns"])
        marks = ", ".join("?" for _column in table["columns"])
        cursor.executemany(
            f"INSERT INTO {_quote(table['table'])} ({columns}) VALUES ({marks})",
            [tuple(values) for values in table["values"]],
        )
    cursor.executemany(
        f"INSERT INTO {MIGRATIONS_TABLE} (app, name, applied) "
        "VALUES (?, ?, strftime('%Y-%m-%d %H:%M:%f', 'now'))",
        [tuple(migration) for migration in recording["migrations"]],
    )
    cursor.execute("DELETE FROM sqlite_sequence")
    cursor.executemany(
        "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)",
        [tuple(sequence) for sequence in recording["sequences"]],
    )


def write_recording() -> Path:
    """Migrate a new database with Django and write its recording (run in a process of its
    own: it points MEMESH_HOME at a temporary directory before Django starts)."""
    with tempfile.TemporaryDirectory() as home:
        os.environ["MEMESH_HOME"] = home
        os.environ.pop("MEMESH_DB_PATH", None)
        os.environ.pop("MEMESH_DATABASE_URL", None)
        os.environ["DJANGO_SETTINGS_MODULE"] = "memesh_site.settings"
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        call_command("migrate", interactive=False, verbosity=0)
        with connection.cursor() as cursor:
            recording = record(cursor)
        connection.close()
    RECORDING.write_text(json.dumps(recording, indent=1) + "\n", encoding="utf-8")
    return RECORDING


if __name__ == "__main__":
    sys.stdout.write(f"wrote {write_recording()}\n")
