"""Vector index generations and their maintenance: the live index, embedding of pending
entities, and the query-side helpers recall uses.

A *generation* is one vec0 table (graph/storage/vector_index.py) in one embedding space, recorded in
MetaEntry `vectors.live` as {generation, provider, model, identity, dimensions}. Every writer
(the embedding worker, remember via it) writes the live generation only, and only when the
configured embedder has the live generation's identity: vectors of two spaces never meet.
When the configuration names another embedder, the live index is kept (it still describes the
memories) but cannot be queried — a query embedded in another space means nothing against it —
so recall runs keyword-only and says `degraded` until `memesh reindex` builds a generation in
the new space (graph/indexing/reindex.py) and swaps it in.

Vectors are written off the request path: a write's transaction sets the entity's
embedding_hash (index_sync), and after commit `request_embedding` queues one `embed_pending`
task for the worker; bursts of writes share one task. `embed_pending` is also the synchronous
twin that the CLI and tests call directly.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from graph.embedding import provider
from graph.embedding.base import Embedder, EmbedderError
from graph.models import Entity, EntityVector, MetaEntry, QueryVector

logger = logging.getLogger(__name__)

LIVE_KEY = "vectors.live"
STAGING_KEY = "vectors.staging"
LAST_ERROR_KEY = "vectors.last_error"
SEQUENCE_KEY = "vectors.last_generation"
PROBE_TEXT = "memesh embedding probe"
EMBED_BATCH = 32


class UnreadableMarker(Exception):
    """A generation marker exists but does not describe a generation."""


@dataclass(frozen=True)
class Generation:
    generation: int
    provider: str
    model: str
    identity: str
    dimensions: int
    created_at: str = ""

    @classmethod
    def parse(cls, value: Any) -> Generation:
        try:
            gen = cls(
                generation=int(value["generation"]),
                provider=str(value["provider"]),
                model=str(value["model"]),
                identity=str(value["identity"]),
                dimensions=int(value["dimensions"]),
                created_at=str(value.get("created_at", "")),
            )
        except (TypeError, KeyError, ValueError) as exc:
            raise UnreadableMarker(f"unreadable generation marker: {value!r}") from exc
        if gen.generation < 1 or gen.dimensions < 1:
            raise UnreadableMarker(f"unreadable generation marker: {value!r}")
        return gen

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def read_marker(key: str) -> Generation | None:
    """The generation recorded under `key`; None when absent. Raises UnreadableMarker."""
    value = MetaEntry.objects.value(key)  # valid JSON: the column has a JSON_VALID check
    return None if value is None else Generation.parse(value)


def write_marker(key: str, generation: Generation | None) -> None:
    if generation is None:
        MetaEntry.objects.filter(key=key).delete()
    else:
        MetaEntry.objects.update_or_create(
            key=key, defaults={"value": generation.as_json(), "updated_at": timezone.now()}
        )


def live_generation() -> Generation | None:
    try:
        return read_marker(LIVE_KEY)
    except UnreadableMarker:
        logger.error("the live vector index marker is unreadable; vector search is off")
        return None


def vectors_supported() -> bool:
    """sqlite-vec is loaded on this connection."""
    connection.ensure_connection()
    return bool(getattr(connection, "vec_available", False))


def next_generation_number() -> int:
    """A generation number never used before in this database (call inside a transaction):
    a reader keying on the number must not mistake a new table for a discarded one."""
    numbers = [0, *EntityVector.objects.generations_present()]
    for key in (LIVE_KEY, STAGING_KEY, SEQUENCE_KEY):
        value = MetaEntry.objects.filter(key=key).values_list("value", flat=True).first()
        if isinstance(value, dict) and isinstance(value.get("generation"), int):
            numbers.append(value["generation"])
    number = max(numbers) + 1
    MetaEntry.objects.update_or_create(
        key=SEQUENCE_KEY, defaults={"value": {"generation": number}, "updated_at": timezone.now()}
    )
    return number


def probe_width(embedder: Embedder) -> int:
    """Embed one string and measure it (raises EmbedderError)."""
    vectors = embedder.embed([PROBE_TEXT])
    if vectors.ndim != 2 or vectors.shape[0] != 1 or vectors.shape[1] < 1:
        raise EmbedderError("the provider returned no vector for the probe", kind="bad_response")
    return int(vectors.shape[1])


def new_generation(embedder: Embedder, dimensions: int) -> Generation:
    """Create the vec0 table of a new generation (call inside a transaction)."""
    gen = Generation(
        generation=next_generation_number(),
        provider=embedder.provider,
        model=embedder.model,
        identity=embedder.identity,
        dimensions=dimensions,
        created_at=timezone.now().isoformat(),
    )
    EntityVector.objects.create_table(gen.generation, dimensions)
    return gen


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


# --- embedding of pending entities ---------------------------------------------------------


@dataclass
class EmbedReport:
    embedded: int = 0
    failed: int = 0
    skipped: str | None = None  # why nothing could be written, when that is the case
    error: str | None = None
    generation: int | None = None


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
        return report
    report.generation = live.generation
    while max_entities is None or report.embedded < max_entities:
        batch = (
            EMBED_BATCH
            if max_entities is None
            else min(EMBED_BATCH, max_entities - report.embedded)
        )
        ids = EntityVector.objects.pending_ids(live.generation, batch, namespace)
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


# --- query side ----------------------------------------------------------------------------

QUERY_CACHE_SIZE = 512
# Query embeddings are also shared through the database (graph/storage/query_vectors.py), so a
# query one process embedded is not embedded again by the server's other process, a hook or
# the CLI. Written in batches, at most once a second per process and at exit.
SHARE_QUERY_VECTORS = True
SHARE_AFTER_SECONDS = 1.0
SHARE_AT_PENDING = 64
# A late-interaction embedder's shared row is its vector, this byte, then the packed pieces
# (graph.search.late_interaction); a row without it was shared before pieces existed.
PIECES_MARK = b"\x01"


@dataclass(frozen=True)
class QueryEmbedding:
    vector: np.ndarray
    pieces: bytes = b""  # packed content pieces; b"" when the embedder gives none


_query_cache: OrderedDict[tuple[str, int | None, str], QueryEmbedding] = OrderedDict()
_query_lock = threading.Lock()
_shared_pending: dict[str, bytes] = {}
_shared_first_at: float | None = None


def query_cache_clear() -> None:
    """Forget every cached query embedding, and those waiting to be shared (tests that swap
    embedders of one identity; the shared rows go with their database)."""
    global _shared_first_at
    with _query_lock:
        _query_cache.clear()
        _shared_pending.clear()
        _shared_first_at = None


def _cache_key(embedder: Embedder, query: str) -> tuple[str, int | None, str]:
    # The width is part of the key: one model can be configured at several widths.
    return (embedder.identity, embedder.dimensions, query)


def _shared_key(embedder: Embedder, query: str) -> str:
    text = "\0".join([embedder.identity, str(embedder.dimensions), query])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _keep(key: tuple[str, int | None, str], found: QueryEmbedding) -> None:
    with _query_lock:
        _query_cache[key] = found
        while len(_query_cache) > QUERY_CACHE_SIZE:
            _query_cache.popitem(last=False)


def query_vector(embedder: Embedder, query: str, *, share: bool = False) -> np.ndarray:
    """The query's embedding (query_embedding without its pieces)."""
    return query_embedding(embedder, query, share=share).vector


