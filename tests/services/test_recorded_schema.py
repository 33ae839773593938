"""A new home's schema from the recording of what the migrations build
(core/db/recorded_schema.py): the recording is that of today's migrations, a home made from it
is the home the migrations make, and any other database is still migrated by Django."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from core.db import recorded_schema
from tests.processes import memesh_env, run_python

HEADER_PRAGMAS = ("application_id", "user_version")
SETUP = "import sys, django; django.setup()\nfrom django.db import connection\n"


def _run(home: Path, code: str) -> str:
    env = memesh_env(home, MEMESH_EMBEDDER="none", MEMESH_WORKER="false")
    done = run_python(["-c", SETUP + code], env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _database(home: Path) -> Path:
    (path,) = [p for p in home.glob("*.db")]
    return path


def _dump(path: Path) -> dict[str, Any]:
    """Every schema object and every row of every stored table (virtual tables' storage
    included), but the times migrations were applied."""
    db = sqlite3.connect(path)
    try:
        objects = db.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        ).fetchall()
        stored = [
            name
            for (name,) in db.execute("SELECT name FROM pragma_table_list WHERE type != 'virtual'")
            if not name.startswith("sqlite_") or name == "sqlite_sequence"
        ]
        rows = {
            name: sorted(db.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
            for name in stored
            if name != "django_migrations"
        }
        migrations = sorted(db.execute("SELECT app, name FROM django_migrations").fetchall())
        header = [db.execute(f"PRAGMA {p}").fetchone()[0] for p in HEADER_PRAGMAS]
    finally:
        db.close()
    return {"objects": objects, "rows": rows, "migrations": migrations, "header": header}


def test_the_recording_is_what_todays_migrations_build(tmp_path: Path) -> None:
    out = _run(
        tmp_path / "home",
        "from django.core.management import call_command\n"
        "from core.db import recorded_schema\n"
        "call_command('migrate', interactive=False, verbosity=0)\n"
        "with connection.cursor() as cursor:\n"
        "    print(__import__('json').dumps(recorded_schema.record(cursor)))\n",
    )

    assert json.loads(out) == recorded_schema.load(), (
        "the migrations changed: record the schema again with "
        "`.venv/bin/python -m core.db.recorded_schema`"
    )


def test_a_new_home_from_the_recording_is_the_migrated_home(tmp_path: Path) -> None:
    out = _run(
        tmp_path / "recorded",
        "from core.db.schema import migrate_if_needed, pending_migrations\n"
        "first = migrate_if_needed()\n"
        "print(first, pending_migrations(),"
        " sorted(m for m in sys.modules if '.migrations.0' in m))\n",
    )
    _run(
        tmp_path / "migrated",
        "from django.core.management import call_command\n"
        "call_command('migrate', interactive=False, verbosity=0)\n",
    )

    # Created here, up to date, without importing a single migration module.
    assert out.split() == ["True", "False", "[]"]
    recorded, migrated = (
        _dump(_database(tmp_path / "recorded")),
        _dump(_database(tmp_path / "migrated")),
    )
    assert recorded["objects"] == migrated["objects"]
    assert recorded["rows"] == migrated["rows"]
    assert recorded["migrations"] == migrated["migrations"]
    assert recorded["header"] == migrated["header"]


def test_a_home_made_from_the_recording_takes_writes_and_finds_them(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = memesh_env(home, MEMESH_EMBEDDER="none", MEMESH_WORKER="false", MEMESH_CLI_LOCAL="1")
    remembered = run_python(
        [
            "-m",
            "memesh_site.cli",
            "remember",
            "--name",
            "cache-choice",
            "--type",
            "decision",
            "--obs",
            "Chose write-through caching for the session store",
            "--json",
        ],
        env,
    )
    assert remembered.returncode == 0, remembered.stderr
    found = run_python(["-m", "memesh_site.cli", "recall", "write-through", "--json"], env)

    assert found.returncode == 0, found.stderr
    assert "cache-choice" in found.stdout


def test_a_recording_behind_the_migration_files_is_not_used(tmp_path: Path) -> None:
    # As if a migration had been added since the recording: Django migrates the new home.
    out = _run(
        tmp_path / "home",
        "from core.db import recorded_schema, schema\n"
        "recording = dict(recorded_schema.load())\n"
        "recording['migrations'] = recording['migrations'][:-1]\n"
        "recorded_schema.load.cache_clear()\n"
        "recorded_schema.load = lambda: recording\n"
        "print(schema.migrate_if_needed(), schema.pending_migrations(),"
        " any('.migrations.0' in m for m in sys.modules))\n",
    )

    assert out.split() == ["True", "False", "True"]  # migrated by Django's loader


def test_a_database_with_an_older_schema_is_migrated_forward_by_django(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _run(
        home,
        "from django.core.management import call_command\n"
        "call_command('migrate', 'graph', '0001', interactive=False, verbosity=0)\n",
    )
    out = _run(
        home,
        "from core.db.schema import migrate_if_needed, pending_migrations\n"
        "print(migrate_if_needed(), pending_migrations())\n",
    )
    _run(
        tmp_path / "migrated",
        "from django.core.management import call_command\n"
        "call_command('migrate', interactive=False, verbosity=0)\n",
    )

    assert out.split() == ["True", "False"]
    assert _dump(_database(home))["objects"] == _dump(_database(tmp_path / "migrated"))["objects"]
