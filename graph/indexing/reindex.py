"""`memesh reindex`: rebuild the vector index through generations, or the keyword index.

Full rebuild (the reference's rules):
- Refused up front when sqlite-vec is not loaded, when a probe embedding cannot be produced
  (or comes back at a width other than the provider declares), or when a half-built
  generation's marker cannot be read (`--discard-generation` clears it).
- Builds a *staging* generation beside the live one; the live index keeps answering.
  A staging generation of another provider or width is discarded, never resumed.
- Resumes by text hash: an entity already staged with its current text is not sent again
  (`already_staged`); one edited since is re-embedded.
- Stops after MAX_CONSECUTIVE_FAILURES failed provider requests in a row, keeping what was
  staged (`aborted_after`).
- Swaps in one transaction, only when every entity has a staged vector and nothing failed:
  rows of entities archived meanwhile are pruned; live rows written meanwhile (same
  embedder) are carried across; the old generation is dropped.
A `--namespace` run writes the live generation in place (a staging table of one namespace
would drop every other namespace's vectors at the swap).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

from django.db import transaction
from django.utils import timezone

from core.errors import MemeshError
from graph.embedding import provider
from graph.embedding.base import Embedder, EmbedderError
from graph.indexing import embedding_pass
from graph.indexing.generations import (
    LIVE_KEY,
    STAGING_KEY,
    Generation,
    UnreadableMarker,
    live_generation,
    new_generation,
    probe_width,
    read_marker,
    vectors_supported,
    write_marker,
)
from graph.models import Entity, EntityVector, Status
from graph.search.text import text_hash

MAX_CONSECUTIVE_FAILURES = 5
BATCH = 32
# Rounds of catching up with entities written while the rebuild ran, before the swap.
CATCH_UP_ROUNDS = 3

Progress = Callable[[int], None]


class ReindexRefused(MemeshError):
    error_code = "reindex.refused"
    http_status = 409


class StagingDiscarded(TypedDict):
    """The half-built generation of another space a full run dropped before it started."""

    generation: int
    identity: str
    dimensions: int
    rows: int


@dataclass(frozen=True, slots=True)
class DiscardResult:
    """What `memesh reindex --discard-generation` dropped."""

    discarded: bool  # anything was dropped, an unreadable marker included
    generations: list[int]  # the half-built generations dropped (never the live one)
    rows: int  # the vectors dropped with them
    marker_unreadable: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "discarded": self.discarded,
            "generations": self.generations,
            "rows": self.rows,
            "markerUnreadable": self.marker_unreadable,
        }


@dataclass
class ReindexResult:
    scope: str  # "all" or the namespace
    generation: int | None = None
    provider: str = ""
    model: str = ""
    dimensions: int | None = None
    total: int = 0
    embedded: int = 0
    already_staged: int = 0
    carried: int = 0
    pruned: int = 0
    failed: int = 0
    missing: int = 0
    aborted_after: int | None = None
    swapped: bool = False
    discarded: StagingDiscarded | None = None
    reindex_needed: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Exit 0: every memory in scope has a current vector, every attempt was written."""
        return self.missing == 0 and self.failed == 0 and self.aborted_after is None

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["complete"] = self.complete
        data["abortedAfter"] = data.pop("aborted_after")
        return data


def _configured_embedder() -> Embedder:
    if not vectors_supported():
        raise ReindexRefused(
            "sqlite-vec is not loaded, so there is no vector index to rebuild; recall runs on "
            "keyword search alone (memesh doctor says why the extension did not load)"
        )
    embedder = provider.current()
    if embedder is None:
        raise ReindexRefused("no embedder is configured (embedder: none): nothing to embed with")
    return embedder


