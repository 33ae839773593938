"""Reads of the memory graph: recall and the entity serialisation it uses.

Recall pipeline for a query (graph.text has the tokenizer, graph.fusion the fusion,
graph.scoring the formula):
1. Tokenize; a non-empty query with nothing searchable returns nothing, and never reaches
   the vector side.
2. Keyword side: each term's document frequency among active entities; the guard and cap;
   FTS5's best candidates by bm25 (filters applied in SQL, before the LIMIT).
3. Vector side, when it can run (vector_side): the query's embedding (cached), its nearest
   neighbours in the live generation, and the exact similarity of every keyword candidate.
4. Fuse the two into one relevance, rank with the bounded usage factors, keep `limit`,
   count an access for each one returned (batched: graph/access.py).
No query lists recent memories (last write first) and counts no access: a listing is not a
match.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.utils import timezone

from graph import fusion, scoring, text, vectors
from graph.access import note_accesses
from graph.embedding import provider
from graph.embedding.base import EmbedderError
from graph.managers import EntityDocument, KeywordHit
from graph.models import Entity, EntityVector, Status
from graph.schemas import (
    EntityOutput,
    Match,
    RecallInput,
    RecallOutput,
    RelationOutput,
    Retrieval,
)

# Candidates read from FTS5 per result slot. Usage factors can lift a candidate only over
# ones within USAGE_BOUND of its relevance, so a few times `limit` is enough to rank from.
CANDIDATE_FACTOR = 2
MIN_CANDIDATES = 40
# Sign-bit neighbours re-ranked by exact cosine: 400 kept 98 % of the true top 10 on MiniLM
# vectors of 4,000 bench memories (200 kept 94 %).
COARSE_CANDIDATES = 400
logger = logging.getLogger(__name__)
RELATION_CONTRADICTS = "contradicts"


def entity_recall(*, data: RecallInput, strategy: str = "hybrid") -> RecallOutput:
    """Recall for a query (hybrid when vectors can run), or the recent listing without one.

    `strategy` is for evaluation only (bench/quality_eval.py): "keyword" or "vector" runs one
    side alone. Transports always use the default.
    """
    namespace = None if data.cross_project else data.namespace
    if data.query is None or not data.query.strip():
        return _recent(data, namespace)
    terms = text.query_terms(data.query)
    if not terms:
        # Nothing searchable (`???`): no results, and no vector call either.
        return RecallOutput(
            entities=[], retrieval=Retrieval(mode="fts", degraded=False, truncated=False)
        )
    now = timezone.now()
    pool = max(data.limit * CANDIDATE_FACTOR, MIN_CANDIDATES)

    keyword: dict[int, float] = {}
    inputs: dict[int, KeywordHit] = {}
    # The query is embedded on another thread while SQLite runs the keyword search (both
    # release the GIL): at 100k memories that hid the ~5 ms of the embedding.
    planned = plan_vector_side(data.query) if strategy != "keyword" else VectorSide(None, False)
    scored = []
    if strategy != "vector":
        scored = _keyword_candidates(data, terms, namespace, pool, now, planned.pending is not None)
    side = planned.resolve()
    for hit, relative, weighed in scored:
        keyword[hit.entity_id] = weighed if side.ran else relative
        inputs[hit.entity_id] = hit
    similarity: dict[int, float] = {}
    # The cut-off guards what recall returns; the vector-only evaluation baseline is the plain
    # nearest-neighbour list.
    cutoff = -1.0 if strategy == "vector" else fusion.SEMANTIC_CUTOFF
    if side.ran:
        assert side.generation is not None and side.query is not None
        for entity_id, sim in EntityVector.objects.nearest(
            side.generation,
            side.query,
            k=pool,
            coarse=max(COARSE_CANDIDATES, pool * 4),
            token=side.token,
        ):
            similarity[entity_id] = sim
        missing = [i for i in keyword if i not in similarity]
        similarity.update(EntityVector.objects.similarities(side.generation, side.query, missing))
        semantic_only = [i for i, sim in similarity.items() if i not in keyword and sim >= cutoff]
        for hit in Entity.objects.ranking_inputs(
            semantic_only, now=now, namespace=namespace, tag=data.tag
        ):
            inputs[hit.entity_id] = hit
        similarity = {i: s for i, s in similarity.items() if i in inputs}

    fused = (
        fusion.fuse(keyword, similarity)
        if side.ran
        else [fusion.Fused(i, kw, "keyword", kw) for i, kw in keyword.items()]
    )
    best = max((f.relevance for f in fused), default=0.0) or 1.0
    ranked = scoring.rank(
        [
            scoring.Candidate(
                f.entity_id,
                f.relevance / best,
                inputs[f.entity_id].days_since_touch,
                inputs[f.entity_id].access_count,
                inputs[f.entity_id].confidence,
                inputs[f.entity_id].recall_hits,
                inputs[f.entity_id].recall_misses,
            )
            for f in fused
        ]
    )
    returned = ranked[: data.limit]
    ids = [r.entity_id for r in returned]
    note_accesses(ids, now)
    by_id = {f.entity_id: f for f in fused}
    matches = {
        i: Match.model_construct(source=by_id[i].source, relevance=round(by_id[i].reported, 4))
        for i in ids
    }
    retrieval = Retrieval(
        mode="hybrid" if side.ran else "fts",
        degraded=side.degraded,
        truncated=len(ranked) > data.limit,
    )
    return _envelope(Entity.objects.documents(ids), matches, retrieval)


def _keyword_candidates(
    data: RecallInput,
    terms: list[str],
    namespace: str | None,
    pool: int,
    now: datetime,
    for_fusion: bool,
) -> list[tuple[KeywordHit, float, float]]:
    """The best `pool` keyword candidates with their bm25 relative to the best one and, for
    fusion, that score weighed by how much of the query each candidate covers (the best of a
    weak lot must not count as strong evidence against a vector neighbour)."""
    doc_freqs = Entity.objects.term_doc_freqs(terms)
    total_rows = Entity.objects.indexed_row_count()
    if data.include_archived:
        # Archived rows are searched too: a term only they contain must not be dropped as
        # matching nothing, and the common-term guard counts over every row searched.
        archived = Entity.objects.term_doc_freqs(terms, archived=True)
        doc_freqs = {term: doc_freqs[term] + archived[term] for term in terms}
        total_rows += Entity.objects.indexed_row_count(archived=True)
    selected = text.select_terms(terms, doc_freqs, total_rows)
    if not selected:
        return []
    hits = Entity.objects.fts_candidates(
        text.match_expression(selected),
        limit=pool,
        now=now,
        include_archived=data.include_archived,
        namespace=namespace,
        tag=data.tag,
    )
    relative = scoring.normalise_bm25([h.bm25 for h in hits])
    if not for_fusion:
        return [(hit, rel, rel) for hit, rel in zip(hits, relative, strict=True)]
    idfs = {t: fusion.idf(doc_freqs[t], total_rows) for t in terms}
    doc_terms = Entity.objects.indexed_terms(
        [h.entity_id for h in hits], include_archived=data.include_archived
    )
    return [
        (
            hit,
            rel,
            fusion.keyword_score(
                rel, fusion.coverage(terms, doc_terms.get(hit.entity_id, set()), idfs)
            ),
        )
        for hit, rel in zip(hits, relative, strict=True)
    ]


@dataclass(frozen=True)
class VectorSide:
    generation: int | None
    degraded: bool
    query: np.ndarray | None = None
    token: str = ""  # tells generations of the same number apart (graph.vector_cache)
    dimensions: int = 0
    pending: Future[np.ndarray] | None = None  # the query's embedding, being computed

    @property
    def ran(self) -> bool:
        return self.query is not None

    def resolve(self) -> VectorSide:
        """Wait for the query's embedding: the side ready to search, or degraded."""
        if self.pending is None:
            return self
        try:
            vector = self.pending.result()
        except EmbedderError as exc:
            logger.warning("query embedding failed, answering keyword-only: %s", exc)
            return VectorSide(None, True)
        if vector.shape != (self.dimensions,):
            return VectorSide(None, True)
        return VectorSide(self.generation, False, vector, self.token)


