"""user_patterns: work patterns derived from memory (API reference, "user_patterns")."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from core.errors import InvalidInput
from graph.models import Entity
from graph.ops.user_patterns import USER_PATTERNS, UserPatternsOutput, render_markdown
from tests.helpers import CTX, forget, remember

pytestmark = pytest.mark.django_db


@pytest.fixture
def local_zone() -> Iterator[Any]:
    """Set the process's local time zone (patterns report local hours), then restore it."""
    saved = os.environ.get("TZ")

    def use(zone: str) -> None:
        os.environ["TZ"] = zone
        time.tzset()

    use("UTC")
    yield use
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()


def patterns(**payload: Any) -> dict[str, Any]:
    return USER_PATTERNS.run(payload, CTX)


def made(name: str, when: datetime, *obs: str, type: str = "note", **fields: Any) -> None:
    remember(name, *obs, type=type, **fields)
    Entity.objects.filter(name=name).update(created_at=when)


def test_an_empty_graph_gives_every_category_empty() -> None:
    assert patterns() == {
        "workSchedule": {"hourDistribution": [], "dayDistribution": []},
        "toolPreferences": [],
        "focusAreas": [],
        "workflow": {
            "avgSessionMinutes": 0,
            "commitsPerSession": 0.0,
            "totalSessions": 0,
            "totalCommits": 0,
        },
        "strengths": [],
        "learningAreas": [],
        "scope": {"project": None, "all_projects": True, "no_project": True, "global": True},
    }


def test_the_work_schedule_counts_writes_per_hour_and_weekday_busiest_first(
    local_zone: Any,
) -> None:
    # 2026-08-17 is a Monday (dayNum 1); 2026-08-16 a Sunday (dayNum 0).
    made("a", datetime(2026, 8, 17, 9, 5, tzinfo=UTC), "x")
    made("b", datetime(2026, 8, 17, 9, 55, tzinfo=UTC), "x")
    made("c", datetime(2026, 8, 24, 9, 30, tzinfo=UTC), "x")
    made("d", datetime(2026, 8, 16, 14, 0, tzinfo=UTC), "x")

    schedule = patterns(categories=["workSchedule"])["workSchedule"]

    assert schedule["hourDistribution"] == [{"hour": 9, "count": 3}, {"hour": 14, "count": 1}]
    assert schedule["dayDistribution"] == [{"dayNum": 1, "count": 3}, {"dayNum": 0, "count": 1}]


def test_the_work_schedule_is_in_local_time(local_zone: Any) -> None:
    local_zone("Asia/Tokyo")  # UTC+9, no DST
    made("a", datetime(2026, 8, 16, 20, 0, tzinfo=UTC), "x")  # Monday 05:00 in Tokyo

    schedule = patterns(categories=["workSchedule"])["workSchedule"]

    assert schedule["hourDistribution"] == [{"hour": 5, "count": 1}]
    assert schedule["dayDistribution"] == [{"dayNum": 1, "count": 1}]


def test_archived_memories_do_not_count() -> None:
    remember("a", "x", type="decision")
    remember("b", "x", type="decision")
    forget("b")

    assert patterns(categories=["focusAreas"])["focusAreas"] == [{"type": "decision", "count": 1}]


def test_focus_areas_count_types_and_leave_out_sessions_and_commits() -> None:
    for i in range(3):
        remember(f"d{i}", "x", type="decision")
    remember("p", "x", type="pattern")
    remember("c", "x", type="commit")
    remember("s", "x", type="session_keypoint")

    assert patterns(categories=["focusAreas"])["focusAreas"] == [
        {"type": "decision", "count": 3},
        {"type": "pattern", "count": 1},
    ]


def test_tool_preferences_count_sessions_per_tool_from_tags_and_observations() -> None:
    remember("s1", "Tools used: Read, Edit(3), Bash", type="session_keypoint")
    remember("s2", "did things", type="session_keypoint", tags=["tool:Read"])
    remember("s3", "Tools used: Read(2)", type="session_summary", tags=["tool:Read"])
    remember("n", "Tools used: Grep", type="note")  # not a session

    assert patterns(categories=["toolPreferences"])["toolPreferences"] == [
        {"tool": "Read", "sessions": 3},
        {"tool": "Bash", "sessions": 1},
        {"tool": "Edit", "sessions": 1},
    ]


def test_workflow_averages_session_minutes_and_commits_per_session() -> None:
    remember("s1", "Duration: 30 min", type="session_keypoint")
    remember("s2", "Duration: 1.5h", type="session_keypoint")
    remember("s3", "no duration", type="session_keypoint")
    Entity.objects.filter(name="s3").update(metadata={"duration_minutes": 60})
    for i in range(7):
        remember(f"c{i}", "x", type="commit")

    assert patterns(categories=["workflow"])["workflow"] == {
        "avgSessionMinutes": 60,
        "commitsPerSession": 2.3,
        "totalSessions": 3,
        "totalCommits": 7,
    }


def test_strengths_rank_types_by_average_confidence_and_need_two_memories() -> None:
    for i in range(2):
        remember(f"p{i}", "x", type="pattern")
    remember("d0", "x", type="decision")  # a hypothesis at 0.5
    remember("d1", "x", type="decision", source="docs/adr/1.md")  # a fact at 1.0
    remember("lonely", "x", type="insight")
    Entity.objects.filter(name__startswith="p").update(confidence=0.95)

    assert patterns(categories=["strengths"])["strengths"] == [
        {"type": "pattern", "avgConfidence": 0.95, "count": 2},
        {"type": "decision", "avgConfidence": 0.75, "count": 2},
    ]


def test_learning_areas_are_the_topics_of_lessons_without_bookkeeping_tags() -> None:
    remember(
        "l1",
        "x",
        type="lesson_learned",
        tags=["project:a/b", "severity:major", "source:explicit", "error-pattern:x", "async"],
    )
    remember("l2", "x", type="lesson", tags=["topic:async", "sqlite"])
    remember("n", "x", type="note", tags=["async"])  # not a lesson

    assert patterns(categories=["learningAreas"])["learningAreas"] == [
        {"tag": "async", "count": 2},
        {"tag": "sqlite", "count": 1},
    ]


def test_categories_filter_the_result() -> None:
    assert set(patterns(categories=["workflow", "workSchedule"])) == {
        "workflow",
        "workSchedule",
        "scope",  # every answer says which memories it read
    }


@pytest.mark.parametrize("payload", [{"categories": ["nope"]}, {"categories": "workflow"}])
def test_it_rejects_unknown_categories(payload: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput):
        USER_PATTERNS.run(payload, CTX)


def test_markdown_has_a_section_per_requested_category(local_zone: Any) -> None:
    made("a", datetime(2026, 8, 17, 9, 5, tzinfo=UTC), "x", type="decision")
    made("s1", datetime(2026, 8, 18, 14, 0, tzinfo=UTC), "Tools used: Read", type="session")

    text = render_markdown(USER_PATTERNS.handler(USER_PATTERNS.parse({}), CTX))  # type: ignore[arg-type]
    partial = render_markdown(UserPatternsOutput.model_validate(patterns(categories=["workflow"])))

    assert "## Work schedule" in text and "09:00 (1)" in text and "Tuesday (1)" in text
    assert "- Read: 1 sessions" in text
    assert "- decision: 1" in text
    assert partial.splitlines()[2] == "Scope: every project's memories"
    assert partial.splitlines()[4] == "## Workflow"
    assert "## Work schedule" not in partial
