"""analytics (graph/ops/analytics/) on a small crafted graph whose every figure is computed by
hand below: the health score and factors, the 30-day timeline, the loop metric, the age
matrix and the knowledge radar."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from graph.ops.analytics import RADAR_AXES, TIMELINE_DAYS, analytics_get
from tests.helpers import forget, remember, restamp

pytestmark = pytest.mark.django_db


def day(at: datetime) -> str:
    return at.astimezone(UTC).date().isoformat()


def craft(now: datetime) -> None:
    """(name, type, created days ago, recalled days ago, confidence), plus one archived lesson.

    Active: d1 d2 l1 l2 c1 p1 (6). Recalled within 30 days: d1 d2 c1 p1 (4). Confidence above
    0.7: d1 l1 l2 c1 (4; d2's 0.7 is not above). Created within 7 days, any status: d1 c1 a1
    p1 (4). lesson_learned, any status: l1 l2 a1 (3).
    """
    rows = [
        ("d1", "decision", 2, 1, 0.9),
        ("d2", "decision", 20, 10, 0.7),
        ("l1", "lesson_learned", 40, None, 1.0),
        ("l2", "lesson_learned", 100, 40, 0.8),
        ("c1", "commit", 1, 1, 0.8),
        ("a1", "lesson_learned", 3, 2, 0.9),
        ("p1", "pattern", 5, 6, 0.5),
    ]
    for name, type_, created, recalled, confidence in rows:
        remember(name, f"about {name}", type=type_)
        restamp(
            name,
            created_at=now - timedelta(days=created),
            updated_at=now - timedelta(days=created),
            last_accessed_at=None if recalled is None else now - timedelta(days=recalled),
            confidence=confidence,
        )
    forget("a1")


def test_the_health_score_follows_the_reference_formula() -> None:
    now = timezone.now()
    craft(now)

    result = analytics_get(now=now)

    # 30·4/6 + 30·4/6 + 20·min(4/6, 1) + 20·min(3/5, 1) = 20 + 20 + 13.33 + 12 = 65.33
    assert result.healthScore == 65
    assert result.healthFactors.model_dump() == {
        "activity": 67,
        "quality": 67,
        "freshness": 67,
        "lessons": 60,
    }


def test_the_timeline_is_thirty_days_ending_today_with_created_and_recalled() -> None:
    now = timezone.now()
    craft(now)

    timeline = {row.day: (row.created, row.recalled) for row in analytics_get(now=now).timeline}

    days = list(timeline)
    assert len(days) == TIMELINE_DAYS
    assert days[-1] == day(now)
    assert days[0] == day(now - timedelta(days=TIMELINE_DAYS - 1))
    expected = {
        day(now - timedelta(days=1)): (1, 2),  # c1 created; d1 and c1 recalled
        day(now - timedelta(days=2)): (1, 1),  # d1 created; a1 (archived) recalled
        day(now - timedelta(days=3)): (1, 0),  # a1 created
        day(now - timedelta(days=5)): (1, 0),  # p1
        day(now - timedelta(days=6)): (0, 1),  # p1 recalled
        day(now - timedelta(days=10)): (0, 1),  # d2 recalled
        day(now - timedelta(days=20)): (1, 0),  # d2 created; l1, l2 are older
    }
    assert {d: v for d, v in timeline.items() if v != (0, 0)} == expected


def test_the_loop_metric_counts_active_memories_recalled_noise_aside() -> None:
    now = timezone.now()
    craft(now)

    loop = analytics_get(now=now).loopMetric

    assert loop.reusedThisWeek == 2  # d1, p1 (c1 is noise, a1 archived, d2 ten days ago)
    assert loop.computedFrom == "last_accessed_at_approximation"
    assert len(loop.trend) == TIMELINE_DAYS
    assert {t.date: t.count for t in loop.trend if t.count} == {
        day(now - timedelta(days=1)): 1,
        day(now - timedelta(days=6)): 1,
        day(now - timedelta(days=10)): 1,
    }


def test_the_age_matrix_buckets_active_memories_by_type_noise_aside() -> None:
    now = timezone.now()
    craft(now)

    cells = [(c.type, c.bucket, c.count) for c in analytics_get(now=now).ageMatrix]

    assert cells == [
        ("decision", "week", 1),
        ("decision", "month", 1),
        ("lesson_learned", "quarter", 1),
        ("lesson_learned", "older", 1),
        ("pattern", "week", 1),
    ]


def test_the_knowledge_radar_counts_active_memories_per_axis() -> None:
    now = timezone.now()
    craft(now)

    radar = analytics_get(now=now).knowledgeRadar

    assert [(a.axis, a.count) for a in radar] == [
        ("lessons", 2),
        ("decisions", 2),
        ("patterns", 1),
        ("bugs", 0),
        ("processes", 0),
        ("architecture", 0),
    ]
    assert [tuple(a.types) for a in radar] == [types for _, types in RADAR_AXES]


def test_an_empty_graph_has_a_zero_score_and_thirty_empty_days() -> None:
    result = analytics_get()

    assert result.healthScore == 0
    assert [(d.created, d.recalled) for d in result.timeline] == [(0, 0)] * TIMELINE_DAYS
    assert result.loopMetric.reusedThisWeek == 0
    assert [t.count for t in result.loopMetric.trend] == [0] * TIMELINE_DAYS
    assert result.ageMatrix == []
    assert {a.count for a in result.knowledgeRadar} == {0}
