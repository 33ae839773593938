"""Multi-factor ranking of recall candidates. Pure Python, no Django.

The reference weighs five factors: relevance 0.30, recency 0.25, frequency 0.18,
confidence 0.17, recall-effectiveness impact 0.10, with

    recency   = exp(-days / 30)
    frequency = ln(1 + access_count) / ln(1 + max access_count among the candidates)
    impact    = (hits + 1) / (hits + misses + 2)

Summed as is, the four usage factors (0.70 of the weight) outvote relevance: every recall
boosts what it returned, the boosted memories then crowd out the right one on the next,
unrelated query, and the answer depends on query order (DESIGN §5.3: hit@1 fell from 0.34 to
0.13 on a conversational benchmark). memesh keeps the reference's factors and their relative
weights but bounds what they can do:

    usage = (0.25·recency + 0.18·frequency + 0.17·confidence + 0.10·impact) / 0.70   ∈ [0, 1]
    final = relevance + USAGE_BOUND · usage

relevance is normalised so the best candidate has 1.0. With USAGE_BOUND = 0.15 a memory can
only be lifted above another whose relevance is at most 0.15 higher: usage separates
candidates of comparable relevance and never overrides a clearly better match.

Recency counts days since the later of the last write and the last access, so a memory that
was just written is fresh even if nobody has recalled it yet (DESIGN §5.3).

Ties on `final` break by newest first (higher id), so the same query over the same memories
returns the same list.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

RECENCY_HALF_SCALE_DAYS = 30.0
USAGE_BOUND = 0.15
WEIGHT_RECENCY = 0.25
WEIGHT_FREQUENCY = 0.18
WEIGHT_CONFIDENCE = 0.17
WEIGHT_IMPACT = 0.10
_USAGE_TOTAL = WEIGHT_RECENCY + WEIGHT_FREQUENCY + WEIGHT_CONFIDENCE + WEIGHT_IMPACT


@dataclass(frozen=True, slots=True)
class Candidate:
    entity_id: int
    relevance: float  # 0..1, 1.0 for the best match
    days_since_touch: float  # since the later of the last write and the last access
    access_count: int
    confidence: float
    recall_hits: int
    recall_misses: int


@dataclass(frozen=True, slots=True)
class Ranked:
    entity_id: int
    relevance: float
    usage: float
    score: float


def recency(days: float) -> float:
    return math.exp(-max(days, 0.0) / RECENCY_HALF_SCALE_DAYS)


def frequency(access_count: int, max_access_count: int) -> float:
    if max_access_count <= 0:
        return 0.0
    return math.log1p(access_count) / math.log1p(max_access_count)


def impact(hits: int, misses: int) -> float:
    return (hits + 1) / (hits + misses + 2)


def usage(candidate: Candidate, max_access_count: int) -> float:
    confidence = min(max(candidate.confidence, 0.0), 1.0)
    weighted = (
        WEIGHT_RECENCY * recency(candidate.days_since_touch)
        + WEIGHT_FREQUENCY * frequency(candidate.access_count, max_access_count)
        + WEIGHT_CONFIDENCE * confidence
        + WEIGHT_IMPACT * impact(candidate.recall_hits, candidate.recall_misses)
    )
    return weighted / _USAGE_TOTAL


def rank(candidates: Sequence[Candidate]) -> list[Ranked]:
    """Order candidates best first (see the module docstring for the formula)."""
    max_access = max((c.access_count for c in candidates), default=0)
    ranked = []
    for c in candidates:
        u = usage(c, max_access)
        ranked.append(Ranked(c.entity_id, c.relevance, u, c.relevance + USAGE_BOUND * u))
    ranked.sort(key=lambda r: (-r.score, -r.entity_id))
    return ranked


def normalise_bm25(scores: Sequence[float]) -> list[float]:
    """FTS5 bm25() is negative, lower is better; map to 0..1 relative to the best score."""
    if not scores:
        return []
    best = min(scores)
    if best >= 0:  # no evidence at all: treat every candidate alike
        return [1.0 for _ in scores]
    return [max(s, best) / best if s < 0 else 0.0 for s in scores]
