"""recall's vector side: whether it can run for a query, and the query's embedding: known
already (this process's cache, or the table the processes share), or computed on another
thread while SQLite runs the keyword search."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from graph.embedding import provider
from graph.embedding.base import EmbedderError
from graph.indexing import generations, query_cache
from graph.models import Entity

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class VectorSide:
    generation: int | None
    degraded: bool
    query: np.ndarray | None = None
    token: str = ""  # tells generations of the same number apart (graph.storage.vector_cache)
    dimensions: int = 0
    pending: Future[query_cache.QueryEmbedding] | None = None  # the query's embedding, on its way
    pieces: bytes = b""  # the query's packed content pieces (graph.search.late_interaction)
    similarity_map: tuple[float, float] = (0.0, 1.0)  # the embedder's (Embedder.similarity_map)

    def calibrated(self, similarity: Mapping[int, float]) -> dict[int, float]:
        """The model's cosines on the scale the fusion's constants were measured on."""
        offset, scale = self.similarity_map
        if (offset, scale) == (0.0, 1.0):
            return dict(similarity)
        return {i: offset + scale * s for i, s in similarity.items()}

    @property
    def ran(self) -> bool:
        return self.query is not None

    @property
    def may_run(self) -> bool:
        """Whether the vector side runs, or will once the embedding resolves: the keyword
        candidates are then weighed for fusion."""
        return self.query is not None or self.pending is not None

    def resolve(self) -> VectorSide:
        """Wait for the query's embedding: the side ready to search, or degraded."""
        if self.pending is None:
            return self
        try:
            found = self.pending.result()
        except EmbedderError as exc:
            logger.warning("query embedding failed, answering keyword-only: %s", exc)
            return VectorSide(None, True)
        if found.vector.shape != (self.dimensions,):
            return VectorSide(None, True)
        return VectorSide(
            self.generation,
            False,
            found.vector,
            self.token,
            pieces=found.pieces,
            similarity_map=self.similarity_map,
        )


_embedding_thread = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memesh-query-embed")


def plan_vector_side(query: str, *, embed: bool = True) -> VectorSide:
    """Whether the vector search can run for this query; if so, its embedding is started.

    degraded: an embedder is configured but the vector side cannot run — sqlite-vec missing,
    the live index built by another embedder (a reindex is due), no index yet while memories
    exist, or the provider failing now (known once the embedding resolves).
    Without `embed`, only those checks: a recall the vector side can add nothing to
    (graph.search.fusion.vector_side_can_add) runs keyword-only, and still says when the
    vector side could not have run.
    """
    embedder = provider.current()
    if embedder is None:
        return VectorSide(None, False)
    if not generations.vectors_supported():
        return VectorSide(None, True)
    live = generations.live_generation()
    if live is None:
        return VectorSide(None, Entity.objects.indexed_row_count() > 0)
    if live.identity != embedder.identity:
        # Another embedding space: searched with the local model that built it while the
        # configured one's generation is built; any other provider's waits for a reindex.
        embedder = provider.for_generation(live.provider, live.model)
        if embedder is None or embedder.identity != live.identity:
            return VectorSide(None, True)
    if embedder.dimensions not in (None, live.dimensions):
        return VectorSide(None, True)
    if not embed:
        return VectorSide(None, False)
    known = query_cache.known_query_embedding(embedder, query)
    if known is not None and known.vector.shape == (live.dimensions,):
        return VectorSide(
            live.generation,
            False,
            known.vector,
            live.created_at,
            live.dimensions,
            pieces=known.pieces,
            similarity_map=embedder.similarity_map,
        )
    pending = _embedding_thread.submit(query_cache.query_embedding, embedder, query, share=True)
    return VectorSide(
        live.generation,
        False,
        token=live.created_at,
        dimensions=live.dimensions,
        pending=pending,
        similarity_map=embedder.similarity_map,
    )
