"""kg rename-project: list the `project:<id>` tags, and rename (or merge) one into another
across every entity, archived ones included — the mapping a person gives when project
identity changed under existing memories (`project:tim` and `project:TIM`, a subfolder's name,
a bare `notes` beside the newer `notes-<8 hex>`). memesh cannot infer it, so it never guesses.

A dry run unless `apply`. Applied, the whole database is first copied (SQLite's online backup,
graph/storage/backup.py) to MEMESH_HOME/backups/kg-before-rename-project-<UTC time>.db; if the
copy fails nothing is changed. Then, in one transaction, each entity's old tag becomes the new
one — or, where the entity already carries the new tag (tags are unique per entity), the old
one is removed: a merge — and each entity's keyword-index row is rewritten with its tags, as
every write does. The answer names the backup and the command that restores it.
"""

from __future__ import annotations

import contextlib
import re
import shlex
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

from django.db import transaction
from django.db.models import Count
from pydantic import AfterValidator, Field, ValidationInfo, field_validator

from core.errors import OperationFailed
from core.paths import ensure_private_dir, ensure_private_file, memesh_home
from graph.models import Tag
from graph.ops.kit.fields import Output, StrictInput, valid_text
from graph.ops.kit.writes import index_after_write
from graph.project_tags import MAX_PROJECT_CHARS, PROJECT_TAG_PREFIX, project_of, project_tag
from graph.storage.backup import backup_refusal, database_backup, database_file

BACKUP_DIR = "backups"
BACKUP_PREFIX = "kg-before-rename-project-"
# The part of a project id two spellings of one project share: lower-cased, without a
# non-git path-hash suffix, without the owner of an `owner/repo` slug.
_HASH_SUFFIX = re.compile(r"-[0-9a-f]{8}$")


def _project_name(value: str) -> str:
    project = project_of(valid_text(value))
    if not project:
        raise ValueError("must name a project")
    if len(project) > MAX_PROJECT_CHARS:
        raise ValueError(f"must be at most {MAX_PROJECT_CHARS} characters (got {len(project)})")
    return project


ProjectName = Annotated[str, AfterValidator(_project_name)]


class ProjectRenameInput(StrictInput):
    from_project: ProjectName = Field(description="The project id to rewrite (`project:` ok).")
    to_project: ProjectName = Field(description="The project id it becomes.")
    apply: bool = Field(default=False, description="Write (default: a dry run, no change).")

    @field_validator("to_project")
    @classmethod
    def _different(cls, value: str, info: ValidationInfo) -> str:
        if value == info.data.get("from_project"):
            raise ValueError("must differ from from_project")
        return value


class ProjectCount(Output):
    project: str
    count: int = Field(description="Entities carrying the tag (archived included).")


class ProjectListOutput(Output):
    projects: list[ProjectCount] = Field(description="Most entities first.")
    similar: list[list[str]] = Field(
        description="Groups of project ids that may be spellings of one project."
    )


class ProjectRenameOutput(Output):
    fromTag: str
    toTag: str
    affectedEntities: int
    renamed: int = Field(description="Entities whose old tag becomes the new one.")
    merged: int = Field(description="Entities that already carry the new tag: the old is removed.")
    affectedNames: list[str]
    dryRun: bool
    applied: bool
    backupPath: str | None
    databasePath: str | None
    restoreCommand: str | None = Field(
        description="Restores the backup (with every memesh process stopped)."
    )


def _spelling_key(project: str) -> str:
    return _HASH_SUFFIX.sub("", project.lower()).rsplit("/", 1)[-1]


def project_list() -> ProjectListOutput:
    rows = (
        Tag.objects.filter(name__startswith=PROJECT_TAG_PREFIX)
        .values("name")
        .annotate(count=Count("entity_id"))
        .order_by("-count", "name")
    )
    projects = [
        ProjectCount(project=r["name"][len(PROJECT_TAG_PREFIX) :], count=r["count"]) for r in rows
    ]
    groups: dict[str, list[str]] = defaultdict(list)
    for p in projects:
        groups[_spelling_key(p.project)].append(p.project)
    similar = sorted(sorted(g) for g in groups.values() if len(g) > 1)
    return ProjectListOutput(projects=projects, similar=similar)


def restore_command(backup: Path, database: Path) -> str:
    """The shell command that puts `backup` back as `database`. The -wal and -shm files go
    first: a WAL left beside the restored file would be replayed onto it."""
    db = str(database)
    wal, shm = shlex.quote(f"{db}-wal"), shlex.quote(f"{db}-shm")
    return f"rm -f {wal} {shm} && cp {shlex.quote(str(backup))} {shlex.quote(db)}"


def _backup() -> Path:
    if (refusal := backup_refusal()) is not None:
        # A merge cannot be undone by renaming back: no rename without a copy to restore.
        raise OperationFailed(
            f"{refusal}. A rename is applied only after a copy it can be restored from (a "
            "merge cannot be undone by renaming back), so nothing was changed"
        )
    folder = memesh_home() / BACKUP_DIR
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = folder / f"{BACKUP_PREFIX}{stamp}.db"
    try:
        ensure_private_dir(folder)
        ensure_private_file(target)  # 0600 before a byte of memory is written into it
        database_backup(target)
    except Exception as exc:
        with contextlib.suppress(OSError):  # no half-written copy to be mistaken for one
            target.unlink(missing_ok=True)
        raise OperationFailed(
            f"could not back up the database to {target} ({exc}); nothing was changed"
        ) from None
    return target


INDEX_BATCH = 500  # entities per keyword-index rewrite (bound parameters per statement)


def _plan(old: str, new: str) -> tuple[list[tuple[str, int]], set[int]]:
    """(name, id) of each entity carrying `old`, by name; the ids of those carrying `new` too."""
    rows = sorted(Tag.objects.filter(name=old).values_list("entity__name", "entity_id"))
    carrying_new = set(
        Tag.objects.filter(
            name=new, entity_id__in=Tag.objects.filter(name=old).values("entity_id")
        ).values_list("entity_id", flat=True)
    )
    return rows, carrying_new


def _rewrite(old: str, new: str, ids: list[int]) -> None:
    """Merge where the entity has both tags, rename elsewhere, and re-index every one."""
    Tag.objects.filter(
        name=old, entity_id__in=Tag.objects.filter(name=new).values("entity_id")
    ).delete()
    Tag.objects.filter(name=old).update(name=new)
    for start in range(0, len(ids), INDEX_BATCH):
        index_after_write(ids[start : start + INDEX_BATCH])


def project_rename(*, data: ProjectRenameInput) -> ProjectRenameOutput:
    old, new = project_tag(data.from_project), project_tag(data.to_project)
    backup: Path | None = None
    rows, carrying_new = _plan(old, new)
    if data.apply and rows:
        # Before the write transaction (a connection that is writing cannot be copied); if
        # it fails, nothing has changed.
        backup = _backup()
        with transaction.atomic():
            rows, carrying_new = _plan(old, new)  # as it stands under the write lock
            _rewrite(old, new, [entity_id for _, entity_id in rows])
    database = database_file()
    return ProjectRenameOutput(
        fromTag=old,
        toTag=new,
        affectedEntities=len(rows),
        renamed=len(rows) - len(carrying_new),
        merged=len(carrying_new),
        affectedNames=[name for name, _ in rows],
        dryRun=not data.apply,
        applied=backup is not None,
        backupPath=str(backup) if backup else None,
        databasePath=str(database) if database else None,
        restoreCommand=restore_command(backup, database) if backup and database else None,
    )
