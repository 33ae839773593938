"""The check every hook and command runs before it uses the database (core/db/schema.py):
the migration files' names against `django_migrations`, and Django's loader only when one of
them is not recorded as applied."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection

from core.db import schema
from tests.processes import memesh_env, run_python

pytestmark = pytest.mark.django_db


def test_a_migrated_database_has_every_migration_file_applied() -> None:
    assert schema._every_file_applied() is True
    assert schema.pending_migrations() is False


def test_a_migration_file_not_recorded_as_applied_is_pending() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM django_migrations WHERE app = 'graph' AND name = "
            "(SELECT MAX(name) FROM django_migrations WHERE app = 'graph')"
        )

    assert schema._every_file_applied() is False
    assert schema.pending_migrations() is True


def test_a_database_without_the_migrations_table_is_pending() -> None:
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE django_migrations")

    assert schema._every_file_applied() is False
    assert schema.pending_migrations() is True


def test_checking_a_migrated_home_imports_no_migration_module(tmp_path: Path) -> None:
    env = memesh_env(tmp_path / "home", MEMESH_EMBEDDER="none", MEMESH_WORKER="false")
    code = (
        "import sys, django; django.setup()\n"
        "from core.db.schema import migrate_if_needed\n"
        "first = migrate_if_needed()\n"
        "for name in [m for m in sys.modules if '.migrations.0' in m]:\n"
        "    del sys.modules[name]\n"
        "schema = sys.modules['core.db.schema']\n"
        "schema._current.clear()\n"
        "again = migrate_if_needed()\n"
        "print(first, again, sorted(m for m in sys.modules if '.migrations.0' in m))\n"
    )

    done = run_python(["-c", code], env)

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False", "[]"]
