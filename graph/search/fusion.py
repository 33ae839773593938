"""Fusion of keyword and vector evidence into one relevance per candidate. Pure Python.

Every candidate gets both scores where they exist: keyword candidates have their cosine
similarity looked up exactly, vector neighbours have a keyword score of 0 (the keyword index
did not return them). Then

    relevance = w · keyword · plausibility + (1 − w) · semantic,
    w = keyword_weight(best coverage, spread of the similarities)

with `keyword` = keyword_score (bm25 relative to the best candidate, weighed by how much of
the query the memory covers) and `semantic` the cosine similarity rescaled so that
SIMILARITY_FLOOR maps to 0 and SIMILARITY_CEILING to 1.

The keyword side is trusted in proportion to its evidence: w runs from KEYWORD_WEIGHT_MIN,
when no keyword candidate holds more than a sliver of the query's information (a paraphrase:
the vectors must decide), to KEYWORD_WEIGHT_MAX, when one holds all of it (the words were
found: a vector neighbour must not displace them). KEYWORD_WEIGHT_MAX is for similarities
that are flat (the best barely above the tenth best: every memory embeds alike, as the turns of
one conversation do); as they spread out to SPREAD, the top falls to KEYWORD_WEIGHT_MAX_SPREAD,
because then the vectors single memories out. The best bm25 match also keeps
TOP_MATCH_BONUS times its coverage. A keyword candidate's words count in proportion to its
`plausibility`: in full from PLAUSIBLE_SIMILARITY up, not at all at IMPLAUSIBLE_SIMILARITY,
unless it holds the whole query (an exact rare-word match stays on top however its meaning
embeds). With a fixed w of 0.4 and no such test, neighbours pushed the keyword evidence down
on real conversations (LoCoMo dev hit@1 0.378 hybrid against 0.404 keyword-only) while
memories sharing one generic word with the question stayed high; docs/recall.md has the
measurements.

Then the session context (`with_context`, for keyword-only answers too): a candidate gains
CONTEXT_WEIGHT times the best relevance of its session neighbours among the candidates — the
memories written up to SESSION_REACH writes before and after it with exactly its tags, such as
the turns around it of one conversation. An answer is often a turn near the one that shares
the question's words. Each keeps the `source` that found it. (In a hybrid recall the
neighbours of the best few that were not candidates join first: graph/ops/recall/adjacent.py,
scored by `adjacent` below, and lifted by JOINED_CONTEXT_WEIGHT.)

A weighted sum of normalised scores, not reciprocal-rank fusion: RRF rewards appearing in
both lists, and an OR-ed keyword list is full of memories sharing one generic word with the
question, which RRF then promotes over the paraphrase the vectors found (DESIGN §10 measured
paraphrase hit@5 falling from 0.60 to 0.20). The weights, the rescaling and the cut-off below
were chosen on bench/data/quality and the LoCoMo dev conversations (docs/recall.md says how).

A vector neighbour enters only when its similarity reaches SEMANTIC_CUTOFF, so a query about
something memesh does not know returns few or no semantic-only results instead of the
nearest unrelated memories. A keyword candidate whose vector is still being computed is
scored on keyword evidence alone (semantic := keyword), so a fresh memory is not pushed down
for not having a vector yet.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

KEYWORD_WEIGHT_MIN = 0.3
KEYWORD_WEIGHT_MAX = 0.9
KEYWORD_WEIGHT_MAX_SPREAD = 0.6
FLAT_SPREAD = 0.12
SPREAD = 0.2
TOP_MATCH_BONUS = 0.1
IMPLAUSIBLE_SIMILARITY = 0.2
PLAUSIBLE_SIMILARITY = 0.4
SIMILARITY_FLOOR = 0.2
SIMILARITY_CEILING = 0.6
CONTEXT_WEIGHT = 0.25
# How many writes before and after a memory its session context reaches (an unbroken run of
# memories with exactly its tags). Two, not one: in a dialogue stored turn by turn, the same
# speaker's next or previous turn is two writes away; LoCoMo dev hit@10 0.783 -> 0.788 with
# bench/data/quality unchanged (docs/recall.md, "Adjacent turns").
SESSION_REACH = 2
# The context weight of a turn that joined only by its place beside the best candidates
# (graph/ops/recall/adjacent.py): neither side found it, so its own score is a low similarity
# and its place is most of its evidence. 0.25 (CONTEXT_WEIGHT) / 0.3 / 0.35 / 0.4 / 0.45 / 0.6
# gave LoCoMo dev hybrid hit@10 0.788 / 0.795 / 0.804 / 0.797 / 0.796 / 0.792 (forward) with
# bench/data/quality identical at every one (docs/recall.md, "Adjacent turns").
JOINED_CONTEXT_WEIGHT = 0.35
SEMANTIC_CUTOFF = 0.25
# When the best keyword candidate holds this share of the query's information (idf-weighted
# terms), the nearest-neighbour search is skipped: the keyword candidates are still fused with
# their exact similarities, but no semantic-only neighbour is looked for. Measured on the
# dumped candidates of both quality sets (docs/recall.md): at 0.7 the search is skipped for
# 40 % of bench/data/quality's queries and 49 % of LoCoMo's with every hit@k equal or higher
# (LoCoMo 0.384/0.613/0.697 -> 0.387/0.614/0.697; quality unchanged on every slice), because a
# memory sharing no word with such a query does not outrank one that holds most of it.
NEIGHBOURS_NOT_NEEDED_COVERAGE = 0.7


def idf(doc_freq: int, total: int) -> float:
    """BM25's inverse document frequency (always positive)."""
    return math.log(1.0 + (total - doc_freq + 0.5) / (doc_freq + 0.5))