def query_embedding(embedder: Embedder, query: str, *, share: bool = False) -> QueryEmbedding:
    """The query's embedding, with its pieces when the embedder gives them, from a per-process
    LRU cache when it repeats. With `share`, one computed here is queued for the shared table
    (flush_shared_query_vectors writes it)."""
    global _shared_first_at
    key = _cache_key(embedder, query)
    with _query_lock:
        hit = _query_cache.get(key)
        if hit is not None:
            _query_cache.move_to_end(key)
            return hit
    if embedder.late_interaction:
        vectors, pieces = embedder.embed_with_pieces([query])
        found = QueryEmbedding(vectors[0], pieces[0])
    else:
        found = QueryEmbedding(embedder.embed([query])[0])
    _keep(key, found)
    if share and SHARE_QUERY_VECTORS:
        blob = np.asarray(found.vector, dtype=np.float32).tobytes()
        if embedder.late_interaction:
            blob += PIECES_MARK + found.pieces
        with _query_lock:
            _shared_pending[_shared_key(embedder, query)] = blob
            if _shared_first_at is None:
                _shared_first_at = time.monotonic()
    return found


def known_query_vector(embedder: Embedder, query: str) -> np.ndarray | None:
    """known_query_embedding's vector."""
    known = known_query_embedding(embedder, query)
    return None if known is None else known.vector


def known_query_embedding(embedder: Embedder, query: str) -> QueryEmbedding | None:
    """The query's embedding if this process or another has computed it (the LRU cache, then
    the shared table on the caller's connection); None when it has to be embedded."""
    key = _cache_key(embedder, query)
    with _query_lock:
        hit = _query_cache.get(key)
        if hit is not None:
            _query_cache.move_to_end(key)
            return hit
    if not SHARE_QUERY_VECTORS or QUERY_CACHE_SIZE == 0:
        return None
    try:
        blob = QueryVector.objects.find(_shared_key(embedder, query))
    except DatabaseError:
        # A cache never fails a recall (a database one release behind, under --no-migrate,
        # has no table yet): the query is embedded as if it were new.
        logger.debug("shared query embeddings unreadable", exc_info=True)
        return None
    found = _decode_shared(embedder, blob) if blob else None
    if found is not None:
        _keep(key, found)
    return found


def _decode_shared(embedder: Embedder, blob: bytes) -> QueryEmbedding | None:
    if not embedder.late_interaction:
        if len(blob) % 4:
            return None
        return QueryEmbedding(np.frombuffer(blob, dtype=np.float32).copy())
    width = embedder.dimensions
    if width is None or blob[width * 4 : width * 4 + 1] != PIECES_MARK:
        return None  # shared before pieces existed: embedded again, pieces included
    vector = np.frombuffer(blob[: width * 4], dtype=np.float32).copy()
    return QueryEmbedding(vector, bytes(blob[width * 4 + 1 :]))


def flush_shared_query_vectors(*, force: bool = False) -> int:
    """Write the query embeddings waiting to be shared, when a second has passed since the
    first of them (or SHARE_AT_PENDING wait, or `force`); returns how many were written. A busy
    database drops them: they are a cache, and the next process embeds the query again."""
    global _shared_first_at
    with _query_lock:
        due = bool(_shared_pending) and (
            force
            or len(_shared_pending) >= SHARE_AT_PENDING
            or (
                _shared_first_at is not None
                and time.monotonic() - _shared_first_at >= SHARE_AFTER_SECONDS
            )
        )
        if not due:
            return 0
        rows = list(_shared_pending.items())
        _shared_pending.clear()
        _shared_first_at = None
    try:
        with transaction.atomic():
            QueryVector.objects.store(rows, timezone.now())
    except DatabaseError:
        logger.info("could not share %d query embeddings; dropped", len(rows))
        return 0
    return len(rows)


def _share_at_exit() -> None:
    try:
        flush_shared_query_vectors(force=True)
    except Exception:  # the interpreter is going away; never turn exit into a traceback
        logger.debug("could not share query embeddings at exit", exc_info=True)


atexit.register(_share_at_exit)
