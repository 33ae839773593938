"""analytics_pm (graph/ops/analytics/planning.py) on a crafted graph, every figure computed by hand:
velocity over the window, stale plans, open decisions, orphan rate."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from graph.ops.analytics.planning import analytics_pm_get
from tests.helpers import forget, remember, restamp

pytestmark = pytest.mark.django_db


def entity(
    name: str, type_: str, now: datetime, *, created: int, written: int | None = None,
    recalled: int | None = None, **fields: object,
) -> None:  # fmt: skip
    remember(name, f"about {name}", type=type_, **fields)
    restamp(
        name,
        created_at=now - timedelta(days=created),
        updated_at=now - timedelta(days=created if written is None else written),
        last_accessed_at=None if recalled is None else now - timedelta(days=recalled),
    )


def craft(now: datetime) -> None:
    entity("dec-new", "decision", now, created=3)
    entity("dec-mid", "decision", now, created=20)  # open: older than 14 days, not superseded
    entity("dec-sup", "decision", now, created=35)
    remember("dec-replacement", "replaces dec-sup", type="decision", relations=[
        {"to": "dec-sup", "type": "supersedes"}
    ])  # fmt: skip
    restamp("dec-sup", status="active")  # brought back by hand: still superseded
    entity("dec-archived", "decision", now, created=40)
    forget("dec-archived")
    entity("rel1", "release", now, created=10)
    entity("plan-stale", "plan", now, created=60, recalled=45)
    entity("plan-recalled", "plan", now, created=60, recalled=5)
    entity("plan-written", "plan", now, created=60, written=2)
    entity("plan-new", "plan", now, created=2, relations=[{"to": "rel1", "type": "for"}])
    entity("note-orphan", "note", now, created=1)


def test_the_default_window_is_thirty_days() -> None:
    now = timezone.now()
    craft(now)

    result = analytics_pm_get(now=now).model_dump()

    assert result == {
        # dec-new, dec-mid, dec-replacement in 30 days: 3 / (30 / 7); rel1: 1 / (30 / 30).
        "velocity": {"decisionsPerWeek": 0.7, "releasesPerMonth": 1.0, "windowDays": 30},
        # plan-stale only (the others were recalled or written within 30 days, or are new);
        # dec-mid only (dec-sup is superseded, dec-archived archived, the rest are recent).
        "staleness": {"stalePlanCount": 1, "openDecisionCount": 1},
        # 10 active; related: dec-replacement, dec-sup, plan-new, rel1 -> 6 orphans.
        "connectedness": {"orphanRate": 0.6, "totalRelations": 2, "activeEntities": 10},
    }


def test_a_shorter_window_scales_the_velocities() -> None:
    now = timezone.now()
    craft(now)

    velocity = analytics_pm_get(window=14, now=now).velocity

    assert velocity.decisionsPerWeek == 1.0  # dec-new, dec-replacement: 2 / (14 / 7)
    assert velocity.releasesPerMonth == 2.143  # 1 / (14 / 30), 3 decimals
    assert velocity.windowDays == 14


def test_an_empty_graph_has_zero_rates() -> None:
    assert analytics_pm_get().model_dump() == {
        "velocity": {"decisionsPerWeek": 0.0, "releasesPerMonth": 0.0, "windowDays": 30},
        "staleness": {"stalePlanCount": 0, "openDecisionCount": 0},
        "connectedness": {"orphanRate": 0.0, "totalRelations": 0, "activeEntities": 0},
    }
