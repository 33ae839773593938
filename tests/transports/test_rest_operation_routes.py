"""The /v1 routes of the operations beyond remember/recall/forget: learn, export, import, and
GET /v1/patterns — through Django's test client and the real middleware, DRF and envelope."""

from __future__ import annotations

import pytest

from graph.models import Entity
from graph.project import project_id
from tests.helpers import remember
from tests.rest import assert_error, post_json

pytestmark = pytest.mark.django_db


def test_learn_files_a_lesson_under_the_servers_project_when_none_is_named(client) -> None:
    response = post_json(client, "learn", {"error": "pool exhausted", "fix": "raise the cap"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["success"] is True and body["data"]["learned"] is True
    lesson = Entity.objects.get(name=body["data"]["name"])
    assert lesson.type == "lesson_learned" and lesson.confidence == 1.0
    assert f"project:{project_id()}" in lesson.tags.values_list("name", flat=True)
    assert lesson.metadata["provenance"]["source_host"] == "http"


def test_learn_without_a_fix_is_a_bad_body_naming_the_field(client) -> None:
    response = post_json(client, "learn", {"error": "pool exhausted"})

    assert_error(response, 400, "validation.bad-body")
    assert "fix" in response.json()["error"]


def test_remember_over_rest_files_nothing_under_a_project_by_itself(client) -> None:
    post_json(client, "remember", {"name": "n", "type": "note", "observations": ["x"]})

    assert list(Entity.objects.get(name="n").tags.values_list("name", flat=True)) == []


def test_export_then_import_over_rest_round_trips(client) -> None:
    remember("a", "alpha", tags=["topic:x"], relations=[])
    remember("b", "bravo", relations=[{"to": "a", "type": "depends_on"}])
    bundle = post_json(client, "export", {}).json()["data"]
    assert bundle["entity_count"] == 2

    result = post_json(client, "import", {"data": bundle, "merge_strategy": "append"})

    assert result.status_code == 200, result.content
    data = result.json()["data"]
    assert data["errors"] == []


def test_import_with_an_unknown_strategy_is_refused_before_anything_is_written(client) -> None:
    bundle = {"entities": [{"name": "new", "type": "note", "observations": ["x"]}]}

    response = post_json(client, "import", {"data": bundle, "merge_strategy": "replace"})

    assert_error(response, 400, "validation.bad-body")
    assert not Entity.objects.filter(name="new").exists()


def test_patterns_is_a_get_route_with_a_category_filter(client) -> None:
    response = client.get("/v1/patterns?categories=focusAreas")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["success"] is True
    assert "focusAreas" in body["data"]
    assert "workSchedule" not in body["data"]
    assert client.post("/v1/patterns", {}).status_code == 405


def test_operations_without_a_reference_route_have_none(client) -> None:
    for route in ("task_state", "briefing", "pin", "unpin", "user_patterns"):
        assert client.post(f"/v1/{route}", {}).status_code == 404, route
