"""`memesh db copy`: a SQLite home's memory copied into an empty PostgreSQL database, the move
from one person's memesh to a team server (docs/team-server.md).

The copy runs in a process whose default database is the target (MEMESH_DATABASE_URL), so
every write after the rows — the keyword index, the vector tables of each generation — goes
through the same storage code a server on that database runs; the SQLite file is opened beside
it, read only, as a second connection (`SOURCE`). `memesh db copy --to URL` started from a home
starts that process itself (api/cli/installation/management/commands/db.py).

Rows are copied table by table in primary-key order, in chunks; each chunk commits together
with the copy's progress record in the target (a MetaEntry row, `PROGRESS_KEY`), so an
interrupted copy resumes where it stopped — nothing copied twice, nothing skipped — and a
target whose record says the copy is unfinished never passes for a complete one. Ids are kept,
so every reference between rows holds; the target's sequences are moved past them at the end.
Then the keyword index is built, the vectors are written into their generations' tables (with
`reembed` they are left out, for the target's worker to compute again), and the copy is
verified: every table's rows read back from both databases through the same models, in
primary-key order, compared value by value.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.apps import apps
from django.core.management.color import no_style
from django.db import DatabaseError, connection, connections, models, transaction

from core.errors import MemeshError
from graph.models import Entity, EntityVector, MetaEntry

SOURCE = "copy_source"
PROGRESS_KEY = "copy.progress"
# The vector index generations' markers (graph/indexing/generations.py), left out by --reembed.
VECTOR_MARKERS = "vectors."
CHUNK = 1000
# What is copied, in an order where every row's references are copied before it. The
# content types and permissions are the target's own (migrate makes them), sessions and the
# admin log are the web server's, and the shared query embeddings a cache the target refills.
MODELS = [
    "auth.User",
    "graph.Entity",
    "graph.Observation",
    "graph.Tag",
    "graph.Relation",
    "graph.EntityVector",
    "graph.SessionOutcome",
    "graph.MetaEntry",
    "proposals.Proposal",
    "proposals.ProposalReview",
    "proposals.JudgedPair",
    "proposals.LLMAttempt",
    "proposals.TaskRun",
    "agents.Registration",
    "agents.Message",
    "agents.Receipt",
]


class CopyError(MemeshError):
    http_status = 400


class SourceNotSqlite(CopyError):
    error_code = "db.copy-source"


class TargetNotEmpty(CopyError):
    error_code = "db.copy-target-not-empty"
    http_status = 409


class CopyUnequal(CopyError):
    error_code = "db.copy-unequal"
    http_status = 500


class CopyInterrupted(CopyError):
    error_code = "db.copy-interrupted"
    http_status = 503


@dataclass
class TableCount:
    table: str
    source: int
    target: int = 0


@dataclass
class CopyReport:
    source: str
    target: str
    dry_run: bool
    resumed: bool = False
    tables: list[TableCount] = field(default_factory=list)
    copied: int = 0
    keyword_indexed: int = 0
    vectors: str = "copied"
    seconds: float = 0.0
    verified: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "dryRun": self.dry_run,
            "resumed": self.resumed,
            "tables": [
                {"table": t.table, "source": t.source, "target": t.target} for t in self.tables
            ],
            "copied": self.copied,
            "keywordIndexed": self.keyword_indexed,
            "vectors": self.vectors,
            "seconds": round(self.seconds, 2),
            "verified": self.verified,
        }


def open_source(path: Path) -> None:
    """Open the SQLite file at `path` as the SOURCE connection, beside the default one."""
    if not path.is_file():
        raise SourceNotSqlite(f"there is no memesh database at {path} to copy")
    default = connections.settings["default"]
    entry = {
        **connections.configure_settings({"default": {"ENGINE": "core.db", "NAME": str(path)}})[
            "default"
        ],
        "TIME_ZONE": default.get("TIME_ZONE"),
    }
    connections.settings[SOURCE] = entry


def _model(label: str) -> type[models.Model]:
    return apps.get_model(label)


def _rows(model: type[models.Model], alias: str, *, reembed: bool) -> models.QuerySet[Any]:
    """The rows of `model` the copy carries, on the database `alias`: all of them, but the
    copy's own progress record and, with `reembed`, the vectors and their generations'
    markers (the target's worker computes them again). Copied, counted and compared alike."""
    rows = model._default_manager.using(alias).order_by("pk")
    if model is MetaEntry:
        rows = rows.exclude(pk=PROGRESS_KEY)
        if reembed:
            rows = rows.exclude(pk__startswith=VECTOR_MARKERS)
    elif model is EntityVector and reembed:
        rows = rows.none()
    return rows


def _progress() -> dict[str, Any] | None:
    entry = MetaEntry.objects.filter(key=PROGRESS_KEY).first()
    return dict(entry.value) if entry is not None else None


def _target_rows() -> int:
    return sum(_rows(_model(label), "default", reembed=False).count() for label in MODELS)


def plan(source: str, target: str, *, dry_run: bool, reembed: bool = False) -> CopyReport:
    """What the copy would do: every table's rows in the source and the target (none when
    the target has no tables yet: `migrated` False)."""
    report = CopyReport(source=source, target=target, dry_run=dry_run)
    migrated = not dry_run or _has_tables()
    for label in MODELS:
        model = _model(label)
        report.tables.append(
            TableCount(
                model._meta.db_table,
                _rows(model, SOURCE, reembed=reembed).count(),
                _rows(model, "default", reembed=reembed).count() if migrated else 0,
            )
        )
    progress = _progress() if migrated else None
    report.resumed = progress is not None and not progress.get("done", False)
    return report


def _has_tables() -> bool:
    return MetaEntry._meta.db_table in connection.introspection.table_names()


def copy(
    source: str,
    target: str,
    *,
    reembed: bool,
    advance: Callable[[int], None] = lambda n: None,
) -> CopyReport:
    """Copy the SOURCE database into the default one (migrated, and empty or holding this
    copy's unfinished rows); `advance` is told of each chunk's rows (the progress bar)."""
    started = time.monotonic()
    progress = _progress()
    if progress is None:
        if _target_rows():
            raise TargetNotEmpty(
                f"{target} already holds memories: memesh db copy fills an empty database "
                "only. Copy into a new database, or bring memories into this one with "
                "`memesh export` here and `memesh import` there"
            )
        progress = {"source": source, "done": False, "after": {}, "reembed": reembed}
    elif progress.get("done"):
        raise TargetNotEmpty(f"{target} already holds a finished copy (of {progress['source']})")
    elif bool(progress.get("reembed")) != reembed:
        raise SourceNotSqlite(
            "resume the copy as it was started: "
            + ("with" if progress.get("reembed") else "without")
            + " --reembed"
        )
    resumed = bool(progress["after"])
    report = CopyReport(source=source, target=target, dry_run=False, resumed=resumed)
    label = MODELS[0]
    try:
        for label in MODELS:
            report.copied += _copy_table(_model(label), progress, advance, reembed=reembed)
    except DatabaseError as exc:
        raise CopyInterrupted(
            f"the copy stopped while copying {_model(label)._meta.db_table} "
            f"({report.copied} rows copied this run, every one kept): {exc}".rstrip()
            + ". Run the same command again to resume where it stopped"
        ) from None
    _reset_sequences()
    report.keyword_indexed = Entity.objects.index_rebuild()
    report.vectors = _vectors(reembed)
    report.tables = plan(source, target, dry_run=False, reembed=reembed).tables
    _verify(report, reembed=reembed)
    progress["done"] = True
    MetaEntry.objects.update_or_create(key=PROGRESS_KEY, defaults={"value": progress})
    report.verified = True
    report.seconds = time.monotonic() - started
    return report


def _verify(report: CopyReport, *, reembed: bool) -> None:
    """Every copied table holds its source's rows, value for value (read back from both
    databases through the same models, in primary-key order)."""
    unequal = []
    for label, counted in zip(MODELS, report.tables, strict=True):
        if counted.source != counted.target:
            unequal.append(f"{counted.table}: {counted.source} rows there, {counted.target} here")
            continue
        differing = _first_difference(_model(label), reembed=reembed)
        if differing is not None:
            unequal.append(f"{counted.table}: the row {differing!r} differs")
    if unequal:
        raise CopyUnequal("the copy is not equal to its source: " + "; ".join(unequal))


def _first_difference(model: type[models.Model], *, reembed: bool) -> Any:
    """The primary key of the first row that differs between the two databases, or None."""
    names = [f.attname for f in model._meta.concrete_fields]
    rows = [
        _rows(model, alias, reembed=reembed).values_list(*names).iterator(chunk_size=CHUNK)
        for alias in (SOURCE, "default")
    ]
    for there, here in zip(*rows, strict=True):
        if _comparable(there) != _comparable(here):
            return there[names.index(model._meta.pk.attname)]
    return None


def _comparable(row: tuple[Any, ...]) -> tuple[Any, ...]:
    # A binary column reads as bytes from one driver and memoryview from another.
    return tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)


