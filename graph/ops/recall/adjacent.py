"""The turns around a hybrid recall's best candidates, brought in as candidates of their own.

A memory's answer is often the one written right before or after it in the same session: a
question's words match "Her name is Shadow!" and the answer is the turn before it, "I just
adopted this cute pup". Fusion's session context (graph.search.fusion.with_context) lifts a
candidate by its neighbours' relevance, but only among the candidates, and such a turn is
often neither a keyword match nor a near vector. So the session neighbours of the first
SOURCES in the fused ranking (up to fusion.SESSION_REACH writes away) join the candidates:
scored by their own similarity to the query as a vector neighbour is, then lifted by the
session context, by fusion.JOINED_CONTEXT_WEIGHT of their best neighbour's relevance (their
place is most of their evidence). They compete with the rest on that score; nothing is placed
by rule. Measured on both quality sets
(docs/recall.md, "Adjacent turns"). Keyword-only recall has no similarity to score them by,
so it only re-ranks its candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping, Sequence
from datetime import datetime

import numpy as np

from graph.models import Entity, EntityVector
from graph.search import fusion
from graph.storage.entity_filters import EntityFilters
from graph.storage.keyword.retrieval import KeywordHit

# The fused ranking's first SOURCES bring their neighbours in: 1, 3, 5 and 10 were measured;
# 3 was best at hit@5 on LoCoMo, and 10 lost a quality-set query at hit@5.
SOURCES = 3


def adjacent_candidates(
    ranked: Sequence[int],
    inputs: MutableMapping[int, KeywordHit],
    *,
    weight: float,
    generation: int,
    query: np.ndarray,
    filters: EntityFilters,
    now: datetime,
    calibrated: Callable[[Mapping[int, float]], dict[int, float]] = dict,
) -> list[fusion.Fused]:
    """Fused entries for the session neighbours of `ranked`'s first SOURCES that are not
    candidates yet and that the recall's filters keep; their ranking inputs are added to
    `inputs`. `calibrated` puts the model's cosines on the fusion's scale (VectorSide)."""
    sources = list(ranked[:SOURCES])
    around = Entity.objects.session_neighbours(sources, reach=fusion.SESSION_REACH, beyond=True)
    new = sorted({j for i in sources for j in around.get(i, ()) if j not in inputs})
    if not new:
        return []
    hits = Entity.objects.ranking_inputs(new, now=now, filters=filters)
    similarity = calibrated(
        EntityVector.objects.similarities(generation, query, [h.entity_id for h in hits])
    )
    kept: Mapping[int, float] = {
        h.entity_id: similarity[h.entity_id] for h in hits if h.entity_id in similarity
    }
    for hit in hits:
        if hit.entity_id in kept:
            inputs[hit.entity_id] = hit
    return fusion.adjacent(kept, weight)
