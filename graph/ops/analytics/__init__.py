"""analytics: the dashboard's insights into the memory graph (GET /v1/analytics, REST only).

Every figure is derived on each call from SQL aggregates (graph/storage/aggregates.py);
nothing is stored and nothing is counted as an access. Days are UTC dates (YYYY-MM-DD), as
the times are stored; "the last N days" is the N × 24 hours before now.

- healthScore, healthFactors: `health()` below has the formula.
- timeline: the TIMELINE_DAYS days ending today, oldest first, one entry a day (zeros
  included): `created`, entities created that day; `recalled`, entities whose last recall
  fell on that day (every status, both).
- loopMetric, memories reused: `reusedThisWeek`, active memories other than noise (commits,
  session records: NOISE_TYPES) that recall returned in the last 7 days; `trend`, the same
  per day over the timeline's days. Only recall results count as accesses (DESIGN §5.2) and
  an entity keeps only its latest access time, so a memory counts once, on the day it was
  last recalled: `computedFrom: "last_accessed_at_approximation"` says so.
- ageMatrix: active entities other than noise, per type and age bucket (created in the last 7
  days: `week`; 30: `month`; 90: `quarter`; before: `older`), sorted by type, then bucket
  from new to old; only non-empty cells.
- knowledgeRadar: RADAR_AXES in order, each with its types and its count of active entities
  of those types.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal

from django.utils import timezone
from pydantic import Field

from graph.models import Entity
from graph.ops.entity_types import NOISE_TYPES
from graph.ops.kit.fields import Output, StrictInput
from graph.ops.kit.operation import READ_ONLY, CallContext, Operation
from graph.storage.aggregates import HealthCounts
from graph.storage.cursor import read_snapshot

ACTIVITY_DAYS = 30
FRESHNESS_DAYS = 7
QUALITY_CONFIDENCE = 0.7  # strictly above
LESSON_TYPE = "lesson_learned"
LESSONS_FOR_FULL_SCORE = 5
WEIGHTS = {"activity": 30, "quality": 30, "freshness": 20, "lessons": 20}

TIMELINE_DAYS = 30
REUSE_DAYS = 7
AgeBucket = Literal["week", "month", "quarter", "older"]
AGE_BUCKETS: tuple[tuple[AgeBucket, int], ...] = (("week", 7), ("month", 30), ("quarter", 90))
OLDER: AgeBucket = "older"
BUCKET_ORDER: tuple[AgeBucket, ...] = (*(b for b, _ in AGE_BUCKETS), OLDER)
RADAR_AXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("lessons", ("lesson_learned", "lesson", "mistake")),
    ("decisions", ("decision", "architecture_decision", "design_decision")),
    ("patterns", ("pattern", "technical_pattern", "best_practice")),
    ("bugs", ("bug_fix", "verification_result", "test_result")),
    ("processes", ("process", "workflow_checkpoint", "refactoring", "maintenance")),
    ("architecture", ("architecture", "infrastructure", "feature", "release")),
)
LOOP_COMPUTED_FROM: Literal["last_accessed_at_approximation"] = "last_accessed_at_approximation"


class AnalyticsInput(StrictInput):
    pass


class HealthFactors(Output):
    activity: int = Field(description="Active entities recalled in the last 30 days, in %.")
    quality: int = Field(description="Active entities with confidence above 0.7, in %.")
    freshness: int = Field(
        description="Entities created in the last 7 days per active entity, in %, at most 100."
    )
    lessons: int = Field(description="lesson_learned entities per 5, in %, at most 100.")


class TimelineDay(Output):
    day: str = Field(description="UTC date, YYYY-MM-DD.")
    created: int = Field(description="Entities created that day.")
    recalled: int = Field(description="Entities whose last recall fell on that day.")


class LoopTrendDay(Output):
    date: str = Field(description="UTC date, YYYY-MM-DD.")
    count: int = Field(description="Memories whose last recall fell on that day.")


class LoopMetric(Output):
    reusedThisWeek: int = Field(
        description="Active memories (noise types aside) recall returned in the last 7 days."
    )
    trend: list[LoopTrendDay] = Field(description="The same per day, the last 30 days.")
    computedFrom: Literal["last_accessed_at_approximation"] = Field(
        description="Each memory counts once, on the day of its latest recall."
    )


class AgeCell(Output):
    type: str
    bucket: AgeBucket = Field(
        description="Created in the last 7 days (week), 30 (month), 90 (quarter), or before."
    )
    count: int


class RadarAxis(Output):
    axis: str
    count: int = Field(description="Active entities of the axis's types.")
    types: list[str]


class AnalyticsOutput(Output):
    healthScore: int = Field(description="0-100: the weighted health factors.")
    healthFactors: HealthFactors
    timeline: list[TimelineDay] = Field(description="The last 30 days, oldest first.")
    loopMetric: LoopMetric
    ageMatrix: list[AgeCell]
    knowledgeRadar: list[RadarAxis]


# --- the health score (pure) -----------------------------------------------------------------


def js_round(value: float) -> int:
    """Half up, as the reference's Math.round (Python's round() goes to even: 72.5 -> 72)."""
    return math.floor(value + 0.5)


@dataclass(frozen=True, slots=True)
class Health:
    score: int
    factors: HealthFactors


def health(counts: HealthCounts) -> Health:
    """The reference's health score (its "Health Score Algorithm", src/core/analytics.ts):

        activity  = accessed / active        active entities recalled in the last 30 days
        quality   = confident / active       active entities with confidence > 0.7
        freshness = min(new / active, 1)     entities created in the last 7 days, any status
                                             (so it can pass 1, hence the cap)
        lessons   = min(lessons / 5, 1)      lesson_learned entities, any status
        score     = round(30·activity + 30·quality + 20·freshness + 20·lessons)

    The first three are 0 when nothing is active. Each factor is reported as its ratio in %,
    round(100·ratio); the score is computed from the unrounded ratios. Rounding is half up.
    """
    active = counts.active
    ratios = {
        "activity": counts.accessed_recently / active if active else 0.0,
        "quality": counts.confident / active if active else 0.0,
        "freshness": min(counts.new_recently / active, 1.0) if active else 0.0,
        "lessons": min(counts.lessons / LESSONS_FOR_FULL_SCORE, 1.0),
    }
    score = js_round(sum(WEIGHTS[name] * ratio for name, ratio in ratios.items()))
    factors = HealthFactors(**{name: js_round(100 * ratio) for name, ratio in ratios.items()})
    return Health(score=score, factors=factors)


# --- the selector ----------------------------------------------------------------------------


def _days(today: date) -> list[str]:
    first = today - timedelta(days=TIMELINE_DAYS - 1)
    return [(first + timedelta(days=i)).isoformat() for i in range(TIMELINE_DAYS)]


def analytics_get(*, now: datetime | None = None) -> AnalyticsOutput:
    now = now or timezone.now()
    days = _days(now.astimezone(UTC).date())
    timeline_start = datetime.combine(date.fromisoformat(days[0]), time.min, tzinfo=UTC)
    radar_types = {t for _, types in RADAR_AXES for t in types}
    objects = Entity.objects
    with read_snapshot():
        counts = objects.health_counts(
            accessed_since=now - timedelta(days=ACTIVITY_DAYS),
            confidence_above=QUALITY_CONFIDENCE,
            created_since=now - timedelta(days=FRESHNESS_DAYS),
            lesson_type=LESSON_TYPE,
        )
        created = objects.created_per_day(timeline_start)
        recalled = objects.accessed_per_day(timeline_start)
        reused = objects.reused_per_day(timeline_start, NOISE_TYPES)
        reused_this_week = objects.reused_since(now - timedelta(days=REUSE_DAYS), NOISE_TYPES)
        cells = objects.age_buckets([now - timedelta(days=n) for _, n in AGE_BUCKETS], NOISE_TYPES)
        by_type = objects.active_type_counts(radar_types)
    scored = health(counts)
    return AnalyticsOutput(
        healthScore=scored.score,
        healthFactors=scored.factors,
        timeline=[
            TimelineDay(day=d, created=created.get(d, 0), recalled=recalled.get(d, 0)) for d in days
        ],
        loopMetric=LoopMetric(
            reusedThisWeek=reused_this_week,
            trend=[LoopTrendDay(date=d, count=reused.get(d, 0)) for d in days],
            computedFrom=LOOP_COMPUTED_FROM,
        ),
        ageMatrix=[
            AgeCell(type=type_, bucket=BUCKET_ORDER[bucket], count=n)
            for type_, bucket, n in sorted(cells)
        ],
        knowledgeRadar=[
            RadarAxis(axis=axis, count=sum(by_type.get(t, 0) for t in types), types=list(types))
            for axis, types in RADAR_AXES
        ],
    )


def _analytics(data: AnalyticsInput, ctx: CallContext) -> AnalyticsOutput:
    return analytics_get()


ANALYTICS = Operation(
    name="analytics",
    summary=(
        "Insights into the memory graph for the dashboard: the health score and its factors, "
        "the memory-loop metric (memories reused), a 30-day timeline of memories created and "
        "recalled, the age of each type's memories, and the knowledge radar."
    ),
    input_model=AnalyticsInput,
    output_model=AnalyticsOutput,
    handler=_analytics,
    hints=READ_ONLY,
    examples=[{}],
    method="GET",
    # The dashboard's charts; `stats` is the agent's view of the same graph.
    tool=False,
)
