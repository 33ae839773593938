"""import: a bundle produced by export, merged into the graph by one of three strategies.

It runs in two passes over the entries (graph.ops.bundle.files streams them from a file of any
size; REST passes the parsed body): entities first, IMPORT_CHUNK per transaction, then the
relations of every entry that was not skipped, once all their targets exist. It is
deliberately not one transaction: one bad entry is reported in `errors` and the rest still
imports. Each chunk rewrites the keyword index of what it touched before it commits.

Every entry of a chunk is validated in full (BundleEntry, its version history included)
before the chunk's transaction begins, so an entry that is refused never gets near the
database. A chunk is all or nothing. When one fails as it is written (an entry that does not
fit on a nearly full disk, say), it is rolled back and written again entry by entry: only the
entries that fail again land in `errors`, with SQLite's reason. A condition of the whole
database stops the import instead (graph.storage.conditions: busy, read-only, a disk I/O
error, a file that cannot be opened, or a disk so full that not one entry of the chunk
fits), raised as its StorageError;
the chunks committed before it stay, so the same import run again with `skip` carries on.

Trust marker: every entity an import creates or changes gets `metadata.untrusted = true` and
`metadata.import = {at, strategy, source_host}`; one it creates also gets
`metadata.provenance = {source_host, imported: true}`. Hook injection must skip untrusted
entities; a review (or the user re-storing the memory) is what may clear the marker — nothing
does that yet. The trust model (graph/ops/kit/trust/): an entity an import creates is a fact
only when its entry's `trust` carries a `source`, else a hypothesis, its source reported as
imported; an import never changes the trust of an entity that exists (no confidence is
raised, no hypothesis promoted: only `observe` does that). Overwrite keeps what it replaced
in `metadata.replaced_history` (as `replace` does); a bundle's versions (`replaced_history`)
are kept on the entities it creates.

An import from another program's files (graph/ops/foreign/) passes `foreign=True`: each
entry's `origin` then gives a new entity the source's times, archived state and counters,
`metadata.foreign` (what the source kept that memesh has no column for) and
`metadata.provenance.source` (`import:<format>:<path>`) with the record's place.

Each chunk queues the embedding of what it wrote once it commits (graph.ops.kit.writes), as
every write does.

Strategies on an entity that already exists (a new one is created under all three):
skip leaves it entirely alone (namespace and relations included); overwrite replaces its
observations and tags; append adds the new ones. Both of the latter replace its title when
the entry has a non-blank one, move it when the call names a namespace, add the entry's
relations, and keep its type and status.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast

from django.db import DatabaseError, transaction
from django.utils import timezone
from pydantic import Field, ValidationError

from core.errors import InvalidInput
from graph.errors import StorageError, StorageFull
from graph.models import (
    FACT_CONFIDENCE,
    HYPOTHESIS_CONFIDENCE,
    Entity,
    Namespace,
    Observation,
    Relation,
    Status,
    Tag,
    TrustStatus,
)
from graph.ops.bundle.entry import BundleEntry, EntryOrigin
from graph.ops.bundle.exporter import REPLACED_HISTORY, exported_at
from graph.ops.kit.fields import NamespaceName, Output, StrictInput
from graph.ops.kit.trust.rules import default_kind, with_event
from graph.ops.kit.trust.view import parse_time
from graph.ops.kit.validation_errors import describe_validation_error
from graph.ops.kit.writes import index_after_write
from graph.search.text import normalize_observation
from graph.storage.conditions import DATABASE_WIDE, storage_error

IMPORT_CHUNK = 500
MAX_REPORTED_ERRORS = 100
MergeStrategy = Literal["skip", "overwrite", "append"]
EntrySource = Callable[[], Iterable[object]]  # called once per pass: must restart each time


class ImportInput(StrictInput):
    data: dict[str, Any] = Field(
        description="The bundle produced by export: an object with an `entities` array."
    )
    merge_strategy: MergeStrategy = Field(
        description=(
            "What to do with an entity that already exists: `skip` keeps it unchanged "
            "(namespace included), `overwrite` replaces its observations and tags (the "
            "replaced ones are kept in metadata.replaced_history), `append` adds new "
            "observations and tags. New entities are created under every strategy."
        )
    )
    namespace: NamespaceName | None = Field(
        default=None,
        description=(
            "File every imported entity here instead of the bundle's namespace. With "
            "`overwrite` or `append` existing entities are moved too (metadata."
            "previous_namespace records from where); with `skip` they are not."
        ),
    )


class ImportOutput(Output):
    imported: int = Field(description="Entities created, plus existing ones overwritten.")
    skipped: int = Field(description="Existing entities left unchanged (`skip`).")
    appended: int = Field(description="Existing entities appended to (`append`).")
    relations: int = Field(description="Relations created.")
    errors: list[str] = Field(
        description=(
            f"Entries or relations that could not be imported, and why (at most "
            f"{MAX_REPORTED_ERRORS} listed; the rest were imported)."
        )
    )


@dataclass
class _Tally:
    imported: int = 0
    skipped: int = 0
    appended: int = 0
    relations: int = 0
    errors: list[str] = field(default_factory=list)
    error_count: int = 0

    def error(self, index: int, name: str | None, message: str) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_REPORTED_ERRORS:
            if name:  # the entry's own name, maybe the very text that made it invalid: escaped
                name = name.encode("utf-8", "backslashreplace").decode("utf-8")
            label = f'entities[{index}] "{name}"' if name else f"entities[{index}]"
            self.errors.append(f"{label}: {message}")

    def output(self) -> ImportOutput:
        errors = list(self.errors)
        if self.error_count > len(errors):
            errors.append(f"... and {self.error_count - len(errors)} more errors")
        return ImportOutput(
            imported=self.imported,
            skipped=self.skipped,
            appended=self.appended,
            relations=self.relations,
            errors=errors,
        )


@dataclass(frozen=True)
class _Run:
    strategy: MergeStrategy
    namespace: NamespaceName | None
    source_host: str
    now: datetime
    foreign: bool = False

    def stamp(
        self, metadata: dict[str, Any], *, created: bool, origin: EntryOrigin | None = None
    ) -> dict[str, Any]:
        out = dict(metadata)
        if created:
            out["provenance"] = {"source_host": self.source_host, "imported": True}
            if origin is not None:
                out["provenance"].update(source=origin.source, place=origin.place)
                if origin.extra:
                    out["foreign"] = origin.extra
        out["untrusted"] = True
        out["import"] = {
            "at": exported_at(self.now),
            "strategy": self.strategy,
            "source_host": self.source_host,
        }
        if origin is not None:  # what a foreign import appended came from there too
            out["import"].update(source=origin.source, place=origin.place)
        return out


def _validate(index: int, raw: object, tally: _Tally, foreign: bool) -> BundleEntry | None:
    if not isinstance(raw, dict):
        tally.error(index, None, "must be an object")
        return None
    if not foreign and "origin" in raw:  # only a foreign import states a record's origin
        raw = {k: v for k, v in raw.items() if k != "origin"}
    try:
        return BundleEntry.model_validate(raw)
    except ValidationError as exc:
        name = raw.get("name")
        tally.error(index, name if isinstance(name, str) else None, describe_validation_error(exc))
        return None


def _dedupe(values: Iterable[str], seen: set[str], key: Callable[[str], str] = str) -> list[str]:
    out = []
    for value in values:
        if key(value) not in seen:
            seen.add(key(value))
            out.append(value)
    return out


def _trust_columns(entry: BundleEntry) -> dict[str, Any]:
    """The trust of an entity an import creates: a fact only with a source (module
    docstring); the bundle's confidence, doubt and times kept as they were exported."""
    trust = entry.trust
    source = trust.source if trust is not None else None
    default = FACT_CONFIDENCE if source is not None else HYPOTHESIS_CONFIDENCE
    if trust is None:
        return {
            "trust": TrustStatus.HYPOTHESIS,
            "confidence": default,
            "kind": default_kind(entry.type),
        }
    return {
        "trust": TrustStatus.FACT if source is not None else TrustStatus.HYPOTHESIS,
        "source": source,
        "confidence": trust.confidence if trust.confidence is not None else default,
        "invalidation_tag": trust.invalidation_tag or "",
        "invalidation_condition": trust.invalidation_condition or "",
        "kind": trust.kind or default_kind(entry.type),
        "hop_count": trust.hop_count,
        "last_observed_at": (
            parse_time(trust.last_observed_at) if trust.last_observed_at else None
        ),
        "expires_at": parse_time(trust.expires_at) if trust.expires_at else None,
    }