_embedding_thread = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memesh-query-embed")


def plan_vector_side(query: str) -> VectorSide:
    """Whether the vector search can run for this query; if so, its embedding is started.

    degraded: an embedder is configured but the vector side cannot run — sqlite-vec missing,
    the live index built by another embedder (a reindex is due), no index yet while memories
    exist, or the provider failing now (known once the embedding resolves).
    """
    embedder = provider.current()
    if embedder is None:
        return VectorSide(None, False)
    if not vectors.vectors_supported():
        return VectorSide(None, True)
    live = vectors.live_generation()
    if live is None:
        return VectorSide(None, Entity.objects.indexed_row_count() > 0)
    if live.identity != embedder.identity or embedder.dimensions not in (None, live.dimensions):
        return VectorSide(None, True)  # another embedding space: a reindex is due
    pending = _embedding_thread.submit(vectors.query_vector, embedder, query)
    return VectorSide(
        live.generation, False, token=live.created_at, dimensions=live.dimensions, pending=pending
    )


def vector_side(query: str) -> VectorSide:
    """plan_vector_side, resolved: the side ready to search (or why it cannot)."""
    return plan_vector_side(query).resolve()


def _recent(data: RecallInput, namespace: str | None) -> RecallOutput:
    qs = Entity.objects.all()
    if not data.include_archived:
        qs = qs.filter(status=Status.ACTIVE)
    if namespace is not None:
        qs = qs.filter(namespace=namespace)
    if data.tag is not None:
        qs = qs.filter(tags__name=data.tag)
    ids = list(qs.order_by("-updated_at", "-id").values_list("id", flat=True)[: data.limit + 1])
    # A listing runs no search, so it is never degraded.
    retrieval = Retrieval(mode="fts", degraded=False, truncated=len(ids) > data.limit)
    return _envelope(Entity.objects.documents(ids[: data.limit]), {}, retrieval)


