"""What the graph holds and what its indexes are waiting for, read cheaply: `memesh status`'s
graph half, and the vector-index state `memesh doctor` checks (graph/doctor.py), so both tell
the same story. Also what `serve`, `status`, `doctor` and the first CLI call say of an original
MeMesh database found in the home (`original_memesh_state`).

Nothing here calls the embedder or loads a model: the configured embedder is built (that only
reads the configuration) for its identity, never asked to embed.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.db.models import Count

from core import original_memesh, paths
from core.redact import redact
from graph.embedding import provider
from graph.indexing import generations
from graph.indexing.embedding_pass import LAST_ERROR_KEY
from graph.indexing.generations import STAGING_KEY, Generation, UnreadableMarker
from graph.models import Entity, EntityVector, MetaEntry, Status, Tag
from graph.project_tags import PROJECT_TAG_PREFIX, project_of


@dataclass(frozen=True)
class DatabaseInfo:
    path: str  # the SQLite file, or a team server's URL without its password
    bytes: int  # the file and its -wal file (SQLite), or pg_database_size: what it takes now
    backend: str = "sqlite"  # connection.vendor: "sqlite" or "postgresql"
    version: str = ""  # SQLite's library version, or the PostgreSQL server's
    pgvector: str | None = None  # pgvector's version in a PostgreSQL database

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def database_info() -> DatabaseInfo:
    if connection.vendor == "postgresql":
        return _server_database_info()
    name = str(settings.DATABASES["default"]["NAME"])
    # The driver's library version, read without opening the file (a report must not
    # create its -wal/-shm files in a home no memesh holds open).
    sqlite_version = str(connection.Database.sqlite_version)  # type: ignore[attr-defined]
    size = 0
    for path in (Path(name), Path(f"{name}-wal")):
        with contextlib.suppress(OSError):  # no -wal file between checkpoints
            size += path.stat().st_size
    return DatabaseInfo(path=name, bytes=size, version=sqlite_version)


def _server_database_info() -> DatabaseInfo:
    from core.db.postgres.extensions import server_info

    info = server_info(connection)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        size = int(cursor.fetchone()[0])
    return DatabaseInfo(
        path=str(getattr(connection, "safe_name", "")),
        bytes=size,
        backend="postgresql",
        version=info.version,
        pgvector=info.pgvector,
    )


# --- memories by project and type -------------------------------------------------------------


@dataclass(frozen=True)
class ProjectCount:
    project: str | None  # None: memories with no `project:*` tag
    count: int
    types: dict[str, int]  # most frequent first

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class MemoryCounts:
    active: int
    archived: int
    types: dict[str, int]  # active memories per type, most frequent first
    # Projects by count (most first), then memories with no project. A memory filed under two
    # projects counts in each, so the counts can add up to more than `active`.
    projects: list[ProjectCount]

    def as_json(self) -> dict[str, Any]:
        return {
            "active": self.active,
            "archived": self.archived,
            "types": self.types,
            "projects": [p.as_json() for p in self.projects],
        }


def _by_count(counts: dict[str, int]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def memory_counts() -> MemoryCounts:
    """Active and archived totals; active memories per type, and per project and type."""
    by_status = dict(
        Entity.objects.values_list("status").annotate(n=Count("id")).values_list("status", "n")
    )
    types = dict(
        Entity.objects.filter(status=Status.ACTIVE)
        .values_list("type")
        .annotate(n=Count("id"))
        .values_list("type", "n")
    )
    per_project: dict[str, dict[str, int]] = defaultdict(dict)
    tagged = (
        Tag.objects.filter(name__startswith=PROJECT_TAG_PREFIX, entity__status=Status.ACTIVE)
        .values_list("name", "entity__type")
        .annotate(n=Count("id"))
        .values_list("name", "entity__type", "n")
    )
    for tag, type_, n in tagged:
        per_project[project_of(tag)][type_] = per_project[project_of(tag)].get(type_, 0) + n
    projects = [
        ProjectCount(project=name, count=sum(counts.values()), types=_by_count(counts))
        for name, counts in per_project.items()
    ]
    projects.sort(key=lambda p: (-p.count, p.project or ""))
    loose = dict(
        Entity.objects.filter(status=Status.ACTIVE)
        .exclude(tags__name__startswith=PROJECT_TAG_PREFIX)
        .values_list("type")
        .annotate(n=Count("id"))
        .values_list("type", "n")
    )
    if loose:
        projects.append(
            ProjectCount(project=None, count=sum(loose.values()), types=_by_count(loose))
        )
    return MemoryCounts(
        active=by_status.get(Status.ACTIVE, 0),
        archived=by_status.get(Status.ARCHIVED, 0),
        types=_by_count(types),
        projects=projects,
    )


# --- the vector index ---------------------------------------------------------------------------


@dataclass(frozen=True)
class VectorIndexState:
    available: bool  # sqlite-vec is loaded; without it nothing below was read
    embedder: str | None  # the configured embedder's identity; None: keyword-only
    embedder_error: str | None  # the embedder configuration cannot be read
    live: Generation | None
    vectors: int  # rows of the live generation
    # Active memories without a current live vector: waiting for the worker or `memesh embed`
    # (all of them while no generation exists and an embedder is configured).
    pending: int
    staging: Generation | None  # a half-built generation `memesh reindex` resumes
    staging_unreadable: bool
    staging_vectors: int
    staging_bytes: int
    last_error: dict[str, Any] | None  # the last embedding failure, redacted

    @property
    def reindex_needed(self) -> bool:
        """The live index was built by another embedder than the configured one: it is not
        searched, and nothing is embedded into it, until `memesh reindex` completes."""
        return self.live is not None and self.embedder not in (None, self.live.identity)

    @property
    def waiting_to_embed(self) -> int:
        """Memories the worker (or `memesh embed`) will embed: none without sqlite-vec or an
        embedder, and none into another embedder's index (the reindex rebuilds it instead)."""
        if not self.available or self.embedder is None or self.reindex_needed:
            return 0
        return self.pending

    def as_json(self) -> dict[str, Any]:
        return {
            "available": self.available,
            "embedder": self.embedder,
            "embedderError": self.embedder_error,
            "live": self.live.as_json() if self.live else None,
            "vectors": self.vectors,
            "pending": self.pending,
            "reindexNeeded": self.reindex_needed,
            "staging": (
                {**self.staging.as_json(), "vectors": self.staging_vectors}
                if self.staging
                else None
            ),
            "stagingUnreadable": self.staging_unreadable,
            "lastError": self.last_error,
        }


