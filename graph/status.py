"""What the graph holds and what its indexes are waiting for, read cheaply: `memesh status`'s
graph half, and the vector-index state `memesh doctor` checks (graph/doctor.py), so both tell
the same story.

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

from core.redact import redact
from graph.embedding import provider
from graph.indexing import generations
from graph.indexing.embedding_pass import LAST_ERROR_KEY
from graph.indexing.generations import STAGING_KEY, Generation, UnreadableMarker
from graph.models import Entity, EntityVector, MetaEntry, Status, Tag
from graph.project_tags import PROJECT_TAG_PREFIX, project_of


@dataclass(frozen=True)
class DatabaseInfo:
    path: str
    bytes: int  # the file and its -wal file: what the database takes on disk now

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def database_info() -> DatabaseInfo:
    name = str(settings.DATABASES["default"]["NAME"])
    size = 0
    for path in (Path(name), Path(f"{name}-wal")):
        with contextlib.suppress(OSError):  # no -wal file between checkpoints
            size += path.stat().st_size
    return DatabaseInfo(path=name, bytes=size)


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
    available = bool(getattr(connection, "vec_available", False))
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