def _history_view(metadata: dict[str, Any]) -> dict[str, Any]:
    """metadata without the versions a `replace` kept, and how many there are: recall shows
    only the count (the old lines must stop surfacing), export carries the versions."""
    history = metadata.get("replaced_history")
    if not history:
        return {"metadata": metadata, "replaced_history_count": None}
    rest = {k: v for k, v in metadata.items() if k != "replaced_history"}
    return {"metadata": rest, "replaced_history_count": len(history)}


def _envelope(
    docs: Sequence[EntityDocument], matches: dict[int, Match], retrieval: Retrieval
) -> RecallOutput:
    returned = {doc.id for doc in docs}
    conflicts = [
        f'"{doc.name}" contradicts "{to_name}"'
        for doc in docs
        for _, to_id, to_name, rel_type in doc.relations
        if rel_type == RELATION_CONTRADICTS and to_id in returned
    ]
    return RecallOutput(
        entities=entity_outputs(docs, matches),
        retrieval=retrieval,
        conflicts=conflicts or None,
    )


def entity_outputs(
    docs: Sequence[EntityDocument], matches: dict[int, Match] | None = None
) -> list[EntityOutput]:
    """Entities as every read operation returns them (recall's shape)."""
    matches = matches or {}
    # model_construct: every value comes typed from the database; validating it again
    # cost more than the rest of the envelope.
    return [
        EntityOutput.model_construct(
            **_history_view(doc.metadata),
            id=doc.id,
            name=doc.name,
            title=doc.title,
            type=doc.type,
            namespace=doc.namespace,
            status=doc.status,
            created_at=doc.created_at,
            updated_at=doc.updated_at,
            confidence=doc.confidence,
            observations=doc.observations,
            tags=doc.tags,
            relations=[
                RelationOutput.model_construct(from_=from_name, to=to_name, type=rel_type)
                for from_name, _, to_name, rel_type in doc.relations
            ],
            match=matches.get(doc.id),
        )
        for doc in docs
    ]