def configured_embedder() -> tuple[str | None, str | None]:
    """(identity of the configured embedder or None for keyword-only, the configuration error
    when it cannot be read)."""
    try:
        embedder = provider.current()
    except ImproperlyConfigured as exc:
        return None, redact(str(exc))
    return (embedder.identity if embedder else None), None


def vector_index_state() -> VectorIndexState:
    connection.ensure_connection()
    embedder, embedder_error = configured_embedder()
    available = generations.vectors_supported()
    if not available:
        return VectorIndexState(
            available, embedder, embedder_error, None, 0, 0, None, False, 0, 0, None
        )
    live = generations.live_generation()
    if live is not None:
        count = EntityVector.objects.row_count(live.generation)
        pending = EntityVector.objects.pending_count(live.generation)
    else:
        count = 0
        pending = Entity.objects.filter(status=Status.ACTIVE).count() if embedder else 0
    staging: Generation | None = None
    unreadable = False
    staging_rows = staging_size = 0
    try:
        staging = generations.read_marker(STAGING_KEY)
    except UnreadableMarker:
        unreadable = True
    if staging is not None:
        staging_rows = EntityVector.objects.row_count(staging.generation)
        staging_size = EntityVector.objects.stored_bytes(staging.generation)
    last = MetaEntry.objects.filter(key=LAST_ERROR_KEY).values_list("value", flat=True).first()
    return VectorIndexState(
        available=available,
        embedder=embedder,
        embedder_error=embedder_error,
        live=live,
        vectors=count,
        pending=pending,
        staging=staging,
        staging_unreadable=unreadable,
        staging_vectors=staging_rows,
        staging_bytes=staging_size,
        last_error=redact(last) if last else None,
    )


# --- the original MeMesh in the same home -----------------------------------------------------

# Names per query: below SQLite's bound-variable limit on every build.
NAMES_PER_QUERY = 500


@dataclass(frozen=True)
class OriginalMemeshState:
    """The original MeMesh's database in this home, and how many of its memories (not
    archived) memesh does not hold yet, by name: an import keeps names, so none once imported."""

    found: original_memesh.OriginalMemory
    not_imported: int

    def sentence(self) -> str:
        """What serve, status, doctor and the first CLI call say (one sentence)."""
        where, total = self.found.path, self.found.memories
        held = f"{total} {'memory' if total == 1 else 'memories'} in {where}"
        if self.found.in_memesh_database:
            return self._sentence_inside()
        if not self.not_imported:
            return f"The original MeMesh keeps {held}, all of them in memesh too (imported)"
        if self.not_imported < total:
            held += f", {self.not_imported} of them not in memesh yet"
        return (
            f"The original MeMesh keeps {held} (memesh leaves that file alone and keeps its "
            f"own beside it); bring them in with: {self.found.command}"
        )

    def _sentence_inside(self) -> str:
        """The original installed after memesh made this home: its tables in memesh's file."""
        total = self.found.memories
        held = (
            f"{total} {'memory' if total == 1 else 'memories'} in tables of its own inside "
            f"memesh's database {self.found.path}"
        )
        if not self.not_imported:
            return f"The original MeMesh keeps {held}, all of them in memesh too (imported)"
        if self.not_imported < total:
            held += f", {self.not_imported} of them not in memesh yet"
        return (
            f"The original MeMesh, installed after memesh made this home, keeps {held} "
            f"(memesh does not read them, and the original reads memesh's config.json as its "
            f"own); bring them in with: {self.found.command}"
        )

    def as_json(self) -> dict[str, Any]:
        return {**self.found.as_json(), "notImported": self.not_imported}


def original_memesh_state() -> OriginalMemeshState | None:
    """The original MeMesh's database at the default path of memesh's home, read-only; None
    when there is none (or it cannot be read now)."""
    path = paths.memesh_home() / paths.DB_FILENAME
    if str(path) == str(settings.DATABASES["default"]["NAME"]):
        # memesh's own database is at that path; the original, installed later, may have
        # added its tables to it (docs/coming-from-memesh.md).
        found = original_memesh.inside(path)
    else:
        found = original_memesh.find(path)
    if found is None:
        return None
    names = original_memesh.memory_names(path)
    held = 0
    for start in range(0, len(names), NAMES_PER_QUERY):
        held += Entity.objects.filter(name__in=names[start : start + NAMES_PER_QUERY]).count()
    return OriginalMemeshState(found=found, not_imported=len(names) - held)
