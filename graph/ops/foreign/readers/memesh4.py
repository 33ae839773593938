"""The original MeMesh 4.x's database (`~/.memesh/knowledge-graph.db`), read without ever
writing to it.

Its schema (the original's `storage/schema.js` and `db.js`): `entities` (name, type, title,
namespace, status, created_at, metadata JSON, access and recall counters), `observations`
(content, in id order), `tags` (a `project:<id>` tag files a memory under a project, as in
memesh), `relations` (from, to, relation_type: `supersedes`, `contradicts`, `relates_to`...).
Older 4.x databases lack the columns later versions added (status, namespace, title, the
counters), so the columns are read as present. Entities are read a batch at a time, keyset
by id, with their observations, tags and relations: memory stays flat for any size.

The file is opened through a `mode=ro` URI, and `immutable=1` when no write-ahead log sits
beside it — then SQLite creates no `-wal`/`-shm` files either; with a log (the original is
running, or stopped uncleanly) the log must be read, so only `mode=ro`.
https://www.sqlite.org/uri.html#uriimmutable

A home memesh made before the original was installed holds the original's tables inside
memesh's own database (core/original_memesh.py `inside`): they are read from there, and never
as immutable, since memesh writes that file, the import itself included.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from graph.ops.foreign.errors import NotThisFormat
from graph.ops.foreign.records import (
    ForeignMemory,
    ForeignProblem,
    ForeignRecord,
    ForeignRelation,
    Place,
    Usage,
)
from graph.project_tags import is_project_tag, project_of

DATABASE_NAME = "knowledge-graph.db"  # the original's file, in the folder a path may name
BATCH = 1000
_REQUIRED = {"entities", "observations", "tags", "relations"}
_DAMAGED = (
    "{path} could not be read ({exc}): the database is damaged or truncated; copy it again "
    "from a MeMesh that has been stopped."
)
# What the original keeps in entities.metadata that memesh has a column or meaning for; the
# rest of the metadata (signal_score, its own trust marker...) is kept under `extra`.
_COLUMNS = (
    "id",
    "name",
    "type",
    "title",
    "namespace",
    "status",
    "created_at",
    "metadata",
    "access_count",
    "last_accessed_at",
    "recall_hits",
    "recall_misses",
    "confidence",
    "valid_from",
    "valid_until",
)


def _connect(path: Path, *, immutable: bool = True) -> sqlite3.Connection:
    immutable = immutable and not Path(f"{path}-wal").exists()
    uri = f"file:{quote(str(path.resolve()))}?mode=ro" + ("&immutable=1" if immutable else "")
    return sqlite3.connect(uri, uri=True, check_same_thread=False)


def _check(conn: sqlite3.Connection, path: Path) -> tuple[set[str], bool]:
    """The columns `entities` has, and whether the original's tables are inside memesh's own
    database; NotThisFormat, in one sentence, for anything else."""
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        columns = {r[1] for r in conn.execute("PRAGMA table_info(entities)")}
    except sqlite3.DatabaseError as exc:
        if "malformed" in str(exc):
            raise NotThisFormat(_DAMAGED.format(path=path, exc=exc)) from None
        raise NotThisFormat(
            f"{path} is not a readable SQLite database ({exc}): it is not the original "
            "MeMesh's knowledge-graph.db."
        ) from None
    in_memesh_database = "graph_entity" in tables
    if in_memesh_database and not tables >= _REQUIRED:
        raise NotThisFormat(
            f"{path} is memesh's own database, not the original MeMesh's: move memories "
            "between memesh installations with `memesh export` and `memesh import FILE`."
        )
    missing = _REQUIRED - tables
    if missing:
        raise NotThisFormat(
            f"{path} is a SQLite database but not the original MeMesh's: it has no "
            f"{', '.join(sorted(missing))} table."
        )
    return columns, in_memesh_database


def _time(value: object) -> datetime | None:
    """SQLite's CURRENT_TIMESTAMP (`2026-12-07 20:44:04`, UTC) or JavaScript's ISO form."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _grouped(rows: list[tuple[int, str]]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for entity_id, value in rows:
        out.setdefault(entity_id, []).append(value)
    return out