def _origin_columns(origin: EntryOrigin | None, now: datetime) -> dict[str, Any]:
    """A foreign record's own times, state and counters (module docstring); else now's."""
    if origin is None:
        return {"created_at": now, "updated_at": now}
    created = origin.created_at or now
    return {
        "created_at": created,
        "updated_at": origin.updated_at or created,
        "status": Status.ARCHIVED if origin.archived else Status.ACTIVE,
        "access_count": origin.access_count,
        "last_accessed_at": origin.last_accessed_at,
        "recall_hits": origin.recall_hits,
        "recall_misses": origin.recall_misses,
    }


def _create(entry: BundleEntry, run: _Run) -> int:
    columns = _trust_columns(entry)
    origin = entry.origin if run.foreign else None
    metadata = run.stamp(
        {REPLACED_HISTORY: entry.replaced_history} if entry.replaced_history else {},
        created=True,
        origin=origin,
    )
    times = _origin_columns(origin, run.now)
    entity = Entity(
        name=entry.name,
        type=entry.type,
        title=entry.title,
        namespace=run.namespace or entry.namespace or Namespace.PERSONAL,
        **times,
        metadata=with_event(
            metadata,
            "import",
            run.now,
            status=columns["trust"],
            confidence=columns["confidence"],
            source=columns.get("source"),
        ),
        **columns,
    )
    Entity.objects.insert_new(entity)
    observations = _dedupe((o.strip() for o in entry.observations), set(), normalize_observation)
    Entity.objects.observations_append(entity.pk, observations, times["created_at"])
    Entity.objects.tags_append(entity.pk, _dedupe(entry.tags, set()))
    return entity.pk