def coverage(terms: Sequence[str], doc_terms: set[str], idfs: Mapping[str, float]) -> float:
    """Share of the query's information (idf-weighted terms) that the document contains."""
    total = sum(idfs[t] for t in terms)
    return sum(idfs[t] for t in terms if t in doc_terms) / total if total else 0.0


def neighbours_needed(best_coverage: float) -> bool:
    """Whether a vector-neighbour search can add to keyword candidates whose best covers
    `best_coverage` of the query (see NEIGHBOURS_NOT_NEEDED_COVERAGE)."""
    return best_coverage < NEIGHBOURS_NOT_NEEDED_COVERAGE


def vector_side_can_add(terms: Sequence[str], doc_freqs: Mapping[str, int], pool: int) -> bool:
    """Whether the vector side can add to the keyword side of a query, judged before the query
    is embedded, from its searchable `terms` and their document frequencies.

    Not for one term found in at most `pool` memories (the keyword candidates a recall reads):
    every memory holding that exact term is then a keyword candidate, and each holds the whole
    query, so the neighbour search would be skipped (neighbours_needed at coverage 1) and the
    vectors could only re-order exact matches by the meaning of one word (and bring in the
    memories written beside the best of them). Such a recall answers
    keyword-only, and does not pay for embedding the query. Structural, no fitted threshold; a
    wider rule (every term of a longer query in at most `pool` memories) was measured and not
    adopted: such a memory need not hold the whole query (docs/recall.md)."""
    return not (len(terms) == 1 and 0 < doc_freqs.get(terms[0], 0) <= pool)


def keyword_score(relative: float, covered: float) -> float:
    """Keyword evidence: bm25 relative to the best candidate, times the squared share of the
    query the memory covers. Squared: a memory sharing one generic word with a question is
    weak evidence however it ranks among other weak ones (on the quality set the plain
    product cost paraphrase hit@1 0.13 -> 0.07, the square kept keyword-exact hit@1 at 1.0)."""
    return relative * covered * covered


def spread(similarities: Sequence[float]) -> float:
    """How far the most similar memory stands above the tenth most similar."""
    top = sorted(similarities, reverse=True)[:10]
    return top[0] - top[-1] if top else 0.0


def keyword_weight(best_coverage: float, similarity_spread: float = 0.0) -> float:
    """The keyword side's weight for a query whose best-covering keyword candidate holds this
    share (0..1) of the query's information, and whose similarities have this spread."""
    covered = min(max(best_coverage, 0.0), 1.0)
    informative = min(1.0, max(0.0, (similarity_spread - FLAT_SPREAD) / (SPREAD - FLAT_SPREAD)))
    top = KEYWORD_WEIGHT_MAX - (KEYWORD_WEIGHT_MAX - KEYWORD_WEIGHT_MAX_SPREAD) * informative
    return KEYWORD_WEIGHT_MIN + (top - KEYWORD_WEIGHT_MIN) * covered


@dataclass(frozen=True, slots=True)
class Fused:
    entity_id: int
    relevance: float  # what ranking uses (rank_fused scales it to the best one)
    source: str  # "keyword" or "semantic"
    reported: float  # what `match.relevance` says: keyword score, or the similarity