def _probe(embedder: Embedder) -> int:
    try:
        width = probe_width(embedder)
    except EmbedderError as exc:
        raise ReindexRefused(
            f"a test embedding failed ({exc.kind}: {exc}); the existing index is untouched"
        ) from None
    if embedder.dimensions is not None and width != embedder.dimensions:
        raise ReindexRefused(
            f"the test embedding has width {width}, but {embedder.identity} should give "
            f"{embedder.dimensions}; the existing index is untouched"
        )
    return width


def discard_generation() -> DiscardResult:
    """Drop a half-built generation (readable marker or not); never touches the live one."""
    live = live_generation()
    try:
        staging = read_marker(STAGING_KEY)
        unreadable = False
    except UnreadableMarker:
        staging, unreadable = None, True
    with transaction.atomic():
        generations = set(EntityVector.objects.generations_present())
        if staging is not None:
            generations.add(staging.generation)
        generations.discard(live.generation if live else -1)
        rows = sum(EntityVector.objects.drop_generation(g) for g in sorted(generations))
        write_marker(STAGING_KEY, None)
    return DiscardResult(
        discarded=bool(generations) or unreadable or staging is not None,
        generations=sorted(generations),
        rows=rows,
        marker_unreadable=unreadable,
    )


def reindex_all(*, progress: Progress | None = None) -> ReindexResult:
    embedder = _configured_embedder()
    try:
        staging = read_marker(STAGING_KEY)
    except UnreadableMarker:
        raise ReindexRefused(
            "a half-built index is present and its marker cannot be read; resuming could mix "
            "two embedding spaces: clear it with `memesh reindex --discard-generation`, then "
            "rebuild"
        ) from None
    width = _probe(embedder)
    result = ReindexResult(scope="all")
    if staging is not None and (
        staging.identity != embedder.identity or staging.dimensions != width
    ):
        result.discarded = StagingDiscarded(
            generation=staging.generation,
            identity=staging.identity,
            dimensions=staging.dimensions,
            rows=EntityVector.objects.row_count(staging.generation),
        )
        discard_generation()
        staging = None
    if staging is None:
        with transaction.atomic():
            staging = new_generation(embedder, width)
            write_marker(STAGING_KEY, staging)
    result.generation = staging.generation
    result.provider, result.model, result.dimensions = embedder.provider, embedder.model, width

    # The entities this run owns: active ones when it starts.
    ids = list(
        Entity.objects.filter(status=Status.ACTIVE).order_by("id").values_list("id", flat=True)
    )
    result.total = len(ids)
    staged = EntityVector.objects.hashes(staging.generation)
    if not _embed_ids(ids, staging, embedder, staged, result, progress):
        result.reindex_needed = True
        return result

    # Entities written while the run went on (new, or edited after being staged).
    for _ in range(CATCH_UP_ROUNDS):
        pending = EntityVector.objects.pending_ids(staging.generation, limit=10_000)
        if not pending:
            break
        if not _embed_ids(pending, staging, embedder, {}, result, None):
            result.reindex_needed = True
            return result
    _swap(staging, result)
    # Anything written between the last catch-up and the swap: the new live index is the
    # configured embedder's, so the ordinary maintenance pass finishes it. What is written
    # once that pass has begun is the worker's, like any other write, and does not make this
    # run incomplete (under steady writes some memory is always a moment from its vector). A
    # write stamped before the pass may commit just after its read: another pass takes it.
    swapped_at = timezone.now()
    for _ in range(CATCH_UP_ROUNDS):
        embedding_pass.embed_pending()
        result.missing = EntityVector.objects.pending_count(
            staging.generation, written_by=swapped_at
        )
        if not result.missing:
            break
    result.reindex_needed = result.missing > 0
    return result


