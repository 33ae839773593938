"""The embedding pass: active entities whose live vector is missing or stale get one.

Vectors are written off the request path: a write's transaction sets the entity's
embedding_hash (index_sync), and after commit `request_embedding` (graph/ops/kit/writes.py)
queues one `embed_pending` task for the worker; bursts of writes share one task. `embed_pending`
is also the synchronous twin that the CLI and tests call directly. It writes the live generation
only (graph/indexing/generations.py), and creates the first one when there is none.
"""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from graph.embedding import provider
from graph.embedding.base import Embedder, EmbedderError
from graph.indexing.generations import (
    LIVE_KEY,
    Generation,
    live_generation,
    new_generation,
    probe_width,
    vectors_supported,
    write_marker,
)
from graph.models import Entity, EntityVector, MetaEntry
from graph.storage import backend

logger = logging.getLogger(__name__)

LAST_ERROR_KEY = "vectors.last_error"  # the pass's last provider failure, until one succeeds
EMBED_BATCH = 32


@dataclass
class EmbedReport:
    embedded: int = 0
    failed: int = 0
    skipped: str | None = None  # why nothing could be written, when that is the case
    error: str | None = None
    generation: int | None = None
    # The live index is another local model's: the worker rebuilds it in the configured one
    # (graph.tasks), while recall searches it with the model that built it.
    local_switch: bool = False


def _bootstrap_live(embedder: Embedder) -> Generation | None:
    """The first live generation, created for the configured embedder when there is none."""
    dimensions = embedder.dimensions or probe_width(embedder)
    with transaction.atomic():
        existing = live_generation()
        if existing is not None:
            return existing
        gen = new_generation(embedder, dimensions)
        write_marker(LIVE_KEY, gen)
        return gen


def embed_pending(*, max_entities: int | None = None, namespace: str | None = None) -> EmbedReport:
    """Embed active entities whose live vector is missing or stale; the worker's task body.

    Stops at the first provider failure (the next request retries; recall meanwhile uses the
    keyword index plus whatever vectors exist).
    """
    report = EmbedReport()
    embedder = provider.current()
    if embedder is None:
        report.skipped = "no embedder is configured"
        return report
    if not vectors_supported():
        report.skipped = "sqlite-vec is not loaded"
        return report
    try:
        live = live_generation() or _bootstrap_live(embedder)
    except EmbedderError as exc:
        report.error = _record_failure(exc)
        return report
    if live is None or live.identity != embedder.identity:
        report.skipped = "the live vector index belongs to another embedder: run memesh reindex"
        report.local_switch = live is not None and live.provider == embedder.provider == "local"
        return report
    report.generation = live.generation
    while max_entities is None or report.embedded < max_entities:
        batch = (
            EMBED_BATCH
            if max_entities is None
            else min(EMBED_BATCH, max_entities - report.embedded)
        )
        with _claiming():
            ids = EntityVector.objects.claim_pending(live.generation, batch, namespace)
            if not ids:
                break
            written = _embed_into(live, embedder, ids)
        if isinstance(written, str):
            report.error = written
            report.failed += len(ids)
            break
        report.embedded += written
        if written == 0:
            break  # everything in the batch changed under us; the next request catches up
    return report


def _claiming() -> AbstractContextManager[object]:
    """The scope a batch's claims last for. On PostgreSQL workers on several hosts share one
    backlog: a batch is claimed (graph/storage/postgres/vectors.py) in a transaction held
    while it is embedded and written. On SQLite one worker embeds, and such a transaction would
    hold the write lock through the embedding: none is opened."""
    return transaction.atomic() if backend.on_postgres() else nullcontext()


def _embed_into(gen: Generation, embedder: Embedder, ids: list[int]) -> int | str:
    """Embed these entities into `gen`; the number written, or the error message."""
    texts = Entity.objects.embedding_texts(ids)
    if not texts:
        return 0
    order = list(texts)
    try:
        vectors, pieces = embedder.embed_with_pieces([texts[i] for i in order])
        if vectors.shape != (len(order), gen.dimensions):
            raise EmbedderError(
                f"expected {len(order)} vectors of width {gen.dimensions}, got {vectors.shape}",
                kind="bad_response",
            )
    except EmbedderError as exc:
        return _record_failure(exc)
    from graph.search.text import text_hash

    hashes = {i: text_hash(texts[i]) for i in order}
    with transaction.atomic():
        current = live_generation()
        if current is None or current.generation != gen.generation:
            return 0  # a reindex swapped generations meanwhile
        # Only entities still active and still holding this text get the vector.
        still = Entity.objects.filter(id__in=order, status="active").values_list(
            "id", "embedding_hash"
        )
        keep = {eid for eid, h in still if h == hashes[eid]}
        kept = [n for n, i in enumerate(order) if i in keep]
        rows = [(order[n], hashes[order[n]], vectors[n]) for n in kept]
        EntityVector.objects.store(gen.generation, rows, timezone.now(), [pieces[n] for n in kept])
    MetaEntry.objects.filter(key=LAST_ERROR_KEY).delete()
    return len(rows)


def _record_failure(exc: EmbedderError) -> str:
    message = f"{exc.kind}: {exc}"
    logger.warning("embedding failed: %s", message)
    MetaEntry.objects.update_or_create(
        key=LAST_ERROR_KEY,
        defaults={
            "value": {"error": message, "kind": exc.kind, "at": timezone.now().isoformat()},
            "updated_at": timezone.now(),
        },
    )
    return message
