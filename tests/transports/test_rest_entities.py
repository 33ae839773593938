"""GET /v1/entities and GET /v1/entities/<name>: listing, filters, pagination, bad query
parameters, and one entity read by name, archived or not."""

from __future__ import annotations

from typing import Any

import pytest

from graph.models import Entity
from tests.helpers import forget, names, recall, remember
from tests.rest import assert_error, assert_json

pytestmark = pytest.mark.django_db


def entities(client: Any, query: str = "") -> dict[str, Any]:
    response = client.get(f"/v1/entities{query}")
    assert response.status_code == 200, response.content
    body = assert_json(response)
    assert body["success"] is True
    return body["data"]


def test_entities_lists_active_entities_newest_first_as_recall_serialises_them(client):
    remember("first", "one", type="decision")
    remember("second", "two", tags=["t"])
    remember("third", "three")

    data = entities(client)

    assert names(data) == ["third", "second", "first"]
    assert data["total"] == 3 and data["truncated"] is False
    assert data["limit"] == 20 and data["offset"] == 0
    # Exactly recall's EntityOutput (recall's listing is the same newest-first order).
    assert data["entities"] == recall()["entities"]
    assert "match" not in data["entities"][0]
    assert data["entities"][1]["tags"] == ["t"]


def test_entities_filters_by_type_and_status(client):
    remember("a-decision", "x", type="decision")
    remember("a-note", "y")
    remember("old-decision", "z", type="decision")
    forget("old-decision")

    assert names(entities(client, "?type=decision")) == ["a-decision"]
    assert names(entities(client, "?status=archived")) == ["old-decision"]
    assert names(entities(client, "?type=decision&status=all")) == [
        "old-decision",
        "a-decision",
    ]
    assert entities(client, "?type=unknown-type")["entities"] == []


def test_entities_paginates_with_limit_and_offset(client):
    for i in range(5):
        remember(f"e{i}", f"obs {i}")

    page1 = entities(client, "?limit=2")
    page2 = entities(client, "?limit=2&offset=2")
    page3 = entities(client, "?limit=2&offset=4")

    assert names(page1) == ["e4", "e3"] and page1["truncated"] is True
    assert names(page2) == ["e2", "e1"] and page2["truncated"] is True
    assert names(page3) == ["e0"] and page3["truncated"] is False
    assert {p["total"] for p in (page1, page2, page3)} == {5}
    assert entities(client, "?offset=10")["entities"] == []


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("?limit=abc", "limit"),
        ("?limit=0", "limit"),
        ("?limit=101", "limit"),
        ("?limit=", "limit"),
        ("?offset=-1", "offset"),
        ("?offset=1.5", "offset"),
        ("?offset=9223372036854775808", "offset"),  # past SQLite's 64-bit integers
        ("?offset=" + "9" * 5000, "offset"),
        ("?limit=18446744073709551617", "limit"),
        ("?status=deleted", "status"),
        ("?type=", "type"),
        ("?type=" + "x" * 101, "type"),
    ],
)
def test_entities_rejects_a_bad_query_parameter_naming_it(client, query, param):
    body = assert_error(client.get(f"/v1/entities{query}"), 400, "validation.bad-param")

    assert body["field"] == param
    assert param in body["error"]


def test_an_entity_is_read_by_name_archived_or_not(client):
    remember("auth-decision", "Chose JWT", type="decision", relations=[])
    remember("path/with/slashes", "ok")
    forget("path/with/slashes")

    body = assert_json(client.get("/v1/entities/auth-decision"))
    archived = assert_json(client.get("/v1/entities/path/with/slashes"))

    assert body["success"] is True
    assert body["data"]["name"] == "auth-decision"
    assert body["data"]["observations"] == ["Chose JWT"]
    assert body["data"]["id"] == Entity.objects.get(name="auth-decision").id
    assert archived["data"]["status"] == "archived"


def test_a_missing_entity_is_resource_not_found(client):
    body = assert_error(client.get("/v1/entities/nobody"), 404, "resource.not-found")
    assert "nobody" in body["error"]