def read(source: Path, *, project: str | None) -> Iterator[ForeignRecord]:
    """The memories of the database at `source` (or `source/knowledge-graph.db`)."""
    del project  # the database files each memory under its own project: tag, or none
    path = source / DATABASE_NAME if source.is_dir() else source
    if not path.is_file():
        raise NotThisFormat(f"{source} holds no original MeMesh database ({DATABASE_NAME}).")
    conn = _connect(path)
    try:
        columns, in_memesh_database = _check(conn, path)
        if in_memesh_database:
            conn.close()
            conn = _connect(path, immutable=False)
        yield from _entities(conn, path, columns)
    except sqlite3.DatabaseError as exc:
        raise NotThisFormat(_DAMAGED.format(path=path, exc=exc)) from None
    finally:
        conn.close()


def _entities(conn: sqlite3.Connection, path: Path, columns: set[str]) -> Iterator[ForeignRecord]:
    select = ", ".join(c if c in columns else f"NULL AS {c}" for c in _COLUMNS)
    last = 0
    while True:
        rows = conn.execute(
            # Column names from _COLUMNS only; values bound.
            f"SELECT {select} FROM entities WHERE id > ? ORDER BY id LIMIT ?",
            (last, BATCH),
        ).fetchall()
        if not rows:
            return
        lo, hi = rows[0][0], rows[-1][0]
        span = (lo, hi)
        observations = _grouped(
            conn.execute(
                "SELECT entity_id, content FROM observations WHERE entity_id BETWEEN ? AND ? "
                "ORDER BY entity_id, id",
                span,
            ).fetchall()
        )
        tags = _grouped(
            conn.execute(
                "SELECT entity_id, tag FROM tags WHERE entity_id BETWEEN ? AND ? "
                "ORDER BY entity_id, id",
                span,
            ).fetchall()
        )
        relations: dict[int, list[ForeignRelation]] = {}
        for from_id, to_name, rel_type in conn.execute(
            "SELECT r.from_entity_id, e.name, r.relation_type FROM relations r "
            "JOIN entities e ON e.id = r.to_entity_id "
            "WHERE r.from_entity_id BETWEEN ? AND ? ORDER BY r.from_entity_id, r.id",
            span,
        ):
            relations.setdefault(from_id, []).append(ForeignRelation(to=to_name, type=rel_type))
        for row in rows:
            values = dict(zip(_COLUMNS, row, strict=True))
            yield _memory(values, path, observations, tags, relations)
        last = hi


def _memory(
    row: dict[str, object],
    path: Path,
    observations: dict[int, list[str]],
    tags: dict[int, list[str]],
    relations: dict[int, list[ForeignRelation]],
) -> ForeignRecord:
    entity_id = row["id"]
    assert isinstance(entity_id, int)
    place = Place(str(path), row=f"entities.id={entity_id}")
    name, type_ = row["name"], row["type"]
    if not isinstance(name, str) or not name.strip():
        return ForeignProblem(place, "a memory needs a name", "name", repr(name)[:80])
    if not isinstance(type_, str) or not type_.strip():
        return ForeignProblem(place, "a memory needs a type", "type", repr(type_)[:80])
    try:
        metadata = json.loads(row["metadata"]) if isinstance(row["metadata"], str) else {}
    except ValueError:
        return ForeignProblem(place, "not JSON", "metadata", str(row["metadata"])[:80])
    own_tags = tags.get(entity_id, [])
    projects = [project_of(t) for t in own_tags if is_project_tag(t)]
    extra: dict[str, object] = {"memesh4_id": entity_id}
    if isinstance(metadata, dict) and metadata:
        extra["metadata"] = metadata
    for key in ("confidence", "valid_from", "valid_until"):
        if row[key] is not None:
            extra[key] = row[key]
    namespace = row["namespace"] if isinstance(row["namespace"], str) else None
    created = _time(row["created_at"])
    observed = observations.get(entity_id, [])
    return ForeignMemory(
        name=name,
        type=type_,
        observations=observed,
        place=place,
        title=row["title"] if isinstance(row["title"], str) else None,
        tags=own_tags,
        relations=relations.get(entity_id, []),
        project=projects[0] if projects else None,
        namespace=namespace,
        archived=row["status"] == "archived",
        created_at=created,
        extra=extra,
        usage=Usage(
            access_count=_count(row["access_count"]),
            last_accessed_at=_time(row["last_accessed_at"]),
            recall_hits=_count(row["recall_hits"]),
            recall_misses=_count(row["recall_misses"]),
        ),
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0
