"""Reads of the memory graph: recall (keyword path) and the entity serialisation it uses.

Recall pipeline for a query (graph.text has the tokenizer, graph.scoring the formula):
1. Tokenize; a non-empty query with nothing searchable returns nothing.
2. Look up each term's document frequency among active entities; apply the guard and cap.
3. Ask FTS5 for the best candidates by bm25 (filters applied in SQL, before the LIMIT).
4. Rank with the bounded usage factors, keep `limit`, count an access for each one returned
   (batched: graph/access.py).
No query lists recent memories (last write first) and counts no access: a listing is not a
match.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.utils import timezone

from graph import scoring, text
from graph.access import note_accesses
from graph.managers import EntityDocument
from graph.models import Entity, Status
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
RELATION_CONTRADICTS = "contradicts"


def entity_recall(*, data: RecallInput) -> RecallOutput:
    namespace = None if data.cross_project else data.namespace
    if data.query is None or not data.query.strip():
        return _recent(data, namespace)
    nothing = RecallOutput(
        entities=[], retrieval=Retrieval(mode="fts", degraded=False, truncated=False)
    )

    terms = text.query_terms(data.query)
    if not terms:
        return nothing
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
        return nothing

    now = timezone.now()
    hits = Entity.objects.fts_candidates(
        text.match_expression(selected),
        limit=max(data.limit * CANDIDATE_FACTOR, MIN_CANDIDATES),
        now=now,
        include_archived=data.include_archived,
        namespace=namespace,
        tag=data.tag,
    )
    relevances = scoring.normalise_bm25([h.bm25 for h in hits])
    ranked = scoring.rank(
        [
            scoring.Candidate(
                h.entity_id,
                rel,
                h.days_since_touch,
                h.access_count,
                h.confidence,
                h.recall_hits,
                h.recall_misses,
            )
            for h, rel in zip(hits, relevances, strict=True)
        ]
    )
    returned = ranked[: data.limit]
    ids = [r.entity_id for r in returned]
    note_accesses(ids, now)
    matches = {
        r.entity_id: Match.model_construct(source="keyword", relevance=round(r.relevance, 4))
        for r in returned
    }
    return _envelope(Entity.objects.documents(ids), matches, truncated=len(ranked) > data.limit)


def _recent(data: RecallInput, namespace: str | None) -> RecallOutput:
    qs = Entity.objects.all()
    if not data.include_archived:
        qs = qs.filter(status=Status.ACTIVE)
    if namespace is not None:
        qs = qs.filter(namespace=namespace)
    if data.tag is not None:
        qs = qs.filter(tags__name=data.tag)
    ids = list(qs.order_by("-updated_at", "-id").values_list("id", flat=True)[: data.limit + 1])
    return _envelope(
        Entity.objects.documents(ids[: data.limit]), {}, truncated=len(ids) > data.limit
    )


def _envelope(
    docs: Sequence[EntityDocument], matches: dict[int, Match], *, truncated: bool
) -> RecallOutput:
    returned = {doc.id for doc in docs}
    conflicts = [
        f'"{doc.name}" contradicts "{to_name}"'
        for doc in docs
        for _, to_id, to_name, rel_type in doc.relations
        if rel_type == RELATION_CONTRADICTS and to_id in returned
    ]
    # model_construct: every value comes typed from the database; validating it again
    # cost more than the rest of the envelope.
    entities = [
        EntityOutput.model_construct(
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
            metadata=doc.metadata,
            match=matches.get(doc.id),
        )
        for doc in docs
    ]
    return RecallOutput(
        entities=entities,
        retrieval=Retrieval(mode="fts", degraded=False, truncated=truncated),
        conflicts=conflicts or None,
    )