def reindex_namespace(namespace: str, *, progress: Progress | None = None) -> ReindexResult:
    embedder = _configured_embedder()
    width = _probe(embedder)
    live = live_generation()
    if live is None:
        with transaction.atomic():
            live = live_generation() or new_generation(embedder, width)
            write_marker(LIVE_KEY, live)
    if live.identity != embedder.identity or live.dimensions != width:
        raise ReindexRefused(
            f"the live index was built by {live.identity} ({live.dimensions}-d) and "
            f"--namespace rebuilds in place; switching embedder needs a full `memesh reindex`"
        )
    result = ReindexResult(
        scope=namespace,
        generation=live.generation,
        provider=embedder.provider,
        model=embedder.model,
        dimensions=width,
    )
    ids = list(
        Entity.objects.filter(status=Status.ACTIVE, namespace=namespace)
        .order_by("id")
        .values_list("id", flat=True)
    )
    result.total = len(ids)
    current = EntityVector.objects.hashes(live.generation)
    _embed_ids(ids, live, embedder, current, result, progress)
    result.missing = EntityVector.objects.pending_count(live.generation, namespace)
    result.reindex_needed = EntityVector.objects.pending_count(live.generation) > 0
    return result


def _embed_ids(
    ids: list[int],
    gen: Generation,
    embedder: Embedder,
    have: dict[int, str],
    result: ReindexResult,
    progress: Progress | None,
) -> bool:
    """Embed into `gen` those of `ids` whose row there is not of their current text.
    False when the run stopped after too many consecutive failures."""
    consecutive = 0
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        texts = Entity.objects.embedding_texts(batch)  # entities archived since are skipped
        need = []
        for entity_id, text in texts.items():
            digest = text_hash(text)
            if have.get(entity_id) == digest:
                result.already_staged += 1
            else:
                need.append((entity_id, digest, text))
        if need:
            try:
                vectors_, pieces = embedder.embed_with_pieces([text for _, _, text in need])
                if vectors_.shape != (len(need), gen.dimensions):
                    raise EmbedderError(
                        f"expected {len(need)} vectors of width {gen.dimensions}, "
                        f"got {vectors_.shape}",
                        kind="bad_response",
                    )
            except EmbedderError as exc:
                result.failed += len(need)
                consecutive += 1
                if len(result.errors) < 10:
                    result.errors.append(f"{exc.kind}: {exc}")
                if consecutive >= MAX_CONSECUTIVE_FAILURES:
                    result.aborted_after = consecutive
                    return False
            else:
                consecutive = 0
                with transaction.atomic():
                    EntityVector.objects.store(
                        gen.generation,
                        [(eid, digest, vectors_[n]) for n, (eid, digest, _) in enumerate(need)],
                        timezone.now(),
                        pieces,
                    )
                result.embedded += len(need)
        if progress is not None:
            progress(len(batch))
    return result.failed == 0


def _swap(staging: Generation, result: ReindexResult) -> None:
    with transaction.atomic():
        if read_marker(STAGING_KEY) != staging:
            raise ReindexRefused("the staging generation changed while this run built it")
        live = live_generation()
        # Archived (or deleted) while the rebuild ran: forget cleared the live row only.
        orphans = EntityVector.objects.orphan_ids(staging.generation)
        EntityVector.objects.remove(staging.generation, orphans)
        result.pruned = len(orphans)
        if live is not None and (live.identity, live.dimensions) == (
            staging.identity,
            staging.dimensions,
        ):
            # Written meanwhile by the live writers, in the same space: carried across.
            current = dict(
                Entity.objects.filter(status=Status.ACTIVE).values_list("id", "embedding_hash")
            )
            staged = EntityVector.objects.hashes(staging.generation)
            live_rows = EntityVector.objects.hashes(live.generation)
            carry = [
                eid
                for eid, digest in current.items()
                if staged.get(eid) != digest and live_rows.get(eid) == digest
            ]
            EntityVector.objects.remove(staging.generation, carry)
            EntityVector.objects.copy_rows(live.generation, staging.generation, carry)
            result.carried = len(carry)
        write_marker(LIVE_KEY, staging)
        write_marker(STAGING_KEY, None)
        if live is not None:
            EntityVector.objects.drop_generation(live.generation)
    result.swapped = True
