"""Fusion of keyword and vector evidence into one relevance per candidate. Pure Python.

Every candidate gets both scores where they exist: keyword candidates have their cosine
similarity looked up exactly, vector neighbours have a keyword score of 0 (the keyword index
did not return them). Then

    relevance = KEYWORD_WEIGHT · keyword + (1 − KEYWORD_WEIGHT) · semantic

with `keyword` = keyword_score (bm25 relative to the best candidate, weighed by how much of
the query the memory covers) and `semantic` the cosine similarity rescaled so that
SIMILARITY_FLOOR maps to 0 and SIMILARITY_CEILING to 1.

A weighted sum of normalised scores, not reciprocal-rank fusion: RRF rewards appearing in
both lists, and an OR-ed keyword list is full of memories sharing one generic word with the
question, which RRF then promotes over the paraphrase the vectors found (DESIGN §10 measured
paraphrase hit@5 falling from 0.60 to 0.20). The weights, the rescaling and the cut-off below
were chosen on bench/data/quality (docs/recall.md says how).

A vector neighbour enters only when its similarity reaches SEMANTIC_CUTOFF, so a query about
something memesh does not know returns few or no semantic-only results instead of the
nearest unrelated memories. A keyword candidate whose vector is still being computed is
scored on keyword evidence alone (semantic := keyword), so a fresh memory is not pushed down
for not having a vector yet.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

KEYWORD_WEIGHT = 0.4
SIMILARITY_FLOOR = 0.2
SIMILARITY_CEILING = 0.6
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


def keyword_score(relative: float, covered: float) -> float:
    """Keyword evidence: bm25 relative to the best candidate, times the squared share of the
    query the memory covers. Squared: a memory sharing one generic word with a question is
    weak evidence however it ranks among other weak ones (on the quality set the plain
    product cost paraphrase hit@1 0.13 -> 0.07, the square kept keyword-exact hit@1 at 1.0)."""
    return relative * covered * covered


@dataclass(frozen=True, slots=True)
class Fused:
    entity_id: int
    relevance: float  # 0..1, what ranking uses
    source: str  # "keyword" or "semantic"
    reported: float  # what `match.relevance` says: keyword score, or the similarity


def rescale(similarity: float) -> float:
    span = SIMILARITY_CEILING - SIMILARITY_FLOOR
    return min(1.0, max(0.0, (similarity - SIMILARITY_FLOOR) / span))


def fuse(
    keyword: Mapping[int, float],
    similarity: Mapping[int, float],
    *,
    keyword_weight: float = KEYWORD_WEIGHT,
    cutoff: float = SEMANTIC_CUTOFF,
) -> list[Fused]:
    """Fused candidates: every keyword candidate, plus vector neighbours at or above cutoff."""
    out: list[Fused] = []
    for entity_id, kw in keyword.items():
        sim = similarity.get(entity_id)
        semantic = kw if sim is None else rescale(sim)
        out.append(
            Fused(entity_id, keyword_weight * kw + (1 - keyword_weight) * semantic, "keyword", kw)
        )
    for entity_id, sim in similarity.items():
        if entity_id in keyword or sim < cutoff:
            continue
        out.append(Fused(entity_id, (1 - keyword_weight) * rescale(sim), "semantic", min(1.0, sim)))
    return out