def _copy_table(
    model: type[models.Model],
    progress: dict[str, Any],
    advance: Callable[[int], None],
    *,
    reembed: bool,
) -> int:
    label = model._meta.label
    after = progress["after"]
    copied = 0
    while True:
        rows = _rows(model, SOURCE, reembed=reembed)
        if label in after:
            rows = rows.filter(pk__gt=after[label])
        chunk = list(rows[:CHUNK])
        if not chunk:
            return copied
        for row in chunk:
            row._state.db = "default"
            row._state.adding = True
        with transaction.atomic():
            model._default_manager.bulk_create(chunk)
            after[label] = _json_key(chunk[-1].pk)
            MetaEntry.objects.update_or_create(key=PROGRESS_KEY, defaults={"value": progress})
        copied += len(chunk)
        advance(len(chunk))


def _json_key(pk: Any) -> Any:
    """A primary key as the progress record keeps it (JSON): ids and keys as they are, UUIDs
    as text (compared as the database compares them when the copy resumes)."""
    return pk if isinstance(pk, int | str) else str(pk)


def _reset_sequences() -> None:
    """Move each table's id sequence past the copied ids: the next row written gets a new one."""
    statements = connection.ops.sequence_reset_sql(no_style(), [_model(m) for m in MODELS])
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def _vectors(reembed: bool) -> str:
    """Each copied generation's index table, built from its copied float rows; with
    `reembed`, nothing: no vector was copied, and the worker embeds every memory."""
    from graph.indexing import generations

    if reembed:
        return "not copied: the worker embeds every memory again (`memesh embed` does it now)"
    markers = [generations.read_marker(k) for k in (generations.LIVE_KEY, generations.STAGING_KEY)]
    built = 0
    for gen in markers:
        if gen is None:
            continue
        if not EntityVector.objects.table_exists(gen.generation):
            EntityVector.objects.create_table(gen.generation, gen.dimensions)
        ids = list(
            EntityVector.objects.filter(generation=gen.generation)
            .order_by("entity_id")
            .values_list("entity_id", flat=True)
        )
        for start in range(0, len(ids), CHUNK):
            with transaction.atomic():
                EntityVector.objects.bits_rewrite_from_floats(
                    gen.generation, ids[start : start + CHUNK]
                )
        built += 1
    return f"copied: {built} generation index(es) built from the copied vectors"


def total_rows(report: CopyReport) -> int:
    return sum(t.source for t in report.tables)
