"""analytics_pm: PM-framed metrics for the dashboard's PM panel (GET /v1/analytics/pm?window=N,
REST only). Over active entities, from one aggregate query (graph/storage/aggregates.py):

- velocity, over the last `window` days (1-365, default 30):
  decisionsPerWeek = decisions created in the window / (window / 7);
  releasesPerMonth = releases created in the window / (window / 30).
- staleness:
  stalePlanCount = plans neither recalled nor written for STALE_DAYS days or more (the later of
  the last recall and the last write, as recency reads it, DESIGN §5.3: a plan made yesterday
  and not recalled since is not stale);
  openDecisionCount = decisions created more than OPEN_DAYS days ago that no `supersedes`
  relation points at.
- connectedness: orphanRate = active entities with no relation either way / active entities
  (0 when there are none); totalRelations = every relation; activeEntities.

The three rates are rounded to 3 decimals. A window that is not an integer from 1 to 365 is a
400 (`validation.bad-param` on the query string).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone
from pydantic import Field

from graph.models import Entity
from graph.ops.kit.fields import Output, StrictInput
from graph.ops.kit.operation import READ_ONLY, CallContext, Operation
from graph.storage.cursor import read_snapshot

DEFAULT_WINDOW_DAYS = 30
MAX_WINDOW_DAYS = 365
STALE_DAYS = 30
OPEN_DAYS = 14
DECISION_TYPE = "decision"
RELEASE_TYPE = "release"
PLAN_TYPE = "plan"
SUPERSEDES = "supersedes"
DECIMALS = 3


class AnalyticsPmInput(StrictInput):
    window: int = Field(
        default=DEFAULT_WINDOW_DAYS,
        ge=1,
        le=MAX_WINDOW_DAYS,
        description=(
            f"Lookback window in days for the velocity figures, 1-{MAX_WINDOW_DAYS} "
            f"(default {DEFAULT_WINDOW_DAYS})."
        ),
    )


class Velocity(Output):
    decisionsPerWeek: float = Field(description="Decisions created in the window, per week.")
    releasesPerMonth: float = Field(description="Releases created in the window, per 30 days.")
    windowDays: int


class Staleness(Output):
    stalePlanCount: int = Field(
        description=f"Active plans neither recalled nor written for {STALE_DAYS}+ days."
    )
    openDecisionCount: int = Field(
        description=f"Active decisions older than {OPEN_DAYS} days that nothing supersedes."
    )


class Connectedness(Output):
    orphanRate: float = Field(description="Share of active entities with no relation (0-1).")
    totalRelations: int
    activeEntities: int


class AnalyticsPmOutput(Output):
    velocity: Velocity
    staleness: Staleness
    connectedness: Connectedness


def analytics_pm_get(*, window: int = DEFAULT_WINDOW_DAYS, now: datetime | None = None) -> (
    AnalyticsPmOutput
):  # fmt: skip
    now = now or timezone.now()
    with read_snapshot():
        counts = Entity.objects.pm_counts(
            window_start=now - timedelta(days=window),
            stale_before=now - timedelta(days=STALE_DAYS),
            open_before=now - timedelta(days=OPEN_DAYS),
            decision_type=DECISION_TYPE,
            release_type=RELEASE_TYPE,
            plan_type=PLAN_TYPE,
            superseding_type=SUPERSEDES,
        )
    active = counts.active
    return AnalyticsPmOutput(
        velocity=Velocity(
            decisionsPerWeek=round(counts.decisions_in_window / (window / 7), DECIMALS),
            releasesPerMonth=round(counts.releases_in_window / (window / 30), DECIMALS),
            windowDays=window,
        ),
        staleness=Staleness(
            stalePlanCount=counts.stale_plans, openDecisionCount=counts.open_decisions
        ),
        connectedness=Connectedness(
            orphanRate=round(counts.orphans / active, DECIMALS) if active else 0.0,
            totalRelations=counts.relations,
            activeEntities=active,
        ),
    )


def _analytics_pm(data: AnalyticsPmInput, ctx: CallContext) -> AnalyticsPmOutput:
    return analytics_pm_get(window=data.window)


ANALYTICS_PM = Operation(
    name="analytics_pm",
    summary=(
        "PM-framed metrics for the dashboard: decision and release velocity over a window, "
        "stale plans and open decisions, and how connected the knowledge graph is."
    ),
    input_model=AnalyticsPmInput,
    output_model=AnalyticsPmOutput,
    handler=_analytics_pm,
    hints=READ_ONLY,
    examples=[{}, {"window": 7}],
    method="GET",
    route="analytics/pm",
    tool=False,
)