def _update(entity_id: int, entry: BundleEntry, run: _Run) -> bool:
    """Overwrite or append to an existing entity; True when anything changed."""
    entity = Entity.objects.get(pk=entity_id)
    old_obs = list(Observation.objects.filter(entity=entity).values_list("text", flat=True))
    old_tags = list(Tag.objects.filter(entity=entity).values_list("name", flat=True))
    metadata = dict(entity.metadata)
    if run.strategy == "overwrite":
        new_obs = _dedupe((o.strip() for o in entry.observations), set(), normalize_observation)
        new_tags = _dedupe(entry.tags, set())
        changed = new_obs != old_obs or new_tags != old_tags
        if changed:
            # The same version list a `replace` keeps, so recall counts both.
            history = [*metadata.get(REPLACED_HISTORY, [])]
            history.append(
                {
                    "at": exported_at(run.now),
                    "action": "import-overwrite",
                    "observations": old_obs,
                    "tags": old_tags,
                }
            )
            metadata[REPLACED_HISTORY] = history
            Observation.objects.filter(entity=entity).delete()
            Tag.objects.filter(entity=entity).delete()
    else:
        seen_obs = {normalize_observation(t) for t in old_obs}
        new_obs = _dedupe((o.strip() for o in entry.observations), seen_obs, normalize_observation)
        new_tags = _dedupe(entry.tags, set(old_tags))
        changed = bool(new_obs or new_tags)
    if changed:
        Entity.objects.observations_append(entity.pk, new_obs, run.now)
        Entity.objects.tags_append(entity.pk, new_tags)
    if entry.title is not None and entry.title != entity.title:
        entity.title = entry.title
        changed = True
    if run.namespace is not None and run.namespace != entity.namespace:
        metadata["previous_namespace"] = entity.namespace
        entity.namespace = run.namespace
        changed = True
    if changed:
        origin = entry.origin if run.foreign else None
        entity.metadata = run.stamp(metadata, created=False, origin=origin)
        entity.updated_at = run.now
        entity.save(update_fields=["title", "namespace", "metadata", "updated_at"])
    return changed


def _apply(entry: BundleEntry, run: _Run) -> tuple[str, int | None]:
    """Import one entry: (outcome, id of the entity whose index row must be rewritten)."""
    entity_id = Entity.objects.id_for_name(entry.name)
    if entity_id is None:
        return "imported", _create(entry, run)
    if run.strategy == "skip":
        return "skipped", None
    changed = _update(entity_id, entry, run)
    outcome = "imported" if run.strategy == "overwrite" else "appended"
    return outcome, entity_id if changed else None


def _write_chunk(chunk: list[tuple[int, BundleEntry]], run: _Run) -> list[tuple[int, str]]:
    with transaction.atomic():
        results = [_apply(entry, run) for _, entry in chunk]
        index_after_write([i for _, i in results if i is not None])
    return [(index, outcome) for (index, _), (outcome, _) in zip(chunk, results, strict=True)]


def _stop_if_database_wide(exc: DatabaseError) -> StorageError | None:
    """Raise the condition when `exc` is one of the whole database; else the storage
    condition it is (a full disk), or None. While a database-wide condition lasts no entry can
    be stored, so the import stops rather than fail every entry left (each after a full busy
    timeout, when locked)."""
    condition = storage_error(exc)
    if isinstance(condition, DATABASE_WIDE):
        raise condition from exc
    return condition


