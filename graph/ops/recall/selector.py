"""recall's selector: the hybrid recall pipeline, or the recent listing without a query.

Recall pipeline for a query (graph.search.text has the tokenizer, graph.search.fusion the
fusion, graph.search.scoring the formula):
1. Tokenize; a non-empty query with nothing searchable returns nothing, and never reaches
   the vector side.
2. Keyword side: each term's document frequency among active entities; the guard and cap;
   FTS5's best candidates by bm25 (filters applied in SQL, before the LIMIT).
3. Vector side, when it can run (vector_side) and can add something (not for one term in at
   most the keyword candidates' number of memories: fusion.vector_side_can_add, decided
   before the query is embedded): the query's embedding (cached), its nearest
   neighbours in the live generation, and the exact similarity of every keyword candidate.
   The neighbour search is skipped when the best keyword candidate already holds most of the
   query (fusion.neighbours_needed): a memory sharing none of its words would not outrank it.
4. Fuse the two into one relevance; bring in the session neighbours of the best few
   (graph/ops/recall/adjacent.py); lift the most relevant by late interaction when the
   keyword side found most of the query (graph.search.late_interaction); rank with the
   bounded usage factors, re-order the first few by late interaction when their pieces
   exist, put cited memories first among equals (scoring.impact_first), keep `limit`,
   count an access for each one returned, and note it as returned to the call's session
   (batched: graph/ops/recall/access.py; graph/ops/feedback.py settles sessions).
No query lists recent memories (last write first) and counts no access: a listing is not a
match.

Both run inside the read's project scope (graph/ops/kit/scope.py), applied in SQL with the other
filters: the keyword candidates, the vector side's neighbours (searched among the scope's
ids) and the listing are the scope's own, never a filtered remainder of the whole database's.
Both keep to the trust filters (graph/ops/kit/trust/): `status` (facts or hypotheses only) and,
unless `include_expired`, no memory whose `ttl_hours` has run out by `now`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from django.utils import timezone

from graph.indexing import query_cache
from graph.models import Entity, EntityVector, Status
from graph.ops.kit.entity_view import Match, entity_outputs
from graph.ops.kit.scope import UNBOUND, ReadScope, ScopeOutput
from graph.ops.recall.access import note_accesses
from graph.ops.recall.adjacent import adjacent_candidates
from graph.ops.recall.schema import RecallInput, RecallOutput, Retrieval
from graph.ops.recall.vector_side import VectorSide, plan_vector_side
from graph.project_tags import is_project_tag
from graph.search import fusion, late_interaction, scoring, text
from graph.storage.documents import EntityDocument
from graph.storage.entity_filters import EntityFilters
from graph.storage.keyword.retrieval import KeywordHit

# Candidates read from FTS5 per result slot. Usage factors can lift a candidate only over
# ones within USAGE_BOUND of its relevance, so a few times `limit` is enough to rank from.
CANDIDATE_FACTOR = 2
MIN_CANDIDATES = 40
# Sign-bit neighbours re-ranked by exact cosine: 400 kept 98 % of the true top 10 on MiniLM
# vectors of 4,000 bench memories (200 kept 94 %).
COARSE_CANDIDATES = 400
RELATION_CONTRADICTS = "contradicts"


def recall_filters(data: RecallInput, scope: ReadScope) -> EntityFilters:
    """What recall's storage queries keep. `cross_project` lifts the project scope (ReadScope)
    and, as the reference says, a `project:` tag filter and the namespace filter; another tag
    still filters. `status` keeps facts or hypotheses only (the expiry filter is the query
    path's: _unexpired_at)."""
    lifted = data.cross_project
    tag = None if lifted and data.tag is not None and is_project_tag(data.tag) else data.tag
    return EntityFilters(
        None if lifted else data.namespace, tag, scope.storage_project, trust=data.status
    )


def entity_recall(
    *, data: RecallInput, scope: ReadScope = UNBOUND, now: datetime | None = None
) -> RecallOutput:
    """Recall for a query (hybrid when vectors can run), or the recent listing without one,
    among the memories `scope` keeps. `now` is the time recency and expiry are measured at
    (tests move it)."""
    now = now or timezone.now()
    filters = recall_filters(data, scope)
    scope_out = scope.output()
    if data.query is None or not data.query.strip():
        return _recent(data, filters, scope, now)
    terms = text.query_terms(data.query)
    if not terms:
        # Nothing searchable (`???`): no results, and no vector call either.
        return RecallOutput(
            entities=[],
            retrieval=Retrieval(mode="fts", degraded=False, truncated=False),
            scope=scope_out,
        )
    filters = replace(filters, unexpired_at=_unexpired_at(data, now))
    pool = max(data.limit * CANDIDATE_FACTOR, MIN_CANDIDATES)

    keyword: dict[int, float] = {}
    inputs: dict[int, KeywordHit] = {}
    doc_freqs, total_rows = _term_stats(data, terms)
    # The query is embedded on another thread while SQLite runs the keyword search (both
    # release the GIL): at 100k memories that hid the ~5 ms of the embedding. Not at all when
    # the vector side can add nothing (a rare exact term, fusion.vector_side_can_add): that
    # recall is keyword-only by design, degraded only if the vector side could not have run.
    wanted = fusion.vector_side_can_add(terms, doc_freqs, pool)
    planned = plan_vector_side(data.query, embed=wanted)
    scored = _keyword_candidates(
        data, terms, filters, pool, now, planned.may_run, stats=(doc_freqs, total_rows)
    )
    if not scored and not wanted and not planned.degraded:
        # The term's memories are all outside this recall's filters: the vectors may still
        # find something near it in scope, as they would have.
        planned = plan_vector_side(data.query)
    side: VectorSide = planned.resolve()
    for candidate in scored:
        keyword[candidate.hit.entity_id] = candidate.weighed if side.ran else candidate.relative
        inputs[candidate.hit.entity_id] = candidate.hit
    similarity: dict[int, float] = {}
    best_coverage = scored[0].covered if scored else 0.0
    if side.ran and fusion.neighbours_needed(best_coverage):
        assert side.generation is not None and side.query is not None
        # A filtered (or project-scoped) recall searches the vectors of its scope only: the
        # nearest neighbours of the whole database would mostly be dropped afterwards. (The
        # expiry filter alone does not narrow it: expired memories are few, and ranking_inputs
        # drops any neighbour it keeps out.)
        among = (
            Entity.objects.scoped_ids(
                namespace=filters.namespace,
                tag=filters.tag,
                project=filters.project,
                trust=filters.trust,
                unexpired_at=filters.unexpired_at,
            )
            if replace(filters, unexpired_at=None)
            else None
        )
        for entity_id, sim in EntityVector.objects.nearest(
            side.generation,
            side.query,
            k=pool,
            coarse=max(COARSE_CANDIDATES, pool * 4),
            token=side.token,
            among=among,
        ):
            similarity[entity_id] = sim
    if side.ran:
        assert side.generation is not None and side.query is not None
        missing = [i for i in keyword if i not in similarity]
        similarity.update(EntityVector.objects.similarities(side.generation, side.query, missing))
        similarity = side.calibrated(similarity)
        semantic_only = [
            i for i, sim in similarity.items() if i not in keyword and sim >= fusion.SEMANTIC_CUTOFF
        ]
        for hit in Entity.objects.ranking_inputs(semantic_only, now=now, filters=filters):
            inputs[hit.entity_id] = hit
        similarity = {i: s for i, s in similarity.items() if i in inputs}

    covered = {c.hit.entity_id: c.covered for c in scored}
    fused = (
        fusion.fuse(keyword, similarity, covered=covered)
        if side.ran
        else [fusion.Fused(i, kw, "keyword", kw) for i, kw in keyword.items()]
    )
    # The relevance before the steps that sharpen it (the top match's bonus, the MaxSim lift):
    # which memories are equals, for scoring.impact_first.
    plain = list(fused)
    if side.ran and scored:
        top_match = scored[0].hit.entity_id
        fused = fusion.with_top_match(fused, top_match, covered=covered, similarity=similarity)
    joined: list[fusion.Fused] = []
    if side.ran and fused:
        assert side.generation is not None and side.query is not None
        joined = adjacent_candidates(
            [r.entity_id for r in rank_fused(fused, inputs)],
            inputs,
            weight=fusion.fusion_weight(covered, similarity),
            generation=side.generation,
            query=side.query,
            filters=filters,
            now=now,
            calibrated=side.calibrated,
        )
        fused += joined
        plain += joined
    pieces: dict[int, bytes] = {}
    maxsims: dict[int, float] = {}
    if (
        side.ran
        and side.pieces
        and len(terms) >= late_interaction.LIFT_MIN_TERMS
        and best_coverage >= late_interaction.LIFT_MIN_COVERAGE
    ):
        assert side.generation is not None
        most_relevant = late_interaction.head_of(fused)
        pieces = EntityVector.objects.pieces_of(side.generation, most_relevant)
        fused, maxsims = late_interaction.lift_order(
            fused, pieces, side.pieces, best_coverage, most_relevant
        )
    neighbours = Entity.objects.session_neighbours(list(inputs), reach=fusion.SESSION_REACH)
    joined_ids = {f.entity_id for f in joined}
    fused = fusion.with_context(fused, neighbours, joined=joined_ids)
    plain = fusion.with_context(plain, neighbours, joined=joined_ids) if side.ran else fused
    ranked = [r.entity_id for r in rank_fused(fused, inputs)]
    if side.ran and side.pieces:
        assert side.generation is not None
        head = ranked[: late_interaction.DEPTH]
        pieces.update(
            EntityVector.objects.pieces_of(side.generation, [i for i in head if i not in pieces])
        )
        ranked = late_interaction.reorder(ranked, pieces, side.pieces, covered, maxsims)
    ranked = impact_first(ranked, plain, inputs, places=data.limit)
    ids = ranked[: data.limit]
    note_accesses(ids, now, session_id=data.session_id)
    query_cache.flush_shared_query_vectors()
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
    return _envelope(Entity.objects.documents(ids), matches, retrieval, scope_out, now)


def _unexpired_at(data: RecallInput, now: datetime) -> datetime | None:
    """The time expiry is judged at: None when the call includes expired memories or none
    has expired by `now` (then no query pays for the filter)."""
    if data.include_expired or not Entity.objects.expired_exist(now):
        return None
    return now


def rank_fused(
    fused: Sequence[fusion.Fused], inputs: Mapping[int, KeywordHit]
) -> list[scoring.Ranked]:
    """The fused candidates ranked by graph.search.scoring, relevance scaled to the best one
    and the usage factors read from each candidate's ranking inputs."""
    best = max((f.relevance for f in fused), default=0.0) or 1.0
    return scoring.rank(
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


def impact_first(
    ranked: Sequence[int],
    plain: Sequence[fusion.Fused],
    inputs: Mapping[int, KeywordHit],
    *,
    places: int,
) -> list[int]:
    """`ranked` with memories of equal `plain` relevance (scaled to the best one) ordered by
    their use, cited ones first, as far as the first `places` (scoring.impact_first)."""
    best = max((f.relevance for f in plain), default=0.0) or 1.0
    return scoring.impact_first(
        ranked,
        {f.entity_id: f.relevance / best for f in plain},
        {i: scoring.standing(inputs[i].recall_hits, inputs[i].recall_misses) for i in ranked},
        places=places,
    )


@dataclass(frozen=True, slots=True)
class KeywordCandidate:
    hit: KeywordHit
    relative: float  # bm25 relative to the best candidate's
    weighed: float  # for fusion: `relative` weighed by `covered` (fusion.keyword_score)
    covered: float  # share of the query's information it holds (fusion.coverage)


def _term_stats(data: RecallInput, terms: list[str]) -> tuple[dict[str, int], int]:
    """(how many memories the recall searches hold each term, how many it searches): the
    live index's counts, with the archived index's added when the call includes it."""
    doc_freqs, total_rows = Entity.objects.term_stats(terms)
    if data.include_archived:
        # Archived rows are searched too: a term only they contain must not be dropped as
        # matching nothing, and the common-term guard counts over every row searched.
        archived, archived_rows = Entity.objects.term_stats(terms, archived=True)
        doc_freqs = {term: doc_freqs[term] + archived[term] for term in terms}
        total_rows += archived_rows
    return doc_freqs, total_rows


def _keyword_candidates(
    data: RecallInput,
    terms: list[str],
    filters: EntityFilters,
    pool: int,
    now: datetime,
    for_fusion: bool,
    *,
    stats: tuple[dict[str, int], int] | None = None,
) -> list[KeywordCandidate]:
    """The best `pool` keyword candidates, best first, with their bm25 relative to the best one
    and, for fusion, that score weighed by how much of the query each candidate covers (the
    best of a weak lot must not count as strong evidence against a vector neighbour). `stats`
    is _term_stats' answer for `terms`, when the caller has it already."""
    doc_freqs, total_rows = stats or _term_stats(data, terms)
    selected = text.select_terms(terms, doc_freqs, total_rows)
    if not selected:
        return []
    hits = Entity.objects.fts_candidates(
        text.match_expression(selected),
        limit=pool,
        now=now,
        include_archived=data.include_archived,
        namespace=filters.namespace,
        tag=filters.tag,
        project=filters.project,
        trust=filters.trust,
        unexpired_at=filters.unexpired_at,
        newest=text.match_window(selected, doc_freqs, total_rows, pool),
    )
    relative = scoring.normalise_bm25([h.bm25 for h in hits])
    if not for_fusion:
        return [KeywordCandidate(h, rel, rel, 0.0) for h, rel in zip(hits, relative, strict=True)]
    idfs = {t: fusion.idf(doc_freqs[t], total_rows) for t in terms}
    if len(selected) == 1 and all(doc_freqs[t] == 0 for t in terms if t != selected[0]):
        # Every hit matched the one term searched, and no other term is in any memory (a
        # one-word query, most often): nothing to look up.
        doc_terms = {h.entity_id: {selected[0]} for h in hits}
    else:
        doc_terms = Entity.objects.terms_present(
            [h.entity_id for h in hits], terms, include_archived=data.include_archived
        )
    out = []
    for hit, rel in zip(hits, relative, strict=True):
        covered = fusion.coverage(terms, doc_terms.get(hit.entity_id, set()), idfs)
        out.append(KeywordCandidate(hit, rel, fusion.keyword_score(rel, covered), covered))
    return out


def _recent(
    data: RecallInput, filters: EntityFilters, scope: ReadScope, now: datetime
) -> RecallOutput:
    qs = Entity.objects.all()
    if not data.include_archived:
        qs = qs.filter(status=Status.ACTIVE)
    unexpired_at = None if data.include_expired else now
    qs = replace(filters, unexpired_at=unexpired_at).restrict(qs)
    ids = list(qs.order_by("-updated_at", "-id").values_list("id", flat=True)[: data.limit + 1])
    # A listing runs no search, so it is never degraded.
    retrieval = Retrieval(mode="fts", degraded=False, truncated=len(ids) > data.limit)
    return _envelope(
        Entity.objects.documents(ids[: data.limit]), {}, retrieval, scope.output(), now
    )


def _envelope(
    docs: Sequence[EntityDocument],
    matches: dict[int, Match],
    retrieval: Retrieval,
    scope: ScopeOutput,
    now: datetime,
) -> RecallOutput:
    returned = {doc.id for doc in docs}
    conflicts = [
        f'"{doc.name}" contradicts "{to_name}"'
        for doc in docs
        for _, to_id, to_name, rel_type in doc.relations
        if rel_type == RELATION_CONTRADICTS and to_id in returned
    ]
    return RecallOutput(
        entities=entity_outputs(docs, matches, now=now),
        retrieval=retrieval,
        scope=scope,
        conflicts=conflicts or None,
    )