def rescale(similarity: float) -> float:
    span = SIMILARITY_CEILING - SIMILARITY_FLOOR
    return min(1.0, max(0.0, (similarity - SIMILARITY_FLOOR) / span))


def plausibility(similarity: float | None, covered: float) -> float:
    """How much of a keyword candidate's keyword evidence counts (0..1): all of it when its
    similarity is unknown or at PLAUSIBLE_SIMILARITY, or when it holds all of the query;
    none at IMPLAUSIBLE_SIMILARITY or below. Words shared with the question weigh little in
    a memory whose meaning is far from it."""
    if similarity is None or covered >= 1.0 - 1e-9:
        return 1.0
    span = PLAUSIBLE_SIMILARITY - IMPLAUSIBLE_SIMILARITY
    return min(1.0, max(0.0, (similarity - IMPLAUSIBLE_SIMILARITY) / span))


def fusion_weight(covered: Mapping[int, float], similarity: Mapping[int, float]) -> float:
    """The keyword side's weight in one recall's fusion: keyword_weight of its best coverage
    and of its similarities' spread."""
    return keyword_weight(max(covered.values(), default=0.0), spread(list(similarity.values())))


def adjacent(similarity: Mapping[int, float], weight: float) -> list[Fused]:
    """Session neighbours of the best candidates that neither side found (graph/ops/recall/
    adjacent.py), scored as a vector neighbour would be under the recall's `weight`, with no
    cut-off: with_context then lifts each by the candidate it stands next to."""
    return [
        Fused(i, (1 - weight) * rescale(sim), "semantic", min(1.0, sim))
        for i, sim in similarity.items()
    ]


def fuse(
    keyword: Mapping[int, float],
    similarity: Mapping[int, float],
    *,
    covered: Mapping[int, float],
    top_match: int | None = None,
    cutoff: float = SEMANTIC_CUTOFF,
) -> list[Fused]:
    """Fused candidates: every keyword candidate, plus vector neighbours at or above cutoff.

    covered: each keyword candidate's share of the query (coverage); the largest sets the
    keyword weight. top_match: the best bm25 match, which earns TOP_MATCH_BONUS."""
    weight = fusion_weight(covered, similarity)
    out: list[Fused] = []
    for entity_id, kw in keyword.items():
        sim = similarity.get(entity_id)
        semantic = kw if sim is None else rescale(sim)
        counted = kw * plausibility(sim, covered.get(entity_id, 0.0))
        out.append(Fused(entity_id, weight * counted + (1 - weight) * semantic, "keyword", kw))
    for entity_id, sim in similarity.items():
        if entity_id in keyword or sim < cutoff:
            continue
        out.append(Fused(entity_id, (1 - weight) * rescale(sim), "semantic", min(1.0, sim)))
    return with_top_match(out, top_match, covered=covered, similarity=similarity)


def with_top_match(
    fused: Sequence[Fused],
    top_match: int | None,
    *,
    covered: Mapping[int, float],
    similarity: Mapping[int, float],
) -> list[Fused]:
    """`fused` with the best bm25 match raised by TOP_MATCH_BONUS times its coverage (and its
    plausibility). Apart from fuse, because recall also keeps the relevance before it: the
    bonus goes to one memory even when another ties it (graph.search.scoring.impact_first)."""
    out = []
    for f in fused:
        if f.entity_id == top_match:
            sim, share = similarity.get(f.entity_id), covered.get(f.entity_id, 0.0)
            bonus = TOP_MATCH_BONUS * share * plausibility(sim, share)
            f = Fused(f.entity_id, f.relevance + bonus, f.source, f.reported)
        out.append(f)
    return out


def with_context(
    fused: Sequence[Fused],
    neighbours: Mapping[int, Sequence[int]],
    *,
    weight: float = CONTEXT_WEIGHT,
    joined: Collection[int] = (),
    joined_weight: float = JOINED_CONTEXT_WEIGHT,
) -> list[Fused]:
    """Each candidate's relevance plus `weight` (`joined_weight` for the `joined` ones, the
    turns brought in by their place alone) times the best relevance of its session neighbours
    among the candidates (taken from the relevances before any is raised)."""
    relevance = {f.entity_id: f.relevance for f in fused}
    out = []
    for f in fused:
        near = [relevance[n] for n in neighbours.get(f.entity_id, ()) if n in relevance]
        lift = (joined_weight if f.entity_id in joined else weight) * max(near) if near else 0.0
        out.append(Fused(f.entity_id, f.relevance + lift, f.source, f.reported) if lift else f)
    return out
