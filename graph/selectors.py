"""Reads of the memory graph: recall (keyword path) and the entity serialisation it uses.

Recall pipeline for a query (graph.text has the tokenizer, graph.scoring the formula):
1. Tokenize; a non-empty query with nothing searchable returns nothing.
2. Look up each term's document frequency among active entities; apply the guard and cap.
3. Ask FTS5 for the best candidates by bm25 (filters applied in SQL, before the LIMIT).
4. Rank with the bounded usage factors, keep `limit`, count an access for each one returned.
No query lists recent memories (last write first) and counts no access: a listing is not a
match.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime

from django.db.models import Q
from django.utils import timezone

from graph import scoring, text
from graph.models import Entity, Observation, Relation, Status, Tag
from graph.schemas import (
    EntityOutput,
    Match,
    RecallInput,
    RecallOutput,
    RelationOutput,
    Retrieval,
)
from graph.services import entity_accesses_record

# Candidates read from FTS5 per result slot. Usage factors can lift a candidate only over
# ones within USAGE_BOUND of its relevance, so a few times `limit` is enough to rank from.
CANDIDATE_FACTOR = 3
MIN_CANDIDATES = 60
RELATION_CONTRADICTS = "contradicts"

_ENTITY_FIELDS = (
    "id",
    "name",
    "title",
    "type",
    "namespace",
    "status",
    "confidence",
    "access_count",
    "last_accessed_at",
    "recall_hits",
    "recall_misses",
    "created_at",
    "updated_at",
    "metadata",
)


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def entity_recall(*, data: RecallInput) -> RecallOutput:
    namespace = None if data.cross_project else data.namespace
    retrieval_empty = RecallOutput(
        entities=[], retrieval=Retrieval(mode="fts", degraded=False, truncated=False)
    )
    if data.query is None or not data.query.strip():
        return _recent(data, namespace)

    terms = text.query_terms(data.query)
    if not terms:
        return retrieval_empty
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
        return retrieval_empty

    hits = Entity.objects.fts_candidates(
        text.match_expression(selected),
        limit=max(data.limit * CANDIDATE_FACTOR, MIN_CANDIDATES),
        include_archived=data.include_archived,
        namespace=namespace,
        tag=data.tag,
    )
    rows = {
        row["id"]: row
        for row in Entity.objects.filter(pk__in=[h.entity_id for h in hits]).values(*_ENTITY_FIELDS)
    }
    relevances = scoring.normalise_bm25([h.bm25 for h in hits])
    candidates = [
        scoring.Candidate(
            entity_id=h.entity_id,
            relevance=rel,
            updated_at=rows[h.entity_id]["updated_at"],
            last_accessed_at=rows[h.entity_id]["last_accessed_at"],
            access_count=rows[h.entity_id]["access_count"],
            confidence=rows[h.entity_id]["confidence"],
            recall_hits=rows[h.entity_id]["recall_hits"],
            recall_misses=rows[h.entity_id]["recall_misses"],
        )
        for h, rel in zip(hits, relevances, strict=True)
        if h.entity_id in rows
    ]
    ranked = scoring.rank(candidates, timezone.now())
    returned = ranked[: data.limit]
    ids = [r.entity_id for r in returned]
    entity_accesses_record(ids)
    matches = {
        r.entity_id: Match(source="keyword", relevance=round(r.relevance, 4)) for r in returned
    }
    return _envelope([rows[i] for i in ids], matches, truncated=len(ranked) > data.limit)


def _recent(data: RecallInput, namespace: str | None) -> RecallOutput:
    qs = Entity.objects.all()
    if not data.include_archived:
        qs = qs.filter(status=Status.ACTIVE)
    if namespace is not None:
        qs = qs.filter(namespace=namespace)
    if data.tag is not None:
        qs = qs.filter(Q(tags__name=data.tag))
    rows = list(qs.order_by("-updated_at", "-id").values(*_ENTITY_FIELDS)[: data.limit + 1])
    return _envelope(rows[: data.limit], {}, truncated=len(rows) > data.limit)


def _envelope(rows: Sequence[dict], matches: dict[int, Match], *, truncated: bool) -> RecallOutput:
    ids = [row["id"] for row in rows]
    observations: dict[int, list[str]] = defaultdict(list)
    for entity_id, body in Observation.objects.filter(entity_id__in=ids).values_list(
        "entity_id", "text"
    ):
        observations[entity_id].append(body)
    tags: dict[int, list[str]] = defaultdict(list)
    for entity_id, name in Tag.objects.filter(entity_id__in=ids).values_list("entity_id", "name"):
        tags[entity_id].append(name)
    relations: dict[int, list[RelationOutput]] = defaultdict(list)
    conflicts: list[str] = []
    returned = set(ids)
    for from_id, from_name, to_id, to_name, rel_type in Relation.objects.filter(
        from_entity_id__in=ids
    ).values_list("from_entity_id", "from_entity__name", "to_entity_id", "to_entity__name", "type"):
        relations[from_id].append(
            RelationOutput(**{"from": from_name, "to": to_name, "type": rel_type})
        )
        if rel_type == RELATION_CONTRADICTS and to_id in returned:
            conflicts.append(f'"{from_name}" contradicts "{to_name}"')

    entities = [
        EntityOutput(
            id=row["id"],
            name=row["name"],
            title=row["title"],
            type=row["type"],
            namespace=row["namespace"],
            status=row["status"],
            created_at=_iso(row["created_at"]),
            updated_at=_iso(row["updated_at"]),
            confidence=row["confidence"],
            observations=observations[row["id"]],
            tags=tags[row["id"]],
            relations=relations[row["id"]],
            metadata=row["metadata"],
            match=matches.get(row["id"]),
        )
        for row in rows
    ]
    return RecallOutput(
        entities=entities,
        retrieval=Retrieval(mode="fts", degraded=False, truncated=truncated),
        conflicts=conflicts or None,
    )
