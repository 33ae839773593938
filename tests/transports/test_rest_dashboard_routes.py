"""The dashboard's data routes through the real middleware, DRF and envelope: GET /v1/stats,
/v1/graph (?layer=work), /v1/graph/evidence?node=, /v1/analytics, /v1/analytics/pm?window=,
/v1/projects, and POST /v1/demo/seed and /v1/demo/reset — their 400 / 404 rules included."""

from __future__ import annotations

from typing import Any

import pytest

from dream.demo_tour import TOUR
from graph.models import Entity
from graph.ops.graph_view import GraphNode
from tests.helpers import remember
from tests.rest import assert_error, assert_ok, post_json

pytestmark = pytest.mark.django_db


def get(client: Any, route: str) -> Any:
    return client.get(f"/v1/{route}")


def test_stats_answers_with_the_counts(client) -> None:
    remember("d", "x", type="decision", tags=["project:p"])

    data = assert_ok(get(client, "stats"))

    assert data["totalEntities"] == 1 and data["totalTags"] == 1
    assert data["typeDistribution"] == [{"type": "decision", "count": 1}]
    assert data["statusDistribution"] == [{"status": "active", "count": 1}]


def test_graph_answers_with_the_full_view_or_the_work_layer(client) -> None:
    remember("d", "x", type="decision")
    remember("c", "commit d1", type="commit", relations=[{"to": "d", "type": "evidences"}])

    full = assert_ok(get(client, "graph"))
    work = assert_ok(get(client, "graph?layer=work"))

    assert [e["name"] for e in full["entities"]] == ["d", "c"]
    # Graph nodes, as the OpenAPI document's GraphNode describes them: no content.
    assert [list(e) for e in full["entities"]] == [list(GraphNode.model_fields)] * 2
    assert full["entities"][1]["observation_count"] == 1
    assert full["relations"] == [{"from": "c", "to": "d", "type": "evidences"}]
    assert "evidenceCounts" not in full
    assert [e["name"] for e in work["entities"]] == ["d"]
    assert work["relations"] == []
    assert work["evidenceCounts"] == {"d": 1}


@pytest.mark.parametrize("query", ["layer=evidence", "layer=", "layer=WORK", "depth=2"])
def test_graph_refuses_any_other_parameter_as_a_bad_param(client, query: str) -> None:
    body = assert_error(get(client, f"graph?{query}"), 400, "validation.bad-param")

    assert query.split("=")[0] in body["error"]


def test_graph_evidence_lists_a_nodes_evidence(client) -> None:
    remember("d", "x", type="decision")
    remember("c", "commit d1", type="commit", relations=[{"to": "d", "type": "evidences"}])

    data = assert_ok(get(client, "graph/evidence?node=d"))

    assert [e["name"] for e in data["entities"]] == ["c"]
    assert data["relations"] == [{"from": "c", "to": "d", "type": "evidences"}]
    assert data["truncated"] is False


def test_graph_evidence_of_a_node_without_evidence_is_empty(client) -> None:
    remember("d", "x", type="decision")

    data = assert_ok(get(client, "graph/evidence?node=d"))

    assert data == {"entities": [], "relations": [], "truncated": False}


@pytest.mark.parametrize("query", ["", "?node=", "?node=%20%20"])
def test_graph_evidence_needs_a_node(client, query: str) -> None:
    body = assert_error(get(client, f"graph/evidence{query}"), 400, "validation.bad-param")

    assert body["field"] == "node"


def test_graph_evidence_of_an_unknown_node_is_not_found(client) -> None:
    body = assert_error(get(client, "graph/evidence?node=nope"), 404, "resource.not-found")

    assert "nope" in body["error"]


def test_analytics_answers_with_every_section(client) -> None:
    remember("l", "x", type="lesson_learned")

    data = assert_ok(get(client, "analytics"))

    assert list(data) == [
        "healthScore",
        "healthFactors",
        "timeline",
        "loopMetric",
        "ageMatrix",
        "knowledgeRadar",
    ]
    assert data["healthFactors"]["lessons"] == 20  # 1 of 5
    assert len(data["timeline"]) == 30
    assert data["timeline"][-1]["created"] == 1
    assert data["ageMatrix"] == [{"type": "lesson_learned", "bucket": "week", "count": 1}]


def test_analytics_pm_takes_a_window_in_days(client) -> None:
    default = assert_ok(get(client, "analytics/pm"))
    week = assert_ok(get(client, "analytics/pm?window=7"))

    assert default["velocity"]["windowDays"] == 30
    assert week["velocity"]["windowDays"] == 7
    assert set(week) == {"velocity", "staleness", "connectedness"}


@pytest.mark.parametrize("window", ["0", "366", "-1", "abc", "7.5", "1_0", ""])
def test_analytics_pm_refuses_a_window_that_is_not_1_to_365_days(client, window: str) -> None:
    body = assert_error(get(client, f"analytics/pm?window={window}"), 400, "validation.bad-param")

    assert body["field"] == "window"


def test_projects_answers_with_the_bare_list(client) -> None:
    remember("d", "x", type="decision", tags=["project:p"])

    data = assert_ok(get(client, "projects"))

    assert data == [{"name": "p", "count": 1, "types": ["decision"], "source": "tag"}]


def test_demo_seed_and_reset_write_and_remove_the_tour(client) -> None:
    remember("mine", "a memory of the user's")

    seeded = assert_ok(post_json(client, "demo/seed", {}))
    # No body at all reads as {}.
    again = assert_ok(client.post("/v1/demo/seed", data="", content_type="application/json"))
    stored = Entity.objects.count()
    removed = assert_ok(post_json(client, "demo/reset", {}))

    assert seeded == {"inserted": len(TOUR), "removed": 0}
    assert again == {"inserted": 0, "removed": 0}
    assert stored == len(TOUR) + 1
    assert removed == {"inserted": 0, "removed": len(TOUR)}
    assert list(Entity.objects.values_list("name", flat=True)) == ["mine"]
    assert Entity.objects.get(name="mine").metadata["provenance"]["source_host"] == "test"


def test_demo_seed_over_rest_is_stamped_http(client) -> None:
    assert_ok(post_json(client, "demo/seed", {}))

    assert {e.metadata["provenance"]["source_host"] for e in Entity.objects.all()} == {"http"}


def test_demo_routes_refuse_a_body_with_fields(client) -> None:
    assert_error(post_json(client, "demo/seed", {"reset": True}), 400, "validation.bad-body")
    assert not Entity.objects.exists()


@pytest.mark.parametrize(
    ("method", "route"),
    [("post", "stats"), ("post", "graph"), ("post", "analytics/pm"), ("get", "demo/seed")],
)
def test_each_route_answers_its_one_method_only(client, method: str, route: str) -> None:
    response = getattr(client, method)(f"/v1/{route}")

    assert_error(response, 405, "route.method-not-allowed")
