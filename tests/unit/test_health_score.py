"""The health score of GET /v1/analytics (graph/ops/analytics/ `health`), on hand-computed
counts: 30 % activity, 30 % quality, 20 % freshness (capped), 20 % lessons (5 for full)."""

from __future__ import annotations

from graph.ops.analytics import health, js_round
from graph.storage.aggregates import HealthCounts


def counts(
    active: int = 0, accessed: int = 0, confident: int = 0, new: int = 0, lessons: int = 0
) -> HealthCounts:
    return HealthCounts(
        active=active,
        accessed_recently=accessed,
        confident=confident,
        new_recently=new,
        lessons=lessons,
    )


def test_an_empty_graph_scores_zero_on_every_factor() -> None:
    scored = health(counts())

    assert scored.score == 0
    assert scored.factors.model_dump() == {
        "activity": 0,
        "quality": 0,
        "freshness": 0,
        "lessons": 0,
    }


def test_the_score_weighs_the_four_ratios_30_30_20_20() -> None:
    # activity 5/10, quality 8/10, freshness 6/10, lessons 5/5:
    # 30·0.5 + 30·0.8 + 20·0.6 + 20·1 = 15 + 24 + 12 + 20 = 71
    scored = health(counts(active=10, accessed=5, confident=8, new=6, lessons=5))

    assert scored.score == 71
    assert scored.factors.model_dump() == {
        "activity": 50,
        "quality": 80,
        "freshness": 60,
        "lessons": 100,
    }


def test_freshness_is_capped_at_one_when_more_were_created_than_are_active() -> None:
    # 9 created this week (some archived since) over 3 active: min(3, 1) = 1 -> 20 points.
    scored = health(counts(active=3, new=9))

    assert scored.factors.freshness == 100
    assert scored.score == 20


def test_five_lessons_give_the_full_lesson_score_and_more_add_nothing() -> None:
    assert health(counts(lessons=2)).factors.lessons == 40  # 2/5
    assert health(counts(lessons=2)).score == 8  # 20·0.4
    assert health(counts(lessons=5)).score == health(counts(lessons=50)).score == 20


def test_lessons_count_even_with_nothing_active() -> None:
    assert health(counts(active=0, lessons=5)).score == 20


def test_the_score_is_rounded_from_the_unrounded_ratios_half_up() -> None:
    # activity 1/3 (10 points), quality 1/3 (10), freshness 1/3 (6.67), lessons 1/5 (4):
    # 30.67 -> 31; the factors round on their own (33, 33, 33, 20).
    scored = health(counts(active=3, accessed=1, confident=1, new=1, lessons=1))

    assert scored.score == 31
    assert scored.factors.model_dump() == {
        "activity": 33,
        "quality": 33,
        "freshness": 33,
        "lessons": 20,
    }
    # activity 1/4 -> 7.5 points, rounded up as the reference's Math.round does.
    assert health(counts(active=4, accessed=1)).score == 8


def test_js_round_rounds_halves_up_unlike_python_round() -> None:
    assert js_round(72.5) == 73 and round(72.5) == 72
    assert js_round(0.49) == 0
    assert js_round(99.5) == 100
