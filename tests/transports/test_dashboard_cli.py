"""`memesh stats`, `memesh projects` and `memesh demo [--reset]` through call_command: the same
operations as their REST routes, as JSON or as text."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from dream.demo_tour import TOUR
from graph.models import Entity
from tests.helpers import remember

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def run_json(*args: str) -> Any:
    return json.loads(run(*args, "--json"))


def test_stats_prints_json_or_a_table() -> None:
    remember("d", "x", type="decision", tags=["project:p"])

    data = run_json("stats")
    text = run("stats")

    assert data["totalEntities"] == 1
    assert data["typeDistribution"] == [{"type": "decision", "count": 1}]
    assert "Entities:     1" in text
    assert "     1  decision" in text


def test_projects_prints_json_or_a_line_per_project() -> None:
    remember("d", "x", type="decision", tags=["project:p"])

    assert run_json("projects") == [
        {"name": "p", "count": 1, "types": ["decision"], "source": "tag"}
    ]
    assert run("projects").strip() == "p: 1 (tag) — decision"


def test_projects_says_so_when_there_are_none() -> None:
    assert run("projects").strip() == "No memories are filed under a project."


def test_demo_seeds_once_and_reset_removes_the_tour() -> None:
    remember("mine", "a memory of the user's")

    assert run_json("demo") == {"inserted": len(TOUR), "removed": 0}
    assert run("demo").strip() == "The demo tour is already there; nothing was inserted."
    assert {e.metadata["provenance"]["source_host"] for e in Entity.objects.filter(
        metadata__demo=True
    )} == {"cli"}  # fmt: skip
    assert run_json("demo", "--reset") == {"inserted": 0, "removed": len(TOUR)}
    assert run("demo", "--reset").strip() == "Removed 0 demo entities."
    assert list(Entity.objects.values_list("name", flat=True)) == ["mine"]


def test_demo_says_how_to_remove_what_it_inserted() -> None:
    text = run("demo")

    assert text.strip() == (
        f"Inserted {len(TOUR)} demo entities; remove them with `memesh demo --reset`."
    )
