"""Recall's query embeddings, computed once: a per-process LRU cache, shared between processes
through the database (graph/storage/query_vectors.py).

Without the shared table a query one process embedded would be embedded again by the server's
other process, a hook or the CLI. Rows waiting to be shared are written in batches, at most once
a second per process and at exit.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from django.db import DatabaseError, transaction
from django.utils import timezone

from graph.embedding.base import Embedder
from graph.models import QueryVector

logger = logging.getLogger(__name__)

QUERY_CACHE_SIZE = 512
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


_CacheKey = tuple[str, int | None, str]
_query_cache: OrderedDict[_CacheKey, QueryEmbedding] = OrderedDict()
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


def _cache_key(embedder: Embedder, query: str) -> _CacheKey:
    # The width is part of the key: one model can be configured at several widths.
    return (embedder.identity, embedder.dimensions, query)


def _shared_key(embedder: Embedder, query: str) -> str:
    text = "\0".join([embedder.identity, str(embedder.dimensions), query])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _cached(key: _CacheKey) -> QueryEmbedding | None:
    """The process's cached embedding under `key`, marked most recently used; None: not held."""
    with _query_lock:
        hit = _query_cache.get(key)
        if hit is not None:
            _query_cache.move_to_end(key)
        return hit


def _keep(key: _CacheKey, found: QueryEmbedding) -> None:
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
    hit = _cached(key)
    if hit is not None:
        return hit
    if embedder.late_interaction:
        vectors, pieces = embedder.embed_queries_with_pieces([query])
        found = QueryEmbedding(vectors[0], pieces[0])
    else:
        found = QueryEmbedding(embedder.embed_queries([query])[0])
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
    hit = _cached(key)
    if hit is not None:
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
