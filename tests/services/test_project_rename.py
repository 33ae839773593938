"""kg rename-project against the real database: the listing with its likely duplicates, a dry
run that changes nothing, and an applied rename that backs the database up first, merges where
an entity already carries the new tag, and leaves the keyword index consistent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from core.db.driver import Database
from core.errors import InvalidInput, OperationFailed
from graph.indexing import consistency
from graph.maintenance import project_rename as rename_module
from graph.maintenance.project_rename import (
    ProjectRenameInput,
    ProjectRenameOutput,
    project_list,
    project_rename,
    restore_command,
)
from graph.models import Tag
from graph.ops.kit.operation import validated
from tests.helpers import forget, recall, remember
from tests.postgres import PostgresServer
from tests.processes import memesh_env, run_python


def rename(old: str, new: str, **fields: Any) -> ProjectRenameOutput:
    payload = {"from_project": old, "to_project": new, **fields}
    return project_rename(data=validated(ProjectRenameInput, payload))


def tags_of(name: str) -> list[str]:
    return sorted(Tag.objects.filter(entity__name=name).values_list("name", flat=True))


def split_project() -> None:
    remember("a", "one", project="tim")
    remember("b", "two", project="tim")
    remember("c", "three", tags=["project:tim"], project="TIM")  # both spellings: a merge
    remember("d", "four", project="TIM")
    remember("e", "five", project="notes")
    remember("f", "six", project="notes-1a2b3c4d")
    forget("b")  # archived memories move too


@pytest.mark.django_db
def test_the_listing_counts_each_project_and_groups_likely_spellings() -> None:
    split_project()

    listing = project_list()

    assert [(p.project, p.count) for p in listing.projects] == [
        ("tim", 3), ("TIM", 2), ("notes", 1), ("notes-1a2b3c4d", 1),
    ]  # fmt: skip
    assert listing.similar == [["TIM", "tim"], ["notes", "notes-1a2b3c4d"]]


@pytest.mark.django_db
def test_a_dry_run_previews_renames_and_merges_and_changes_nothing() -> None:
    split_project()

    preview = rename("tim", "TIM")

    assert preview.dryRun is True and preview.applied is False and preview.backupPath is None
    assert (preview.affectedEntities, preview.renamed, preview.merged) == (3, 2, 1)
    assert preview.affectedNames == ["a", "b", "c"]
    assert tags_of("c") == ["project:TIM", "project:tim"]


@pytest.mark.sqlite_only  # the online backup (PostgreSQL refuses: a process test below)
@pytest.mark.django_db(transaction=True)
def test_apply_backs_up_first_then_renames_and_merges_with_the_index_in_step(
    settings: Any,
) -> None:
    split_project()

    result = rename("project:tim", "TIM", apply=True)

    assert result.applied is True and (result.renamed, result.merged) == (2, 1)
    assert tags_of("a") == ["project:TIM"] and tags_of("b") == ["project:TIM"]
    assert tags_of("c") == ["project:TIM"]  # merged, not duplicated
    assert not Tag.objects.filter(name="project:tim").exists()
    assert consistency.check().ok
    assert {e["name"] for e in recall(tag="project:TIM")["entities"]} == {"a", "c", "d"}

    backup = Path(result.backupPath or "")
    assert backup.parent == Path(settings.MEMESH_HOME) / "backups"
    assert backup.name.startswith("kg-before-rename-project-") and backup.suffix == ".db"
    assert backup.stat().st_mode & 0o777 == 0o600
    copy = Database.connect(str(backup))
    try:
        kept = copy.execute("SELECT count(*) FROM graph_tag WHERE name = 'project:tim'")
        assert kept.fetchone()[0] == 3  # the state before the rename
    finally:
        copy.close()


@pytest.mark.sqlite_only  # the online backup (PostgreSQL refuses: a process test below)
@pytest.mark.django_db
def test_a_failed_backup_changes_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    split_project()
    (tmp_path / "backups").write_text("a file where the backup folder should be")
    monkeypatch.setattr(rename_module, "memesh_home", lambda: tmp_path)

    with pytest.raises(OperationFailed, match="could not back up"):
        rename("tim", "TIM", apply=True)

    assert Tag.objects.filter(name="project:tim").count() == 3


@pytest.mark.django_db
def test_nothing_to_rename_takes_no_backup(settings: Any) -> None:
    result = rename("ghost", "TIM", apply=True)

    assert result.affectedEntities == 0 and result.applied is False
    assert result.backupPath is None


@pytest.mark.django_db
def test_bad_names_are_refused() -> None:
    for old, new in (("tim", "tim"), ("tim", "project:tim"), ("", "x"), ("x", "  ")):
        with pytest.raises(InvalidInput):
            rename(old, new)


def test_the_restore_command_removes_the_wal_before_copying() -> None:
    command = restore_command(Path("/b/k 1.db"), Path("/h/knowledge-graph.db"))

    assert command == (
        "rm -f /h/knowledge-graph.db-wal /h/knowledge-graph.db-shm && "
        "cp '/b/k 1.db' /h/knowledge-graph.db"
    )


def test_on_a_team_servers_postgres_an_applied_rename_is_refused_naming_pg_dump(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    """memesh copies only a SQLite file; a PostgreSQL database is backed up with pg_dump, so
    there a rename, which may merge, is refused before anything changes (real processes)."""
    url = postgres_server.url(postgres_server.fresh_database())
    env = memesh_env(tmp_path, MEMESH_DATABASE_URL=url)
    for name, project in (("a", "tim"), ("c", "TIM")):
        cli = [
            "-m",
            "memesh_site.cli",
            "remember",
            "--name",
            name,
            "--type",
            "note",
            "--obs",
            "one",
        ]
        stored = run_python([*cli, "--project", project], env)
        assert stored.returncode == 0, stored.stderr

    refused = run_python(
        [
            "-m",
            "memesh_site.cli",
            "kg",
            "rename-project",
            "--from",
            "tim",
            "--to",
            "TIM",
            "--apply",
        ],
        env,
    )

    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "pg_dump" in refused.stderr and "nothing was changed" in refused.stderr
    assert not (tmp_path / rename_module.BACKUP_DIR).exists()
    with psycopg.connect(url) as conn:
        tags = conn.execute('SELECT name FROM graph_tag ORDER BY name COLLATE "C"').fetchall()
    assert tags == [("project:TIM",), ("project:tim",)]
