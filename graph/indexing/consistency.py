"""Do the keyword and vector indexes agree with the entity rows? And, on request, make them.

What "consistent" means (DESIGN §4, §6):
- Keyword index (graph/storage/keyword/): every active entity has exactly one row
  in the live table and every archived one exactly one in the archived table, each holding the text
  `index_sync` would write now; no row belongs to a missing entity or sits in the other table.
- Vector index (graph/storage/vector_index.py): every row of the live generation belongs to an
  active entity and is the live generation's width; its vec0 sign-bit row exists and is the
  quantised float row, and no sign-bit row lacks its float row. A half-built (staging)
  generation is held to the same width and bit rules. Rows of a generation that is neither
  live nor staging are strays.
- A vector that is missing or was built from older text is *waiting to be embedded*: the
  normal state between a write and the embedding worker's pass, reported, never an issue.

The checks are set-based SQL in the managers; only the text comparison runs in Python,
because the index text comes from the Python tokenizer (graph.search.text), in pages of TEXT_PAGE
entities. Repairs go through the same manager methods that normal writes use: `index_sync`
rewrites an entity's keyword rows, `EntityVector.objects.remove` drops vector rows, and
missing vectors are left to the embedding worker (`request_embedding`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from graph.indexing import generations
from graph.indexing.generations import STAGING_KEY, Generation, UnreadableMarker
from graph.models import Entity, EntityVector
from graph.storage.cursor import read_snapshot
from graph.storage.keyword.tables import index_columns

TEXT_PAGE = 2000
SYNC_CHUNK = 500
SAMPLE = 20  # ids and names shown per issue in a report

# Issue kinds, and what each one means.
KINDS: dict[str, str] = {
    "fts.missing": "entities without their keyword-index row",
    "fts.stale_text": "keyword-index rows whose text is not the entity's current text",
    "fts.archived_in_live": "archived entities with a row in the live keyword index",
    "fts.active_in_archive": "active entities with a row in the archived keyword index",
    "fts.orphan": "keyword-index rows of entities that do not exist",
    "vectors.orphan": "vector rows of archived or missing entities",
    "vectors.wrong_width": "vector rows of another width than their generation",
    "vectors.bits_missing": "vector rows without their vec0 sign-bit row",
    "vectors.bits_orphan": "vec0 sign-bit rows without their vector row",
    "vectors.bits_disagree": "vec0 sign-bit rows that are not their vector row's bits",
    "vectors.table_missing": "a generation's vec0 table does not exist",
    "vectors.stray_generation": "vector rows of a generation that is neither live nor staging",
}


@dataclass
class Issue:
    kind: str
    count: int
    entity_ids: list[int]  # every one (repairs need them); reports show a sample
    generation: int | None = None
    names: list[str] = field(default_factory=list)  # of the sampled ids that still exist

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.kind,
            "description": KINDS[self.kind],
            "count": self.count,
            "entityIds": self.entity_ids[:SAMPLE],
            "entityNames": self.names,
        }
        if self.generation is not None:
            data["generation"] = self.generation
        return data


@dataclass
class ConsistencyReport:
    entities: int = 0
    fts_checked: int = 0
    vectors_checked: bool = False
    vectors_skipped: str | None = None  # why the vector checks did not run
    live_generation: int | None = None
    waiting_missing: int = 0  # active entities waiting for their first vector
    waiting_stale: int = 0  # active entities whose vector predates their current text
    issues: list[Issue] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.issues

    def counts(self) -> dict[str, int]:
        return {issue.kind: issue.count for issue in self.issues}

    def summary(self) -> str:
        if self.ok:
            text = f"{self.entities} memories: keyword and vector indexes agree with them"
        else:
            problems = ", ".join(f"{i.count} {KINDS[i.kind]}" for i in self.issues)
            text = f"inconsistent: {problems} (`memesh doctor --fix` repairs it)"
        waiting = self.waiting_missing + self.waiting_stale
        if waiting:
            text += f"; {waiting} waiting to be embedded"
        if self.vectors_skipped:
            text += f"; vectors not checked ({self.vectors_skipped})"
        return text

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "entities": self.entities,
            "ftsChecked": self.fts_checked,
            "vectorsChecked": self.vectors_checked,
            "vectorsSkipped": self.vectors_skipped,
            "liveGeneration": self.live_generation,
            "waitingToBeEmbedded": {"missing": self.waiting_missing, "stale": self.waiting_stale},
            "issues": [issue.as_json() for issue in self.issues],
            "seconds": round(self.seconds, 3),
        }


def check() -> ConsistencyReport:
    """Compare both indexes with the entity rows; changes nothing."""
    started = time.perf_counter()
    report = ConsistencyReport()
    # One read transaction: every query sees the same snapshot, so a write committed by
    # another process half-way through cannot show up as a disagreement.
    with read_snapshot():
        report.entities = Entity.objects.count()
        _check_keyword_index(report)
        _check_vectors(report)
    _attach_names(report.issues)
    report.seconds = time.perf_counter() - started
    return report


def _add(
    report: ConsistencyReport, kind: str, ids: list[int], generation: int | None = None
) -> None:
    if ids:
        report.issues.append(Issue(kind, len(ids), ids, generation))


def _check_keyword_index(report: ConsistencyReport) -> None:
    manager = Entity.objects
    _add(report, "fts.missing", manager.fts_missing_ids())
    in_live = manager.fts_misplaced_rows(archived=False)
    in_archive = manager.fts_misplaced_rows(archived=True)
    _add(report, "fts.archived_in_live", [i for i, status in in_live if status is not None])
    _add(report, "fts.active_in_archive", [i for i, status in in_archive if status is not None])
    _add(report, "fts.orphan", sorted({i for i, s in [*in_live, *in_archive] if s is None}))
    stale: list[int] = []
    after = 0
    while page := manager.indexed_text_page(after, TEXT_PAGE):
        for row in page:
            if row.head is None:
                continue  # reported as missing
            report.fts_checked += 1
            if (row.head, row.body) != index_columns(
                row.name, row.title, row.observations, row.tags
            ):
                stale.append(row.entity_id)
        after = page[-1].entity_id
    _add(report, "fts.stale_text", stale)


def _check_vectors(report: ConsistencyReport) -> None:
    if not generations.vectors_supported():
        report.vectors_skipped = "sqlite-vec is not loaded"
        return
    rows = EntityVector.objects
    live = generations.live_generation()
    try:
        staging = generations.read_marker(STAGING_KEY)
    except UnreadableMarker:
        staging = None  # the doctor's staging check reports it; its rows are not strays
        unreadable_staging = True
    else:
        unreadable_staging = False
    report.vectors_checked = True
    known = {g.generation for g in (live, staging) if g is not None}
    if not unreadable_staging:
        for generation in EntityVector.objects.generations_present():
            if generation not in known:
                stray = sorted(EntityVector.objects.hashes(generation))
                # A vec0 table without rows is a stray too: drop it with the rest.
                report.issues.append(
                    Issue("vectors.stray_generation", len(stray), stray, generation)
                )
    if live is not None:
        report.live_generation = live.generation
        _add(report, "vectors.orphan", sorted(rows.orphan_ids(live.generation)), live.generation)
        report.waiting_missing, report.waiting_stale = rows.waiting_counts(live.generation)
    for gen in (live, staging):
        if gen is not None:
            _check_generation_rows(report, gen)


def _check_generation_rows(report: ConsistencyReport, gen: Generation) -> None:
    rows = EntityVector.objects
    number = gen.generation
    _add(report, "vectors.wrong_width", rows.wrong_width_ids(number, gen.dimensions), number)
    if not rows.table_exists(number):
        report.issues.append(Issue("vectors.table_missing", 1, [], number))
        return
    _add(report, "vectors.bits_missing", rows.bits_missing_ids(number), number)
    _add(report, "vectors.bits_orphan", rows.bits_orphaned_ids(number), number)
    _add(report, "vectors.bits_disagree", rows.bits_disagreeing_ids(number, gen.dimensions), number)


def _attach_names(issues: list[Issue]) -> None:
    sampled = {i for issue in issues for i in issue.entity_ids[:SAMPLE]}
    if not sampled:
        return
    names = dict(Entity.objects.filter(id__in=sampled).values_list("id", "name"))
    for issue in issues:
        issue.names = [names[i] for i in issue.entity_ids[:SAMPLE] if i in names]


# --- repair -----------------------------------------------------------------------------------


@dataclass
class RepairReport:
    before: ConsistencyReport
    after: ConsistencyReport
    fts_resynced: int = 0
    vectors_removed: int = 0
    bits_rewritten: int = 0
    tables_created: int = 0
    generations_dropped: list[int] = field(default_factory=list)
    embedding_requested: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "repaired": {
                "ftsResynced": self.fts_resynced,
                "vectorsRemoved": self.vectors_removed,
                "bitsRewritten": self.bits_rewritten,
                "tablesCreated": self.tables_created,
                "generationsDropped": self.generations_dropped,
                "embeddingRequested": self.embedding_requested,
            },
            "before": self.before.as_json(),
            "after": self.after.as_json(),
        }

    def summary(self) -> str:
        if self.before.ok:
            return "nothing to repair"
        parts = [
            f"{self.fts_resynced} keyword-index entries re-synced",
            f"{self.vectors_removed} vector rows removed",
            f"{self.bits_rewritten} vec0 rows rewritten from their vectors",
        ]
        if self.tables_created:
            parts.append(f"{self.tables_created} vec0 tables recreated")
        if self.generations_dropped:
            parts.append(f"stray generations {self.generations_dropped} dropped")
        if self.embedding_requested:
            parts.append("embedding requested for the memories now without a vector")
        return "; ".join(parts)


# Which repair each kind gets.
_RESYNC = {
    "fts.missing",
    "fts.stale_text",
    "fts.archived_in_live",
    "fts.active_in_archive",
    "fts.orphan",
}
_REMOVE = {"vectors.orphan", "vectors.wrong_width", "vectors.bits_orphan"}
_REWRITE_BITS = {"vectors.bits_missing", "vectors.bits_disagree"}


def repair(report: ConsistencyReport | None = None) -> RepairReport:
    """Repair what `check()` finds, then check again.

    Keyword rows: `index_sync` of every affected entity (an id without an entity just loses
    its rows). Vector rows of archived or missing entities, of the wrong width, and sign-bit
    rows without their float row are removed; sign bits missing or wrong are rewritten from
    the float row (the vector itself is kept). Stray generations are dropped. Every memory
    left without a current vector is then the embedding worker's: `embedding_requested` tells
    the caller to queue its pass (`memesh embed` without a worker). Nothing in the entity
    tables is changed.
    """
    before = report if report is not None else check()
    result = RepairReport(before=before, after=before)
    if before.ok:
        return result
    by_kind: dict[str, list[Issue]] = {}
    for issue in before.issues:
        by_kind.setdefault(issue.kind, []).append(issue)
    with transaction.atomic():
        # Tables first: index_sync of an archived entity removes its vectors from every
        # generation holding one, which needs each such generation's vec0 table.
        for issue in by_kind.get("vectors.stray_generation", []):
            assert issue.generation is not None
            EntityVector.objects.drop_generation(issue.generation)
            result.generations_dropped.append(issue.generation)
        for issue in by_kind.get("vectors.table_missing", []):
            gen = _generation(issue.generation)
            if gen is not None:
                EntityVector.objects.create_table(gen.generation, gen.dimensions)
                result.tables_created += 1
        resync = sorted(
            {i for kind in _RESYNC for issue in by_kind.get(kind, []) for i in issue.entity_ids}
        )
        for start in range(0, len(resync), SYNC_CHUNK):
            Entity.objects.index_sync(resync[start : start + SYNC_CHUNK])
        result.fts_resynced = len(resync)
        for kind in sorted(_REMOVE):
            for issue in by_kind.get(kind, []):
                assert issue.generation is not None
                EntityVector.objects.remove(issue.generation, issue.entity_ids)
                result.vectors_removed += issue.count
        # Bits of rows the previous step left alone, including every row of a recreated table.
        for gen_number in sorted({i.generation for i in before.issues if i.generation}):
            if gen_number in result.generations_dropped:
                continue
            ids = _rows_needing_bits(gen_number, by_kind)
            if ids:
                EntityVector.objects.bits_rewrite_from_floats(gen_number, ids)
                result.bits_rewritten += len(ids)
    if result.vectors_removed or before.waiting_missing or before.waiting_stale:
        # The caller queues the pass (graph.doctor.fix): this layer knows no task queue.
        result.embedding_requested = True
    result.after = check()
    return result


def _generation(number: int | None) -> Generation | None:
    for gen in (generations.live_generation(), _staging()):
        if gen is not None and gen.generation == number:
            return gen
    return None


def _staging() -> Generation | None:
    try:
        return generations.read_marker(STAGING_KEY)
    except UnreadableMarker:
        return None


def _rows_needing_bits(generation: int, by_kind: dict[str, list[Issue]]) -> list[int]:
    """Rows of the generation whose sign bits must be rewritten from the float row."""
    ids: set[int] = set()
    if any(i.generation == generation for i in by_kind.get("vectors.table_missing", [])):
        ids.update(EntityVector.objects.hashes(generation))
    for kind in _REWRITE_BITS:
        for issue in by_kind.get(kind, []):
            if issue.generation == generation:
                ids.update(issue.entity_ids)
    # A row removed above (orphan or wrong width) must not come back as bits.
    gone = {
        i
        for kind in _REMOVE
        for issue in by_kind.get(kind, [])
        if issue.generation == generation
        for i in issue.entity_ids
    }
    return sorted(ids - gone)
