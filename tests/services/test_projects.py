"""projects (graph/ops/projects.py): projects from the first project tag, else from a legacy
lesson name; counts, types and source per project; active entities only."""

from __future__ import annotations

import json

import pytest

from graph.ops.projects import PROJECTS, projects_list, render_mcp
from tests.helpers import forget, remember

pytestmark = pytest.mark.django_db


def listed() -> list[dict[str, object]]:
    return projects_list().model_dump()


def test_an_empty_graph_has_no_projects() -> None:
    assert listed() == []


def test_projects_come_from_tags_and_legacy_lesson_names() -> None:
    remember("a1", "x", type="decision", tags=["project:alpha"])
    remember("a2", "x", type="lesson_learned", tags=["topic:db", "project:alpha"])
    remember("a3", "x", type="decision", tags=["project:alpha"])
    # Named like a legacy lesson of zeta, but tagged: the tag decides.
    remember("lesson-zeta-other", "x", type="lesson_learned", tags=["project:alpha"])
    # Untagged legacy lesson names: the name decides.
    remember("lesson-alpha-build-error", "x", type="lesson_learned")
    remember("lesson-gamma-null-reference", "x", type="lesson_learned")
    remember("b1", "x", type="note", tags=["project:beta"])
    # Two project tags: the first one counts, once.
    remember("m1", "x", type="note", tags=["project:beta", "project:alpha"])

    assert listed() == [
        {
            "name": "alpha",
            "count": 5,
            "types": ["lesson_learned", "decision"],
            "source": "mixed",
        },
        {"name": "beta", "count": 2, "types": ["note"], "source": "tag"},
        {"name": "gamma", "count": 1, "types": ["lesson_learned"], "source": "heuristic"},
    ]


def test_entities_of_no_project_are_not_listed() -> None:
    remember("plain", "x", type="note")
    remember("lesson-x-other", "x", type="lesson_learned")  # a one-character project
    remember("lesson-delta-flaky-network", "x", type="lesson_learned")  # no known pattern
    remember("empty", "x", type="note", tags=["project:"])
    remember("gone", "x", type="note", tags=["project:omega"])
    forget("gone")

    assert listed() == []


def test_ties_are_broken_by_name() -> None:
    remember("b", "x", tags=["project:bravo"])
    remember("a", "x", tags=["project:alpha"])

    assert [p["name"] for p in listed()] == ["alpha", "bravo"]


def test_rest_gets_the_bare_list_and_mcp_an_object() -> None:
    remember("a", "x", tags=["project:alpha"])
    result = projects_list()

    assert json.loads(result.model_dump_json()) == listed()
    assert json.loads(render_mcp(result)) == {"projects": listed()}
    assert PROJECTS.mcp_text is render_mcp
