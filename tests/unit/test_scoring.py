"""Multi-factor ranking (graph/search/scoring.py): usage separates only comparable relevance."""

from __future__ import annotations

import math

import pytest

from graph.search import scoring


def candidate(entity_id: int, relevance: float, **overrides: object) -> scoring.Candidate:
    fields: dict[str, object] = {
        "entity_id": entity_id,
        "relevance": relevance,
        "days_since_touch": 0.0,
        "access_count": 0,
        "confidence": 0.8,
        "recall_hits": 0,
        "recall_misses": 0,
    }
    fields.update(overrides)
    return scoring.Candidate(**fields)  # type: ignore[arg-type]


def test_recency_is_exp_of_minus_days_over_30() -> None:
    assert scoring.recency(30) == pytest.approx(math.exp(-1))
    assert scoring.recency(0) == 1.0
    assert scoring.recency(-1) == 1.0  # clock skew never makes a memory fresher than new


def test_frequency_is_log_scaled_against_the_most_accessed_candidate() -> None:
    assert scoring.frequency(0, 0) == 0.0
    assert scoring.frequency(9, 99) == pytest.approx(math.log(10) / math.log(100))
    assert scoring.frequency(99, 99) == pytest.approx(1.0)


def test_impact_is_the_smoothed_hit_rate() -> None:
    assert scoring.impact(0, 0) == 0.5
    assert scoring.impact(8, 0) == pytest.approx(0.9)
    assert scoring.impact(0, 8) == pytest.approx(0.1)


def test_usage_cannot_lift_a_clearly_less_relevant_memory() -> None:
    relevant = candidate(1, 1.0, days_since_touch=365, confidence=0.0)
    popular = candidate(2, 0.8, access_count=500, confidence=1.0, recall_hits=50)
    ranked = scoring.rank([popular, relevant])
    assert [r.entity_id for r in ranked] == [1, 2]


def test_usage_orders_memories_of_comparable_relevance() -> None:
    stale = candidate(1, 1.0, days_since_touch=120)
    fresh = candidate(2, 0.95)
    ranked = scoring.rank([stale, fresh])
    assert [r.entity_id for r in ranked] == [2, 1]


def test_impact_moves_a_memory_that_helped_before_one_that_did_not() -> None:
    helped = candidate(1, 1.0, recall_hits=9, recall_misses=0)
    ignored = candidate(2, 1.0, recall_hits=0, recall_misses=9)
    assert [r.entity_id for r in scoring.rank([ignored, helped])] == [1, 2]


def test_ties_break_newest_first() -> None:
    ranked = scoring.rank([candidate(3, 1.0), candidate(7, 1.0), candidate(5, 1.0)])
    assert [r.entity_id for r in ranked] == [7, 5, 3]


def test_usage_is_bounded_to_zero_and_one() -> None:
    best = candidate(1, 1.0, access_count=10, confidence=1.0, recall_hits=10_000)
    worst = candidate(2, 1.0, days_since_touch=10_000, confidence=0.0, recall_misses=10_000)
    ranked = {r.entity_id: r for r in scoring.rank([best, worst])}
    assert ranked[1].usage == pytest.approx(1.0, abs=0.01)
    assert 0.0 <= ranked[2].usage < 0.01
    assert ranked[1].score - ranked[2].score <= scoring.USAGE_BOUND + 1e-9


def test_bm25_scores_normalise_relative_to_the_best() -> None:
    assert scoring.normalise_bm25([-4.0, -2.0, -1.0]) == [1.0, 0.5, 0.25]
    assert scoring.normalise_bm25([]) == []


# --- impact among equals (scoring.impact_first) ------------------------------------------------


def test_among_equals_a_cited_memory_takes_the_first_place() -> None:
    order = [1, 2, 3]
    relevance = {1: 1.0, 2: 0.98, 3: 0.5}
    impacts = {1: 0.5, 2: scoring.impact(4, 0), 3: 0.5}

    assert scoring.impact_first(order, relevance, impacts) == [2, 1, 3]


def test_among_equals_a_memory_with_misses_sinks() -> None:
    order = [1, 2, 3]
    relevance = {1: 1.0, 2: 0.97, 3: 0.96}
    impacts = {1: scoring.impact(0, 5), 2: 0.5, 3: 0.5}

    assert scoring.impact_first(order, relevance, impacts) == [2, 3, 1]


def test_impact_never_lifts_a_memory_beyond_the_tie_margin() -> None:
    order = [1, 2]
    relevance = {1: 1.0, 2: 1.0 - scoring.TIE_MARGIN - 0.01}
    impacts = {1: scoring.impact(0, 9), 2: scoring.impact(50, 0)}

    assert scoring.impact_first(order, relevance, impacts) == [1, 2]


def test_equals_keep_the_places_the_ranking_gave_them() -> None:
    # 1 and 3 are equals; 2, less relevant but lifted between them by other evidence, stays.
    order = [1, 2, 3, 4]
    relevance = {1: 0.9, 2: 0.7, 3: 0.88, 4: 0.3}
    impacts = {1: 0.5, 2: 0.5, 3: scoring.impact(3, 0), 4: scoring.impact(9, 0)}

    assert scoring.impact_first(order, relevance, impacts) == [3, 2, 1, 4]


def test_without_any_citation_or_miss_the_order_is_unchanged() -> None:
    order = [3, 1, 2]
    relevance = {1: 1.0, 2: 1.0, 3: 1.0}

    assert scoring.impact_first(order, relevance, dict.fromkeys(order, 0.5)) == [3, 1, 2]


def test_equal_impacts_among_equals_keep_their_ranked_order() -> None:
    order = [5, 4, 3]
    relevance = {5: 1.0, 4: 1.0, 3: 1.0}
    impacts = {5: 0.5, 4: 0.5, 3: scoring.impact(0, 1)}

    assert scoring.impact_first(order, relevance, impacts) == [5, 4, 3]


def test_only_the_places_asked_for_are_settled() -> None:
    # Recall keeps `limit` places: equals wholly below them are left as ranked.
    order = [1, 2, 3, 4]
    relevance = {1: 1.0, 2: 0.5, 3: 0.2, 4: 0.19}
    impacts = {1: 0.5, 2: 0.5, 3: 0.5, 4: scoring.impact(5, 0)}

    assert scoring.impact_first(order, relevance, impacts, places=2) == [1, 2, 3, 4]
    assert scoring.impact_first(order, relevance, impacts) == [1, 2, 4, 3]


def test_a_memory_s_standing_counts_use_only_once_there_is_enough_of_it() -> None:
    assert scoring.standing(scoring.LIFT_HITS - 1, 0) == 0.5
    assert scoring.standing(scoring.LIFT_HITS, 0) == scoring.impact(scoring.LIFT_HITS, 0) > 0.5
    assert scoring.standing(0, scoring.SINK_MISSES - 1) == 0.5
    assert scoring.standing(0, scoring.SINK_MISSES) == scoring.impact(0, scoring.SINK_MISSES)
    assert scoring.standing(4, 3) == scoring.impact(4, 0)
    assert scoring.standing(2, 9) == scoring.impact(2, 9) < 0.5