def _write_each(
    chunk: list[tuple[int, BundleEntry]], run: _Run, tally: _Tally
) -> list[tuple[int, str]]:
    """Write again, one transaction per entry, a chunk whose transaction failed: only the
    entries that cannot be stored are lost (and reported)."""
    done: list[tuple[int, str]] = []
    full: StorageError | None = None
    for index, entry in chunk:
        try:
            done += _write_chunk([(index, entry)], run)
        except DatabaseError as exc:
            condition = _stop_if_database_wide(exc)
            if isinstance(condition, StorageFull):
                full = condition
            code = f" ({condition.error_code})" if condition is not None else ""
            tally.error(index, entry.name, f"could not be stored: {exc}{code}")
    if full is not None and not done:
        # Not one entry fitted: the disk is full, rather than some entries too big for it.
        raise full
    return done


def _import_chunk(
    chunk: list[tuple[int, BundleEntry]], run: _Run, tally: _Tally, relate: bytearray
) -> None:
    try:
        done = _write_chunk(chunk, run)
    except DatabaseError as exc:
        # The chunk's transaction rolled back as a whole.
        _stop_if_database_wide(exc)
        done = _write_each(chunk, run, tally)
    for index, outcome in done:
        setattr(tally, outcome, getattr(tally, outcome) + 1)
        if outcome != "skipped":
            relate[index] = 1


def _relate_chunk(chunk: list[tuple[int, BundleEntry]], tally: _Tally, now: datetime) -> None:
    names = {e.name for _, e in chunk} | {r.to for _, e in chunk for r in e.relations}
    ids = dict(Entity.objects.filter(name__in=names).values_list("name", "id"))
    with transaction.atomic():
        existing = set(
            Relation.objects.filter(
                from_entity_id__in=[ids[e.name] for _, e in chunk if e.name in ids]
            ).values_list("from_entity_id", "to_entity_id", "type")
        )
        new: list[Relation] = []
        for index, entry in chunk:
            source = ids.get(entry.name)
            for rel in entry.relations:
                target = ids.get(rel.to)
                if source is None or target is None:
                    tally.error(index, entry.name, f'relation target "{rel.to}" not found')
                elif source == target:
                    tally.error(index, entry.name, "an entity cannot be related to itself")
                elif (source, target, rel.type) not in existing:
                    existing.add((source, target, rel.type))
                    new.append(
                        Relation(
                            from_entity_id=source,
                            to_entity_id=target,
                            type=rel.type,
                            created_at=now,
                        )
                    )
        Relation.objects.bulk_create(new)
    tally.relations += len(new)


def _chunks(
    entries: Iterable[object],
    tally: _Tally | None,
    wanted: bytearray | None = None,
    *,
    foreign: bool = False,
) -> Iterator[list[tuple[int, BundleEntry]]]:
    """Valid entries in chunks. Pass 1 (`tally`) reports invalid ones; pass 2 (`wanted`)
    keeps only the entries flagged in pass 1."""
    chunk: list[tuple[int, BundleEntry]] = []
    for index, raw in enumerate(entries):
        if wanted is not None and (index >= len(wanted) or not wanted[index]):
            continue
        entry = _validate(index, raw, tally or _Tally(), foreign)
        if entry is not None:
            chunk.append((index, entry))
        if len(chunk) >= IMPORT_CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def bundle_import(
    *,
    entries: EntrySource,
    strategy: MergeStrategy,
    namespace: NamespaceName | None,
    source_host: str,
    progress: Callable[[int], None] | None = None,
    foreign: bool = False,
) -> ImportOutput:
    """Import a bundle's entries (see the module docstring); `entries()` is read twice.

    `progress` is told how many entries each chunk of the first pass handled. `foreign`: the
    entries come from another program's files, and their `origin` is kept.
    """
    if strategy not in ("skip", "overwrite", "append"):
        raise InvalidInput(f"merge_strategy: unknown strategy {strategy!r}")
    if namespace is not None and namespace not in Namespace.values:
        raise InvalidInput(f"namespace: must be personal, team or global (got {namespace!r})")
    run = _Run(strategy, namespace, source_host, timezone.now(), foreign)
    tally = _Tally()
    relate = bytearray()  # one byte per entry: 1 = create its relations in pass 2
    seen = 0
    for chunk in _chunks(entries(), tally, foreign=foreign):
        last = chunk[-1][0]
        relate.extend(bytes(last + 1 - len(relate)))
        _import_chunk(chunk, run, tally, relate)
        if progress is not None:
            progress(last + 1 - seen)
        seen = last + 1
    for chunk in _chunks(entries(), None, relate, foreign=foreign):
        if any(e.relations for _, e in chunk):
            _relate_chunk(chunk, tally, run.now)
    return tally.output()


def bundle_entries_of(data: dict[str, Any]) -> list[object]:
    """The `entities` array of a parsed bundle, or InvalidInput."""
    entities = data.get("entities")
    if not isinstance(entities, list):
        raise InvalidInput("data.entities: must be an array of entities", field="data.entities")
    return cast(list[object], entities)
