"""Keyword and vector evidence fused into one relevance (graph/search/fusion.py)."""

from __future__ import annotations

import pytest

from graph.search import fusion


def relevance(fused: list[fusion.Fused]) -> dict[int, float]:
    return {f.entity_id: f.relevance for f in fused}


def test_the_keyword_side_weighs_more_as_its_best_candidate_covers_more_of_the_query() -> None:
    weights = [fusion.keyword_weight(c) for c in (0.0, 0.25, 0.5, 0.75, 1.0)]
    assert weights == sorted(weights) and len(set(weights)) == 5
    assert weights[0] == pytest.approx(fusion.KEYWORD_WEIGHT_MIN)
    assert weights[-1] == pytest.approx(fusion.KEYWORD_WEIGHT_MAX)


def test_similarities_that_single_memories_out_lower_the_keyword_weight() -> None:
    flat = fusion.keyword_weight(1.0, fusion.FLAT_SPREAD)
    informative = fusion.keyword_weight(1.0, fusion.SPREAD)
    assert flat == pytest.approx(fusion.KEYWORD_WEIGHT_MAX)
    assert informative == pytest.approx(fusion.KEYWORD_WEIGHT_MAX_SPREAD)
    assert flat > fusion.keyword_weight(1.0, (fusion.FLAT_SPREAD + fusion.SPREAD) / 2) > informative
    # A query no keyword candidate covers leaves the vectors in charge either way.
    assert fusion.keyword_weight(0.0, 0.0) == fusion.keyword_weight(0.0, 1.0)


def test_spread_is_the_best_similarity_over_the_tenth_best() -> None:
    sims = [0.9, 0.2, *([0.5] * 8), 0.1, 0.1]
    assert fusion.spread(sims) == pytest.approx(0.9 - 0.2)
    assert fusion.spread([0.4, 0.3]) == pytest.approx(0.1)
    assert fusion.spread([]) == 0.0


def test_shared_words_count_less_in_a_memory_whose_meaning_is_far_from_the_query() -> None:
    assert fusion.plausibility(None, 0.5) == 1.0  # no vector yet: keyword evidence stands
    assert fusion.plausibility(fusion.PLAUSIBLE_SIMILARITY, 0.5) == 1.0
    assert fusion.plausibility(fusion.IMPLAUSIBLE_SIMILARITY, 0.5) == 0.0
    assert 0.0 < fusion.plausibility(0.3, 0.5) < 1.0
    # A memory holding the whole query keeps all of it, however its meaning embeds.
    assert fusion.plausibility(0.05, 1.0) == 1.0


def test_an_exact_rare_word_match_stays_above_a_closer_neighbour() -> None:
    # 1 holds the whole query but embeds far from it; 2 is a close semantic neighbour only.
    fused = fusion.fuse({1: 1.0}, {1: 0.1, 2: 0.7}, covered={1: 1.0}, top_match=1)
    got = relevance(fused)
    assert got[1] > got[2]
    assert {f.entity_id: f.source for f in fused} == {1: "keyword", 2: "semantic"}


def test_a_generic_word_shared_by_an_unrelated_memory_does_not_beat_the_paraphrase() -> None:
    # 1 shares a generic word and is unrelated in meaning; 2 shares less but means the same.
    fused = fusion.fuse({1: 1.0, 2: 0.2}, {1: 0.22, 2: 0.45}, covered={1: 0.5, 2: 0.3}, top_match=1)
    got = relevance(fused)
    assert got[2] > got[1]


def test_the_best_bm25_match_keeps_a_bonus_for_its_coverage() -> None:
    without = relevance(fusion.fuse({1: 0.8, 2: 0.8}, {}, covered={1: 0.6, 2: 0.6}))
    with_top = relevance(fusion.fuse({1: 0.8, 2: 0.8}, {}, covered={1: 0.6, 2: 0.6}, top_match=1))
    assert with_top[1] == pytest.approx(without[1] + fusion.TOP_MATCH_BONUS * 0.6)
    assert with_top[2] == without[2]


def test_a_neighbour_below_the_cutoff_is_left_out() -> None:
    fused = fusion.fuse({}, {5: fusion.SEMANTIC_CUTOFF - 0.01, 6: 0.5}, covered={})
    assert [f.entity_id for f in fused] == [6]


def test_context_lifts_a_candidate_by_its_best_session_neighbour_among_the_candidates() -> None:
    fused = [
        fusion.Fused(1, 0.9, "keyword", 0.9),
        fusion.Fused(2, 0.1, "semantic", 0.3),
        fusion.Fused(3, 0.2, "keyword", 0.2),
    ]
    # 2's neighbours are 1 and 3; 3's are 2 and 4 (4 is not a candidate); 1 has none.
    lifted = fusion.with_context(fused, {2: [1, 3], 3: [2, 4], 1: []})
    got = {f.entity_id: f for f in lifted}
    assert got[1].relevance == 0.9
    assert got[2].relevance == pytest.approx(0.1 + fusion.CONTEXT_WEIGHT * 0.9)
    assert got[3].relevance == pytest.approx(0.2 + fusion.CONTEXT_WEIGHT * 0.1)  # before lifts
    # Each keeps the source that found it and the relevance it reports.
    assert [(f.source, f.reported) for f in lifted] == [
        ("keyword", 0.9),
        ("semantic", 0.3),
        ("keyword", 0.2),
    ]


def test_a_turn_that_joined_by_its_place_is_lifted_by_the_joined_weight() -> None:
    fused = [
        fusion.Fused(1, 0.8, "keyword", 0.8),
        fusion.Fused(2, 0.1, "semantic", 0.3),  # a candidate beside 1
        fusion.Fused(3, 0.1, "semantic", 0.3),  # joined only by its place beside 1
    ]
    lifted = {f.entity_id: f for f in fusion.with_context(fused, {2: [1], 3: [1]}, joined={3})}

    assert fusion.JOINED_CONTEXT_WEIGHT > fusion.CONTEXT_WEIGHT
    assert lifted[2].relevance == pytest.approx(0.1 + fusion.CONTEXT_WEIGHT * 0.8)
    assert lifted[3].relevance == pytest.approx(0.1 + fusion.JOINED_CONTEXT_WEIGHT * 0.8)
    assert (lifted[3].source, lifted[3].reported) == ("semantic", 0.3)


@pytest.mark.parametrize(
    ("terms", "doc_freqs", "can_add"),
    [
        (["kestrel"], {"kestrel": 1}, False),  # every memory holding it is a candidate
        (["kestrel"], {"kestrel": 40}, False),
        (["kestrel"], {"kestrel": 41}, True),  # more than the candidates read
        (["kestrel"], {"kestrel": 0}, True),  # in no memory: only meaning can find one
        (["kestrel", "outage"], {"kestrel": 1, "outage": 1}, True),  # need not hold both
    ],
)
def test_the_vector_side_is_skipped_only_for_one_word_all_of_whose_memories_are_candidates(
    terms: list[str], doc_freqs: dict[str, int], can_add: bool
) -> None:
    assert fusion.vector_side_can_add(terms, doc_freqs, 40) is can_add
