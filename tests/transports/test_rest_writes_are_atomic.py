"""REST writes are all-or-nothing: a failure half-way, or bad input, never changes stored data.

The failure is real: a SQLite trigger makes every INSERT into graph_relation abort, which
remember reaches only after the entity, its observations, tags and index row are written.
"""

from __future__ import annotations

import pytest
from django.db import connection

from graph.models import Entity, Observation, Relation, Tag
from tests.helpers import observations_of, recall, remember
from tests.rest import assert_error, assert_json, fts_count, post_json

pytestmark = pytest.mark.django_db


ABORT_RELATIONS = """
CREATE TRIGGER test_abort_relation_insert BEFORE INSERT ON graph_relation
BEGIN
    SELECT RAISE(ABORT, 'relation insert refused by test trigger');
END
"""


@pytest.fixture
def relation_inserts_fail():
    """A real SQLite trigger that makes every INSERT into graph_relation abort."""
    with connection.cursor() as cur:
        cur.execute(ABORT_RELATIONS)
    try:
        yield
    finally:
        with connection.cursor() as cur:
            cur.execute("DROP TRIGGER IF EXISTS test_abort_relation_insert")


def fts_rows() -> int:
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM graph_entity_fts")
        return cur.fetchone()[0]


def test_a_failure_half_way_through_remember_leaves_no_entity_or_index_row(
    client, relation_inserts_fail
):
    remember("target", "an existing entity")
    rows_before = fts_rows()

    response = post_json(
        client,
        "remember",
        {
            "name": "halfway",
            "type": "note",
            "title": "half written",
            "observations": ["marker tok7half is indexed before relations"],
            "tags": ["project:halfway"],
            "relations": [{"to": "target", "type": "related-to"}],
        },
    )

    body = assert_error(response, 500, "server.internal")
    assert "trigger" not in body["error"]  # no SQL internals leak to the client
    assert not Entity.objects.filter(name="halfway").exists()
    assert not Observation.objects.filter(text__contains="tok7half").exists()
    assert not Tag.objects.filter(name="project:halfway").exists()
    assert Relation.objects.count() == 0
    assert fts_count("graph_entity_fts", "tok7half") == 0
    assert fts_count("graph_entity_fts_archived", "tok7half") == 0
    assert fts_rows() == rows_before
    assert recall("tok7half")["entities"] == []


def test_a_failure_half_way_through_an_append_leaves_the_entity_as_it_was(
    client, relation_inserts_fail
):
    remember("target", "an existing entity")
    remember("existing", "first fact", "second fact", tags=["keep"])

    response = post_json(
        client,
        "remember",
        {
            "name": "existing",
            "type": "note",
            "observations": ["third fact tok8append"],
            "tags": ["added"],
            "relations": [{"to": "target", "type": "related-to"}],
        },
    )

    assert_error(response, 500, "server.internal")
    assert observations_of("existing") == ["first fact", "second fact"]
    assert list(Tag.objects.filter(entity__name="existing").values_list("name", flat=True)) == [
        "keep"
    ]
    assert fts_count("graph_entity_fts", "tok8append") == 0
    assert [e["name"] for e in recall("second fact")["entities"]] == ["existing"]


def test_the_same_remember_with_a_relation_succeeds_without_the_trigger(client):
    remember("target", "an existing entity")
    payload = {
        "name": "halfway",
        "type": "note",
        "observations": ["marker tok9retry"],
        "relations": [{"to": "target", "type": "related-to"}],
    }

    response = post_json(client, "remember", payload)

    assert response.status_code == 200, response.content
    assert assert_json(response)["data"]["relations"] == 1
    assert [e["name"] for e in recall("tok9retry")["entities"]] == ["halfway"]


@pytest.mark.parametrize(
    "bad_fields",
    [
        {"observations": ["new fact", "x" * 10_001]},
        {"observations": ["new fact"], "tags": ["t"] * 51},
        {"observations": ["new fact"], "surprise": True},
        {"observations": ["new fact"], "namespace": "nowhere"},
    ],
    ids=["observation-too-long", "too-many-tags", "unknown-key", "bad-namespace"],
)
def test_bad_input_on_an_existing_name_never_loses_stored_data(client, bad_fields):
    remember("precious", "fact one", "fact two", tags=["keep"])

    response = post_json(client, "remember", {"name": "precious", "type": "note", **bad_fields})

    assert_error(response, 400, "validation.bad-body")
    assert observations_of("precious") == ["fact one", "fact two"]
    [entity] = recall("fact")["entities"]
    assert entity["name"] == "precious"
    assert entity["observations"] == ["fact one", "fact two"]
    assert entity["tags"] == ["keep"]
    assert entity["status"] == "active"


def test_a_rejected_forget_leaves_the_entity_active(client):
    remember("stays", "still here")

    response = post_json(client, "forget", {"name": "stays", "observations": ["still here"]})

    assert_error(response, 400, "validation.bad-body")
    assert Entity.objects.get(name="stays").status == "active"
    assert observations_of("stays") == ["still here"]
