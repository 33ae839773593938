"""POST /v1/feedback, and the session a REST caller names: what recall returned to a session
and it did not cite becomes a miss; a cited memory a hit (graph/ops/feedback.py), which then
ranks above a memory of equal relevance in hybrid recall (graph/search/scoring.py)."""

from __future__ import annotations

import pytest
from django.test import Client

from graph.indexing import embedding_pass
from graph.models import Entity
from tests.helpers import remember
from tests.rest import assert_error, assert_ok, post_json
from tests.vector_support import use_embedder

pytestmark = pytest.mark.django_db


def counts(name: str) -> tuple[int, int]:
    entity = Entity.objects.get(name=name)
    return entity.recall_hits, entity.recall_misses


def test_feedback_counts_hits_and_misses_in_the_envelope(client) -> None:
    a = remember("a", "walrus notes")["entityId"]
    b = remember("b", "walrus tusks")["entityId"]

    data = assert_ok(post_json(client, "feedback", {"hits": [a], "misses": [b, 404]}))

    assert data == {"hits": [a], "misses": [b], "unchanged": [], "unknown": [404]}
    assert counts("a") == (1, 0) and counts("b") == (0, 1)


def test_a_rest_session_settles_what_its_recalls_returned(client) -> None:
    a = remember("a", "walrus notes")["entityId"]
    b = remember("b", "walrus tusks")["entityId"]
    assert_ok(post_json(client, "recall", {"query": "walrus", "session_id": "rest-1"}))

    data = assert_ok(
        post_json(client, "feedback", {"text": f"used [mem:{a}]", "session_id": "rest-1"})
    )

    assert data["hits"] == [a] and data["misses"] == [b]


def test_remember_over_rest_reports_what_its_text_cited(client) -> None:
    a = remember("a", "walrus notes")["entityId"]
    data = assert_ok(post_json(client, "remember", {"note": f"Handoff\n\nFollowed [mem:{a}]."}))
    assert data["cited"] == [a]
    assert counts("a") == (1, 0)


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"hits": [1], "misses": [1]}, "misses"),
        ({"hits": "1"}, "hits"),
        ({"hits": list(range(1, 102))}, "hits"),
        ({"session_id": "two words"}, "session_id"),
        ({"bogus": True}, "bogus"),
    ],
)
def test_bad_feedback_is_a_400_with_a_stable_code_and_nothing_counted(
    client, payload, field
) -> None:
    remember("a", "walrus notes")
    body = assert_error(post_json(client, "feedback", payload), 400, "validation.bad-body")
    assert body.get("field") == field
    assert counts("a") == (0, 0)


def test_a_body_that_is_not_an_object_is_refused(client) -> None:
    assert_error(post_json(client, "feedback", [1, 2]), 400, "validation.bad-body")


def test_feedback_is_post_only(client) -> None:
    assert client.get("/v1/feedback").status_code == 405


TWIN_TEXT = "The deploy script needs the staging credentials first, then the migration runs."
TWIN_QUERY = "deploy staging credentials"


def hybrid_twins(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, int], list[str]]:
    """Two memories with the same text written over REST and embedded by the local model: their
    ids, and their names in the order recall gives them before any use."""
    use_embedder(monkeypatch, "local")
    payload = {"type": "note", "observations": [TWIN_TEXT]}
    ids = {
        name: assert_ok(post_json(client, "remember", {"name": name, **payload}))["entityId"]
        for name in ("deploy-order", "deploy-order-copy")
    }
    embedding_pass.embed_pending()
    return ids, recalled_names(client)


def recalled_names(client: Client) -> list[str]:
    data = assert_ok(post_json(client, "recall", {"query": TWIN_QUERY}))
    assert data["retrieval"]["mode"] == "hybrid"
    return [e["name"] for e in data["entities"]]


@pytest.mark.clean_indexes
def test_feedback_hits_over_rest_lift_a_memory_above_its_twin(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids, (first, second) = hybrid_twins(client, monkeypatch)

    for _ in range(4):
        data = assert_ok(post_json(client, "feedback", {"hits": [ids[second]]}))
        assert data["hits"] == [ids[second]]

    assert recalled_names(client) == [second, first]


@pytest.mark.clean_indexes
def test_notes_citing_a_memory_over_rest_lift_it_above_its_twin(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids, (first, second) = hybrid_twins(client, monkeypatch)

    for n in range(4):
        note = f"Handoff {n}\n\nRan the steps in order, as [mem:{ids[second]}] says."
        assert assert_ok(post_json(client, "remember", {"note": note}))["cited"] == [ids[second]]
    embedding_pass.embed_pending()

    assert recalled_names(client)[:2] == [second, first]
