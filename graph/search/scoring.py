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

Bounded usage cannot let citations decide between memories of equal relevance: impact is a
seventh of usage (four hits lift a memory by ~0.007), while the reads behind recency and
frequency weigh six sevenths, so a memory returned often and never cited rose with every
recall. And the steps that sharpen relevance (the best bm25 match's bonus, late interaction's
MaxSim scaled among the first few) turn the tiniest differences into ~0.1–0.25: two memories
with the same text but different names ended in the order of their names' similarity to the
query. So `impact_first` runs last: memories whose relevance before those steps is within
TIE_MARGIN of each other are equals, and among equals the one with the higher standing goes
first, in the places the ranking gave them (everything else keeps its place):

    equals of the first memory left: relevance within TIE_MARGIN of its own
    their places, in order, go to them sorted by (standing descending, their ranked place)
    standing  = impact(hits if hits >= LIFT_HITS else 0, misses if misses >= SINK_MISSES else 0)

Use counts once there is enough of it: a citation says the memory answered one question, a
miss that it was shown and the session cited something else; neither says much about the
next question, several do. A memory cited LIFT_HITS times or more then ranks above its
equals, one returned SINK_MISSES times or more and never cited below them, and relevance
stays dominant: a memory more than TIE_MARGIN less relevant is never lifted by its use beyond
what bounded usage allows.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

RECENCY_HALF_SCALE_DAYS = 30.0
USAGE_BOUND = 0.15
WEIGHT_RECENCY = 0.25
WEIGHT_FREQUENCY = 0.18
WEIGHT_CONFIDENCE = 0.17
WEIGHT_IMPACT = 0.10
_USAGE_TOTAL = WEIGHT_RECENCY + WEIGHT_FREQUENCY + WEIGHT_CONFIDENCE + WEIGHT_IMPACT
# Relevance (1.0 for the best) within this of a memory's is equal to it. A memory's name is
# part of what is embedded: two memories with the same text named `twin-a`/`twin-b` or
# `deploy-order`/`deploy-order-copy` differed in similarity to a query by 0.006–0.036, hence
# in fused relevance by up to ~0.04; 0.05 is the smallest round margin above that.
TIE_MARGIN = 0.05
# Hits order equals from this many on, misses from SINK_MISSES on. Measured with every query
# of both quality sets recalled in a session of its own that then cites the targets it was
# returned (bench.quality_eval --cite; docs/recall.md has the table): counting every hit and
# miss lost LoCoMo dev hit@1 (0.455 -> 0.437 in reverse order) and hit@5 on
# bench/data/quality, and made the two query orders disagree — a memory cited for one
# question rose above the answer to the next, one returned for one question and not cited
# sank when it was the answer to a later one. Misses from the fifth and hits from the second
# keep the orders in agreement and both sets within a few questions of no use at all.
LIFT_HITS = 2
SINK_MISSES = 5


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


def standing(hits: int, misses: int) -> float:
    """What orders equals (impact_first): impact, its hits counted from LIFT_HITS on and its
    misses from SINK_MISSES on."""
    return impact(hits if hits >= LIFT_HITS else 0, misses if misses >= SINK_MISSES else 0)


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


def impact_first(
    order: Sequence[int],
    relevance: Mapping[int, float],
    standings: Mapping[int, float],
    *,
    places: int | None = None,
    margin: float = TIE_MARGIN,
) -> list[int]:
    """`order` (best first) with each set of equals re-ordered by standing in the places they
    hold (the module docstring has the rule). `relevance` is each memory's relevance before the
    sharpening steps, 1.0 for the best; `standings` each memory's standing(). Only the first
    `places` places are settled (recall keeps its `limit`): a set of equals whose first member
    is below them cannot change them. Unchanged when every standing is the same, as before
    any memory has LIFT_HITS hits or SINK_MISSES misses."""
    if len({standings[i] for i in order}) <= 1:
        return list(order)
    place = {entity_id: p for p, entity_id in enumerate(order)}
    by_relevance = sorted(order, key=relevance.__getitem__)
    values = [relevance[i] for i in by_relevance]
    out = list(order)
    placed: set[int] = set()
    for first in order[:places]:
        if first in placed:
            continue
        own = relevance[first]
        low, high = bisect_left(values, own - margin), bisect_right(values, own + margin)
        equals = [i for i in by_relevance[low:high] if i not in placed]
        placed.update(equals)
        if len({standings[i] for i in equals}) <= 1:
            continue  # one memory, or equals no citation or miss tells apart: places kept
        slots = sorted(place[i] for i in equals)
        for slot, entity_id in zip(
            slots, sorted(equals, key=lambda i: (-standings[i], place[i])), strict=True
        ):
            out[slot] = entity_id
    return out


def normalise_bm25(scores: Sequence[float]) -> list[float]:
    """FTS5 bm25() is negative, lower is better; map to 0..1 relative to the best score."""
    if not scores:
        return []
    best = min(scores)
    if best >= 0:  # no evidence at all: treat every candidate alike
        return [1.0 for _ in scores]
    return [max(s, best) / best if s < 0 else 0.0 for s in scores]
